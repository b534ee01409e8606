"""``skillsd doctor --agents``: which coding agent finds which skill (docs/embedding.md).

A matrix of every listed skill against every agent of
:data:`skillsd.core.agent_folders.AGENTS`, from the ``agents[]`` the catalog computed, followed by
the skills some agent will miss, each with the folders that agent reads instead.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import msgspec

from skillsd.core.agent_folders import AGENTS, SKILL_FOLDERS
from skillsd.core.catalog import Catalog
from skillsd.core.catalog_build import build_catalog
from skillsd.core.discovery import compute_roots
from skillsd.core.display_text import escape_controls
from skillsd.core.effective_config import ConfigSource
from skillsd.core.errors import SkillsdError
from skillsd.core.state import StateStore, default_state_path
from skillsd_protocol import Scope

__all__ = ["AgentsMatrix", "agents_matrix", "print_agents", "render_matrix"]


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


class AgentsMatrix(_Out, kw_only=True):
    """The matrix as ``doctor --agents --json`` prints it."""

    agents: list[str]
    skills: list[MatrixRow]
    #: Agent -> the folders it reads (``~`` for the home directory; repo folders are relative
    #: to every directory from the repository root down to the working directory).
    folders: dict[str, list[str]]


def agents_matrix(catalog: Catalog) -> AgentsMatrix:
    """Rows in catalog order; ``missedBy`` lists the agents not in the skill's ``agents``."""
    rows = [
        MatrixRow(
            id=s.id,
            name=s.name,
            path=s.path,
            scope=s.scope,
            agents=list(s.agents),
            missed_by=[a for a in AGENTS if a not in s.agents],
        )
        for s in catalog.skills
    ]
    folders = {a: [f.path for f in SKILL_FOLDERS if a in f.agents] for a in AGENTS}
    return AgentsMatrix(agents=list(AGENTS), skills=rows, folders=folders)


def render_matrix(matrix: AgentsMatrix) -> str:
    """The human form: a yes/- table, then who misses what and where they would look."""
    if not matrix.skills:
        return "no skills here: nothing for any agent to find"
    names = [escape_controls(r.name) for r in matrix.skills]
    width = max(len("skill"), *map(len, names))
    columns = [max(len(a), 3) for a in matrix.agents]
    header = f"{'skill':<{width}}  scope  " + "  ".join(
        f"{a:<{w}}" for a, w in zip(matrix.agents, columns, strict=True)
    )
    lines = [header.rstrip()]
    for name, row in zip(names, matrix.skills, strict=True):
        cells = "  ".join(
            f"{'yes' if a in row.agents else '-':<{w}}"
            for a, w in zip(matrix.agents, columns, strict=True)
        )
        lines.append(f"{name:<{width}}  {row.scope:<5}  {cells}".rstrip())
    missed = [r for r in matrix.skills if r.missed_by]
    lines.append("")
    if not missed:
        lines.append(f"every agent ({', '.join(matrix.agents)}) finds every skill")
        return "\n".join(lines)
    lines.append(f"missed by some agent ({len(missed)} of {len(matrix.skills)} skills):")
    for row in missed:
        who = ", ".join(row.missed_by)
        lines.append(escape_controls(f"  {row.name}: not found by {who}  ({row.path})"))
    lines.append("")
    lines.append("where each agent looks (repo folders: from the repository root down to cwd):")
    for agent in matrix.agents:
        lines.append(f"  {agent}: {', '.join(matrix.folders[agent])}")
    return "\n".join(lines)


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
