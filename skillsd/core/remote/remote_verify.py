"""What a host checks of a file it read from a skills server before using it: the byte count,
then the digest, against the listing entry; and for ``SKILL.md`` its frontmatter, field by field,
against the entry's. Any mismatch refuses the file (and so the skill) with the field named; a
refused file's content is never used.

Frontmatter is compared as written: the file's YAML is loaded with every scalar as its text (as
skillsd reads every SKILL.md), and an entry value that is not a string (a server that sends
YAML's types) equals the text YAML would read as that value (``false``, ``3``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import yaml

from skillsd.core.remote.remote_wire import RemoteEntry, RemoteFile
from skillsd.core.skill.frontmatter import (
    FrontmatterError,
    decode_frontmatter,
    load_frontmatter,
    locate_frontmatter,
)

__all__ = ["Refusal", "sha256_digest", "verify_file", "verify_frontmatter"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a file is refused: the check (``size``, ``digest``, ``frontmatter``) and what differs."""

    check: str
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def verify_file(entry: RemoteFile, data: bytes) -> Refusal | None:
    """The size, then the digest, of ``data`` against its listing entry."""
    if len(data) != entry.size:
        return Refusal(
            "size",
            entry.path,
            f"size {len(data)} bytes does not match the listing's {entry.size}",
        )
    digest = sha256_digest(data)
    if digest != entry.digest:
        return Refusal(
            "digest", entry.path, f"digest {digest} does not match the listing's {entry.digest}"
        )
    return None


def verify_frontmatter(entry: RemoteEntry, data: bytes) -> Refusal | None:
    """The frontmatter of ``SKILL.md`` (``data``) against the entry's, field by field."""
    try:
        located = locate_frontmatter(data, at_eof=True)
        if located is None:
            return Refusal("frontmatter", "SKILL.md", "the file has no frontmatter")
        written = load_frontmatter(decode_frontmatter(data, located))
    except (FrontmatterError, ValueError) as exc:
        return Refusal("frontmatter", "SKILL.md", f"its frontmatter cannot be read: {exc}")
    for key in sorted(set(written) | set(entry.frontmatter)):
        if key not in entry.frontmatter:
            return Refusal("frontmatter", "SKILL.md", f"field {key!r} is not in the listing")
        if key not in written:
            return Refusal("frontmatter", "SKILL.md", f"field {key!r} of the listing is missing")
        if not _same(written[key], entry.frontmatter[key]):
            return Refusal(
                "frontmatter",
                "SKILL.md",
                f"field {key!r} is {_show(written[key])} but the listing says "
                f"{_show(entry.frontmatter[key])}",
            )
    return None


def _same(written: Any, listed: Any) -> bool:
    """Whether a value as written (strings, lists, mappings) is the one the listing gives."""
    if isinstance(written, dict):
        return (
            isinstance(listed, dict)
            and written.keys() == listed.keys()
            and all(_same(written[k], listed[k]) for k in written)
        )
    if isinstance(written, list):
        return (
            isinstance(listed, list)
            and len(written) == len(listed)
            and all(_same(w, v) for w, v in zip(written, listed, strict=True))
        )
    if isinstance(listed, str):
        return bool(written == listed)
    if not isinstance(written, str) or isinstance(listed, dict | list):
        return False
    try:
        typed = yaml.safe_load(written) if written else None
    except yaml.YAMLError:
        return False
    return type(typed) is type(listed) and bool(typed == listed)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
