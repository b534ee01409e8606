"""The daemon in this process, for tests of logic: the real router, endpoint, framing and
runtime on an event loop of its own thread, spoken to over a pair of pipes exactly as
``skillsd serve`` is (so :class:`InProcessDaemon` stands in for ``StdioDaemon``), without the
cost of a new interpreter per test.

Tests of what a process promises (stdio, sockets, signals, exit codes, stderr) keep spawning
one (``tests.support.daemons.StdioDaemon``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from skillsd.daemon.app import build_router
from skillsd.jsonrpc.channel import StreamChannel
from skillsd.jsonrpc.endpoint import Connection
from skillsd.runtime.services import Services
from tests.support.daemons import TIMEOUT, LineReader, request


@contextlib.contextmanager
def environment(environ: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` replaced by ``environ`` for the block: the runtime reads HOME, XDG and
    SKILLSD_* settings from the process environment as a spawned daemon would from its own."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class InProcessDaemon:
    """One connection to a daemon running on a thread of this process."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._env = environment(environ)
        self._env.__enter__()
        self._to_daemon_r, self._to_daemon_w = os.pipe()
        self._from_daemon_r, self._from_daemon_w = os.pipe()
        self.reader = LineReader(lambda: os.read(self._from_daemon_r, 65536), self._from_daemon_r)
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._services: Services | None = None
        self._thread = threading.Thread(target=self._serve, name="in-process-daemon", daemon=True)
        self._thread.start()
        self._ready.wait(TIMEOUT)
        if self._failed is not None:
            raise self._failed

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced to the test through __init__ or kill()
            self._failed = exc
            self._ready.set()

    async def _main(self) -> None:
        self._services = Services.create()
        channel = StreamChannel()
        conn = Connection(build_router(self._services), channel, label="in-process")
        channel.connection = conn
        await channel.open_fds(self._to_daemon_r, self._from_daemon_w)
        self._ready.set()
        try:
            await conn.wait_closed()
            await channel.wait_closed(TIMEOUT)
        finally:
            self._services.catalogs.close()

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._to_daemon_w, view) :]

    def call(self, id_: Any, method: str, params: Any = None) -> Any:
        self.send(request(id_, method, params))
        return self.reader.message()

    def kill(self) -> None:
        """End the connection (EOF on the daemon's input), wait for the loop, clean up."""
        with contextlib.suppress(OSError):
            os.close(self._to_daemon_w)
        self._thread.join(TIMEOUT)
        for fd in (self._from_daemon_r, self._to_daemon_r, self._from_daemon_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._env.__exit__(None, None, None)
        if self._failed is not None and not isinstance(self._failed, asyncio.CancelledError):
            raise self._failed
