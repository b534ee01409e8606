"""Where each coding agent looks for skills (docs/agents.md): one table, :data:`AGENT_RULES`.

Each row is one agent: its project folders (and whether it reads them in every directory from
the repository root down to the working directory, or in the working directory only), its user
folders, its managed/system folders, the environment variables that name more folders, and what
its model is shown when two skills share a name. The comment above each row names its source;
rows resting only on another installer's list say "cross-check only".

Everything else is derived from the table: the default roots skillsd scans
(:data:`SKILL_FOLDERS`, used by :func:`skillsd.core.discovery.fs_roots.compute_roots`), every
skill's ``agents[]``, one agent's view (:mod:`skillsd.core.catalog.agent_view`) and the install
targets. Adding an agent or a folder is a change to this table only.

Not to be confused with :mod:`skillsd.core.discovery.fs_personas`, which holds agent *definitions*
(the personas of ``agents.list``/``agents.get``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AGENTS",
    "AGENT_RULES",
    "COMMAND_FOLDER",
    "ENV_VARIABLES",
    "HOME_VARIABLES",
    "SHORT_NAMES",
    "SKILL_FOLDERS",
    "AgentRules",
    "SkillFolder",
    "accepted_agent_names",
    "agents_in_order",
    "canonical_agent",
    "env_folders",
    "expand_folder",
    "rules_of",
    "user_folder_path",
]

#: A folder template's variables and what each means when unset (relative to the home). A
#: relative value is taken from the home directory too, never the process cwd.
HOME_VARIABLES: dict[str, str] = {
    "$CODEX_HOME": ".codex",
    "$CLAUDE_CONFIG_DIR": ".claude",
    "$COPILOT_HOME": ".copilot",
    "$XDG_CONFIG_HOME": ".config",
    "$GEMINI_CLI_HOME": "",
}


@dataclass(frozen=True, slots=True)
class AgentRules:
    """One agent's discovery rules.

    ``project`` folders are relative to a directory (highest precedence first); ``walk`` says
    which directories: ``"chain"`` every one from the repository root down to the working
    directory, ``"cwd"`` the working directory only. ``user`` folders start with ``~`` or one
    of :data:`HOME_VARIABLES`; ``system`` folders are absolute (managed, admin). ``env_lists``
    are variables holding more folders, with their separator. ``clash`` is what the agent's
    model is shown of two skills of one name (the agent may still load both): ``"first"`` the
    one of highest precedence (project before user unless ``user_first``), ``"all"`` both (or
    it is not known).
    """

    name: str
    title: str
    project: tuple[str, ...]
    walk: Literal["chain", "cwd"]
    user: tuple[str, ...]
    system: tuple[str, ...] = ()
    env_lists: tuple[tuple[str, str], ...] = ()
    clash: Literal["first", "all"] = "all"
    user_first: bool = False
    #: Below the agents with real adoption: listed after them.
    secondary: bool = False
    #: The folders rest only on another installer's list, not the agent's docs or source.
    cross_check: bool = False
    #: The agent's own folder in a project (``.claude``): when it exists, the project uses the
    #: agent, and an install links skills for it.
    own: str = ""


AGENT_RULES: tuple[AgentRules, ...] = (
    # Claude Code docs (skills, settings, managed-settings, claude-directory): .claude/skills in
    # the cwd and every parent up to the repository root; ~/.claude moves with
    # CLAUDE_CONFIG_DIR; managed /etc/claude-code/.claude/skills. The docs rank enterprise >
    # personal > project for a name, and the Skill tool listing Claude Code 2.1.328 sends its
    # model holds the personal skill only (its request, tests/test_real_agents.py; 2.1.197
    # listed both).
    AgentRules(
        "claude-code",
        "Claude Code",
        project=(".claude/skills",),
        walk="chain",
        user=("$CLAUDE_CONFIG_DIR/skills",),
        system=("/etc/claude-code/.claude/skills",),
        clash="first",
        user_first=True,
        own=".claude",
    ),
    # Codex source (codex-rs/core-skills loader.rs): .agents/skills in every directory from the
    # project root to the cwd, .codex/skills of project config layers, ~/.agents/skills,
    # $CODEX_HOME/skills (deprecated, still read; bundled skills in its .system folder),
    # /etc/codex/skills (admin). Skills are deduplicated by path only: same names all listed.
    AgentRules(
        "codex",
        "Codex",
        project=(".agents/skills", ".codex/skills"),
        walk="chain",
        user=("~/.agents/skills", "$CODEX_HOME/skills"),
        system=("/etc/codex/skills",),
        own=".codex",
    ),
    # opencode docs and source (packages/opencode/src/skill): walks from the cwd to the git
    # worktree; .opencode/skill(s), .claude/skills, .agents/skills; user folders in the XDG
    # config home, ~/.claude/skills, ~/.agents/skills; "the last one loaded takes precedence"
    # and the project loads after the user's folders.
    AgentRules(
        "opencode",
        "opencode",
        project=(".agents/skills", ".claude/skills", ".opencode/skills", ".opencode/skill"),
        walk="chain",
        user=("~/.agents/skills", "~/.claude/skills", "$XDG_CONFIG_HOME/opencode/skills"),
        clash="first",
        own=".opencode",
    ),
    # Copilot CLI reference (skills, config dir): .github/skills, .agents/skills,
    # .claude/skills, then the parents' (monorepos); ~/.copilot/skills (moves with
    # COPILOT_HOME), ~/.agents/skills; COPILOT_SKILLS_DIRS (comma-separated); "first found
    # wins", project over personal. Copilot in VS Code reads the same folders per workspace
    # folder.
    AgentRules(
        "copilot",
        "GitHub Copilot",
        project=(".github/skills", ".agents/skills", ".claude/skills"),
        walk="chain",
        user=("$COPILOT_HOME/skills", "~/.agents/skills"),
        env_lists=(("COPILOT_SKILLS_DIRS", ","),),
        clash="first",
        own=".github",
    ),
    # Cursor docs (skills): .agents/skills, .cursor/skills and, for compatibility,
    # .claude/skills and .codex/skills, in the project and in the home. Walking up and name
    # clashes: not documented.
    AgentRules(
        "cursor",
        "Cursor",
        project=(".agents/skills", ".cursor/skills", ".claude/skills", ".codex/skills"),
        walk="cwd",
        user=("~/.agents/skills", "~/.cursor/skills", "~/.claude/skills", "~/.codex/skills"),
        own=".cursor",
    ),
    # Gemini CLI source (packages/core/src/skills): <workspace>/.gemini/skills and
    # .agents/skills (trusted folders only, no upward walk), the same under the home
    # (GEMINI_CLI_HOME replaces it); workspace > user, and .agents/skills over .gemini/skills.
    AgentRules(
        "gemini-cli",
        "Gemini CLI",
        project=(".agents/skills", ".gemini/skills"),
        walk="cwd",
        user=("$GEMINI_CLI_HOME/.agents/skills", "$GEMINI_CLI_HOME/.gemini/skills"),
        clash="first",
        own=".gemini",
    ),
    # Windsurf docs (cascade/skills): .windsurf/skills, ~/.codeium/windsurf/skills, and
    # .agents/skills, ~/.agents/skills for compatibility (.claude only behind a setting).
    AgentRules(
        "windsurf",
        "Windsurf",
        project=(".windsurf/skills", ".agents/skills"),
        walk="cwd",
        user=("~/.codeium/windsurf/skills", "~/.agents/skills"),
        own=".windsurf",
    ),
    # Goose source (crates/goose/src/skills): the working directory's .agents/skills,
    # .goose/skills, .claude/skills, then the global folders; the first name seen wins.
    AgentRules(
        "goose",
        "Goose",
        project=(".agents/skills", ".goose/skills", ".claude/skills"),
        walk="cwd",
        user=(
            "~/.agents/skills",
            "$XDG_CONFIG_HOME/goose/skills",
            "~/.claude/skills",
            "$XDG_CONFIG_HOME/agents/skills",
        ),
        clash="first",
        own=".goose",
    ),
    # Amp: cross-check only (another installer's list): .agents/skills and the XDG config
    # home's agents/skills.
    AgentRules(
        "amp",
        "Amp",
        project=(".agents/skills",),
        walk="cwd",
        user=("$XDG_CONFIG_HOME/agents/skills",),
        cross_check=True,
    ),
    # Cline source (apps/vscode skill-directories.ts): at the cwd .clinerules/skills,
    # .cline/skills, .claude/skills, .agents/skills; ~/.cline/skills, ~/.agents/skills; the
    # user's (global) skills beat the project's.
    AgentRules(
        "cline",
        "Cline",
        project=(".clinerules/skills", ".cline/skills", ".claude/skills", ".agents/skills"),
        walk="cwd",
        user=("~/.cline/skills", "~/.agents/skills"),
        clash="first",
        user_first=True,
        own=".clinerules",
    ),
    # Roo Code source (SkillsManager.ts): at the cwd .roo/skills and .agents/skills (and their
    # per-mode variants), the same in the home; project > global, .roo over .agents.
    AgentRules(
        "roo-code",
        "Roo Code",
        project=(".roo/skills", ".agents/skills"),
        walk="cwd",
        user=("~/.roo/skills", "~/.agents/skills"),
        clash="first",
        own=".roo",
    ),
    # Kiro: its docs confirm skills; the folders are cross-check only.
    AgentRules(
        "kiro",
        "Kiro",
        project=(".kiro/skills",),
        walk="cwd",
        user=("~/.kiro/skills",),
        cross_check=True,
        own=".kiro",
    ),
    # OpenClaw docs (tools/skills): <workspace>/skills is left out on purpose (any repository's
    # skills/ folder would be taken for an agent's), .agents/skills, ~/.agents/skills,
    # ~/.openclaw/skills, in that precedence.
    AgentRules(
        "openclaw",
        "OpenClaw",
        project=(".agents/skills",),
        walk="cwd",
        user=("~/.agents/skills", "~/.openclaw/skills"),
        clash="first",
        secondary=True,
    ),
    # Junie (JetBrains Air help): .junie/skills and .agents/skills; ~/.junie/skills
    # cross-check only.
    AgentRules(
        "junie",
        "Junie",
        project=(".junie/skills", ".agents/skills"),
        walk="cwd",
        user=("~/.junie/skills",),
        secondary=True,
        own=".junie",
    ),
    # Qwen Code docs (users/skills): .qwen/skills (trusted projects), ~/.qwen/skills.
    AgentRules(
        "qwen-code",
        "Qwen Code",
        project=(".qwen/skills",),
        walk="cwd",
        user=("~/.qwen/skills",),
        secondary=True,
        own=".qwen",
    ),
    # Factory droid docs (configuration/skills): .factory/skills, ~/.factory/skills; the
    # legacy .agent/skills is cross-check only.
    AgentRules(
        "factory",
        "Factory droid",
        project=(".factory/skills", ".agent/skills"),
        walk="cwd",
        user=("~/.factory/skills",),
        secondary=True,
        own=".factory",
    ),
    # Mux: cross-check only.
    AgentRules(
        "mux",
        "Mux",
        project=(".mux/skills",),
        walk="cwd",
        user=("~/.mux/skills",),
        secondary=True,
        cross_check=True,
        own=".mux",
    ),
)

#: The agents whose discovery rules skillsd knows, in the order ``agents[]`` lists them.
AGENTS: tuple[str, ...] = tuple(rules.name for rules in AGENT_RULES)

_BY_NAME = {rules.name: rules for rules in AGENT_RULES}

#: The environment variables that move or add agents' folders (what a plan keeps of the
#: environment).
ENV_VARIABLES: tuple[str, ...] = (
    *(variable[1:] for variable in HOME_VARIABLES),
    *(variable for rules in AGENT_RULES for variable, _ in rules.env_lists),
)


#: The short names people type for an agent (``claude``, ``gemini``), by canonical name. Each
#: agent's title (``Claude Code``, ``GitHub Copilot``) is accepted too, lowercased with hyphens.
SHORT_NAMES: dict[str, tuple[str, ...]] = {
    "claude-code": ("claude",),
    "codex": ("codex-cli",),
    "copilot": ("copilot-cli",),
    "gemini-cli": ("gemini",),
    "roo-code": ("roo",),
    "qwen-code": ("qwen",),
    "factory": ("droid",),
}


def _folded(name: str) -> str:
    return "-".join(name.strip().lower().replace("_", " ").split())


_ALIASES: dict[str, str] = {
    **{_folded(rules.title): rules.name for rules in AGENT_RULES},
    **{short: name for name, shorts in SHORT_NAMES.items() for short in shorts},
    **{rules.name: rules.name for rules in AGENT_RULES},
}


def canonical_agent(name: str) -> str | None:
    """The canonical name (one of :data:`AGENTS`) of an agent as people type it: itself, a
    short name (``claude``, ``gemini``) or its title, in any case; None when it names none.
    Every place that takes an agent's name normalises it here."""
    return _ALIASES.get(_folded(name))


