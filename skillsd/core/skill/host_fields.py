"""Host fields (docs/conformance.md): what Claude Code and Codex read beyond the open spec, in one
table.

Two sources feed a skill's ``invocation`` and ``host``:

- the SKILL.md frontmatter (all-strings YAML): :data:`FRONTMATTER_FIELDS` maps each key skillsd
  honours to where its value goes and how it is read; :func:`host_from_frontmatter` applies it;
- Codex's ``agents/openai.yaml`` beside the SKILL.md (real YAML types, ``yaml.safe_load``):
  :data:`OPENAI_FIELDS` maps ``section.key`` paths the same way; :func:`host_from_openai` is the
  interpretation (the bounded read of the file is :mod:`skillsd.core.skill.fs_openai_yaml`).

A bad value is a warning naming the file and the field, and the default applies (both invocations
on, the key absent from ``host``). Nothing here fails a skill.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from skillsd_protocol import (
    DEFAULT_INVOCATION,
    Diagnostic,
    HostDependency,
    HostFields,
    Invocation,
    SkillMetadata,
)

__all__ = [
    "FRONTMATTER_FIELDS",
    "OPENAI_FIELDS",
    "OPENAI_YAML",
    "OPENAI_YAML_DIR",
    "FieldRule",
    "HostReading",
    "host_from_frontmatter",
    "host_from_openai",
    "invocation_marks",
    "merge_readings",
    "model_description",
    "model_may_see",
    "openai_yaml_problem",
    "slash_usage",
    "with_reading",
]

#: Where Codex keeps a skill's UI and policy metadata, relative to the skill directory.
OPENAI_YAML_DIR = "agents"
OPENAI_YAML = os.path.join(OPENAI_YAML_DIR, "openai.yaml")

#: How a value is read. ``flag``: a boolean (``true``/``false`` in any case); ``text``: a string;
#: ``words``: a list, or a space-separated string; ``globs``: a list, or a comma-separated
#: string; ``choice``: one of ``FieldRule.choices``; ``icon``: a path inside the skill dir;
#: ``tools``: Codex's dependency list.
Kind = Literal["flag", "text", "words", "globs", "choice", "icon", "tools"]


@dataclass(frozen=True, slots=True)
class FieldRule:
    """Where one source key goes: a ``HostFields`` attribute, or ``invocation.model``/``.user``.

    ``invert`` flips a flag (``disable-model-invocation: true`` means model invocation off)."""

    target: str
    kind: Kind
    invert: bool = False
    choices: tuple[str, ...] = ()


#: Claude Code frontmatter keys skillsd honours (reported as ``field.host``).
FRONTMATTER_FIELDS: dict[str, FieldRule] = {
    "disable-model-invocation": FieldRule("invocation.model", "flag", invert=True),
    "user-invocable": FieldRule("invocation.user", "flag"),
    "argument-hint": FieldRule("argument_hint", "text"),
    "arguments": FieldRule("arguments", "words"),
    "when_to_use": FieldRule("when_to_use", "text"),
    "paths": FieldRule("paths", "globs"),
    "model": FieldRule("model", "text"),
    "effort": FieldRule("effort", "text"),
    "context": FieldRule("context", "choice", choices=("fork",)),
    "agent": FieldRule("agent", "text"),
}

#: Codex ``agents/openai.yaml`` keys (``section.key``) skillsd honours; others are ignored.
OPENAI_FIELDS: dict[str, FieldRule] = {
    "interface.display_name": FieldRule("display_name", "text"),
    "interface.short_description": FieldRule("short_description", "text"),
    "interface.icon_small": FieldRule("icon_small", "icon"),
    "interface.icon_large": FieldRule("icon_large", "icon"),
    "interface.brand_color": FieldRule("brand_color", "text"),
    "interface.default_prompt": FieldRule("default_prompt", "text"),
    "policy.allow_implicit_invocation": FieldRule("invocation.model", "flag"),
    "dependencies.tools": FieldRule("dependencies", "tools"),
}

#: A declared argument name, usable as ``$name`` in the body (not starting with a digit, so it
#: never competes with ``$0``, ``$1``...).
_ARGUMENT_NAME = re.compile(r"[^\W\d]\w*")
_DEPENDENCY_KEYS = ("type", "value", "description", "transport", "url")


@dataclass(slots=True)
class HostReading:
    """What one source said: the invocation flags it set (None: not said), ``host`` values and
    the problems found."""

    model: bool | None = None
    user: bool | None = None
    values: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def invocation(self) -> Invocation:
        model = self.model is not False
        user = self.user is not False
        if model and user:
            return DEFAULT_INVOCATION
        return Invocation(model=model, user=user)

    def host(self) -> HostFields | None:
        return HostFields(**self.values) if self.values else None


def merge_readings(first: HostReading, second: HostReading) -> HostReading:
    """Both sources together: an invocation either one turns off stays off; ``second``'s values
    fill in (the two tables share no ``host`` keys)."""

    def both(a: bool | None, b: bool | None) -> bool | None:
        if a is None:
            return b
        if b is None:
            return a
        return a and b

    return HostReading(
        model=both(first.model, second.model),
        user=both(first.user, second.user),
        values={**first.values, **second.values},
        diagnostics=[*first.diagnostics, *second.diagnostics],
    )


def model_description(skill: SkillMetadata) -> str:
    """The description as the model reads it: ``whenToUse`` appended after a space
    (docs/conformance.md)."""
    when = skill.host.when_to_use if skill.host is not None else None
    return f"{skill.description} {when}" if when else skill.description


def model_may_see(skill: SkillMetadata) -> bool:
    """Whether the model is shown ``skill`` (in a catalog prompt, a suggestion, the MCP
    skills listing): enabled, and not for the user alone (``disable-model-invocation``)."""
    return skill.enabled and skill.invocation.model


def invocation_marks(skill: SkillMetadata) -> list[str]:
    """Who may not invoke a skill, as people read it: ``user only`` (the model may not) and
    ``model only`` (no slash command)."""
    marks = []
    if not skill.invocation.model:
        marks.append("user only")
    if not skill.invocation.user:
        marks.append("model only")
    return marks


def slash_usage(skill: SkillMetadata) -> str | None:
    """``/name argument-hint`` for a skill the user may invoke (None when they may not)."""
    if not skill.invocation.user:
        return None
    hint = skill.host.argument_hint if skill.host is not None else None
    return f"/{skill.name} {hint}" if hint else f"/{skill.name}"


def with_reading(
    invocation: Invocation, host: HostFields | None, reading: HostReading
) -> tuple[Invocation, HostFields | None]:
    """Fields already read (the frontmatter's) with another source's reading on top."""
    model = invocation.model and reading.model is not False
    user = invocation.user and reading.user is not False
    if (model, user) != (invocation.model, invocation.user):
        invocation = Invocation(model=model, user=user)
    if reading.values:
        base = {} if host is None else msgspec.structs.asdict(host)
        merged = {k: v for k, v in base.items() if v is not None}
        merged.update(reading.values)
        host = HostFields(**merged)
    return invocation, host


def _type_name(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "empty"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


class _Bad(Exception):
    """A value that does not fit its rule; the message says why (the default applies)."""

    def __init__(self, message: str, code: str = "host.invalid") -> None:
        super().__init__(message)
        self.code = code


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    shown = repr(value) if isinstance(value, str) else _type_name(value)
    raise _Bad(f"must be true or false, not {shown}")


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_type_name(value)}")
    return value.strip() or None


def _string_list(value: object, separator: str | None) -> list[str] | None:
    if isinstance(value, str):
        items = value.split(separator)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        how = "space-separated" if separator is None else "comma-separated"
        raise _Bad(f"must be a list of strings or a {how} string, not {_type_name(value)}")
    cleaned = [item.strip() for item in items if item.strip()]
    return cleaned or None


def _words(value: object) -> list[str] | None:
    names = _string_list(value, None)
    if names is None:
        return None
    bad = [n for n in names if not _ARGUMENT_NAME.fullmatch(n)]
    if bad:
        raise _Bad(
            "argument names must be letters, digits and '_', not starting with a digit; "
            f"bad: {', '.join(repr(n) for n in bad)}"
        )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _Bad(f"argument names must be unique; repeated: {', '.join(duplicates)}")
    return names


def _icon(value: object, skill_dir: str) -> str | None:
    text = _text(value)
    if text is None:
        return None
    if os.path.isabs(text) or "\x00" in text:
        raise _Bad(
            f"icon path {text!r} must be relative to the skill directory (dropped)",
            "host.icon_outside",
        )
    inside = os.path.normpath(os.path.join(skill_dir, text))
    real_dir = os.path.realpath(skill_dir)
    real = os.path.realpath(inside)
    if not (inside + os.sep).startswith(os.path.normpath(skill_dir) + os.sep) or not (
        real == real_dir or real.startswith(real_dir + os.sep)
    ):
        raise _Bad(f"icon path {text!r} leaves the skill directory (dropped)", "host.icon_outside")
    return text


def _tools(value: object) -> list[HostDependency] | None:
    if not isinstance(value, list):
        raise _Bad(f"must be a list of tool mappings, not {_type_name(value)}")
    tools: list[HostDependency] = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise _Bad(f"entry {index} must be a mapping, not {_type_name(item)}")
        values: dict[str, str] = {}
        for key in _DEPENDENCY_KEYS:
            got = item.get(key)
            if got is None:
                continue
            if not isinstance(got, str):
                raise _Bad(f"entry {index}: {key!r} must be a string, not {_type_name(got)}")
            values[key] = got
        if "type" not in values or "value" not in values:
            raise _Bad(f"entry {index} needs both 'type' and 'value'")
        tools.append(HostDependency(**values))
    return tools or None


def _apply(
    reading: HostReading,
    rule: FieldRule,
    key: str,
    value: object,
    *,
    path: str,
    skill_dir: str,
) -> None:
    """Read one value by its rule into ``reading``; a bad value becomes a warning."""
    try:
        if rule.kind == "flag":
            flag = _flag(value) != rule.invert
            if rule.target == "invocation.model":
                reading.model = flag if reading.model is None else reading.model and flag
            else:
                reading.user = flag if reading.user is None else reading.user and flag
            return
        result: Any
        if rule.kind == "text":
            result = _text(value)
        elif rule.kind == "words":
            result = _words(value)
        elif rule.kind == "globs":
            result = _string_list(value, ",")
        elif rule.kind == "choice":
            result = _text(value)
            if result is not None and result not in rule.choices:
                raise _Bad(f"must be one of {', '.join(rule.choices)}, not {result!r}")
        elif rule.kind == "icon":
            result = _icon(value, skill_dir)
        else:
            result = _tools(value)
    except _Bad as exc:
        reading.diagnostics.append(
            Diagnostic(
                severity="warning",
                code=exc.code,
                field=key,
                path=path,
                message=f"{path}: field {key!r} {exc}; the default applies",
            )
        )
        return
    if result is not None:
        reading.values[rule.target] = result


def host_from_frontmatter(raw: Mapping[str, Any], *, path: str | None) -> HostReading:
    """The host fields of a frontmatter mapping (keys outside :data:`FRONTMATTER_FIELDS` are
    not looked at; the ``field.host`` warnings are the validator's)."""
    reading = HostReading()
    shown = path or "SKILL.md"
    skill_dir = os.path.dirname(path) if path else "."
    for key, rule in FRONTMATTER_FIELDS.items():
        if key in raw:
            _apply(reading, rule, key, raw[key], path=shown, skill_dir=skill_dir)
    return reading


def openai_yaml_problem(code: str, path: str, why: str) -> Diagnostic:
    """A warning that ``agents/openai.yaml`` at ``path`` is ignored, and why."""
    return Diagnostic(
        severity="warning",
        code=code,
        path=path,
        message=f"{path}: {why}; its fields are ignored and the defaults apply",
    )


def host_from_openai(document: object, *, path: str, skill_dir: str) -> HostReading:
    """The host fields of a loaded ``agents/openai.yaml`` document (``path`` names the file)."""
    reading = HostReading()
    if not isinstance(document, Mapping):
        if document is not None:  # an empty file says nothing
            reading.diagnostics.append(
                openai_yaml_problem(
                    "openai_yaml.invalid",
                    path,
                    f"must be a YAML mapping, not {_type_name(document)}",
                )
            )
        return reading
    for dotted, rule in OPENAI_FIELDS.items():
        section_name, key = dotted.split(".")
        section = document.get(section_name)
        if section is None:
            continue
        if not isinstance(section, Mapping):
            problem = f"field {section_name!r} must be a mapping, not {_type_name(section)}"
            if not any(d.field == section_name for d in reading.diagnostics):
                reading.diagnostics.append(
                    Diagnostic(
                        severity="warning",
                        code="host.invalid",
                        field=section_name,
                        path=path,
                        message=f"{path}: {problem}; the defaults apply",
                    )
                )
            continue
        if key in section:
            _apply(reading, rule, dotted, section[key], path=path, skill_dir=skill_dir)
    return reading
