"""Fixtures of the install tests: an isolated environment, a project (a real repository root)
and a source repository served as file:// with skills/<name> folders."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.install.helpers import Origin, git, make_origin, write_skill
from tests.support.env import git_user_env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return git_user_env(tmp_path)


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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A loopback HTTP server over ``tmp_path/www``."""
    www = tmp_path / "www"
    www.mkdir()
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *a, directory=str(www), **k
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
