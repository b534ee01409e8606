"""``skillsd doctor --agents``: which coding agent finds which skill (docs/agents.md).

A matrix of every listed skill against every agent of
:data:`skillsd.core.discovery.agent_folders.AGENT_RULES`: ``yes`` when the agent shows it to its
model, ``hid`` when the agent loads it but shows its model another skill of that name (its own
precedence), ``-`` when it does not look there; then the skills some agent misses, each with
the folders that agent reads, the skills an agent loads but does not show, and copies of one
skill that have drifted apart.

The matrix is the runtime's (``agents.matrix``: :mod:`skillsd.runtime.diagnosis_requests`);
this module renders it. The columns are the agents this person has (on ``PATH``, or with a
folder of their own), or every agent with ``--all`` or when none is found; the human form fits
80 columns (the table in panels of a few agents, long lines wrapped, paths shortened) unless
``--wide``.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable

import msgspec

from skillsd.cli.in_process import command_cwd, run_in_process
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd.runtime import use_cases
from skillsd_protocol.diagnosis import AgentsMatrix, AgentsMatrixParams, MatrixRow

__all__ = ["print_agents", "render_matrix"]

#: The width the human form fits unless ``--wide``.
WIDTH = 80
#: Longest skill name the narrow table shows whole (a longer one ends in "...").
_NAME_WIDTH = 32


def render_matrix(
    matrix: AgentsMatrix, *, width: int | None = WIDTH, cwd: str = "", home: str = ""
) -> str:
    """The human form: a yes/hid/- table, then who misses what and where they would look.
    ``width``: the columns it fits (None: one line each, the whole table at once); paths are
    then shown relative to ``cwd`` or ``~`` when under them."""
    if not matrix.skills:
        return "no skills here: nothing for any agent to find"

    def shown(path: str) -> str:
        return path if width is None else _short_path(path, cwd, home)

    def para(text: str, first: str = "", rest: str = "    ") -> list[str]:
        text = escape_controls(text)
        if width is None:
            return [first + text]
        wrapped = textwrap.wrap(
            text,
            width,
            initial_indent=first,
            subsequent_indent=rest,
            break_long_words=False,
            break_on_hyphens=False,
        )
        return [part for line in wrapped for part in _fold(line, width, rest)]

    lines = []
    if not matrix.all_agents:
        lines += para(f"agents found here: {', '.join(matrix.agents)}; `--all` shows every agent")
        lines.append("")
    lines += _table(matrix, width)
    lines.append("")
    lines.append("yes: shown to its model; hid: loaded, but another of that name is shown")
    missed = [r for r in matrix.skills if r.missed_by]
    if not missed:
        lines += para(f"every agent ({', '.join(matrix.agents)}) finds every skill")
    else:
        lines.append(f"missed by some agent ({len(missed)} of {len(matrix.skills)} skills):")
        for row in missed:
            who = ", ".join(row.missed_by)
            lines += para(f"{row.name}: not found by {who}  ({shown(row.path)})", "  ")
    hidden = [r for r in matrix.skills if r.hidden_for]
    if hidden:
        lines.append("")
        lines.append("loaded but not shown to the model:")
        for row in hidden:
            lines += [wrapped for line in _hidden_lines(row, shown) for wrapped in para(line, "  ")]
    if matrix.drift:
        lines.append("")
        lines.append("same name, different files:")
        for line in matrix.drift:
            # "DIR differs from DIR in N file(s): ..." (drift_lines)
            first, _, rest = line.partition(" differs from ")
            lines += para(f"{shown(first)} differs from {shown(rest)}" if rest else line, "  ")
    lines.append("")
    lines.append("where each agent looks, highest precedence first:")
    for agent in matrix.agents:
        lines += para(f"{agent}: {', '.join(matrix.folders[agent])}", "  ")
    return "\n".join(lines)


def _table(matrix: AgentsMatrix, width: int | None) -> list[str]:
    """The yes/hid/- table; at a ``width``, in panels of as many agents as fit, a long skill
    name shortened."""
    names = [escape_controls(r.name) for r in matrix.skills]
    if width is not None:
        names = [n if len(n) <= _NAME_WIDTH else n[: _NAME_WIDTH - 3] + "..." for n in names]
    first = max(len("skill"), *map(len, names))
    columns = [max(len(a), 3) for a in matrix.agents]
    panels = [list(range(len(matrix.agents)))]
    if width is not None:
        room = width - first - len("  scope   ")
        panels = [[]]
        used = -2  # no separator before a panel's first column
        for i, w in enumerate(columns):
            if panels[-1] and used + 2 + w > room:
                panels.append([])
                used = -2
            panels[-1].append(i)
            used += 2 + w
    lines: list[str] = []
    for panel in panels:
        if lines:
            lines.append("")
        head = "  ".join(f"{matrix.agents[i]:<{columns[i]}}" for i in panel)
        lines.append(f"{'skill':<{first}}  {'scope':<6}  {head}".rstrip())
        for name, row in zip(names, matrix.skills, strict=True):
            cells = "  ".join(f"{_cell(row, matrix.agents[i]):<{columns[i]}}" for i in panel)
            lines.append(f"{name:<{first}}  {row.scope:<6}  {cells}".rstrip())
    return lines


def _fold(line: str, width: int, indent: str) -> list[str]:
    """``line`` cut to ``width``, a path longer than that after one of its ``/``."""
    parts = []
    while len(line) > width:
        cut = line.rfind("/", len(indent) + 1, width)
        cut = cut + 1 if cut > 0 else width
        parts.append(line[:cut])
        line = indent + line[cut:]
    return [*parts, line]


def _short_path(path: str, cwd: str, home: str) -> str:
    """``path`` (or text starting with one) relative to ``cwd`` when inside it, else with
    ``~`` for ``home``."""
    for base, shown in ((cwd, ""), (home, "~" + os.sep)):
        prefix = base.rstrip(os.sep) + os.sep
        if base and path.startswith(prefix):
            return shown + path[len(prefix) :]
    return path


def _hidden_lines(row: MatrixRow, shown: Callable[[str], str]) -> list[str]:
    """One line per skill shown instead of ``row``'s, naming the agents (controls not escaped
    yet)."""
    by_shown: dict[str, list[str]] = {}
    for agent, path in row.shown_instead.items():
        by_shown.setdefault(path, []).append(agent)
    lines = []
    for path, agents in by_shown.items():
        verbs = "loads it but shows" if len(agents) == 1 else "load it but show"
        lines.append(f"{row.name}: {', '.join(agents)} {verbs} {shown(path)}  ({shown(row.path)})")
    return lines


def _cell(row: MatrixRow, agent: str) -> str:
    if agent not in row.agents:
        return "-"
    return "hid" if agent in row.hidden_for else "yes"


def print_agents(args: argparse.Namespace) -> int:
    """Print the matrix of ``--cwd``'s catalog (``agents.matrix``) for the agents found here
    (``--all``: all of them); exit status 0, or 2 when a config file is invalid (``skillsd
    doctor`` without ``--agents`` says why)."""
    params = AgentsMatrixParams(all_agents=args.all)
    try:
        matrix = run_in_process(
            args, lambda svc, caller: use_cases.agents_matrix(svc, params, caller), warn=False
        )
    except SkillsdError as exc:
        print(f"skillsd doctor --agents: {escape_controls(exc.message)}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(matrix) + b"\n")
        return 0
    if matrix.none_found:
        print("no coding agent found here (on PATH or by its own folders): showing every agent\n")
    width = None if args.wide else WIDTH
    home = os.path.expanduser("~")
    print(render_matrix(matrix, width=width, cwd=command_cwd(args), home=home))
    return 0
