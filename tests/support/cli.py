"""The one way the tests run the ``skillsd`` command line: a subprocess, as a user runs it, with
the output captured as text."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.support.env import daemon_env


def run_cli(
    *args: str, cwd: Path, env: Mapping[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``skillsd ARGS`` in ``cwd`` with ``env``, reading nothing (``skillsd mcp`` would wait on
    an inherited standard input)."""
    return subprocess.run(
        [sys.executable, "-m", "skillsd", *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def run_tree_cli(
    tree: dict[str, Path], *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``skillsd ARGS`` on a test tree (``tests.support.skill_tree.make_project``): in ``cwd``
    (default: the project) with the tree's isolated environment."""
    return run_cli(*args, cwd=cwd or tree["project"], env=daemon_env(tree), timeout=timeout)
