"""``skillsd doctor --agents``: which coding agent finds which skill (docs/agents.md).

A matrix of every listed skill against every agent of
:data:`skillsd.core.agent_folders.AGENT_RULES`: ``yes`` when the agent shows it to its model,
``hid`` when the agent loads it but shows its model another skill of that name (its own
precedence), ``-`` when it does not look there; then the skills some agent misses, each with
the folders that agent reads, the skills an agent loads but does not show, and copies of one
skill that have drifted apart.

The columns are the agents this person has (:func:`agents_present`: on ``PATH``, or with a
folder of their own), or every agent with ``--all`` or when none is found; the human form fits
80 columns (the table in panels of a few agents, long lines wrapped, paths shortened) unless
``--wide``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Collection, Mapping

import msgspec

from skillsd.core.agent_folders import AGENT_RULES, AgentRules, expand_folder
from skillsd.core.catalog import Catalog
from skillsd.core.catalog_build import build_catalog
from skillsd.core.discovery import compute_roots
from skillsd.core.display_text import escape_controls
from skillsd.core.effective_config import ConfigSource
from skillsd.core.errors import SkillsdError
from skillsd.core.skill_copies import drift
from skillsd.core.state import StateStore, default_state_path
from skillsd_protocol import Scope, SkillMetadata

__all__ = [
    "AgentsMatrix",
    "agents_matrix",
    "agents_present",
    "drift_lines",
    "print_agents",
    "render_matrix",
]

#: The width the human form fits unless ``--wide``.
WIDTH = 80
#: Longest skill name the narrow table shows whole (a longer one ends in "...").
_NAME_WIDTH = 32

#: Agent -> (the commands that start it, its own folders in the home). Its skills folders
#: are no sign: most agents read shared ones (``~/.agents/skills``) that any other may create.
_PRESENCE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "claude-code": (("claude",), ("$CLAUDE_CONFIG_DIR",)),
    "codex": (("codex",), ("$CODEX_HOME",)),
    "opencode": (("opencode",), ("$XDG_CONFIG_HOME/opencode",)),
    "copilot": (("copilot",), ("$COPILOT_HOME",)),
    "cursor": (("cursor-agent", "cursor"), ("~/.cursor",)),
    "gemini-cli": (("gemini",), ("$GEMINI_CLI_HOME/.gemini",)),
    "windsurf": (("windsurf",), ("~/.codeium/windsurf",)),
    "goose": (("goose",), ("$XDG_CONFIG_HOME/goose",)),
    "amp": (("amp",), ("$XDG_CONFIG_HOME/amp",)),
    "cline": (("cline",), ("~/.cline",)),
    "roo-code": ((), ("~/.roo",)),
    "kiro": (("kiro", "kiro-cli"), ("~/.kiro",)),
    "openclaw": (("openclaw",), ("~/.openclaw",)),
    "junie": (("junie",), ("~/.junie",)),
    "qwen-code": (("qwen",), ("~/.qwen",)),
    "factory": (("droid",), ("~/.factory",)),
    "mux": (("mux",), ("~/.mux",)),
}
#: Project folders that are no sign of their agent: a repository has ``.github`` for its
#: workflows whoever codes in it.
_NOT_A_SIGN = {"copilot": ".github/skills"}


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

    #: The columns: the agents found here, or every agent (``all_agents``).
    agents: list[str]
    skills: list[MatrixRow]
    #: Agent -> the folders it reads, highest precedence first (``~`` for the home directory;
    #: repo folders relative to the working directory, and to each parent up to the repository
    #: root for an agent that walks up).
    folders: dict[str, list[str]]
    #: Same-named skills whose files differ ("`a` differs from `b` in 2 files").
    drift: list[str] = msgspec.field(default_factory=list)
    #: The columns are every agent: asked for (``--all``), or no agent was found here.
    all_agents: bool = False


def agents_present(cwd: str, repo_root: str, *, env: Mapping[str, str], home: str) -> list[str]:
    """The agents this person has, in table order: a command of theirs on ``PATH``, or their
    own folder in the home (``~/.cursor``), the working directory or the repository root
    (``.cursor``)."""
    path = env.get("PATH", os.defpath)
    found = []
    for rules in AGENT_RULES:
        commands, home_folders = _PRESENCE.get(rules.name, ((), ()))
        own = _NOT_A_SIGN.get(rules.name, rules.own)
        places = [expand_folder(f, home=home, env=env) for f in home_folders]
        if own:
            places += [os.path.join(cwd, own), os.path.join(repo_root, own)]
        if any(shutil.which(c, path=path) for c in commands) or any(map(os.path.isdir, places)):
            found.append(rules.name)
    return found


def _folders(rules: AgentRules) -> list[str]:
    where = " (and each parent)" if rules.walk == "chain" else ""
    project = [f"{p}{where}" for p in rules.project]
    user = [*rules.system, *rules.user, *(f"${v}" for v, _ in rules.env_lists)]
    return [*user, *project] if rules.user_first else [*project, *user]


def agents_matrix(catalog: Catalog, agents: Collection[str] | None = None) -> AgentsMatrix:
    """Rows in catalog order. The columns: ``agents`` (in table order), or every agent with
    real adoption and a secondary one only when it finds something here."""
    views = {rules.name: catalog.seen_by(rules.name) for rules in AGENT_RULES}
    seen = {agent: {s.id for s in view} for agent, view in views.items()}
    columns = [
        rules
        for rules in AGENT_RULES
        if (
            rules.name in agents
            if agents is not None
            else not rules.secondary or any(rules.name in s.agents for s in catalog.skills)
        )
    ]
    names = [rules.name for rules in columns]
    rows = []
    for s in catalog.skills:
        instead = {
            a: _shown_instead(views[a], s) for a in s.agents if a in names and s.id not in seen[a]
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
        all_agents=agents is None,
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


def _shown_instead(view: list[SkillMetadata], hidden: SkillMetadata) -> str:
    """The path of the skill of ``hidden``'s name in an agent's ``view`` (a plugin's skills go
    by their qualified name)."""
    key = hidden.qualified_name or hidden.name
    return next((s.path for s in view if (s.qualified_name or s.name) == key), "")


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


def print_agents(
    cwd: str,
    *,
    env: Mapping[str, str],
    home: str,
    extra_roots: list[str],
    as_json: bool,
    every_agent: bool = False,
    wide: bool = False,
) -> int:
    """Build ``cwd``'s catalog as the daemon would and print its matrix for the agents found
    here (``every_agent``: all of them); exit status 0, or 2 when a config file is invalid
    (``skillsd doctor`` without ``--agents`` says why)."""
    try:
        config, _, _ = ConfigSource(env).for_cwd(cwd)
    except SkillsdError as exc:
        print(f"skillsd doctor --agents: {escape_controls(exc.message)}", file=sys.stderr)
        return 2
    plan = compute_roots(cwd, config, home=home, env=env, client_extra_roots=extra_roots)
    disabled = StateStore(default_state_path()).disabled(plan.repo_root)
    catalog = build_catalog(plan, config, disabled=disabled)
    present = None if every_agent else agents_present(cwd, catalog.root, env=env, home=home)
    # No agent found: every agent rather than an empty table.
    matrix = agents_matrix(catalog, present or None)
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(matrix) + b"\n")
        return 0
    if present == []:
        print("no coding agent found here (on PATH or by its own folders): showing every agent\n")
    print(render_matrix(matrix, width=None if wide else WIDTH, cwd=cwd, home=home))
    return 0
