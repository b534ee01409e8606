"""``skillsd mcp`` on stdio: one client on stdin/stdout, one
:class:`~skillsd.mcp_bridge.mcp_connection.McpConnection`, newline-delimited JSON-RPC.

A host gives a stdio server a few hundred milliseconds to answer its first request (a version
probe, then ``initialize``), and importing the MCP SDK alone takes longer than that on a busy
machine. So nothing heavy is imported before the first answer: the protocol's own requests
(``initialize``, ``server/discover``, ``ping``) are answered at once while a thread imports the
runtime and the skill methods (:mod:`skillsd.mcp_bridge.native_skills`); a request that needs
them waits for that. The process exits soon after stdin closes or SIGINT or SIGTERM arrives:
requests still running get a moment, then are answered "Connection closed".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from typing import Any

from skillsd.jsonrpc.channel import StreamChannel
from skillsd.jsonrpc.process_loop import leave_now, run_loop
from skillsd.jsonrpc.process_stdio import claim_stdio
from skillsd.jsonrpc.router import Router
from skillsd.mcp_bridge.mcp_connection import McpConnection, McpFace, rpc_error
from skillsd_protocol import ErrorCode

__all__ = ["serve"]

log = logging.getLogger(__name__)

#: Once stdin closes: how long requests still running get, then their answers to leave, each at
#: most (after SIGINT/SIGTERM, running requests get none). The host waits for the process to
#: end and kills it soon after.
EXIT_GRACE_SECONDS = 0.05
_WORKER_PREFIX = "skillsd-mcp-worker"
_LOADER = "skillsd-mcp-load"
#: How long loading the runtime waits for the first request to be answered.
_FIRST_ANSWER_WAIT_SECONDS = 0.05

# -- the runtime, loaded off the loop -------------------------------------------------------


class Runtime:
    """The parts of the server that take long to import, loaded by a thread at start: the
    tool list first (``tools/list`` needs only it), then the skill methods."""

    def __init__(self, cwd: str, cwd_given: bool, conn: McpConnection) -> None:
        loop = asyncio.get_running_loop()
        self.tools: asyncio.Future[dict[str, Any]] = loop.create_future()
        self.methods: asyncio.Future[Any] = loop.create_future()
        self._loop = loop
        self.first_answered = threading.Event()
        self._thread = threading.Thread(
            target=self._load, args=(cwd, cwd_given, conn), name=_LOADER, daemon=True
        )
        self._thread.start()

    def _load(self, cwd: str, cwd_given: bool, conn: McpConnection) -> None:
        # Two threads running Python take turns: loading waits for the first answer to leave
        # (briefly, if no request comes), so that the host's first request is not kept waiting.
        self.first_answered.wait(_FIRST_ANSWER_WAIT_SECONDS)
        try:
            from skillsd.core.catalog.model_tools import tool_definitions
            from skillsd.mcp_bridge.mcp_results import tool_list

            self._hand_over(self.tools, tool_list(tool_definitions("default")))
            from skillsd.mcp_bridge.native_skills import NativeSkills
            from skillsd.runtime.services import Services

            skills = NativeSkills(Services.create(cwd=cwd), cwd, cwd_given=cwd_given, peer=conn)
            self._hand_over(self.methods, skills)
        except BaseException as exc:  # every request that needs it reports it
            log.exception("the skill methods could not be loaded")
            self._hand_over(self.tools, exc, failed=True)
            self._hand_over(self.methods, exc, failed=True)

    def _hand_over(self, future: asyncio.Future[Any], value: Any, *, failed: bool = False) -> None:
        def settle() -> None:
            if future.done():
                return
            if failed:
                why = f"Internal error: the server could not start ({type(value).__name__})"
                future.set_exception(rpc_error(ErrorCode.INTERNAL_ERROR, why))
            else:
                future.set_result(value)

        with contextlib.suppress(RuntimeError):  # the loop is closed: the process is leaving
            self._loop.call_soon_threadsafe(settle)

    def close(self) -> None:
        if self.methods.done() and not self.methods.cancelled() and not self.methods.exception():
            services = self.methods.result().services
            services.catalogs.close()
            if services.ledger is not None:
                from skillsd.runtime.use_ledger_file import EXIT_FLUSH_SECONDS

                # The process leaves without its interpreter's teardown: write what is queued.
                services.ledger.flush(EXIT_FLUSH_SECONDS)


# -- running --------------------------------------------------------------------------------


def serve(cwd: str, *, cwd_given: bool) -> int:
    """Serve one MCP client on stdin/stdout until it leaves; return the exit status.

    stdout carries protocol messages only (:func:`~skillsd.jsonrpc.process_stdio.claim_stdio`)."""
    in_fd, out_fd = claim_stdio()
    status = run_loop(_serve(cwd, cwd_given, in_fd, out_fd), worker_prefix=_WORKER_PREFIX)
    # The host waits for this process to end and gives it little time (Claude Code sends
    # SIGTERM 100 ms after SIGINT): every reply is written by now.
    leave_now(status)


async def _serve(cwd: str, cwd_given: bool, in_fd: int, out_fd: int) -> int:
    loop = asyncio.get_running_loop()
    router = Router()
    channel = StreamChannel()
    conn = McpConnection(router, channel, shutdown_grace=EXIT_GRACE_SECONDS, label="mcp")
    channel.connection = conn
    stops = (signal.SIGINT, signal.SIGTERM)

    def stop() -> None:
        # A signal is the host ending the session: requests still running are answered
        # "Connection closed" at once, with no grace (the host gives the process ~100 ms).
        conn.close(grace=0.0)

    for signum in stops:
        loop.add_signal_handler(signum, stop)
    runtime = conn.runtime = Runtime(cwd, cwd_given, conn)
    conn.after_first = runtime.first_answered.set
    McpFace().register(router)
    try:
        await channel.open_fds(in_fd, out_fd)
        await conn.wait_closed()
        if not await channel.wait_closed(EXIT_GRACE_SECONDS):
            log.debug("stdout was not drained in time: the last replies may be lost")
    finally:
        for signum in stops:
            loop.remove_signal_handler(signum)
        runtime.close()
    return 0
