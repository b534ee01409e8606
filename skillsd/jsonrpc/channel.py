"""`StreamChannel`: the `endpoint.Channel` over asyncio transports or plain file descriptors.

A socket connection is one duplex transport. stdio is two: a read pipe and a write pipe, each
of which may instead be a terminal or a regular file (``skillsd serve < requests.jsonl``) that
asyncio's pipe transports refuse or that must stay blocking (a terminal shared with the shell);
those are served by a thread. Only bytes move here; framing and JSON live in the endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import stat
import threading
from collections.abc import Callable
from typing import Literal

from skillsd.jsonrpc.endpoint import Connection
from skillsd.jsonrpc.framing import Payload

#: Replies larger than this are written piecewise (see `write`).
_WRITE_CHUNK_BYTES = 256 * 1024

__all__ = ["StreamChannel", "uses_pipe_transport"]

log = logging.getLogger("skillsd.daemon")

_READ_CHUNK = 256 * 1024
Role = Literal["read", "write", "duplex"]


def uses_pipe_transport(fd: int) -> bool:
    """True for pipes and sockets (served by asyncio); terminals and files get a thread."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


#: The pipe buffer a daemon asks for on its stdout: a megabytes-large answer (the slash
#: commands of 10 000 skills are 4 MB) then crosses in a few wake-ups of the reader instead of
#: one per 64 KiB.
_PIPE_BYTES = 1024 * 1024


