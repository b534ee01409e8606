"""Shared data types that appear inside many results: skills, diagnostics, load errors."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Scope = Literal["repo", "user", "extra"]
Severity = Literal["error", "warning", "info"]

#: Scope precedence used for ordering and for deduplicating the same file reached twice.
SCOPE_ORDER: dict[str, int] = {"repo": 0, "user": 1, "extra": 2}


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Base for every wire type: camelCase keys, optional fields omitted when unset.

    Fields a peer must always see are declared without a default, so ``omit_defaults`` never
    drops them."""


class Diagnostic(Wire, kw_only=True):
    """One problem found in a skill, a config file or a scan, with a stable ``code``."""

    severity: Severity
    code: str
    message: str
    field: str | None = None
    path: str | None = None


class ResourceCounts(Wire, kw_only=True):
    """How many entries a skill directory holds in each conventional folder."""

    scripts: int
    references: int
    assets: int
    other: int


class SkillMetadata(Wire, kw_only=True):
    """A discovered, valid (or leniently accepted) skill as listed in a catalog."""

    id: str
    name: str
    description: str
    path: str
    dir: str
    scope: Scope
    root: str
    mtime_ms: float
    size: int
    enabled: bool
    resources: ResourceCounts
    diagnostics: list[Diagnostic]
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] | None = None
    allowed_tools: list[str] | None = None
    extra_fields: dict[str, Any] | None = None
    same_name: list[str] | None = None
    #: The coding agents that would find this skill by their own rules (``claude-code``,
    #: ``codex``, ``opencode``); empty (and omitted) for roots only skillsd reads.
    agents: list[str] = msgspec.field(default_factory=list)


class SkillLoadError(Wire, kw_only=True):
    """A SKILL.md that could not be accepted into the catalog, with why."""

    path: str
    message: str
    diagnostics: list[Diagnostic]