def accepted_agent_names() -> str:
    """The names an agent is accepted under, for an error message:
    ``claude-code (claude), codex (codex-cli), ...``."""
    return ", ".join(
        f"{name} ({', '.join(SHORT_NAMES[name])})" if name in SHORT_NAMES else name
        for name in AGENTS
    )


def rules_of(agent: str) -> AgentRules | None:
    """The rules of ``agent`` (a name of :data:`AGENTS`), or None."""
    return _BY_NAME.get(agent)


@dataclass(frozen=True, slots=True)
class SkillFolder:
    """One skills folder and the agents that read it.

    ``path`` is relative to each directory of the repo chain (``scope == "repo"``), or a user
    template (``~``, a :data:`HOME_VARIABLES` variable) or an absolute system folder (``scope ==
    "user"``). ``agents`` read it in the working directory (or the home); ``walkers`` also in
    every parent up to the repository root. Compat roots (every folder but ``.agents/skills``)
    are dropped by config ``discovery.compatRoots = false``.
    """

    scope: Literal["repo", "user"]
    path: str
    agents: tuple[str, ...]
    compat: bool
    walkers: tuple[str, ...] = ()
    #: A managed/admin folder (``/etc/...``): read, never installed into.
    system: bool = False


#: Folders no agent of the table reads that skillsd has always scanned (the home's legacy
#: ``.agent/skills``).
_SKILLSD_ONLY = (("user", "~/.agent/skills"),)
_CANONICAL = {".agents/skills", "~/.agents/skills"}


