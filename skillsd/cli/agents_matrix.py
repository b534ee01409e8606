"""``skillsd doctor --agents``: which coding agent finds which skill (docs/agents.md).

A matrix of every listed skill against every agent of
:data:`skillsd.core.agent_folders.AGENT_RULES`: ``yes`` when the agent shows it to its model,
``hid`` when the agent loads it but shows its model another skill of that name (its own
precedence), ``-`` when it does not look there; then the skills some agent misses, each with
the folders that agent reads, the skills an agent loads but does not show, and copies of one
skill that have drifted apart.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping

import msgspec

from skillsd.core.agent_folders import AGENT_RULES, AgentRules
from skillsd.core.catalog import Catalog
from skillsd.core.catalog_build import build_catalog
from skillsd.core.discovery import compute_roots
from skillsd.core.display_text import escape_controls
from skillsd.core.effective_config import ConfigSource
from skillsd.core.errors import SkillsdError
from skillsd.core.skill_copies import drift
from skillsd.core.state import StateStore, default_state_path
from skillsd_protocol import Scope, SkillMetadata

__all__ = ["AgentsMatrix", "agents_matrix", "drift_lines", "print_agents", "render_matrix"]


class _Out(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    pass


class MatrixRow(_Out, kw_only=True):
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


class AgentsMatrix(_Out, kw_only=True):
    """The matrix as ``doctor --agents --json`` prints it."""

    agents: list[str]
    skills: list[MatrixRow]
    #: Agent -> the folders it reads, highest precedence first (``~`` for the home directory;
    #: repo folders relative to the working directory, and to each parent up to the repository
    #: root for an agent that walks up).
    folders: dict[str, list[str]]
    #: Same-named skills whose files differ ("`a` differs from `b` in 2 files").
    drift: list[str] = msgspec.field(default_factory=list)


def _folders(rules: AgentRules) -> list[str]:
    where = " (and each parent)" if rules.walk == "chain" else ""
    project = [f"{p}{where}" for p in rules.project]
    user = [*rules.system, *rules.user, *(f"${v}" for v, _ in rules.env_lists)]
    return [*user, *project] if rules.user_first else [*project, *user]


def agents_matrix(catalog: Catalog) -> AgentsMatrix:
    """Rows in catalog order. The columns: every agent with real adoption, and a secondary one
    only when it finds something here."""
    views = {rules.name: catalog.seen_by(rules.name) for rules in AGENT_RULES}
    seen = {agent: {s.id for s in view} for agent, view in views.items()}
    columns = [
        rules
        for rules in AGENT_RULES
        if not rules.secondary or any(rules.name in s.agents for s in catalog.skills)
    ]
    names = [rules.name for rules in columns]
    rows = []
    for s in catalog.skills:
        instead = {
            a: _shown_instead(views[a], s) for a in s.agents if a in seen and s.id not in seen[a]
        }
        rows.append(
            MatrixRow(
                id=s.id,
                name=s.name,
                path=s.path,
                scope=s.scope,
                agents=list(s.agents),
                missed_by=[a for a in names if a not in s.agents],
                hidden_for=list(instead),
                shown_instead=instead,
                copy_of=s.copy_of,
            )
        )
    return AgentsMatrix(
        agents=names,
        skills=rows,
        folders={rules.name: _folders(rules) for rules in columns},
        drift=drift_lines(catalog),
    )


def drift_lines(catalog: Catalog) -> list[str]:
    """One line per pair of same-named skills whose files differ (copies drifted apart)."""
    lines = []
    for group in catalog.by_name.values():
        plain = [s for s in group if s.qualified_name is None and s.copy_of is None]
        for a, b in itertools.pairwise(plain):
            changes = drift(a, b)
            if changes:
                differ = changes.names()
                lines.append(
                    f"{a.dir} differs from {b.dir} in {len(differ)} file(s): "
                    + ", ".join(differ[:5])
                    + (", ..." if len(differ) > 5 else "")
                )
    return lines


def render_matrix(matrix: AgentsMatrix) -> str:
    """The human form: a yes/hid/- table, then who misses what and where they would look."""
    if not matrix.skills:
        return "no skills here: nothing for any agent to find"
    names = [escape_controls(r.name) for r in matrix.skills]
    width = max(len("skill"), *map(len, names))
    columns = [max(len(a), 3) for a in matrix.agents]
    header = f"{'skill':<{width}}  {'scope':<6}  " + "  ".join(
        f"{a:<{w}}" for a, w in zip(matrix.agents, columns, strict=True)
    )
    lines = [header.rstrip()]
    for name, row in zip(names, matrix.skills, strict=True):
        cells = "  ".join(
            f"{_cell(row, a):<{w}}" for a, w in zip(matrix.agents, columns, strict=True)
        )
        lines.append(f"{name:<{width}}  {row.scope:<6}  {cells}".rstrip())
    lines.append("")
    lines.append(
        "yes: the agent shows it to its model; hid: it loads it but shows another of that name"
    )
    missed = [r for r in matrix.skills if r.missed_by]
    if not missed:
        lines.append(f"every agent ({', '.join(matrix.agents)}) finds every skill")
    else:
        lines.append(f"missed by some agent ({len(missed)} of {len(matrix.skills)} skills):")
        for row in missed:
            who = ", ".join(row.missed_by)
            lines.append(escape_controls(f"  {row.name}: not found by {who}  ({row.path})"))
    hidden = [r for r in matrix.skills if r.hidden_for]
    if hidden:
        lines.append("")
        lines.append("loaded but not shown to the model:")
        lines.extend(_hidden_lines(hidden))
    if matrix.drift:
        lines.append("")
        lines.append("same name, different files:")
        lines.extend(escape_controls(f"  {line}") for line in matrix.drift)
    lines.append("")
    lines.append("where each agent looks, highest precedence first:")
    for agent in matrix.agents:
        lines.append(f"  {agent}: {', '.join(matrix.folders[agent])}")
    return "\n".join(lines)


def _shown_instead(view: list[SkillMetadata], hidden: SkillMetadata) -> str:
    """The path of the skill of ``hidden``'s name in an agent's ``view`` (a plugin's skills go
    by their qualified name)."""
    key = hidden.qualified_name or hidden.name
    return next((s.path for s in view if (s.qualified_name or s.name) == key), "")


def _hidden_lines(rows: list[MatrixRow]) -> list[str]:
    """One line per hidden skill and skill shown instead, naming the agents."""
    lines = []
    for row in rows:
        by_shown: dict[str, list[str]] = {}
        for agent, path in row.shown_instead.items():
            by_shown.setdefault(path, []).append(agent)
        for path, agents in by_shown.items():
            verbs = "loads it but shows" if len(agents) == 1 else "load it but show"
            line = f"  {row.name}: {', '.join(agents)} {verbs} {path}  ({row.path})"
            lines.append(escape_controls(line))
    return lines


def _cell(row: MatrixRow, agent: str) -> str:
    if agent not in row.agents:
        return "-"
    return "hid" if agent in row.hidden_for else "yes"


def print_agents(
    cwd: str, *, env: Mapping[str, str], home: str, extra_roots: list[str], as_json: bool
) -> int:
    """Build ``cwd``'s catalog as the daemon would and print its matrix; exit status 0, or 2
    when a config file is invalid (``skillsd doctor`` without ``--agents`` says why)."""
    try:
        config, _, _ = ConfigSource(env).for_cwd(cwd)
    except SkillsdError as exc:
        print(f"skillsd doctor --agents: {escape_controls(exc.message)}", file=sys.stderr)
        return 2
    plan = compute_roots(cwd, config, home=home, env=env, client_extra_roots=extra_roots)
    disabled = StateStore(default_state_path()).disabled()
    matrix = agents_matrix(build_catalog(plan, config, disabled=disabled))
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(matrix) + b"\n")
    else:
        print(render_matrix(matrix))
    return 0
