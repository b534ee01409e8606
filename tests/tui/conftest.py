"""Fixtures of the TUI tests: a short runtime directory for the shared daemon they start."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemons import daemon_pids, kill_pid


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A fresh directory with a short path (Unix socket paths are limited to ~100 bytes and
    pytest's tmp_path can be longer); the shared daemon started under it is killed after."""
    path = Path(tempfile.mkdtemp(prefix="sdt-"))
    try:
        yield path
    finally:
        for pid in daemon_pids(path / "run" / "skillsd.sock"):
            kill_pid(pid)
        shutil.rmtree(path, ignore_errors=True)