def _folders() -> tuple[SkillFolder, ...]:
    readers: dict[tuple[str, str], list[AgentRules]] = {}
    system = {path for rules in AGENT_RULES for path in rules.system}
    for rules in AGENT_RULES:
        for path in rules.project:
            readers.setdefault(("repo", path), []).append(rules)
        for path in (*rules.user, *rules.system):
            readers.setdefault(("user", path), []).append(rules)
    for key in _SKILLSD_ONLY:
        readers.setdefault(key, [])
    # The canonical folders first: discovery's order puts them before the compat ones.
    keys = sorted(readers, key=lambda k: (k[0] != "repo", k[1] not in _CANONICAL))
    return tuple(
        SkillFolder(
            scope,  # type: ignore[arg-type]
            path,
            agents_in_order(r.name for r in readers[(scope, path)]),
            compat=path not in _CANONICAL,
            walkers=agents_in_order(r.name for r in readers[(scope, path)] if r.walk == "chain"),
            system=path in system,
        )
        for scope, path in keys
    )


def agents_in_order(agents: Iterable[str]) -> tuple[str, ...]:
    """``agents`` without repeats, in :data:`AGENTS` order."""
    wanted = set(agents)
    return tuple(a for a in AGENTS if a in wanted)


SKILL_FOLDERS: tuple[SkillFolder, ...] = _folders()

