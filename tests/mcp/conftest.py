"""The MCP tests' project: the host fixture project (Claude Code's and Codex's real layouts) with a
binary file in one skill, and no user config (the defaults: `ask` for loads, which an MCP
client's own approval answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.host_project import copy_host_project
from tests.support.mcp_http import TOKEN


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    project = copy_host_project(tmp_path)
    (tmp_path / "config.toml").write_text("")
    assets = project / ".claude" / "skills" / "fix-issue" / "assets"
    assets.mkdir()
    (assets / "logo.bin").write_bytes(bytes(range(256)))
    return {"tmp": tmp_path, "project": project, "home": tmp_path / "home"}


def authorized() -> Any:
    """An HTTP client for the SDK's transport that sends the token."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    return create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
