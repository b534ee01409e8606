"""Helpers for the daemon's end-to-end tests: spawn ``skillsd`` processes, talk JSON-RPC to
them over real pipes and sockets, and always clean up what was started."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

TIMEOUT = 10.0
#: The ``_test.*`` methods a daemon loads when ``SKILLSD_TEST_HOOKS`` names this file.
HOOK_METHODS = os.fspath(Path(__file__).parents[1] / "daemon" / "hook_methods.py")


def env(runtime_dir: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment for a spawned daemon: test hooks on, runtime dir under the test."""
    result = dict(os.environ)
    result["SKILLSD_TEST_HOOKS"] = HOOK_METHODS
    result.pop("SKILLSD_RUNTIME_DIR", None)
    result.pop("CODEX_HOME", None)  # Codex's skills folder follows HOME unless a test sets it
    if runtime_dir is not None:
        result["SKILLSD_RUNTIME_DIR"] = os.fspath(runtime_dir)
    result.update(extra)
    return result


def skillsd(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillsd", *args]


def request(id_: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def notification(method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


class LineReader:
    """Reads newline-delimited JSON from a file descriptor or socket, with a deadline."""

    def __init__(self, read: Callable[[], bytes], fileno: int) -> None:
        self._read = read
        self._fileno = fileno
        self._buf = b""
        self.eof = False

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no data from the daemon in time")
        ready, _, _ = select.select([self._fileno], [], [], remaining)
        if not ready:
            raise TimeoutError("no data from the daemon in time")
        data = self._read()
        if not data:
            self.eof = True
        self._buf += data

    def line(self, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            if self.eof:
                raise EOFError(f"stream ended; pending {self._buf!r}")
            self._fill(deadline)
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def message(self, timeout: float = TIMEOUT) -> Any:
        return json.loads(self.line(timeout))

    def until_eof(self, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while not self.eof:
            self._fill(deadline)
        data, self._buf = self._buf, b""
        return data

    def raw(self, n: int, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while len(self._buf) < n:
            if self.eof:
                raise EOFError(f"stream ended; pending {self._buf!r}")
            self._fill(deadline)
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def read_until(self, marker: bytes, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while marker not in self._buf:
            if self.eof:
                raise EOFError(f"stream ended; pending {self._buf!r}")
            self._fill(deadline)
        head, _, self._buf = self._buf.partition(marker)
        return head + marker


class StdioDaemon:
    """``skillsd serve`` on pipes."""

    def __init__(self, *args: str, environ: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            skillsd("serve", *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environ or env(),
        )
        assert self.proc.stdout is not None
        out = self.proc.stdout
        self.reader = LineReader(lambda: os.read(out.fileno(), 65536), out.fileno())

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def call(self, id_: Any, method: str, params: Any = None) -> Any:
        self.send(request(id_, method, params))
        return self.reader.message()

    def wait(self, timeout: float = TIMEOUT) -> int:
        return self.proc.wait(timeout)

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        stop(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class SocketClient:
    """One client connection to a socket daemon."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.fspath(path))
        self.reader = LineReader(lambda: self.sock.recv(65536), self.sock.fileno())

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def call(self, id_: Any, method: str, params: Any = None) -> Any:
        self.send(request(id_, method, params))
        return self.reader.message()

    def half_close(self) -> None:
        self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()


def stop(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Terminate ``proc`` if it still runs (SIGKILL if it does not listen)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kill_pid(pid: int | None) -> None:
    """Stop a daemon this test started indirectly (through a proxy), known by its pid."""
    if not pid:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_for_socket(path: Path, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until a daemon accepts connections on ``path``."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {proc.returncode} before listening")
        with (
            contextlib.suppress(FileNotFoundError, ConnectionRefusedError),
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe,
        ):
            probe.connect(os.fspath(path))
            return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listening on {path}")


@contextlib.contextmanager
def socket_daemon(
    path: Path | None,
    runtime_dir: Path | None,
    *args: str,
    expect_path: Path | None = None,
    environ: dict[str, str] | None = None,
    stderr: int | IO[bytes] = subprocess.PIPE,
    user: int | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """A running ``skillsd serve --socket [path]``, stopped afterwards: every test's one way to
    start a socket daemon.

    Without ``path`` the daemon picks ``runtime_dir/skillsd.sock``. ``environ`` defaults to
    :func:`env` of ``runtime_dir``; ``stderr`` may be a log file; ``user`` runs the daemon as
    that uid (and its group), for the tests that run as root.
    """
    socket_args = ["--socket"] if path is None else ["--socket", os.fspath(path)]
    listening = expect_path or path
    if listening is None:
        assert runtime_dir is not None, "a daemon without a socket path needs the runtime dir"
        listening = runtime_dir / "skillsd.sock"
    proc = subprocess.Popen(
        skillsd("serve", *socket_args, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env=environ if environ is not None else env(runtime_dir),
        user=user,
        group=user,
        extra_groups=[] if user is not None else None,
    )
    try:
        wait_for_socket(listening, proc)
        yield proc
    finally:
        stop(proc)
        if proc.stderr is not None:
            proc.stderr.close()


def daemon_pids(socket_path: Path) -> list[int]:
    """Pids of live ``skillsd serve`` processes whose command line names ``socket_path``."""
    found = []
    target = os.fspath(socket_path).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and target in argv and pid_alive(int(entry)):
            found.append(int(entry))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def shared_daemon_runtime(prefix: str) -> Iterator[Path]:
    """A fresh, short runtime directory (a Unix socket path must fit in 108 bytes) for the
    shared daemon a hook or a proxy starts; afterwards that daemon is killed and the directory
    removed. Made by ``mkdtemp``, so a leftover of an earlier run can never collide."""
    runtime = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        yield runtime
    finally:
        for pid in daemon_pids(runtime / "skillsd.sock"):
            kill_pid(pid)
        shutil.rmtree(runtime, ignore_errors=True)
