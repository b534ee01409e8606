"""Shared data types that appear inside many results: skills, diagnostics, load errors."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Scope = Literal["repo", "user", "plugin", "extra", "remote"]
Severity = Literal["error", "warning", "info"]

#: Scope precedence used for ordering and for deduplicating the same file reached twice.
SCOPE_ORDER: dict[str, int] = {"repo": 0, "user": 1, "plugin": 2, "extra": 3, "remote": 4}


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


# Frozen, so not a `Wire`: one instance is shared by every skill that allows both invocations.
class Invocation(msgspec.Struct, frozen=True, kw_only=True):
    """Who may invoke a skill (docs/conformance.md): the model on its own, the user as a slash
    command.

    Both flags are always sent."""

    model: bool
    user: bool


#: Both invocations allowed: what a skill without host fields gets (shared, it is immutable).
DEFAULT_INVOCATION = Invocation(model=True, user=True)


class HostDependency(Wire, kw_only=True):
    """A tool a skill needs, from ``dependencies.tools[]`` of Codex's ``agents/openai.yaml``."""

    type: str
    value: str
    description: str | None = None
    transport: str | None = None
    url: str | None = None


class HostFields(Wire, kw_only=True):
    """How hosts (Claude Code, Codex) run and show a skill (docs/conformance.md); only present keys
    are sent.

    Icons are paths relative to the skill directory."""

    argument_hint: str | None = None
    arguments: list[str] | None = None
    when_to_use: str | None = None
    paths: list[str] | None = None
    model: str | None = None
    effort: str | None = None
    context: str | None = None
    agent: str | None = None
    display_name: str | None = None
    short_description: str | None = None
    icon_small: str | None = None
    icon_large: str | None = None
    brand_color: str | None = None
    default_prompt: str | None = None
    dependencies: list[HostDependency] | None = None


def _default_invocation() -> Invocation:
    return DEFAULT_INVOCATION


class PluginInfo(Wire, kw_only=True):
    """The agent's plugin a skill came in (scope ``plugin``): its name, where it was installed
    from and its version when the agent recorded them, and which agent enabled it."""

    name: str
    agent: str
    marketplace: str | None = None
    version: str | None = None


class RemoteInfo(Wire, kw_only=True):
    """The skills server a skill comes from (scope ``remote``): the remote's name in the user's
    config and its URL (docs/remote.md)."""

    name: str
    url: str


class SkillMetadata(Wire, kw_only=True):
    """A discovered, valid (or leniently accepted) skill as listed in a catalog."""

    id: str
    name: str
    description: str
    path: str
    dir: str
    scope: Scope
    #: The folder the skill was found under (its source root: a scope's skills folder, a
    #: plugin's, an extra root), not the repository root (``repoRoot`` of a listing).
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
    #: Always encoded: a default factory is never compared for ``omit_defaults``.
    invocation: Invocation = msgspec.field(default_factory=_default_invocation)
    host: HostFields | None = None
    #: The coding agents that would find this skill by their own rules (``claude-code``,
    #: ``codex``, ``copilot``, ...); empty (and omitted) for roots only skillsd reads.
    agents: list[str] = msgspec.field(default_factory=list)
    #: The plugin it came in, and its namespaced name (``plugin:skill``) when the agent
    #: namespaces its plugins' skills.
    plugin: PluginInfo | None = None
    #: The skills server it comes from; its ``qualifiedName`` is then ``remote:skill``.
    remote: RemoteInfo | None = None
    qualified_name: str | None = None
    #: The id of the first skill (in catalog order) whose folder holds byte-identical files:
    #: this one is a copy, shown once in prompts and commands.
    copy_of: str | None = None


class SkillLoadError(Wire, kw_only=True):
    """A SKILL.md that could not be accepted into the catalog, with why."""

    path: str
    message: str
    diagnostics: list[Diagnostic]
