"""Which folders each coding agent reads skills from (docs/embedding.md, "Which agents see a
skill").

One table, :data:`SKILL_FOLDERS`, is the single source for both the default roots skillsd scans
(:func:`skillsd.core.discovery.compute_roots`) and the ``agents[]`` every listed skill carries.
Adding an agent or a folder is a change to this table only.

Not to be confused with :mod:`skillsd.core.personas`, which holds agent *definitions* (seed 003).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AGENTS",
    "COMMAND_FOLDER",
    "SKILL_FOLDERS",
    "SkillFolder",
    "agents_in_order",
    "user_folder_path",
]

#: The agents whose discovery rules skillsd knows, in the order ``agents[]`` lists them.
AGENTS: tuple[str, ...] = ("claude-code", "codex", "opencode")

#: Placeholder for Codex's home (``$CODEX_HOME``, default ``~/.codex``) in a user folder.
CODEX_HOME = "$CODEX_HOME"


@dataclass(frozen=True, slots=True)
class SkillFolder:
    """One skills folder: where it is, which agents read it, and whether it is a compat root.

    ``path`` is relative to each directory of the repo chain (``scope == "repo"``), or starts
    with ``~`` or :data:`CODEX_HOME` (``scope == "user"``). Compat roots are the other agents'
    folders, dropped by config ``discovery.compatRoots = false``.
    """

    scope: Literal["repo", "user"]
    path: str
    agents: tuple[str, ...]
    compat: bool


SKILL_FOLDERS: tuple[SkillFolder, ...] = (
    SkillFolder("repo", ".agents/skills", ("codex", "opencode"), compat=False),
    SkillFolder("repo", ".agent/skills", (), compat=True),
    SkillFolder("repo", ".claude/skills", ("claude-code", "opencode"), compat=True),
    SkillFolder("repo", ".codex/skills", ("codex",), compat=True),
    SkillFolder("repo", ".opencode/skills", ("opencode",), compat=True),
    SkillFolder("user", "~/.agents/skills", ("codex", "opencode"), compat=False),
    SkillFolder("user", "~/.agent/skills", (), compat=True),
    SkillFolder("user", "~/.claude/skills", ("claude-code", "opencode"), compat=True),
    SkillFolder("user", f"{CODEX_HOME}/skills", ("codex",), compat=True),
    SkillFolder("user", "~/.config/opencode/skills", ("opencode",), compat=True),
)


#: Claude Code's legacy command files (docs/protocol.md), in every directory of the repo chain and
#: in home.
COMMAND_FOLDER = os.path.join(".claude", "commands")


def user_folder_path(folder: SkillFolder, *, home: str, env: Mapping[str, str]) -> str:
    """The absolute path of a user-scope folder for this ``home`` and environment."""
    path = folder.path
    if path.startswith(CODEX_HOME):
        codex_home = env.get("CODEX_HOME") or os.path.join(home, ".codex")
        if codex_home == "~" or codex_home.startswith("~" + os.sep):
            codex_home = home + codex_home[1:]
        # A relative $CODEX_HOME is taken from the home directory, never the process cwd.
        path = os.path.join(home, codex_home) + path[len(CODEX_HOME) :]
    elif path.startswith("~"):
        path = home + path[1:]
    return os.path.normpath(path)


def agents_in_order(agents: Iterable[str]) -> tuple[str, ...]:
    """``agents`` without repeats, in :data:`AGENTS` order."""
    wanted = set(agents)
    return tuple(a for a in AGENTS if a in wanted)
