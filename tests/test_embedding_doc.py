"""The "embed in an agent host" walkthrough (docs/embedding.md) runs exactly as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.env import example_user_env
from tests.support.snippets import python_script, run_python

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


def test_walkthrough_code_runs(tmp_path: Path) -> None:
    script = python_script((ROOT / "docs" / "embedding.md").read_text(encoding="utf-8"))
    assert "permissions_remember" in script and "tools_call" in script
    done = run_python(script, cwd=ROOT, env=example_user_env(tmp_path))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "['skill_search', 'skill_load', 'skill_read_file']" in out
    assert "skill_load(release-notes)" in out
    assert '<skill_context name="release-notes"' in out
