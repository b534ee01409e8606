"""Several processes serving one ``skillsd mcp --http`` address (Linux).

One Python process answers with one thread at a time, so on a machine with several cores a
team's server runs ``workers`` processes, forked before any of them starts its runtime. Each has
its own listening socket on the address (``SO_REUSEPORT``: the kernel spreads new connections
over them), its own runtime and its own sessions; a session's id names the worker that holds it
(``3-…``). A request for a session another worker holds is relayed there: the worker that took
the connection passes the request's bytes, and everything after them, both ways, to that
worker's private Unix socket, where the same HTTP face answers it (:class:`Relay`). The
supervisor (the process started) forwards SIGINT and SIGTERM to the workers and ends when they
have; a worker that ends on its own ends them all (the exit status says so).

The live sessions of all workers are counted in one shared array (:class:`SessionCounts`), so
the session cap holds for the address, not for each worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import mmap
import os
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import httptools

__all__ = ["Relays", "SessionCounts", "Worker", "serve_in_workers", "worker_count"]

log = logging.getLogger(__name__)

#: The most workers chosen without being asked (each holds a runtime: tens of MiB).
MAX_DEFAULT_WORKERS = 4
#: How long the workers have to end after SIGTERM before they are killed.
STOP_SECONDS = 5.0
#: A relay connection idle this long is replaced (the worker at its other end closes a kept-alive
#: connection idle for 75 s: a request sent just then would be lost).
RELAY_IDLE_SECONDS = 30.0
_INT64 = struct.Struct("=q")


def worker_count(requested: int | None) -> int:
    """How many processes serve: ``requested``, else two per usable core up to
    `MAX_DEFAULT_WORKERS` (a worker waiting on its threads leaves its core idle: two per core
    keep it busy; ``docs/benchmarks.md``); one where connections cannot be spread over
    processes (not Linux)."""
    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        return 1
    if requested is not None:
        return max(1, requested)
    return max(1, min(MAX_DEFAULT_WORKERS, 2 * len(os.sched_getaffinity(0))))


class SessionCounts:
    """Each worker's number of live sessions, in memory shared by every worker (each writes
    its own slot only; a total read while another worker opens one may be short by one)."""

    def __init__(self, workers: int) -> None:
        self._map = mmap.mmap(-1, _INT64.size * workers)
        self._workers = workers

    def set(self, worker: int, count: int) -> None:
        _INT64.pack_into(self._map, _INT64.size * worker, count)

    def total(self) -> int:
        return sum(_INT64.unpack_from(self._map, _INT64.size * k)[0] for k in range(self._workers))


@dataclass(frozen=True)
class Worker:
    """What one worker process knows of the others."""

    index: int
    count: int
    #: The listening sockets of this worker (one per address the host name has).
    sockets: list[socket.socket]
    #: The folder of the workers' relay sockets (``<index>.sock``), readable by the user alone.
    relay_dir: str
    sessions: SessionCounts

    def relay_path(self, index: int) -> str:
        return os.path.join(self.relay_dir, f"{index}.sock")

    def session_id(self, token: str) -> str:
        """A new session's id: this worker's index, then ``token``."""
        return f"{self.index}-{token}"

    def owner(self, session_id: bytes) -> int | None:
        """The other worker holding the session ``session_id``; None when it is this one's,
        or no worker's."""
        index, dash, _ = session_id.partition(b"-")
        if not dash or not index.isdigit() or len(index) > 3:
            return None
        owner = int(index)
        return owner if owner != self.index and owner < self.count else None


def _listening_sockets(host: str, port: int, workers: int) -> list[list[socket.socket]]:
    """``workers`` listening sockets on each address of ``host``, sharing ``port``."""
    infos = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )
    seen: set[tuple[Any, ...]] = set()
    per_worker: list[list[socket.socket]] = [[] for _ in range(workers)]
    try:
        for family, kind, proto, _name, given in infos:
            if (family, given) in seen:
                continue
            seen.add((family, given))
            for k in range(workers):
                sock = socket.socket(family, kind, proto)
                per_worker[k].append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((given[0], port, *given[2:]))
                port = sock.getsockname()[1]  # port 0: every other socket shares the first's
                sock.listen(1024)
                sock.setblocking(False)
    except OSError:
        for socks in per_worker:
            for sock in socks:
                sock.close()
        raise
    return per_worker


