"""Fixtures of the install tests: an isolated environment, a project (a real repository root)
and a source repository served as file:// with skills/<name> folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.install.helpers import Origin, git, isolated_env, make_origin, write_skill


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git("init", "-q", cwd=root, env=env)
    (root / ".claude").mkdir()
    return root


@pytest.fixture
def origin(tmp_path: Path, env: dict[str, str]) -> Origin:
    """Two skills under skills/ (alpha with a script and a reference), tagged v1."""
    repo = make_origin(tmp_path / "src", env)
    write_skill(
        repo.work / "skills" / "alpha",
        **{"scripts/run.sh": "#!/bin/sh\necho alpha\n", "references/guide.md": "# Guide\n"},
    )
    write_skill(repo.work / "skills" / "beta")
    (repo.work / "README.md").write_text("A collection.\n")
    repo.commit("v1")
    repo.tag("v1")
    return repo
