"""``skillsd serve --socket [PATH]``: the shared per-user daemon on a Unix socket
(docs/security.md).

Start-up order matters: resolve the path (the default one lives in the checked runtime
directory), take the daemon lock, only then remove a stale socket, bind with a umask that makes
the socket 0600 from its first instant, and serve. Each accepted peer must have our uid
(``SO_PEERCRED``), on top of the 0600 mode, since an explicit PATH may sit in a shared directory.
SIGTERM/SIGINT stop accepting, remove the socket, let every connection answer what is in flight,
release the lock and exit 0. ``--idle-timeout`` exits once no client has been connected for that
long (counted from start-up too, so a daemon nobody reaches does not linger). Every connection
draws on one `MemoryBudget` (docs/security.md), so many modest clients cannot add up to exhaustion.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import stat
import sys
from pathlib import Path

from skillsd.core import limits
from skillsd.daemon import app, socket_paths
from skillsd.daemon.daemon_lock import AlreadyRunning, DaemonLock
from skillsd.daemon.proxy import peer_uid
from skillsd.jsonrpc.channel import StreamChannel
from skillsd.jsonrpc.endpoint import Connection, Router
from skillsd.jsonrpc.memory_budget import MemoryBudget

__all__ = ["SocketServer", "peer_uid", "run_socket_server"]

log = logging.getLogger("skillsd.daemon")

_LISTEN_BACKLOG = 128


class SocketServer:
    """The listening daemon. Build with a bound listening socket; `serve` runs until stopped."""

    def __init__(
        self,
        router: Router,
        sock: socket.socket,
        path: Path,
        *,
        idle_timeout: float | None = None,
        max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._router = router
        self._sock = sock
        self._path = path
        self._inode = os.stat(path).st_ino
        self._idle_timeout = idle_timeout
        self._max_message_bytes = max_message_bytes
        # One budget for every client: many modest connections cannot add up to exhaustion.
        self._budget = MemoryBudget() if budget is None else budget
        self._uid = os.geteuid()
        self._connections: dict[Connection, StreamChannel] = {}
        self._stop = asyncio.Event()
        self._idle_handle: asyncio.TimerHandle | None = None

    def stop(self) -> None:
        """Begin a clean shutdown (signal handlers call this)."""
        self._stop.set()

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        server = await loop.create_unix_server(self._make_protocol, sock=self._sock)
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop)
        self._arm_idle_timer()
        log.info("serving on %s", self._path)
        try:
            await self._stop.wait()
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
            server.close()
            self._remove_socket()
            if self._idle_handle is not None:
                self._idle_handle.cancel()
            channels = list(self._connections.values())
            for conn in list(self._connections):
                conn.close()
            if self._connections:
                await asyncio.gather(*(c.wait_closed() for c in list(self._connections)))
            # Replies still in transport buffers must reach their clients before the loop ends.
            grace = limits.SHUTDOWN_GRACE_SECONDS
            await asyncio.gather(*(ch.wait_closed(grace) for ch in channels))
            await server.wait_closed()
        return 0

    def _make_protocol(self) -> asyncio.Protocol:
        channel = StreamChannel(accept=self._accept_peer)
        conn = Connection(
            self._router,
            channel,
            max_message_bytes=self._max_message_bytes,
            budget=self._budget,
            label="socket",
        )
        channel.connection = conn
        self._connections[conn] = channel
        conn.add_close_callback(lambda: self._forget(conn))
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        return channel.protocol("duplex")

    def _accept_peer(self, transport: asyncio.BaseTransport) -> bool:
        sock = transport.get_extra_info("socket")
        try:
            uid = peer_uid(sock) if sock is not None else None
        except OSError as exc:
            log.warning("refusing a client whose credentials cannot be read: %s", exc)
            return False
        if uid is not None and uid != self._uid:
            log.warning("refusing a client with uid %d (this daemon serves uid %d)", uid, self._uid)
            return False
        return True

    def _forget(self, conn: Connection) -> None:
        self._connections.pop(conn, None)
        if not self._connections:
            self._arm_idle_timer()

    def _arm_idle_timer(self) -> None:
        if self._idle_timeout is None or self._stop.is_set():
            return
        if self._idle_handle is not None:
            self._idle_handle.cancel()
        loop = asyncio.get_running_loop()
        self._idle_handle = loop.call_later(self._idle_timeout, self._idle_expired)

    def _idle_expired(self) -> None:
        self._idle_handle = None
        if not self._connections:
            log.info("no client for %.1fs: exiting", self._idle_timeout or 0.0)
            self.stop()

    def _remove_socket(self) -> None:
        # Only our own socket: never one a successor has bound since.
        with contextlib.suppress(OSError):
            if os.lstat(self._path).st_ino == self._inode:
                os.unlink(self._path)


def bind_socket(path: Path) -> socket.socket:
    """Remove a stale socket at ``path`` (call only while holding the lock) and bind a new
    0600 listening socket there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise socket_paths.RuntimeDirError(
                f"{path} exists and is not a socket; not touching it"
            )
        os.unlink(path)  # stale: its daemon no longer holds the lock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # 0600 from the moment the name exists
    try:
        sock.bind(os.fspath(path))
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    sock.listen(_LISTEN_BACKLOG)
    sock.setblocking(False)
    return sock


def run_socket_server(
    router: Router,
    path: Path | None,
    *,
    idle_timeout: float | None = None,
    max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES,
) -> int:
    """The ``skillsd serve --socket`` entry point; errors go to stderr with a non-zero status."""
    try:
        sock_path = socket_paths.default_socket_path() if path is None else path
        socket_paths.check_socket_path(sock_path)
        lock = DaemonLock.acquire(socket_paths.companion_path(sock_path, ".lock"))
    except socket_paths.RuntimeDirError as exc:
        print(f"skillsd: {exc}", file=sys.stderr)
        return 1
    except AlreadyRunning as exc:
        owner = f" (pid {exc.pid})" if exc.pid else ""
        print(
            f"skillsd: a daemon is already serving {sock_path}{owner}; not starting another",
            file=sys.stderr,
        )
        return 1
    except OSError as exc:
        print(f"skillsd: cannot use {exc.filename or path}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        try:
            sock = bind_socket(sock_path)
        except socket_paths.RuntimeDirError as exc:
            print(f"skillsd: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            reason = "path too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror
            print(f"skillsd: cannot listen on {sock_path}: {reason}", file=sys.stderr)
            return 1

        budget = MemoryBudget.from_environ(os.environ)

        async def main() -> int:
            server = SocketServer(
                router,
                sock,
                sock_path,
                idle_timeout=idle_timeout,
                max_message_bytes=max_message_bytes,
                budget=budget,
            )
            return await server.serve()

        return app.run(main())
    finally:
        lock.release()
