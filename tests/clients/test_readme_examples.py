"""Every code block of the Python client's README runs as printed, from the repository's root,
against a real daemon with no configuration (so a load asks, and the example answers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.env import example_user_env
from tests.support.snippets import python_blocks, run_python

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "clients" / "python" / "README.md").read_text(encoding="utf-8")
BLOCKS = python_blocks(README)


def test_the_readme_has_the_examples_a_user_needs() -> None:
    assert len(BLOCKS) == 4
    assert any("permission_required" in b and "permissions_remember" in b for b in BLOCKS)


@pytest.mark.process
@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_block_runs_as_printed(block: str, tmp_path: Path) -> None:
    done = run_python(block, cwd=ROOT, env=example_user_env(tmp_path))
    assert done.returncode == 0, done.stderr
    if "permissions_remember" in block:
        assert done.stdout.startswith('<skill_context name="release-notes"'), done.stdout
    if "AsyncClient" in block:
        assert re.fullmatch(r"\d+ skills\n", done.stdout)
    if "on_progress" in block:
        assert "ProgressValue" in done.stdout or "message" in done.stdout
