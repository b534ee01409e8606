"""``skillsd daemon status`` and ``skillsd daemon stop`` against a real shared socket daemon, as
a user runs them: the default socket in the runtime directory, found with no flag."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.daemons import SocketClient, env, pid_alive, skillsd, socket_daemon

pytestmark = pytest.mark.process


def _cli(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        skillsd("daemon", *args),
        env=env(runtime),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_status_then_stop_the_shared_daemon(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    socket_path = runtime / "skillsd.sock"
    absent = _cli(runtime, "status")
    assert absent.returncode == 1
    assert f"no skillsd daemon is running on {socket_path}" in absent.stdout

    with socket_daemon(None, runtime) as daemon:
        client = SocketClient(socket_path)
        listed = client.call(1, "skills.list", {"cwd": os.fspath(tmp_path)})
        assert "result" in listed, listed
        status = _cli(runtime, "status", "--json")
        assert status.returncode == 0, status.stderr
        seen = json.loads(status.stdout)
        assert seen["pid"] == daemon.pid and seen["socket"] == os.fspath(socket_path)
        # The CLI's own connection and the client above.
        assert seen["clients"] == 2 and seen["catalogs"] == 1
        assert seen["rssBytes"] > 10 * 2**20 and seen["peakRssBytes"] >= seen["rssBytes"]
        assert 0 <= seen["uptimeSeconds"] < 120
        human = _cli(runtime, "status")
        assert f"  pid       {daemon.pid}" in human.stdout
        assert f"  socket    {socket_path}" in human.stdout
        client.close()

        stopped = _cli(runtime, "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout == f"stopped the daemon (pid {daemon.pid}) on {socket_path}\n"
        assert daemon.wait(10) == 0
        assert not pid_alive(daemon.pid) and not socket_path.exists()
        again = _cli(runtime, "stop")
        assert again.returncode == 0 and "no skillsd daemon is running" in again.stdout
