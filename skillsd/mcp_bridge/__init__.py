"""``skillsd mcp``: skills served to MCP clients (docs/mcp.md), an adapter over the runtime.

:mod:`~skillsd.mcp_bridge.skill_uris` maps skills and their files to ``skill://`` URIs (pure).
MCP is spoken on skillsd's own JSON-RPC endpoint, with no SDK:
:mod:`~skillsd.mcp_bridge.mcp_connection` holds the protocol's rules (eras, handshake,
envelope, listen streams), :mod:`~skillsd.mcp_bridge.native_skills` turns each skill request
into a runtime use case, and :mod:`~skillsd.mcp_bridge.native_stdio` and
:mod:`~skillsd.mcp_bridge.native_http` carry the messages. Nothing here resolves, contains,
gates or renders a skill on its own.
"""
