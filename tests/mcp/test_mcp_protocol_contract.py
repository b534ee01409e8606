"""Protocol details the official conformance suite checks (tests/mcp/test_conformance_suite.py),
pinned here with the Python SDK's client on both protocol versions: the skills extension's
``directoryRead`` setting and its directory reads, the ``skill://`` resource templates, and the
``-32602`` errors for an unknown resource (with ``data.uri``) and an unknown tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from tests.support.env import daemon_env
from tests.support.mcp_stdio import run

pytestmark = pytest.mark.process

SKILLS = "io.modelcontextprotocol/skills"
#: The SDK client's modes: the initialize handshake (2025-11-25), and 2026-07-28.
MODES = ["legacy", "2026-07-28"]


def _client(tree: dict[str, Path], mode: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillsd", "mcp"],
        cwd=os.fspath(tree["project"]),
        env=daemon_env(tree),
    )
    return Client(params, mode=mode)


async def _request(client: Client, method: str, params: dict[str, Any]) -> Any:
    return await client.session.send_request(
        types.Request[dict[str, Any], str](method=method, params=params), TypeAdapter(dict)
    )


async def _refused(client: Client, method: str, params: dict[str, Any]) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await _request(client, method, params)
    return refused.value


@pytest.mark.parametrize("mode", MODES)
def test_the_extension_declares_directory_read(tree: dict[str, Path], mode: str) -> None:
    async def body() -> None:
        async with _client(tree, mode) as client:
            if mode == "legacy":
                extensions = client.server_capabilities.extensions or {}
            else:  # a pinned version's capabilities are the client's guess: ask the server
                discovered = await _request(client, "server/discover", {})
                extensions = discovered["capabilities"]["extensions"]
            assert extensions[SKILLS] == {"directoryRead": True}

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_directory_read_lists_direct_children(tree: dict[str, Path], mode: str) -> None:
    async def body() -> None:
        async with _client(tree, mode) as client:
            root = await _request(client, "resources/directory/read", {"uri": "skill://fix-issue"})
            assert root["resources"] == [
                {
                    "uri": "skill://fix-issue/SKILL.md",
                    "name": "SKILL.md",
                    "mimeType": "text/markdown",
                },
                {
                    "uri": "skill://fix-issue/assets",
                    "name": "assets",
                    "mimeType": "inode/directory",
                },
            ]
            assert ("resultType" in root) is (mode != "legacy")
            # A trailing slash names the same folder.
            for uri in ("skill://fix-issue/assets", "skill://fix-issue/assets/"):
                assets = await _request(client, "resources/directory/read", {"uri": uri})
                assert assets["resources"] == [
                    {"uri": "skill://fix-issue/assets/logo.bin", "name": "logo.bin"}
                ]
            # A file, a folder that is not there, a skill that is not there: not directories.
            for uri in (
                "skill://fix-issue/SKILL.md",
                "skill://fix-issue/assets/logo.bin",
                "skill://fix-issue/nope",
                "skill://nope",
                "https://example.com/",
            ):
                refused = await _refused(client, "resources/directory/read", {"uri": uri})
                assert refused.code == -32602 and "not a directory" in refused.message, uri

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_templates_describe_every_listed_uri(tree: dict[str, Path], mode: str) -> None:
    async def body() -> None:
        async with _client(tree, mode) as client:
            templates = (await client.list_resource_templates()).resource_templates
            by_template = {t.uri_template: t for t in templates}
            assert set(by_template) == {"skill://{name}/{+path}", "skill://{id}/{name}/{+path}"}
            assert all(t.name and t.description for t in templates)
            # Names are unique here, so every resource is the first template filled in.
            for resource in (await client.list_resources()).resources:
                assert str(resource.uri) == f"skill://{resource.name}/SKILL.md"

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_resource_is_invalid_params_naming_it(tree: dict[str, Path], mode: str) -> None:
    async def body() -> None:
        async with _client(tree, mode) as client:
            for uri in (
                "skill://nope/SKILL.md",  # no such skill
                "skill://fix-issue/nope.md",  # no such file in a skill
                "test://not-a-skill",
            ):
                refused = await _refused(client, "resources/read", {"uri": uri})
                assert refused.code == -32602, uri
                assert refused.data == {"uri": uri}

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_tool_is_a_protocol_error(tree: dict[str, Path], mode: str) -> None:
    async def body() -> None:
        async with _client(tree, mode) as client:
            # Another host's name for skill_load is no tool of this server either.
            for name in ("test_simple_text", "activate_skill"):
                refused = await _refused(client, "tools/call", {"name": name, "arguments": {}})
                assert refused.code == -32602, name
                assert name in refused.message and "skill_load" in refused.message
            # A known tool's own failure is still a tool result the model reads.
            bad = await client.call_tool("skill_load", {"name": "nope"})
            assert bad.is_error is True

    run(body)
