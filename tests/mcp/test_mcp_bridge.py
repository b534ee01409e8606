"""``skillsd mcp`` driven by the official MCP Python SDK's ``ClientSession`` over stdio
(docs/mcp.md):
tools, ``skill://`` resources (text, binary, containment), the skills extension with digests,
prompts from the slash commands, and change notifications from the watcher."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from tests.mcp.conftest import authorized
from tests.support.daemons import free_port
from tests.support.env import daemon_env
from tests.support.mcp_http import http_env
from tests.support.mcp_stdio import connect, request, run
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process


def test_initialize_advertises_the_skills_extension_and_tools_work(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            init = await session.initialize()
            extensions = init.capabilities.extensions or {}
            assert "io.modelcontextprotocol/skills" in extensions
            assert init.capabilities.resources is not None
            assert init.capabilities.resources.list_changed is True
            tools = [t.name for t in (await session.list_tools()).tools]
            assert tools == ["skill_search", "skill_load", "skill_read_file"]
            found = await session.call_tool("skill_search", {"query": "fix issue"})
            assert found.is_error is False and "fix-issue" in found.content[0].text
            # The model never sees a user-only skill.
            hidden = await session.call_tool("skill_search", {"query": "deploy"})
            assert "deploy" not in hidden.content[0].text.split("\n", 1)[-1]
            loaded = await session.call_tool("skill_load", {"name": "fix-issue"})
            assert loaded.is_error is False and "Fix GitHub issue" in loaded.content[0].text
            refused = await session.call_tool("skill_load", {"name": "deploy"})
            assert refused.is_error is True

    run(body)


def test_resources_text_binary_and_containment(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            listed = (await session.list_resources()).resources
            uris = {str(r.uri) for r in listed}
            assert "skill://fix-issue/SKILL.md" in uris
            assert "skill://deploy/SKILL.md" not in uris  # user-only: not the model's
            entry = next(r for r in listed if str(r.uri) == "skill://fix-issue/SKILL.md")
            assert entry.mime_type == "text/markdown" and entry.name == "fix-issue"
            text = (await session.read_resource("skill://fix-issue/SKILL.md")).contents[0]
            assert isinstance(text, types.TextResourceContents) and "name: fix-issue" in text.text
            binary = (await session.read_resource("skill://fix-issue/assets/logo.bin")).contents[0]
            assert isinstance(binary, types.BlobResourceContents)
            assert base64.b64decode(binary.blob) == bytes(range(256))
            # Each refusal carries its JSON-RPC code: an unknown URI is a bad param, a path
            # out of the skill is path_not_allowed (1006).
            for bad, code in (
                ("skill://fix-issue/../deploy/SKILL.md", 1006),
                ("skill://nope/SKILL.md", -32602),
            ):
                with pytest.raises(MCPError) as refused:
                    await session.read_resource(bad)
                assert refused.value.code == code, refused.value

    run(body)


def test_skills_extension_lists_digests_and_gets(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            listed = await request(session, "skills/list", {})
            assert listed["ttlMs"] > 0 and listed["cacheScope"]
            by_uri = {s["uri"]: s for s in listed["skills"]}
            fix = by_uri["skill://fix-issue/SKILL.md"]
            assert fix["frontmatter"]["argument-hint"] == "[issue-number] [priority]"
            skill_dir = tree["project"] / ".claude" / "skills" / "fix-issue"
            for resource in fix["resources"]:
                rel = resource["uri"].removeprefix("skill://fix-issue/")
                data = (skill_dir / rel).read_bytes()
                assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
                assert resource["size"] == len(data)
            assert {r["uri"] for r in fix["resources"]} >= {
                "skill://fix-issue/SKILL.md",
                "skill://fix-issue/assets/logo.bin",
            }
            got = await request(session, "skills/get", {"uri": "skill://fix-issue/SKILL.md"})
            assert got["skill"] == fix
            with pytest.raises(MCPError) as unknown:
                await request(session, "skills/get", {"uri": "skill://nope/SKILL.md"})
            assert unknown.value.code == -32602
            folder = await request(
                session, "resources/directory/read", {"uri": "skill://fix-issue/assets/"}
            )
            assert [r["uri"] for r in folder["resources"]] == ["skill://fix-issue/assets/logo.bin"]

    run(body)


def test_prompts_are_the_slash_commands_with_arguments(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            prompts = {p.name: p for p in (await session.list_prompts()).prompts}
            assert {"deploy", "fix-issue", "review", "frontend:component"} <= set(prompts)
            assert "api-conventions" not in prompts  # model-only: no slash command
            assert prompts["deploy"].arguments is not None
            assert prompts["deploy"].arguments[0].description == "[staging|production]"
            got = await session.get_prompt("deploy", {"arguments": "production"})
            message = got.messages[0]
            assert message.role == "user"
            assert "Deploy to production" in message.content.text  # type: ignore[union-attr]
            review = await session.get_prompt("review", {"arguments": "naming"})
            assert review.messages[0].content.text.rstrip().endswith("Focus on: naming")  # type: ignore[union-attr]

    run(body)


def test_an_edit_on_disk_sends_list_changed(tree: dict[str, Path]) -> None:
    seen: list[str] = []

    def note(message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if isinstance(method, str):
            seen.append(method)

    async def body() -> None:
        async with connect(tree, note) as session:
            await session.initialize()
            await session.list_resources()  # the catalog is listed (and watched) from now on
            await session.subscribe_resource("skill://fix-issue/SKILL.md")
            await anyio.sleep(0.5)  # the watches are set up after the first reply
            write_skill(tree["project"] / ".agents" / "skills", "brand-new", "Appeared later.")
            skill_md = tree["project"] / ".claude" / "skills" / "fix-issue" / "SKILL.md"
            skill_md.write_text(skill_md.read_text().replace("Fix GitHub", "Fix the GitHub"))
            with anyio.fail_after(10):
                while not {
                    "notifications/resources/list_changed",
                    "notifications/prompts/list_changed",
                    "notifications/resources/updated",
                } <= set(seen):
                    await anyio.sleep(0.05)
            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            assert "skill://brand-new/SKILL.md" in uris

    run(body)


def test_streamable_http_serves_the_same(tree: dict[str, Path]) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}"],
        cwd=tree["project"],
        env=http_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    async def body() -> None:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(100):  # until it listens
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await anyio.sleep(0.1)
        async with (
            streamable_http_client(url, http_client=authorized()) as (read, write, *_rest),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert "io.modelcontextprotocol/skills" in (init.capabilities.extensions or {})
            found = await session.call_tool("skill_search", {"query": "fix issue"})
            assert "fix-issue" in found.content[0].text
            listed = await request(session, "skills/list", {})
            assert "skill://fix-issue/SKILL.md" in {s["uri"] for s in listed["skills"]}
            prompt = await session.get_prompt("fix-issue", {"arguments": "7 low"})
            assert "Fix GitHub issue #7 (priority: low)." in prompt.messages[0].content.text  # type: ignore[union-attr]

    try:
        run(body)
    finally:
        server.terminate()
        server.wait(10)


def test_modern_protocol_discovers_the_extension_and_streams_changes(
    tree: dict[str, Path],
) -> None:
    """2026-07-28: no initialize; ``server/discover`` declares the extension and changes come on
    a ``subscriptions/listen`` stream."""
    from mcp.client.client import Client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillsd", "mcp"],
        cwd=os.fspath(tree["project"]),
        env=daemon_env(tree),
    )

    async def body() -> None:
        async with Client(params, mode="2026-07-28") as client:
            discovered = await client.session.send_request(
                types.Request[dict[str, Any], str](method="server/discover", params={}),
                TypeAdapter(dict),
            )
            assert "io.modelcontextprotocol/skills" in discovered["capabilities"]["extensions"]
            listed = await client.list_resources()
            assert "skill://fix-issue/SKILL.md" in {str(r.uri) for r in listed.resources}
            async with client.listen(
                resources_list_changed=True, prompts_list_changed=True
            ) as events:
                await anyio.sleep(0.5)  # the watches are set up after the first reply
                write_skill(tree["project"] / ".agents" / "skills", "streamed", "Arrived later.")
                with anyio.fail_after(10):
                    async for _event in events:
                        break
            listed = await client.list_resources()
            assert "skill://streamed/SKILL.md" in {str(r.uri) for r in listed.resources}

    run(body)


def test_without_cwd_the_clients_first_root_is_the_project(tree: dict[str, Path]) -> None:
    elsewhere = tree["tmp"] / "elsewhere"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillsd", "mcp"],
        cwd=os.fspath(elsewhere),  # started somewhere else; the root names the project
        env=daemon_env(tree),
    )

    async def roots(context: Any) -> types.ListRootsResult:
        uri = tree["project"].as_uri()
        return types.ListRootsResult(roots=[types.Root(uri=uri, name="project")])

    async def body() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, list_roots_callback=roots) as session,
        ):
            await session.initialize()
            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            assert "skill://fix-issue/SKILL.md" in uris

    run(body)


def test_policy_applies_a_deny_refuses_the_load(tree: dict[str, Path]) -> None:
    (tree["tmp"] / "config.toml").write_text('[permissions]\ndeny = ["skill_load(fix-issue)"]\n')

    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            denied = await session.call_tool("skill_load", {"name": "fix-issue"})
            assert denied.is_error is True and "denied" in denied.content[0].text
            # `ask` (the default) is answered by the client's own approval of the call.
            allowed = await session.call_tool("skill_load", {"name": "api-conventions"})
            assert allowed.is_error is False

    run(body)


def test_resources_and_skills_list_are_paginated(tree: dict[str, Path]) -> None:
    many = tree["project"] / ".agents" / "skills" / "many"
    for n in range(105):
        write_skill(many, f"many-{n:03}", f"Skill number {n}.")

    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            first = await session.list_resources()
            assert len(first.resources) == 100 and first.next_cursor is not None
            rest = await session.list_resources(
                params=types.PaginatedRequestParams(cursor=first.next_cursor)
            )
            assert rest.next_cursor is None
            uris = [str(r.uri) for r in [*first.resources, *rest.resources]]
            assert len(uris) == len(set(uris)) >= 105
            page = await request(session, "skills/list", {})
            assert len(page["skills"]) == 100 and page["nextCursor"]
            tail = await request(session, "skills/list", {"cursor": page["nextCursor"]})
            assert "nextCursor" not in tail
            assert {s["uri"] for s in [*page["skills"], *tail["skills"]]} == set(uris)

    run(body)


def test_config_problems_are_one_line_over_mcp(tree: dict[str, Path]) -> None:
    """An invalid value is an MCP error with a code and one line naming the file, the key and
    what is allowed; a typo in a key is no error at all (it is a warning in the catalog)."""
    config = tree["tmp"] / "config.toml"
    config.write_text("[discovery]\nmaxDepth = 'deep'\n")

    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            with pytest.raises(MCPError) as info:
                await session.list_resources()
            error = info.value.error
            assert error.code != 0 and "\n" not in error.message
            assert str(config) in error.message and "discovery.maxDepth" in error.message
            assert "(allowed: integer, 0 to 1000)" in error.message
            config.write_text("[discovery]\nmaxDeph = 3\n")
            listed = await session.list_resources()
            assert listed.resources

    run(body)
