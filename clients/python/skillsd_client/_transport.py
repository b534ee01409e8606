"""Byte streams to a daemon: newline-delimited JSON over a child process's pipes or a Unix
socket (the framing ``skillsd serve`` speaks unless a peer opens with ``Content-Length:``).

A `Transport` only moves whole messages; ids, futures and notifications live in the client.
A socket's server must run as our own user (``SO_PEERCRED``), or the connection is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping, Sequence

from skillsd_client._errors import ConnectError
from skillsd_client._local_socket import check_server_uid, peer_uid

__all__ = [
    "MAX_MESSAGE_BYTES",
    "STDERR_TAIL_BYTES",
    "Transport",
    "check_server_uid",
    "open_process",
    "open_socket",
]

log = logging.getLogger("skillsd_client")

#: Largest message accepted from the daemon (a 10 000-skill catalog is a few MB).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
#: How much of a spawned daemon's stderr is kept, to explain why it went away.
STDERR_TAIL_BYTES = 16 * 1024
#: A spawned daemon gets this long to exit after stdin EOF before it is terminated.
EXIT_GRACE_SECONDS = 5.0


class Transport:
    """One connection: `read_message` / `write_message`, then `half_close` and/or `close`."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        label: str,
        process: asyncio.subprocess.Process | None = None,
    ) -> None:
        self.label = label
        self.process = process
        self._reader = reader
        self._writer = writer
        self._drain_lock = asyncio.Lock()
        self._stderr = bytearray()
        self._stderr_task: asyncio.Task[None] | None = None
        if process is not None and process.stderr is not None:
            self._stderr_task = asyncio.get_running_loop().create_task(
                self._collect_stderr(process.stderr)
            )

    async def read_message(self) -> bytes | None:
        """The next message (without its line ending), or None at end of stream."""
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                if exc.partial.strip():
                    log.warning("%s: stream ended inside a message", self.label)
                return None
            except asyncio.LimitOverrunError:
                raise ConnectionError(
                    f"{self.label}: the daemon sent a message larger than {MAX_MESSAGE_BYTES} bytes"
                ) from None
            except (ConnectionError, OSError):
                return None
            if line.strip():  # blank lines are legal keep-alives in line framing
                return line

    async def write_message(self, payload: bytes) -> None:
        """Send one message; one `write` call per message, so concurrent senders never mix."""
        self._writer.write(payload + b"\n")
        async with self._drain_lock:
            await self._writer.drain()

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    async def stderr_tail(self, wait: float = 1.0) -> str:
        """The end of a spawned daemon's stderr, after giving it ``wait`` seconds to finish."""
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), wait)
        return self._stderr.decode(errors="replace")

    async def wait_exit(self, timeout: float) -> int | None:
        """The spawned daemon's exit status once it exits within ``timeout``, else None."""
        if self.process is None:
            return None
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self.process.wait(), timeout)
        return None

    def half_close(self) -> None:
        """Tell the daemon we are done sending (stdin EOF, or a socket's write side shut):
        it answers what is in flight, then ends its side."""
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            if self._writer.can_write_eof():
                self._writer.write_eof()

    async def close(self) -> None:
        """End the connection now. A spawned daemon gets `EXIT_GRACE_SECONDS` to exit after
        stdin EOF; one that lingers is terminated, then killed."""
        self.half_close()
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
        process = self.process
        if process is not None and await self.wait_exit(EXIT_GRACE_SECONDS) is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            if await self.wait_exit(EXIT_GRACE_SECONDS) is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._stderr_task is not None:
            await self.stderr_tail()
            self._stderr_task.cancel()

    async def _collect_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            for line in chunk.decode(errors="replace").splitlines():
                log.debug("%s stderr: %s", self.label, line)
            self._stderr += chunk
            if len(self._stderr) > STDERR_TAIL_BYTES:
                del self._stderr[: len(self._stderr) - STDERR_TAIL_BYTES]


async def open_process(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Transport:
    """Start ``command`` (a ``skillsd serve`` on stdio) and talk over its stdin/stdout."""
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            limit=MAX_MESSAGE_BYTES,
        )
    except OSError as exc:
        where = f" in {os.fspath(cwd)}" if cwd is not None else ""
        raise ConnectError(f"cannot start {command[0]}{where}: {exc.strerror or exc}") from None
    assert process.stdout is not None and process.stdin is not None
    label = f"skillsd[{process.pid}]"
    return Transport(process.stdout, process.stdin, label=label, process=process)


async def open_socket(path: str | os.PathLike[str]) -> Transport:
    """Connect to a daemon listening on the Unix socket at ``path`` (OSError if none is;
    `ConnectError` if it runs as another user)."""
    reader, writer = await asyncio.open_unix_connection(os.fspath(path), limit=MAX_MESSAGE_BYTES)
    try:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        # Where the OS cannot name the peer, the socket file's owner is the best witness.
        check_server_uid(path, os.stat(path).st_uid if uid is None else uid, os.geteuid())
    except BaseException:
        writer.close()
        raise
    return Transport(reader, writer, label=f"skillsd@{os.fspath(path)}")