def _widen_pipe(fd: int) -> None:
    """Ask the kernel for a larger pipe buffer (Linux; capped by ``fs.pipe-max-size``)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None or not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)


class StreamChannel:
    """Moves bytes between a `Connection` and its transport(s).

    Set `connection` before any transport is attached. ``accept`` (duplex only) may refuse a
    freshly made transport (the socket server's peer check): the connection is then aborted.
    """

    def __init__(self, accept: Callable[[asyncio.BaseTransport], bool] | None = None) -> None:
        self.connection: Connection | None = None
        self._accept = accept
        self._read_transport: asyncio.ReadTransport | None = None
        self._write_transport: asyncio.WriteTransport | None = None
        self._write_fd: int | None = None
        self._reader: _FdReader | None = None
        # Our own record of whether the read transport is paused: `is_reading()` raises
        # NotImplementedError on pipe transports before Python 3.11.4 (Debian 12's 3.11.2).
        self._read_paused = False
        self._can_write = asyncio.Event()
        self._can_write.set()
        self._write_lost = False
        self._finished = asyncio.Event()  # the write side has flushed and closed

    # -- wiring ------------------------------------------------------------------------------

    def protocol(self, role: Role) -> asyncio.Protocol:
        """An asyncio protocol that feeds this channel (for a pipe or a socket transport)."""
        return _ChannelProtocol(self, role)

    async def open_fds(self, in_fd: int, out_fd: int) -> None:
        """Attach stdio-like descriptors: pipes through asyncio, anything else via threads."""
        loop = asyncio.get_running_loop()
        if uses_pipe_transport(out_fd):
            _widen_pipe(out_fd)
            pipe = os.fdopen(out_fd, "wb", buffering=0, closefd=False)
            await loop.connect_write_pipe(lambda: self.protocol("write"), pipe)
        else:
            self._write_fd = out_fd
        if uses_pipe_transport(in_fd):
            pipe = os.fdopen(in_fd, "rb", buffering=0, closefd=False)
            await loop.connect_read_pipe(lambda: self.protocol("read"), pipe)
        else:
            assert self.connection is not None
            self._reader = _FdReader(in_fd, self.connection, loop)
            self._reader.start()

    def _attach(self, transport: asyncio.BaseTransport, role: Role) -> bool:
        if role in ("read", "duplex"):
            assert isinstance(transport, asyncio.ReadTransport)
            self._read_transport = transport
        if role in ("write", "duplex"):
            assert isinstance(transport, asyncio.WriteTransport)
            self._write_transport = transport
        if role == "duplex" and self._accept is not None and not self._accept(transport):
            assert isinstance(transport, asyncio.WriteTransport)
            transport.abort()
            if self.connection is not None:
                self.connection.abort()
            return False
        return True

    def _lost(self, role: Role, exc: BaseException | None) -> None:
        conn = self.connection
        if role == "read":
            # A read pipe closes itself after EOF; only an error means the peer is gone.
            if conn is not None:
                if exc is None:
                    conn.feed_eof()
                else:
                    conn.connection_lost(exc)
            return
        self._write_lost = True
        self._finished.set()
        self._can_write.set()  # wake a writer waiting for drain, so it sees the loss
        if conn is not None:
            conn.connection_lost(exc)

    # -- endpoint.Channel ------------------------------------------------------------------

    def try_write(self, data: Payload) -> bool:
        transport = self._write_transport
        if transport is None or self._write_lost or not self._can_write.is_set():
            return False
        if isinstance(data, tuple) or len(data) > _WRITE_CHUNK_BYTES:
            return False  # large replies go through `write`, chunk by chunk
        if transport.is_closing():
            return False
        transport.write(data)
        return True

    async def write(self, data: Payload) -> None:
        if isinstance(data, tuple):
            for piece in data:
                await self._write_one(piece)
        else:
            await self._write_one(data)

    async def _write_one(self, data: bytes | bytearray | memoryview) -> None:
        if self._write_fd is not None:
            await asyncio.to_thread(_write_all, self._write_fd, data)
            return
        # In chunks, waiting for the transport to drain in between: it copies whatever the
        # kernel does not take at once, so a multi-megabyte reply written whole would be held
        # twice (ours and the transport's) while a slow peer reads it.
        view = memoryview(data)
        for start in range(0, len(view), _WRITE_CHUNK_BYTES):
            transport = self._write_transport
            if transport is None or self._write_lost or transport.is_closing():
                raise ConnectionResetError("the peer's side of the connection is closed")
            transport.write(view[start : start + _WRITE_CHUNK_BYTES])
            if not self._can_write.is_set():
                await self._can_write.wait()
                if self._write_lost:
                    raise ConnectionResetError("the peer's side of the connection is closed")

    def pause_reading(self) -> None:
        transport = self._read_transport
        if transport is not None:
            if not self._read_paused:
                self._read_paused = True
                transport.pause_reading()
        elif self._reader is not None:
            self._reader.paused.clear()

    def resume_reading(self) -> None:
        transport = self._read_transport
        if transport is not None:
            if self._read_paused and not transport.is_closing():
                self._read_paused = False
                transport.resume_reading()
        elif self._reader is not None:
            self._reader.paused.set()

    def close(self) -> None:
        if self._write_transport is not None:
            self._write_transport.close()  # flushes what the transport still buffers
        else:
            self._finished.set()  # thread writes are complete when they return
        read: object = self._read_transport
        if self._read_transport is not None and read is not self._write_transport:
            self._read_transport.close()
        if self._reader is not None:
            self._reader.stop()

    async def wait_closed(self, timeout: float) -> bool:
        """Wait until everything written has left the transport's buffer (True), for
        ``timeout`` seconds at most (False): the loop must not stop with replies unsent."""
        try:
            await asyncio.wait_for(self._finished.wait(), timeout)
        except TimeoutError:
            return False
        return True


class _ChannelProtocol(asyncio.Protocol):
    def __init__(self, channel: StreamChannel, role: Role) -> None:
        self._channel = channel
        self._role: Role = role
        self._accepted = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._accepted = self._channel._attach(transport, self._role)

    def data_received(self, data: bytes) -> None:
        conn = self._channel.connection
        if conn is not None and self._accepted:
            conn.feed(data)

    def eof_received(self) -> bool:
        conn = self._channel.connection
        if conn is not None and self._accepted:
            conn.feed_eof()
        # Keep a half-closed socket open: the replies still have to go out.
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if self._accepted:
            self._channel._lost(self._role, exc)

    def pause_writing(self) -> None:
        self._channel._can_write.clear()

    def resume_writing(self) -> None:
        self._channel._can_write.set()


class _FdReader(threading.Thread):
    """Blocking reads of a terminal or a regular file, handed to the event loop."""

    def __init__(self, fd: int, connection: Connection, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(name="skillsd-stdin", daemon=True)
        self._fd = fd
        self._conn = connection
        self._loop = loop
        self._stopped = False
        self.paused = threading.Event()  # set = reading allowed
        self.paused.set()

    def stop(self) -> None:
        self._stopped = True
        self.paused.set()

    def run(self) -> None:
        while not self._stopped:
            self.paused.wait()
            if self._stopped:
                return
            try:
                data = os.read(self._fd, _READ_CHUNK)
            except OSError as exc:
                self._hand_over(self._conn.connection_lost, exc)
                return
            if not data:
                self._hand_over(self._conn.feed_eof)
                return
            self._hand_over(self._conn.feed, data)

    def _hand_over(self, fn: Callable[..., None], *args: object) -> None:
        # The loop may already be closed at exit: then nobody is listening any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(fn, *args)


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
