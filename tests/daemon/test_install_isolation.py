"""A repository's lock file cannot stall a daemon: a lock that is a FIFO, or a link to the
daemon's own stdin, is refused without a read, and install work holds only the install pool's
slots, so other clients' requests are answered meanwhile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env

pytestmark = pytest.mark.process


def _daemon(tmp: Path) -> StdioDaemon:
    (tmp / "home").mkdir(exist_ok=True)
    return StdioDaemon(environ=daemon_env({"tmp": tmp, "home": tmp / "home"}))


def _repository(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    return path


def test_a_lock_linked_to_stdin_swallows_no_request(tmp_path: Path) -> None:
    project = _repository(tmp_path / "project")
    (project / "skills-lock.json").symlink_to("/proc/self/fd/0")
    daemon = _daemon(tmp_path)
    try:
        reply = daemon.call(1, "skills.installed", {"cwd": str(project)})
        assert reply["error"]["data"]["kind"] == "invalid_lock", reply
        assert "skills-lock.json" in reply["error"]["message"]
        # Every ping after it is answered: nothing read the daemon's own input.
        for n in range(2, 6):
            assert daemon.call(n, "ping") == {"jsonrpc": "2.0", "id": n, "result": {}}
    finally:
        daemon.kill()


def test_fifo_locks_do_not_starve_other_clients(tmp_path: Path) -> None:
    projects = []
    for n in range(8):
        project = _repository(tmp_path / f"p{n}")
        os.mkfifo(project / "skills-lock.json")
        projects.append(project)
    other = _repository(tmp_path / "other")
    daemon = _daemon(tmp_path)
    try:
        for n, project in enumerate(projects):
            daemon.send(request(n, "skills.installed", {"cwd": str(project)}))
        daemon.send(request("list", "skills.list", {"cwd": str(other)}))
        replies = {}
        for _ in range(9):
            message = daemon.reader.message(timeout=30)
            replies[message["id"]] = message
        assert "result" in replies["list"], replies["list"]
        for n in range(8):
            assert replies[n]["error"]["data"]["kind"] == "invalid_lock", replies[n]
            assert "not a regular file" in replies[n]["error"]["message"]
    finally:
        daemon.kill()


def test_the_daemon_can_download_an_https_archive(tmp_path: Path) -> None:
    """The daemon imports asyncio without OpenSSL, but an https download still gets it: the
    attempt reaches the network (nothing listens on that port) instead of failing with
    "unknown url type"."""
    project = _repository(tmp_path / "project")
    daemon = _daemon(tmp_path)
    try:
        reply = daemon.call(
            1, "skills.install", {"cwd": str(project), "source": "https://127.0.0.1:9/x.zip"}
        )
        message = reply["error"]["message"]
        assert reply["error"]["data"]["step"] == "fetch", reply
        assert "unknown url type" not in message and "refused" in message.lower(), message
    finally:
        daemon.kill()
