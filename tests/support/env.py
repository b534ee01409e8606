"""The environments the tests run skillsd in: HOME, config, state and runtime folders inside the
test's own folders, nothing of the real user's. (A spawned daemon's base environment, with the
test hooks on, is ``tests.support.daemons.env``; these build on it or on ``os.environ``.)"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.daemons import env

ROOT = Path(__file__).resolve().parents[2]


def daemon_env(tree: dict[str, Path], **extra: str) -> dict[str, str]:
    """An environment isolating HOME, config and state inside the test's tree."""
    tmp = tree["tmp"]
    result = env(
        HOME=os.fspath(tree["home"]),
        SKILLSD_CONFIG=os.fspath(tmp / "config.toml"),
        XDG_STATE_HOME=os.fspath(tmp / "state"),
        XDG_CONFIG_HOME=os.fspath(tmp / "xdg-config"),
        **extra,
    )
    for var in ("SKILLSD_ROOT", "AGENT_SKILLS_PATH"):
        result.pop(var, None)
    return result


def example_user_env(tmp: Path) -> dict[str, str]:
    """The example user's home (``examples/home``), and config and state in ``tmp``: nothing of
    the real user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSD_")}
    for name in ("AGENT_SKILLS_PATH", "CODEX_HOME"):
        env.pop(name, None)
    env.update(
        HOME=os.fspath(ROOT / "examples" / "home"),
        SKILLSD_CONFIG=os.fspath(tmp / "config.toml"),
        XDG_STATE_HOME=os.fspath(tmp / "state"),
        XDG_CACHE_HOME=os.fspath(tmp / "cache"),
        XDG_CONFIG_HOME=os.fspath(tmp / "config"),
    )
    return env


def git_user_env(tmp: Path) -> dict[str, str]:
    """HOME, state, config and git's global config inside ``tmp`` (installs run git)."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    gitconfig = tmp / "gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text(
            "[user]\n\tname = Test\n\temail = test@example.test\n[init]\n\tdefaultBranch = main\n"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLSD_", "XDG_", "GIT_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CONFIG_HOME=str(tmp / "xdg-config"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def agent_host_env(home: Path, **extra: str) -> dict[str, str]:
    """What a coding agent's host process gets: this process's PATH, LANG and TERM, a HOME of its
    own (and its ``.config``), no colour, ``CI`` set; nothing else of the real user's."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), NO_COLOR="1", CI="1")
    return {**env, **extra}
