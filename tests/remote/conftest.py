"""The remote tests serve the MCP tests' project (tests/mcp/conftest.py)."""

from __future__ import annotations

from tests.mcp.conftest import tree

__all__ = ["tree"]
