"""MCP sessions as the official SDK clients see them: a stdio process is one skillsd session on
every protocol version, an HTTP ``Mcp-Session-Id`` is one session, a stateless request stands
alone; one change notification per change per client; model-facing reads obey the model's
rules; errors carry their JSON-RPC code."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
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

REMINDER = "<skill_context_reminder"
NOT_MODEL_INVOCABLE = 1016


def _params(tree: dict[str, Path]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillsd", "mcp"],
        cwd=os.fspath(tree["project"]),
        env=daemon_env(tree),
    )


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _user_only(tree: dict[str, Path]) -> None:
    write_skill(
        tree["project"] / ".agents" / "skills",
        "secret-ops",
        "Deploy with the team's secret runbook.",
        extra="disable-model-invocation: true\n",
        body="Only a person runs this.\n",
    )
    (tree["project"] / ".agents" / "skills" / "secret-ops" / "notes.md").write_text("private\n")


def test_stdio_is_one_session_load_twice_is_suppressed(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            first = await session.call_tool("skill_load", {"name": "api-conventions"})
            assert REMINDER not in _text(first) and len(_text(first)) > 100
            second = await session.call_tool("skill_load", {"name": "api-conventions"})
            assert _text(second).startswith(REMINDER), _text(second)
        # Another process is another session: the body comes again.
        async with connect(tree) as session:
            await session.initialize()
            again = await session.call_tool("skill_load", {"name": "api-conventions"})
            assert REMINDER not in _text(again)

    run(body)


def test_a_prompt_counts_as_a_load_in_the_session(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            prompt = await session.get_prompt("fix-issue", {"arguments": "12 high"})
            assert "#12" in prompt.messages[0].content.text  # type: ignore[union-attr]
            loaded = await session.call_tool("skill_load", {"name": "fix-issue"})
            assert _text(loaded).startswith(REMINDER), _text(loaded)

    run(body)


def test_stdio_on_2026_07_28_is_one_session_too(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with Client(_params(tree), mode="2026-07-28") as client:
            first = await client.call_tool("skill_load", {"name": "api-conventions"})
            assert REMINDER not in _text(first)
            second = await client.call_tool("skill_load", {"name": "api-conventions"})
            assert _text(second).startswith(REMINDER)
            listed = await client.session.send_request(
                types.Request[dict[str, Any], str](method="skills/list", params={}),
                TypeAdapter(dict),
            )
            assert listed["resultType"] == "complete"
            uri = listed["skills"][0]["uri"]
            got = await client.session.send_request(
                types.Request[dict[str, Any], str](method="skills/get", params={"uri": uri}),
                TypeAdapter(dict),
            )
            assert got["resultType"] == "complete" and got["skill"]["uri"] == uri

    run(body)


def test_result_type_is_not_sent_before_2026_07_28(tree: dict[str, Path]) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            listed = await request(session, "skills/list", {})
            assert "resultType" not in listed

    run(body)


def test_subscribe_right_after_initialize_hears_the_next_edit(tree: dict[str, Path]) -> None:
    seen: list[str] = []

    def note(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            seen.append(method)

    async def body() -> None:
        async with connect(tree, note) as session:
            await session.initialize()
            await session.subscribe_resource("skill://api-conventions/SKILL.md")  # nothing listed
            await anyio.sleep(0.5)  # the watches are set up after the first reply
            skill_md = tree["project"] / ".claude" / "skills" / "api-conventions" / "SKILL.md"
            skill_md.write_text(skill_md.read_text() + "\nOne more rule.\n")
            with anyio.fail_after(10):
                while "notifications/resources/updated" not in seen:
                    await anyio.sleep(0.05)

    run(body)


def test_thirty_requests_then_one_edit_is_one_notification_of_each_kind(
    tree: dict[str, Path],
) -> None:
    seen: list[str] = []

    def note(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            seen.append(method)

    async def body() -> None:
        async with connect(tree, note) as session:
            await session.initialize()
            for n in range(10):
                await session.list_resources()
                await session.call_tool("skill_search", {"query": f"issue {n}"})
                await session.list_prompts()
            await anyio.sleep(0.5)
            seen.clear()
            write_skill(tree["project"] / ".agents" / "skills", "late", "Arrived later.")
            with anyio.fail_after(10):
                while "notifications/prompts/list_changed" not in seen:
                    await anyio.sleep(0.05)
            await anyio.sleep(1.0)  # anything more would have come by now
            assert seen.count("notifications/resources/list_changed") == 1, seen
            assert seen.count("notifications/prompts/list_changed") == 1, seen

    run(body)


def test_a_shared_name_gives_each_skill_a_prompt(tree: dict[str, Path]) -> None:
    write_skill(tree["home"] / ".agents" / "skills", "deploy", "The user's own deploy.")

    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            names = [p.name for p in (await session.list_prompts()).prompts]
            assert "deploy" in names and "deploy@user" in names, names
            mine = await session.get_prompt("deploy@user", {"arguments": ""})
            theirs = await session.get_prompt("deploy", {"arguments": ""})
            assert mine.description == "The user's own deploy."
            assert theirs.description != mine.description

    run(body)


def test_model_facing_reads_refuse_a_user_only_skill(tree: dict[str, Path]) -> None:
    _user_only(tree)

    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            listed = {str(r.uri) for r in (await session.list_resources()).resources}
            assert not any("secret-ops" in uri for uri in listed)
            for call in (
                lambda: session.read_resource("skill://secret-ops/SKILL.md"),
                lambda: session.read_resource("skill://secret-ops/notes.md"),
                lambda: request(session, "skills/get", {"uri": "skill://secret-ops/SKILL.md"}),
                lambda: request(
                    session, "resources/directory/read", {"uri": "skill://secret-ops/"}
                ),
            ):
                with pytest.raises(MCPError) as refused:
                    await call()
                assert refused.value.code == NOT_MODEL_INVOCABLE, refused.value
                assert "disable-model-invocation" in str(refused.value)
            read = await session.call_tool(
                "skill_read_file", {"name": "secret-ops", "file": "notes.md"}
            )
            assert read.is_error and "disable-model-invocation" in _text(read)
            # The user may still run it as a command.
            names = [p.name for p in (await session.list_prompts()).prompts]
            assert "secret-ops" in names

    run(body)


@pytest.mark.parametrize("cursor", ["\u00b2", "9" * 4301, "-1", "abc"])
def test_a_malformed_cursor_is_invalid_params(tree: dict[str, Path], cursor: str) -> None:
    async def body() -> None:
        async with connect(tree) as session:
            await session.initialize()
            for call in (
                lambda: session.list_resources(params=types.PaginatedRequestParams(cursor=cursor)),
                lambda: request(session, "skills/list", {"cursor": cursor}),
            ):
                with pytest.raises(MCPError) as refused:
                    await call()
                assert refused.value.code == -32602, refused.value
                assert "cursor" in str(refused.value) and "Traceback" not in str(refused.value)

    run(body)


@contextmanager
def http_server(tree: dict[str, Path], *extra: str) -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}", *extra],
        cwd=tree["project"],
        env=http_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


async def _listening(url: str) -> None:
    import socket

    host, port = url.split("//")[1].split("/")[0].split(":")
    for _ in range(100):
        try:
            with socket.create_connection((host, int(port)), timeout=0.2):
                return
        except OSError:
            await anyio.sleep(0.1)


def test_http_one_session_id_is_one_session(tree: dict[str, Path]) -> None:
    with http_server(tree) as url:

        async def body() -> None:
            await _listening(url)
            async with (
                streamable_http_client(url, http_client=authorized()) as (read, write, *_rest),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                first = await session.call_tool("skill_load", {"name": "api-conventions"})
                assert REMINDER not in _text(first)
                second = await session.call_tool("skill_load", {"name": "api-conventions"})
                assert _text(second).startswith(REMINDER)
            async with (
                streamable_http_client(url, http_client=authorized()) as (read, write, *_rest),
                ClientSession(read, write) as other,
            ):
                await other.initialize()
                fresh = await other.call_tool("skill_load", {"name": "api-conventions"})
                assert REMINDER not in _text(fresh)

        run(body)
