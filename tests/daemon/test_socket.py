"""``skillsd serve --socket``: permissions, one daemon per socket, many clients, shutdown."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillsd.daemon.daemon_lock import read_owner
from tests.support import daemons as h

pytestmark = pytest.mark.process


@pytest.fixture
def base() -> Iterator[Path]:
    # Short on purpose: a Unix socket path must stay under ~100 bytes.
    with tempfile.TemporaryDirectory(prefix="sks-") as tmp:
        yield Path(tmp)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def serve_once(runtime: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        h.skillsd("serve", *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=h.env(runtime),
        timeout=h.TIMEOUT,
    )


def test_default_path_dir_is_0700_and_socket_0600(base: Path) -> None:
    runtime = base / "run"
    with h.socket_daemon(None, runtime) as proc:
        sock_path = runtime / "skillsd.sock"
        assert mode(runtime) == 0o700
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
        assert mode(sock_path) == 0o600
        assert read_owner(runtime / "skillsd.sock.lock") == proc.pid
        client = h.SocketClient(sock_path)
        assert client.call(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
        client.close()


def test_explicit_path_socket_is_0600_too(base: Path) -> None:
    shared = base / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    path = shared / "d.sock"
    with h.socket_daemon(path, base / "unused"):
        assert mode(path) == 0o600
        assert h.SocketClient(path).call("x", "ping")["result"] == {}


@pytest.mark.parametrize("bad_mode", [0o755, 0o770, 0o711])
def test_runtime_dir_with_loose_mode_is_refused(base: Path, bad_mode: int) -> None:
    runtime = base / "run"
    runtime.mkdir()
    os.chmod(runtime, bad_mode)
    result = serve_once(runtime, "--socket")
    assert result.returncode != 0
    assert f"mode {bad_mode:04o}, expected 0700" in result.stderr.decode()
    assert os.listdir(runtime) == []  # refused before anything was created in it


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the directory away")
def test_runtime_dir_owned_by_someone_else_is_refused(base: Path) -> None:
    runtime = base / "run"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    result = serve_once(runtime, "--socket")
    assert result.returncode != 0
    assert "owned by uid 65534" in result.stderr.decode()


def test_runtime_dir_that_is_a_symlink_is_refused(base: Path) -> None:
    real = base / "real"
    real.mkdir(mode=0o700)
    (base / "run").symlink_to(real)
    result = serve_once(base / "run", "--socket")
    assert result.returncode != 0
    assert "symlink" in result.stderr.decode()


def test_second_daemon_on_a_live_socket_is_refused(base: Path) -> None:
    runtime = base / "run"
    with h.socket_daemon(None, runtime) as first:
        result = serve_once(runtime, "--socket")
        assert result.returncode != 0
        message = result.stderr.decode()
        assert "already serving" in message and str(first.pid) in message
        # The first daemon and its socket are untouched.
        assert h.SocketClient(runtime / "skillsd.sock").call(1, "ping")["result"] == {}


def test_stale_socket_is_replaced(base: Path) -> None:
    runtime = base / "run"
    runtime.mkdir(mode=0o700)
    stale_path = runtime / "skillsd.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.fspath(stale_path))
    stale.close()  # the name stays behind, nobody listens: what a crashed daemon leaves
    with pytest.raises(ConnectionRefusedError):
        h.SocketClient(stale_path)
    with h.socket_daemon(None, runtime):
        assert h.SocketClient(stale_path).call(1, "ping")["result"] == {}


def test_path_that_is_not_a_socket_is_left_alone(base: Path) -> None:
    path = base / "file.sock"
    path.write_text("precious")
    result = serve_once(base / "run", "--socket", os.fspath(path))
    assert result.returncode != 0
    assert "is not a socket" in result.stderr.decode()
    assert path.read_text() == "precious"


def test_two_clients_at_once(base: Path) -> None:
    runtime = base / "run"
    with h.socket_daemon(None, runtime):
        sock_path = runtime / "skillsd.sock"
        a, b = h.SocketClient(sock_path), h.SocketClient(sock_path)
        try:
            a.send(h.request(1, "_test.sleep", {"seconds": 0.3}))
            # b is served while a's request is still running.
            assert b.call(1, "initialize", {"extraRoots": ["/x"]})["result"]["serverInfo"]
            assert b.call(2, "ping")["result"] == {}
            assert a.reader.message() == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"slept": 0.3, "steps": 1},
            }
            # exit closes only the connection that sent it.
            b.send(h.notification("exit"))
            assert b.reader.until_eof() == b""
            assert a.call(2, "ping")["result"] == {}
        finally:
            a.close()
            b.close()


def test_idle_timeout_exits_only_when_no_client_is_connected(base: Path) -> None:
    runtime = base / "run"
    sock_path = runtime / "skillsd.sock"
    with h.socket_daemon(None, runtime, "--idle-timeout", "0.3") as proc:
        client = h.SocketClient(sock_path)
        time.sleep(0.6)  # longer than the timeout, but a client is connected
        assert proc.poll() is None
        assert client.call(1, "ping")["result"] == {}
        client.close()
        assert proc.wait(h.TIMEOUT) == 0
        assert not sock_path.exists()


def test_sigterm_answers_in_flight_removes_the_socket_and_exits_zero(base: Path) -> None:
    runtime = base / "run"
    sock_path = runtime / "skillsd.sock"
    with h.socket_daemon(None, runtime) as proc:
        client = h.SocketClient(sock_path)
        client.send(h.request(1, "_test.sleep", {"seconds": 0.4}))
        assert client.call(2, "ping")["result"] == {}
        proc.send_signal(signal.SIGTERM)
        assert client.reader.message()["result"] == {"slept": 0.4, "steps": 1}
        assert client.reader.until_eof() == b""
        assert proc.wait(h.TIMEOUT) == 0
        assert not sock_path.exists()
        client.close()
        # The lock is free again: a new daemon starts on the same path.
        with h.socket_daemon(None, runtime):
            assert h.SocketClient(sock_path).call(1, "ping")["result"] == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_peer_with_another_uid_is_refused(base: Path) -> None:
    shared = base / "shared"
    shared.mkdir()
    os.chmod(base, 0o755)
    os.chmod(shared, 0o755)
    path = shared / "d.sock"
    with h.socket_daemon(path, base / "unused") as proc:
        os.chmod(path, 0o666)  # only SO_PEERCRED stands in the way now
        assert connect_as(65534, path) == b""  # accepted, then closed without a reply
        assert proc.poll() is None
        assert h.SocketClient(path).call(1, "ping")["result"] == {}


def connect_as(uid: int, path: Path) -> bytes:
    """Connect as ``uid`` (in a forked child), send a ping, return every byte received."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: only raw system calls from here on
        status = 1
        try:
            os.close(read_end)
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(h.TIMEOUT)
                sock.connect(os.fspath(path))
                # A refused peer sees EOF, a reset (its request unread) or, when the daemon
                # closed before the request went out, a broken pipe.
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    sock.sendall(h.request(1, "ping"))
                    while chunk := sock.recv(4096):
                        os.write(write_end, chunk)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    received = b""
    while chunk := os.read(read_end, 4096):
        received += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the probe could not connect"
    return received
