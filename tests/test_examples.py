"""The runnable scripts in examples/ work as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_python_client_example() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSD_")}
    out = subprocess.run(
        [sys.executable, os.fspath(EXAMPLES / "client_demo.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "protocol 1.0" in text
    # list: both scopes, the name collision, the invalid skill with its reason
    assert "repo  changelog-check" in text and "user  commit-message" in text
    assert "invalid: broken-skill: field 'name' ('Broken_Skill') must be lowercase" in text
    # search ranks the release skills, load suppresses a repeat, ambiguity is resolved by id
    assert text.index("release-notes    token_overlap") < text.index("changelog-check  token")
    assert "loaded again: alreadyLoaded=True" in text
    assert "error 1002 ambiguous_skill" in text
    assert f"candidate (user): {EXAMPLES / 'home'}" in text
    assert "loaded pdf-forms from the repo scope by id" in text
    assert "references/fields.md: 134 bytes, utf-8" in text


def test_demo_ends_with_how_to_run_skillsd_and_install_it() -> None:
    # As `make demo` runs it: the venv's Python, from the repository's root.
    root = EXAMPLES.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSD_")}
    out = subprocess.run(
        [sys.executable, "examples/demo.py"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    tail = out.stdout.rsplit("== Your turn", 1)[1]
    script = Path(sys.executable).with_name("skillsd")
    command = os.path.relpath(script, root) if script.is_relative_to(root) else str(script)
    assert f"run it as {command}:" in tail
    assert "docs/install.md" in tail and "pipx install '.[mcp,tui]'" in tail
    # The commands it prints run, from the same place.
    help_line = next(line.strip() for line in tail.splitlines() if line.strip().endswith("--help"))
    done = subprocess.run(help_line.split(), cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "usage" in done.stdout.lower(), done.stderr
