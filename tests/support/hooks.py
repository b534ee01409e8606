"""``skillsd hook`` as an agent runs it, with the shared daemon it starts killed afterwards."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.daemons import shared_daemon_runtime
from tests.support.env import example_user_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "project"


@contextmanager
def hook_daemon_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The examples' environment with a short runtime dir for the shared daemon the hook
    starts (killed after)."""
    with shared_daemon_runtime("sdh-") as runtime:
        yield {**example_user_env(tmp_path), "SKILLSD_RUNTIME_DIR": str(runtime)}


def run_hook(agent: str, stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillsd", "hook", agent],
        input=stdin,
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
