"""Per-cwd state is bounded: a daemon keeps at most ``limits.maxCatalogs`` catalogs; the least
recently used one no live connection has listed is dropped with its inotify watches, so a client
visiting many directories leaves memory and the watch count where they were."""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

import pytest

from tests.support.daemons import SocketClient, socket_daemon
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process

MOST = 8
VISITS = 60


def _watches(pid: int) -> int:
    """Inotify watches the process holds (one ``inotify wd:`` line each in its fdinfo)."""
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                total += sum(line.startswith("inotify wd:") for line in info)
        except OSError:
            continue
    return total


def _directories(tree: dict[str, Path]) -> list[str]:
    made = []
    for n in range(VISITS):
        cwd = tree["tmp"] / "visits" / f"d{n}"
        write_skill(cwd / ".agents" / "skills", f"visit-{n}", "A skill of one directory.")
        (cwd / ".git").mkdir()
        made.append(os.fspath(cwd))
    return made


def test_visiting_many_directories_keeps_the_catalogs_bounded(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    (tree["tmp"] / "config.toml").write_text(f"[limits]\nmaxCatalogs = {MOST}\n")
    cwds = _directories(tree)
    path = tmp_path / "d.sock"
    with socket_daemon(path, None, environ=daemon_env(tree)) as proc:
        with closing(SocketClient(path)) as lister:
            first = lister.call(1, "skills.list", {"cwd": cwds[0]})
            assert first["result"]["skills"]
            lister.call(0, "context.inspect", {"cwd": cwds[0]})  # the watches are in place
            baseline = _watches(proc.pid)
            assert baseline > 0
            # Searching other directories makes catalogs nobody listens to: they are bounded.
            for n, cwd in enumerate(cwds[1:], start=2):
                reply = lister.call(n, "skills.search", {"cwd": cwd, "query": "skill"})
                assert "result" in reply, reply
                lister.call(-n, "context.inspect", {"cwd": cwd})
            with closing(SocketClient(path)) as other:
                inspect = other.call(1, "context.inspect", {"cwd": cwds[0]})
                assert "result" in inspect
            # The listed catalog stays; the rest are at most the bound.
            watching = _watches(proc.pid)
            assert watching <= baseline * (MOST + 1), (watching, baseline)
            # Listing every directory from this connection keeps them while it lives...
            for n, cwd in enumerate(cwds, start=1000):
                assert "result" in lister.call(n, "skills.list", {"cwd": cwd})
        # ...and once it is gone, the next visit drops all but the bound.
        with closing(SocketClient(path)) as later:
            assert "result" in later.call(1, "skills.search", {"cwd": cwds[0], "query": "x"})
            assert _watches(proc.pid) <= baseline * (MOST + 1)