def serve_in_workers(host: str, port: int, count: int, serve: Callable[[Worker], int]) -> int:
    """Fork ``count`` workers, each running ``serve(worker)`` (an exit status), and supervise
    them until they end; the exit status (1 when the address cannot be listened on, or a
    worker ended on its own)."""
    try:
        per_worker = _listening_sockets(host, port, count)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc.strerror or exc)
        return 1
    if threading.active_count() != 1:  # a lock another thread holds would stay held
        log.warning("forking workers with %d threads running", threading.active_count())
    relay_dir = tempfile.mkdtemp(prefix="skillsd-mcp-workers-")
    sessions = SessionCounts(count)
    supervisor = _Supervisor()
    alarm = signal.getsignal(signal.SIGALRM)
    previous = {s: signal.signal(s, supervisor.stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for index in range(count):
            worker = Worker(index, count, per_worker[index], relay_dir, sessions)
            pid = os.fork()
            if pid == 0:
                _run_child(serve, worker, previous)
            supervisor.children[pid] = index
        for socks in per_worker:  # the workers hold them now
            for sock in socks:
                sock.close()
        return supervisor.wait()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, alarm)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        shutil.rmtree(relay_dir, ignore_errors=True)


class _Supervisor:
    """The workers' pids, and ending them together."""

    def __init__(self) -> None:
        #: Worker index by pid, of the workers still running.
        self.children: dict[int, int] = {}
        self.stopping = False

    def stop(self, _signum: int = signal.SIGTERM, _frame: Any = None) -> None:
        """Ask every worker to end (SIGTERM), and kill those left `STOP_SECONDS` later (an
        alarm); a signal handler."""
        if not self.stopping:
            self.stopping = True
            signal.signal(signal.SIGALRM, self._kill)
            signal.alarm(math.ceil(STOP_SECONDS))
        self._send(signal.SIGTERM)

    def _kill(self, _signum: int, _frame: Any) -> None:
        self._send(signal.SIGKILL)

    def _send(self, signum: int) -> None:
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def wait(self) -> int:
        """Wait until every worker has ended; the exit status. The wait blocks: a signal's
        handler runs meanwhile, and the wait goes on after it."""
        status = 0
        while self.children:
            pid, code = os.waitpid(-1, 0)
            index = self.children.pop(pid)
            ended = os.waitstatus_to_exitcode(code)
            if not self.stopping:
                log.error("worker %d (pid %d) ended on its own (%d): stopping", index, pid, ended)
                status = 1
                self.stop()
            elif ended != 0 and status == 0:
                status = ended if ended > 0 else 1
        return status


def _run_child(serve: Callable[[Worker], int], worker: Worker, handlers: dict[Any, Any]) -> None:
    """A worker's life after the fork: serve, then leave without returning into the
    supervisor's stack."""
    status = 1
    try:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        status = serve(worker)
    except BaseException:
        log.exception("worker %d failed", worker.index)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


class Relays:
    """The requests of one client connection that are relayed to the workers holding their
    sessions, one at a time: a request's bytes go to that worker's relay socket (a connection
    kept per worker), its reply comes back to the client as it arrives, and ``ended(keep)`` is
    called when the reply is whole (``keep``: the client's connection may carry another)."""

    def __init__(
        self, worker: Worker, back: asyncio.Transport, ended: Callable[[bool], None]
    ) -> None:
        self.worker = worker
        self.back = back
        self._ended = ended
        self._conns: dict[int, _Relay] = {}
        self._current: _Relay | None = None
        #: Body bytes of the relayed request still to come from the client.
        self._body_left = 0
        self._tasks: set[asyncio.Task[None]] = set()
        #: The client reads slowly: the reply being relayed is not read from its worker.
        self.paused = False

    @property
    def active(self) -> bool:
        """A request was relayed and its reply is not whole yet."""
        return self._current is not None

    def start(self, owner: int, request: bytes, body_left: int) -> None:
        """Relay a request to worker ``owner``: ``request`` (its head and what came of its
        body), then ``body_left`` more bytes from the client (see :meth:`feed`)."""
        conn = self._conns.get(owner)
        if conn is not None and time.monotonic() - conn.idle_since > RELAY_IDLE_SECONDS:
            conn.close()  # before the worker ends it as an idle kept-alive connection
        if conn is None or conn.closed:
            conn = self._conns[owner] = _Relay(self)
            task = asyncio.get_running_loop().create_task(
                conn.connect(self.worker.relay_path(owner))
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._current = conn
        self._body_left = body_left
        if self.paused and conn.transport is not None:
            conn.transport.pause_reading()
        conn.send(request)

    def feed(self, data: bytes) -> bytes:
        """Pass on the part of ``data`` that is the relayed request's body; the rest, which
        comes after it (the client's next request), is returned."""
        if self._current is None or not self._body_left:
            return data
        part = data[: self._body_left]
        self._body_left -= len(part)
        self._current.send(part)
        return data[len(part) :]

    def pause(self) -> None:
        """The client reads slowly: stop taking the reply for a while."""
        self.paused = True
        if self._current is not None and self._current.transport is not None:
            self._current.transport.pause_reading()

    def resume(self) -> None:
        self.paused = False
        if self._current is not None and self._current.transport is not None:
            self._current.transport.resume_reading()

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self._current = None

    def _reply_ended(self, conn: _Relay, keep: bool) -> None:
        if conn is not self._current:  # a reply nobody asked for: end it all
            self.close()
            self._ended(False)
            return
        self._current = None
        conn.idle_since = time.monotonic()
        if not keep:
            conn.close()
        elif conn.transport is not None:
            conn.transport.resume_reading()  # idle until its next request, never left paused
        self._ended(keep)

    def _lost(self, conn: _Relay) -> None:
        for owner, each in list(self._conns.items()):
            if each is conn:
                del self._conns[owner]
        if conn is self._current:
            self._current = None
            self._ended(False)


class _Relay(asyncio.Protocol):
    """A connection to one worker's relay socket: the requests sent, the replies read back
    (parsed only to know where each ends)."""

    def __init__(self, relays: Relays) -> None:
        self._relays = relays
        self.transport: asyncio.Transport | None = None
        self.closed = False
        #: When its last reply ended (a connection idle too long is not used again).
        self.idle_since = time.monotonic()
        self._waiting: list[bytes] = []
        self._parser = httptools.HttpResponseParser(self)

    async def connect(self, path: str) -> None:
        try:
            await asyncio.get_running_loop().create_unix_connection(lambda: self, path)
        except OSError as exc:
            log.warning("cannot relay a request to %s: %s", path, exc.strerror or exc)
            self.connection_lost(exc)

    def send(self, data: bytes) -> None:
        if self.transport is not None:
            self.transport.write(data)
        elif not self.closed:
            self._waiting.append(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.closed = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)  # uvloop's is not a subclass of asyncio's
        self.transport = stream
        if self.closed:
            stream.close()
            return
        if self._relays.paused:
            stream.pause_reading()
        waiting, self._waiting = self._waiting, []
        for data in waiting:
            self.send(data)

    def data_received(self, data: bytes) -> None:
        self._relays.back.write(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self.close()  # not a reply: its end cannot be known

    def on_message_complete(self) -> None:
        keep = self._parser.should_keep_alive()
        self._parser = httptools.HttpResponseParser(self)
        self._relays._reply_ended(self, keep)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed or self.transport is not None:
            self.closed = True
            self.transport = None
            self._relays._lost(self)

    def pause_writing(self) -> None:
        self._relays.back.pause_reading()  # the worker reads the request slowly

    def resume_writing(self) -> None:
        self._relays.back.resume_reading()
