"""Lifecycle methods (docs/protocol.md): ``initialize``, ``initialized``, ``shutdown``, ``exit``,
``ping``.

None of them is required before other methods (a shell pipe can call ``skills.list`` cold).
``exit`` closes the connection once its in-flight requests are answered; for stdio that ends the
process (status 0). ``initialize``'s ``processId`` is watched: when that process dies the
connection is closed the same way (stdio: the daemon exits; socket: only that client goes, since
one client's editor dying must not take the shared daemon from the others).
After ``shutdown`` (docs/security.md) the connection answers every request but ``exit`` with
``-32600``
and ignores notifications (the endpoint enforces it); requests already running are answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from functools import partial

from skillsd import __version__
from skillsd.core import limits
from skillsd.jsonrpc.endpoint import Connection, InvalidParams, RequestContext, Router
from skillsd_protocol import PROTOCOL_VERSION
from skillsd_protocol.messages import (
    Empty,
    InitializeParams,
    InitializeResult,
    Params,
    ServerCapabilities,
    ServerInfo,
)

__all__ = ["SERVER_NAME", "process_alive", "register", "watch_process"]

log = logging.getLogger("skillsd.daemon")

SERVER_NAME = "skillsd"


def register(router: Router) -> None:
    """Add the lifecycle methods and ``ping`` to ``router`` (all inline: they never block)."""
    router.add("initialize", partial(_initialize, router), mode="inline")
    router.add("initialized", _initialized, mode="inline")
    router.add("shutdown", _shutdown, mode="inline")
    router.add("exit", _exit, mode="inline")
    router.add("ping", _ping, mode="inline")


def _ping(params: Params, ctx: RequestContext) -> Empty:
    return Empty()


def _initialize(router: Router, params: InitializeParams, ctx: RequestContext) -> InitializeResult:
    conn = ctx.connection
    if params.process_id is not None:
        if params.process_id <= 0:
            raise InvalidParams(
                f"Invalid params for initialize: processId must be a positive pid, "
                f"got {params.process_id} - at `$.processId`"
            )
        watch_process(conn, params.process_id)
        conn.process_id = params.process_id
    if params.client_info is not None:
        conn.client_name = params.client_info.name
        conn.client_version = params.client_info.version
    conn.protocol_version = params.protocol_version
    conn.extra_roots = list(params.extra_roots or ())
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_info=ServerInfo(name=SERVER_NAME, version=__version__),
        capabilities=ServerCapabilities(methods=router.methods, notifications=router.notifications),
    )


def _initialized(params: Params, ctx: RequestContext) -> None:
    ctx.connection.initialized = True


def _shutdown(params: Params, ctx: RequestContext) -> None:
    ctx.connection.shutdown_requested = True


def _exit(params: Params, ctx: RequestContext) -> None:
    ctx.connection.close()


# -- processId ---------------------------------------------------------------------------


def process_alive(pid: int) -> bool:
    """Whether ``pid`` names a live (or not yet reaped) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def watch_process(conn: Connection, pid: int) -> None:
    """Close ``conn`` when process ``pid`` exits (a pidfd where the OS has them, else polling)."""
    previous, conn.parent_watch = conn.parent_watch, None
    if previous is not None:
        previous.stop()
    if not process_alive(pid):
        log.info("%s: client process %d is already gone: closing", conn.label, pid)
        conn.close()
        return
    watch = _ProcessWatch(conn, pid)
    conn.parent_watch = watch
    conn.add_close_callback(watch.stop)


class _ProcessWatch:
    """Waits for one process to exit; a pidfd wakes us at once and cannot be fooled by pid
    reuse, polling is the portable fallback."""

    def __init__(self, conn: Connection, pid: int) -> None:
        self._conn = conn
        self._pid = pid
        self._loop = asyncio.get_running_loop()
        self._pidfd: int | None = None
        self._task: asyncio.Task[None] | None = None
        try:
            self._pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self._task = self._loop.create_task(self._poll())
        else:
            self._loop.add_reader(self._pidfd, self._gone)

    async def _poll(self) -> None:
        # Without a pidfd there is no event to wait on: a parent's exit can only be polled.
        while process_alive(self._pid):  # noqa: ASYNC110
            await asyncio.sleep(limits.PARENT_POLL_SECONDS)
        self._gone()

    def _gone(self) -> None:
        log.info("%s: client process %d exited: closing", self._conn.label, self._pid)
        self.stop()
        self._conn.close()

    def stop(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._task = None
