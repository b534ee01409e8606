"""``skillsd mcp``: skills served to MCP clients (docs/mcp.md), an adapter over the operations
layer.

:mod:`skillsd.mcp_bridge.skill_uris` maps skills and their files to ``skill://`` URIs (pure);
:mod:`skillsd.mcp_bridge.server` wires the official MCP SDK's low-level ``Server`` to
:mod:`skillsd.operations` and the daemon's services (catalog cache, watcher, sessions). Nothing
here resolves, contains, gates or renders a skill on its own.
"""
