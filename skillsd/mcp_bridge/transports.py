"""Running the MCP bridge: stdio (one client) or streamable HTTP (loopback by default)."""

from __future__ import annotations

import anyio

from skillsd.mcp_bridge.http_guard import HttpGuard, HttpLimits, allowed_hosts
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


def serve_http(
    cwd: str,
    host: str,
    port: int,
    *,
    token: str | None,
    cwd_given: bool = True,
    limits: HttpLimits | None = None,
) -> int:
    """Serve MCP clients over streamable HTTP on ``host:port``, every request checked by
    :class:`~skillsd.mcp_bridge.http_guard.HttpGuard` (``token`` None: ``--no-auth``)."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    limits = limits or HttpLimits()
    bridge = SkillsBridge(Services.create(cwd=cwd), cwd, cwd_given=cwd_given, transport="http")
    server = bridge.server()
    app = server.streamable_http_app(
        host=host,
        max_request_body_size=limits.max_body_bytes,
        session_idle_timeout=limits.session_idle_seconds,
        max_sessions=limits.max_sessions,
        # Host and Origin are the guard's (one rule for every bound address).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager

    def live_sessions() -> int:
        # The SDK keeps its open sessions here; an ended one's skillsd session goes with it.
        live = getattr(manager, "_server_instances", {})
        bridge.keep_sessions(set(live))
        return len(live)

    guarded = HttpGuard(
        app, token=token, hosts=allowed_hosts(host), limits=limits, live_sessions=live_sessions
    )
    uvicorn.run(guarded, host=host, port=port, log_level="warning")
    bridge.services.catalogs.close()
    return 0
