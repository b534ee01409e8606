"""Writing and taking back skillsd's own keys in an agent's JSON settings file (Claude Code's
``skillOverrides`` in a project's ``.claude/settings.local.json``), keeping everything else.

Pure: text in, text out. Every other key keeps its value and its place; the file keeps its
indentation and its final newline (JSON cannot keep comments or spacing inside a line, and
Claude Code's settings hold none). A key the user wrote is never changed: :func:`add_keys`
leaves it and says so, :func:`remove_keys` removes only a key whose value is still the one
skillsd wrote. When removing leaves the document as it was before skillsd first wrote, the
original text comes back byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Edit", "SettingsError", "add_keys", "remove_keys"]

#: The object skillsd writes into.
OVERRIDES = "skillOverrides"


class SettingsError(ValueError):
    """The settings text is not a JSON object (or its ``skillOverrides`` is not one)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """The new text (None: the file should be removed: skillsd made it and nothing else is
    in it), the keys written or removed, and the ones left with why."""

    text: str | None
    changed: dict[str, str]
    left: dict[str, str]


def _parse(text: str | None, path: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: not a JSON object")
    overrides = data.get(OVERRIDES)
    if overrides is not None and not isinstance(overrides, dict):
        raise SettingsError(f"{path}: `{OVERRIDES}` is not an object")
    return data


def _indent(text: str | None) -> int | str:
    match = re.search(r"\n([ \t]+)\S", text or "")
    if match is None:
        return 2
    lead = match.group(1)
    return lead if "\t" in lead else len(lead)


def _dump(data: dict[str, Any], like: str | None) -> str:
    ending = "\n" if like is None or like.endswith("\n") else ""
    return json.dumps(data, indent=_indent(like), ensure_ascii=False) + ending


def add_keys(
    text: str | None, path: str, wanted: Mapping[str, str], ours: Mapping[str, str]
) -> Edit:
    """``text`` with ``skillOverrides[name] = value`` for each of ``wanted`` (``changed``: the
    keys skillsd owns afterwards), skillsd's
    earlier keys (``ours``: name -> the value skillsd wrote) that are no longer wanted
    removed, and every key the user set (absent from ``ours``, or changed since) left as is."""
    data = _parse(text, path)
    overrides: dict[str, Any] = dict(data.get(OVERRIDES) or {})
    changed: dict[str, str] = {}
    left: dict[str, str] = {}
    for name, value in ours.items():
        if name in wanted:
            continue
        if overrides.get(name) == value:
            del overrides[name]
    for name, value in wanted.items():
        current = overrides.get(name)
        mine = name in ours and current == ours[name]
        if current is not None and not mine:
            if current != value:
                left[name] = f"set to {current!r} by the user: left as it is"
            continue
        overrides[name] = value
        changed[name] = value
    if overrides:
        data[OVERRIDES] = overrides
    else:
        data.pop(OVERRIDES, None)
    return Edit(_dump(data, text), changed, left)


def remove_keys(
    text: str | None, path: str, ours: Mapping[str, str], original: str | None, created: bool
) -> Edit:
    """``text`` without the keys of ``ours`` whose value is still what skillsd wrote (a key
    changed since is the user's now: left, and said). ``original`` is the file's text before
    skillsd first wrote it (None: there was no file, ``created``); when the result means the
    same as it, it is returned byte for byte (None: remove the file)."""
    if text is None:  # the user removed the file since: nothing of skillsd's is left
        return Edit(None, {}, {})
    data = _parse(text, path)
    overrides: dict[str, Any] = dict(data.get(OVERRIDES) or {})
    removed: dict[str, str] = {}
    left: dict[str, str] = {}
    for name, value in ours.items():
        if name not in overrides:
            continue
        if overrides[name] == value:
            del overrides[name]
            removed[name] = value
        else:
            left[name] = f"changed to {overrides[name]!r} since skillsd wrote {value!r}: left"
    had_object = original is not None and OVERRIDES in _parse(original, path)
    if overrides or had_object:
        data[OVERRIDES] = overrides
    else:
        data.pop(OVERRIDES, None)
    before = _parse(original, path) if original is not None else ({} if created else None)
    if before is not None and data == before:
        return Edit(None if created else original, removed, left)
    return Edit(_dump(data, text), removed, left)
