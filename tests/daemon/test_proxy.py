"""``skillsd proxy``: starts the socket daemon on demand and bridges stdio to it."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from skillsd.daemon.daemon_lock import read_owner
from tests.support import daemons as h

pytestmark = pytest.mark.process


@pytest.fixture
def runtime() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="skp-") as tmp:
        runtime = Path(tmp) / "run"
        try:
            yield runtime
        finally:
            # Daemons started by proxies are ours too: stop every one serving this socket.
            for pid in h.daemon_pids(runtime / "skillsd.sock"):
                h.kill_pid(pid)


def proxy(runtime: Path, payload: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        h.skillsd("proxy", *args),
        input=payload,
        capture_output=True,
        env=h.env(runtime),
        timeout=h.TIMEOUT * 2,
    )


def replies(output: bytes) -> dict[Any, Any]:
    return {m["id"]: m for m in map(json.loads, output.splitlines())}


def test_proxy_starts_the_daemon_and_the_next_proxy_reuses_it(runtime: Path) -> None:
    payload = h.request(1, "ping") + h.request(2, "_test.sleep", {"seconds": 0.2})
    first = proxy(runtime, payload, "--idle-timeout", "30")
    assert first.returncode == 0, first.stderr
    got = replies(first.stdout)
    assert got[1] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    # Answered although stdin hit EOF while it was still running.
    assert got[2] == {"jsonrpc": "2.0", "id": 2, "result": {"slept": 0.2, "steps": 1}}
    daemon = read_owner(runtime / "skillsd.sock.lock")
    assert daemon and h.pid_alive(daemon)  # outlives the proxy that started it

    second = proxy(runtime, h.request("again", "ping"))
    assert second.returncode == 0, second.stderr
    assert replies(second.stdout)["again"] == {"jsonrpc": "2.0", "id": "again", "result": {}}
    assert read_owner(runtime / "skillsd.sock.lock") == daemon
    assert h.daemon_pids(runtime / "skillsd.sock") == [daemon]


def test_racing_proxies_start_exactly_one_daemon(runtime: Path) -> None:
    def one(i: int) -> subprocess.CompletedProcess[bytes]:
        return proxy(runtime, h.request(i, "ping"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, range(4)))
    for i, result in enumerate(results):
        assert result.returncode == 0, result.stderr
        assert replies(result.stdout)[i] == {"jsonrpc": "2.0", "id": i, "result": {}}
    # Daemons spawned by the losers of the race find the lock taken and exit by themselves.
    deadline = time.monotonic() + h.TIMEOUT
    while len(daemons := h.daemon_pids(runtime / "skillsd.sock")) > 1:
        assert time.monotonic() < deadline, f"several daemons stay up: {daemons}"
        time.sleep(0.05)
    assert daemons == [read_owner(runtime / "skillsd.sock.lock")]
    log = (runtime / "skillsd.sock.log").read_text()
    assert "Traceback" not in log


def test_explicit_socket_path(runtime: Path) -> None:
    runtime.mkdir(mode=0o700)
    path = runtime / "custom.sock"
    result = proxy(runtime, h.request(1, "ping"), "--socket", str(path))
    assert result.returncode == 0, result.stderr
    assert replies(result.stdout)[1]["result"] == {}
    assert path.is_socket()
    for pid in h.daemon_pids(path):
        h.kill_pid(pid)


def test_proxy_reports_an_unusable_runtime_dir(runtime: Path) -> None:
    runtime.mkdir()
    runtime.chmod(0o755)
    result = proxy(runtime, h.request(1, "ping"))
    assert result.returncode == 1
    assert b"expected 0700" in result.stderr
    assert result.stdout == b""
