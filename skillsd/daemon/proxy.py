"""``skillsd proxy``: bridge stdio to the socket daemon, starting the daemon if needed
(docs/security.md).

An editor that can only spawn a stdio process still shares one warm daemon. Connect-or-spawn:
try the socket; if nobody answers, start ``skillsd serve --socket PATH --idle-timeout N``
detached (its stderr appended to ``PATH.log``), then retry with bounded exponential backoff.
Two proxies racing may both spawn a daemon: the daemon lock lets exactly one serve, the other
exits at once, and both proxies reach the winner.

The bridge copies bytes both ways without looking at them. At stdin EOF the proxy half-closes
the socket; the daemon answers what is in flight and closes, and the proxy exits 0 when the
daemon's side ends.

A daemon is only trusted when it runs as our own user (docs/security.md): an explicit ``--socket``
path may sit in a shared directory where another user started a server first, and relaying to it
would hand that user every request. The check asks the kernel (``SO_PEERCRED``) who the server is,
right after connecting and before a byte is sent.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from skillsd.core import limits
from skillsd.daemon import socket_paths

__all__ = ["ProxyError", "check_server_uid", "connect", "connect_or_spawn", "peer_uid", "run_proxy"]

_CHUNK = 256 * 1024
_FIRST_DELAY = 0.01
_MAX_DELAY = 0.25
_NOT_LISTENING = (FileNotFoundError, ConnectionRefusedError)


class ProxyError(Exception):
    """The daemon could not be reached or started; the message says what to look at."""


def peer_uid(sock: socket.socket) -> int | None:
    """The connected peer's uid, or None where the OS cannot tell (both ends use it: the
    daemon to check its clients, the proxy to check its daemon)."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return int(uid)
    if hasattr(socket, "LOCAL_PEERCRED"):  # macOS/BSD: struct xucred {version, uid, ...}
        creds = sock.getsockopt(0, socket.LOCAL_PEERCRED, struct.calcsize("2I"))
        _version, uid = struct.unpack("2I", creds[: struct.calcsize("2I")])
        return int(uid)
    return None


def check_server_uid(path: Path, server_uid: int, own_uid: int) -> None:
    """Refuse (`ProxyError`) a daemon at ``path`` that runs as another user than ``own_uid``."""
    if server_uid != own_uid:
        raise ProxyError(
            f"refusing the daemon at {path}: it runs as uid {server_uid}, not as you "
            f"(uid {own_uid}); another user may have started it there"
        )


def connect(path: Path) -> socket.socket:
    """A connected (blocking) socket to the daemon at ``path``, checked to run as our uid."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(path))
        uid = peer_uid(sock)
        # Where the OS cannot name the peer, the socket file's owner is the best witness.
        check_server_uid(path, os.stat(path).st_uid if uid is None else uid, os.geteuid())
    except BaseException:
        sock.close()
        raise
    return sock


def spawn_daemon(path: Path, idle_timeout: float) -> subprocess.Popen[bytes]:
    """Start a detached socket daemon for ``path`` (its own session, stdio away from ours)."""
    log_path = socket_paths.companion_path(path, ".log")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        command = [sys.executable, "-m", "skillsd", "serve", "--socket", os.fspath(path)]
        if idle_timeout > 0:
            command += ["--idle-timeout", str(idle_timeout)]
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log_fd)


def connect_or_spawn(
    path: Path,
    *,
    idle_timeout: float = limits.PROXY_DAEMON_IDLE_SECONDS,
    timeout: float = limits.PROXY_CONNECT_TIMEOUT_SECONDS,
) -> socket.socket:
    """Connect to the daemon at ``path``, starting one if none is listening."""
    try:
        return connect(path)
    except _NOT_LISTENING:
        pass
    daemon = spawn_daemon(path, idle_timeout)
    deadline = time.monotonic() + timeout
    delay = _FIRST_DELAY
    while True:
        try:
            return connect(path)
        except _NOT_LISTENING as exc:
            last: OSError = exc
        # A spawned daemon that exited lost the lock race (another one is coming up) or
        # failed; either way keep trying until the deadline, then point at its log.
        daemon.poll()
        if time.monotonic() >= deadline:
            log_path = socket_paths.companion_path(path, ".log")
            status = "" if daemon.returncode is None else f" (it exited {daemon.returncode})"
            raise ProxyError(
                f"no skillsd daemon answered on {path} within {timeout:.0f}s{status}: "
                f"{last.strerror}; see {log_path}"
            )
        time.sleep(delay)
        delay = min(delay * 2, _MAX_DELAY)


def bridge(sock: socket.socket, in_fd: int = 0, out_fd: int = 1) -> int:
    """Copy ``in_fd`` -> socket and socket -> ``out_fd`` until the daemon closes."""

    def upstream() -> None:
        try:
            while data := os.read(in_fd, _CHUNK):
                sock.sendall(data)
        except OSError:
            pass  # the daemon went away; downstream notices and ends the proxy
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, name="skillsd-proxy-in", daemon=True).start()
    try:
        while data := sock.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(out_fd, view) :]
    except BrokenPipeError:
        return 0  # our client closed its stdout: it is gone
    except OSError as exc:
        print(f"skillsd proxy: connection to the daemon failed: {exc}", file=sys.stderr)
        return 1
    finally:
        sock.close()
    return 0


def run_proxy(
    path: Path | None,
    *,
    idle_timeout: float = limits.PROXY_DAEMON_IDLE_SECONDS,
    timeout: float = limits.PROXY_CONNECT_TIMEOUT_SECONDS,
) -> int:
    """The ``skillsd proxy`` entry point."""
    try:
        sock_path = socket_paths.default_socket_path() if path is None else path
        socket_paths.check_socket_path(sock_path)
        sock = connect_or_spawn(sock_path, idle_timeout=idle_timeout, timeout=timeout)
    except (socket_paths.RuntimeDirError, ProxyError) as exc:
        print(f"skillsd proxy: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"skillsd proxy: cannot reach the daemon: {exc}", file=sys.stderr)
        return 1
    return bridge(sock)
