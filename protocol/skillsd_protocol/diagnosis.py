"""What ``doctor.report`` and ``agents.matrix`` answer: what skillsd sees in a working
directory and why (the report ``skillsd doctor`` renders), and which coding agent finds which
skill (``skillsd doctor --agents``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from skillsd_protocol.install import ScanFinding
from skillsd_protocol.messages import Params, PathText
from skillsd_protocol.model import Diagnostic, Scope, SkillLoadError, Wire

__all__ = [
    "AgentsMatrix",
    "AgentsMatrixParams",
    "ConfigFile",
    "DoctorParams",
    "DoctorReport",
    "IgnoredReport",
    "MatrixRow",
    "PermissionsReport",
    "PersonasReport",
    "RootReport",
    "SkillCounts",
    "StateReport",
    "TrustReport",
    "WatchReport",
]


class DoctorParams(Params, kw_only=True):
    cwd: PathText | None = None
    extra_roots: list[PathText] | None = None


class ConfigFile(Wire, kw_only=True):
    path: str
    exists: bool
    in_effect: bool


class RootReport(Wire, kw_only=True):
    path: str
    scope: Scope
    exists: bool
    skills: int
    errors: int


class WatchReport(Wire, kw_only=True):
    """Whether the folders a catalog's scan walked can be watched here (tried, then let go)."""

    mode: Literal["watching", "stat"]
    directories: list[str]
    reason: str | None = None
    max_user_watches: int | None = None


class StateReport(Wire, kw_only=True):
    path: str
    exists: bool
    disabled: int
    remembered: int


class PermissionsReport(Wire, kw_only=True):
    default_action: str
    final_deny: list[str]
    override: list[str]
    deny: list[str]
    allow: list[str]


class IgnoredReport(Wire, kw_only=True):
    rule: str
    key: str
    until_trusted: bool


class TrustReport(Wire, kw_only=True):
    """The repository root's trust (docs/permissions.md) and what not trusting it withholds."""

    repo_root: str
    #: The repository root (deprecated name: the same value as ``repoRoot``).
    root: str
    trusted: bool
    source: str
    #: ``skill: rule`` for each repo skill's ``allowed-tools`` entry that grants nothing.
    withheld_grants: list[str] = msgspec.field(default_factory=list)
    #: Project config entries not applied (until trusted, or ever).
    ignored: list[IgnoredReport] = msgspec.field(default_factory=list)


class PersonasReport(Wire, kw_only=True):
    """The persona (agent definition) folders of the cwd and the personas found there."""

    directories: list[str]
    names: list[str]


class SkillCounts(Wire, kw_only=True):
    total: int
    enabled: int
    invalid: int


class DoctorReport(Wire, kw_only=True):
    """Everything ``doctor`` found; ``errors`` and ``warnings`` gather problems of every kind."""

    cwd: str
    repo_root: str
    config: list[ConfigFile]
    roots: list[RootReport]
    skills: SkillCounts
    watch: WatchReport
    state: StateReport
    trust: TrustReport
    permissions: PermissionsReport
    #: The personas (the field keeps its first name, ``agents``).
    agents: PersonasReport
    errors: list[Diagnostic]
    warnings: list[Diagnostic]
    invalid_skills: list[SkillLoadError]
    #: The stages ``skills.suggest`` runs here and its activation threshold.
    suggest_stages: list[str] = msgspec.field(default_factory=list)
    suggest_threshold: float = 0.0
    #: The least score of the best candidate when nothing activates
    #: (``suggest.candidateThreshold``).
    suggest_candidate_threshold: float = 0.0
    #: What the static scan (``skillsd scan``) sees in the catalog's skills: warnings and
    #: dangers only (docs/install-skills.md).
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    #: ``skillsd list``'s last line: what was left out, why, and what would keep it.
    catalog_summary: str = ""


class AgentsMatrixParams(Params, kw_only=True):
    cwd: PathText | None = None
    extra_roots: list[PathText] | None = None
    #: Every agent skillsd knows as a column, not only those found here.
    all_agents: bool = False


class MatrixRow(Wire, kw_only=True):
    id: str
    name: str
    path: str
    scope: Scope
    agents: list[str]
    #: The agents that will not find this skill.
    missed_by: list[str]
    #: The agents that load it but show their model another skill of its name.
    hidden_for: list[str] = msgspec.field(default_factory=list)
    #: Agent (of ``hidden_for``) -> the path of the skill its model is shown instead.
    shown_instead: dict[str, str] = msgspec.field(default_factory=dict)
    copy_of: str | None = None


class AgentsMatrix(Wire, kw_only=True):
    """Which coding agent finds which skill (``doctor --agents --json`` prints it)."""

    #: The columns: the agents found here, or every agent (``all_agents``).
    agents: list[str]
    skills: list[MatrixRow]
    #: Agent -> the folders it reads, highest precedence first (``~`` for the home directory;
    #: repo folders relative to the working directory, and to each parent up to the repository
    #: root for an agent that walks up).
    folders: dict[str, list[str]]
    #: Same-named skills whose files differ ("`a` differs from `b` in 2 files").
    drift: list[str] = msgspec.field(default_factory=list)
    #: The columns are every agent: asked for (``allAgents``), or no agent was found here.
    all_agents: bool = False
    #: No coding agent was found here (on ``PATH`` or by its own folders).
    none_found: bool = False
