"""npm's verbs: ``skillsd install SOURCE`` is ``add``; a bare ``skillsd install`` and ``skillsd
restore`` (the JSON-RPC method's name) restore the lock file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.install.helpers import Origin
from tests.support.cli import run_cli

pytestmark = pytest.mark.process


def test_install_with_a_source_adds_and_restore_restores(
    project: Path, env: dict[str, str], origin: Origin
) -> None:
    added = run_cli("install", origin.url, "--skill", "alpha", cwd=project, env=env)
    assert added.returncode == 0, added.stderr
    assert "installed alpha" in added.stdout
    assert (project / ".agents" / "skills" / "alpha" / "SKILL.md").is_file()
    assert '"alpha"' in (project / "skills-lock.json").read_text()

    for restore in (["restore"], ["install"]):
        shutil.rmtree(project / ".agents")
        shutil.rmtree(project / ".claude" / "skills")
        restored = run_cli(*restore, cwd=project, env=env)
        assert restored.returncode == 0, restored.stderr
        assert "restored alpha" in restored.stdout
        assert (project / ".claude" / "skills" / "alpha" / "SKILL.md").is_file()

    again = run_cli("restore", "--json", cwd=project, env=env)
    assert again.returncode == 0 and '"unchanged":["alpha"]' in again.stdout


def test_an_add_option_without_a_source_says_what_install_does(
    project: Path, env: dict[str, str]
) -> None:
    refused = run_cli("install", "--skill", "alpha", cwd=project, env=env)
    assert refused.returncode == 2
    assert "--skill needs a SOURCE" in refused.stderr and "restores" in refused.stderr
    # restore takes only what a restore uses.
    assert run_cli("restore", "--agent", "codex", cwd=project, env=env).returncode == 2
