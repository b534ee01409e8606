"""The MCP Python SDK's stdio server with nothing registered: the ``ping`` baseline.

    python bench/mcp_ping_server.py

The bench (``bench/baselines.py``) spawns this next to ``skillsd serve`` and drives both with
the same client loop (``initialize``, ``notifications/initialized``, then ``ping`` requests). It
is the SDK's low-level ``Server`` on its own ``stdio_server`` transport, exactly as the SDK's
documentation sets one up; ``ping`` is answered by the SDK itself, so no handler is written here.
"""

from __future__ import annotations

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve() -> None:
    server: Server = Server("skillsd-bench-ping")
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
