"""``skillsd mcp``: skills served to MCP clients (docs/mcp.md), an adapter over the runtime.

:mod:`~skillsd.mcp_bridge.skill_uris` maps skills and their files to ``skill://`` URIs (pure).
On stdio, :mod:`~skillsd.mcp_bridge.native_stdio` speaks MCP on skillsd's own JSON-RPC
endpoint with :mod:`~skillsd.mcp_bridge.native_skills`, importing no SDK, so start-up is fast;
over HTTP, :mod:`~skillsd.mcp_bridge.server` wires the official MCP SDK's low-level ``Server``
to the same runtime use cases. Nothing here resolves, contains, gates or renders a skill on its
own.
"""
