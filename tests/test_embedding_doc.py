"""The "embed in an agent host" walkthrough (docs/embedding.md) runs exactly as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(markdown: str) -> str:
    """The ```python blocks of a Markdown document, joined into one script."""
    return "\n".join(re.findall(r"^```python\n(.*?)^```$", markdown, re.S | re.M))


def isolated_env(tmp: Path) -> dict[str, str]:
    """The example user's home, and config and state in ``tmp``: nothing of the real user's."""
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


def test_walkthrough_code_runs(tmp_path: Path) -> None:
    script = python_blocks((ROOT / "docs" / "embedding.md").read_text(encoding="utf-8"))
    assert "permissions_remember" in script and "tools_call" in script
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=isolated_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "['skill_search', 'skill_load', 'skill_read_file']" in out
    assert "skill_load(release-notes)" in out
    assert '<skill_context name="release-notes"' in out
