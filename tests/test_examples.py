"""The runnable scripts in examples/ work as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
