"""``skillsd serve`` on stdio (docs/security.md): one connection on the process's stdin and stdout.

stdout carries protocol messages only. The protocol takes private duplicates of fds 0 and 1;
fd 1 is then pointed at stderr and fd 0 at /dev/null, so a stray ``print``, a C library or a
child process can neither corrupt the stream nor steal input. The process exits 0 on stdin EOF,
``exit`` or SIGTERM, after answering the requests in flight.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from skillsd.core import limits
from skillsd.daemon import app
from skillsd.jsonrpc.channel import StreamChannel
from skillsd.jsonrpc.endpoint import Connection, Router
from skillsd.jsonrpc.memory_budget import MemoryBudget
from skillsd.jsonrpc.process_stdio import claim_stdio

__all__ = ["run_stdio", "serve_stdio"]

log = logging.getLogger("skillsd.daemon")


async def serve_stdio(
    router: Router,
    in_fd: int,
    out_fd: int,
    *,
    max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES,
    budget: MemoryBudget | None = None,
) -> int:
    """Serve one connection on ``in_fd``/``out_fd`` until it closes; return the exit status."""
    loop = asyncio.get_running_loop()
    channel = StreamChannel()
    conn = Connection(
        router, channel, max_message_bytes=max_message_bytes, budget=budget, label="stdio"
    )
    channel.connection = conn
    await channel.open_fds(in_fd, out_fd)
    loop.add_signal_handler(signal.SIGTERM, conn.close)
    try:
        await conn.wait_closed()
        if not await channel.wait_closed(limits.SHUTDOWN_GRACE_SECONDS):
            log.warning("stdout was not drained in time: the last replies may be lost")
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
    return 0


def run_stdio(router: Router, *, max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES) -> int:
    """The ``skillsd serve`` entry point: claim stdio, serve, return the exit status."""
    in_fd, out_fd = claim_stdio()
    budget = MemoryBudget.from_environ(os.environ)
    return app.run(
        serve_stdio(router, in_fd, out_fd, max_message_bytes=max_message_bytes, budget=budget)
    )
