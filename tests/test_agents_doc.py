"""``docs/agents.md`` is generated from the agent table and must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]


def test_agents_doc_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "docs/gen_agents.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    text = (ROOT / "docs" / "agents.md").read_text()
    for agent in ("Claude Code", "Codex", "GitHub Copilot", "Cursor", "Gemini CLI", "Windsurf"):
        assert f"| {agent} (`" in text
