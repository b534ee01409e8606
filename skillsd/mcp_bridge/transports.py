"""Running the MCP bridge: stdio (one client) or streamable HTTP (loopback by default)."""

from __future__ import annotations

import anyio

from skillsd.mcp_bridge.server import SkillsBridge
from skillsd.runtime.services import Services

__all__ = ["serve_http", "serve_stdio"]


def serve_stdio(cwd: str, *, cwd_given: bool = True) -> int:
    """Serve one MCP client on stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        bridge = SkillsBridge(Services.create(cwd=cwd), cwd, cwd_given=cwd_given)
        server = bridge.server()
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, bridge.initialization_options(server))
        finally:
            bridge.services.catalogs.close()

    anyio.run(main)
    return 0


def serve_http(cwd: str, host: str, port: int, *, cwd_given: bool = True) -> int:
    """Serve MCP clients over streamable HTTP on ``host:port``."""
    import uvicorn

    bridge = SkillsBridge(Services.create(cwd=cwd), cwd, cwd_given=cwd_given, transport="http")
    server = bridge.server()
    app = server.streamable_http_app()
    uvicorn.run(app, host=host, port=port, log_level="warning")
    bridge.services.catalogs.close()
    return 0