#: Claude Code's legacy command files (docs/protocol.md), in every directory of the repo chain and
#: in home.
COMMAND_FOLDER = os.path.join(".claude", "commands")


def expand_folder(template: str, *, home: str, env: Mapping[str, str]) -> str:
    """The absolute path of a user or system folder template for this home and environment."""
    for variable, default in HOME_VARIABLES.items():
        if template == variable or template.startswith(variable + "/"):
            value = env.get(variable[1:]) or os.path.join(home, default)
            if value == "~" or value.startswith("~" + os.sep):
                value = home + value[1:]
            # A relative value is taken from the home directory, never the process cwd.
            return os.path.normpath(os.path.join(home, value) + template[len(variable) :])
    if template.startswith("~"):
        return os.path.normpath(home + template[1:])
    return os.path.normpath(template)


def user_folder_path(folder: SkillFolder, *, home: str, env: Mapping[str, str]) -> str:
    """The absolute path of a user-scope folder for this ``home`` and environment."""
    return expand_folder(folder.path, home=home, env=env)


def env_folders(env: Mapping[str, str], *, home: str) -> Iterator[tuple[str, str]]:
    """(folder, agent) for each folder an agent's environment variable names (relative entries
    start at the home directory)."""
    for rules in AGENT_RULES:
        for variable, separator in rules.env_lists:
            for entry in env.get(variable, "").split(separator):
                entry = entry.strip()
                if entry.startswith("~"):
                    yield expand_folder(entry, home=home, env=env), rules.name
                elif entry:
                    yield os.path.normpath(os.path.join(home, entry)), rules.name
