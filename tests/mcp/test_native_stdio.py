"""``skillsd mcp`` on stdio is served by skillsd's own JSON-RPC endpoint
(``skillsd/mcp_bridge/native_stdio.py``): it answers and serves the skills without importing the
MCP SDK or pydantic, and it leaves quietly when its client does (stdin closed, SIGINT, SIGTERM),
in both protocol eras. That it speaks MCP as the SDK's server did is what the SDK clients' tests
in this folder (and the TypeScript client's) check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.mcp_pipes import HEAVY, INIT, MODERN, Server

pytestmark = pytest.mark.process


def test_it_answers_and_serves_without_the_mcp_sdk_or_pydantic(tree: dict[str, Path]) -> None:
    server = Server(tree, "-X", "importtime")  # every import, on stderr
    server.send("initialize", INIT, rid=1)
    init = server.answer(1)["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/skills": {"directoryRead": True}
    }
    server.send("notifications/initialized")
    server.send("tools/list", {}, rid=2)
    tools = [t["name"] for t in server.answer(2)["result"]["tools"]]
    assert tools == ["skill_search", "skill_load", "skill_read_file"]
    server.send("resources/read", {"uri": "skill://fix-issue/SKILL.md"}, rid=3)
    assert "name: fix-issue" in server.answer(3)["result"]["contents"][0]["text"]
    status, stderr, _rest = server.leave("eof")
    assert status == 0, stderr
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "skillsd.runtime.use_cases" in imported  # the skills were served by this process
    assert not {name for name in imported if name.split(".")[0] in HEAVY}


@pytest.mark.parametrize("how", ["eof", "SIGINT", "SIGTERM"])
def test_it_leaves_quietly_with_a_session_open(tree: dict[str, Path], how: str) -> None:
    """The handshake era, a session open and watched: the process exits 0, says nothing."""
    server = Server(tree)
    server.send("initialize", INIT, rid=1)
    server.answer(1)
    server.send("notifications/initialized")
    server.send("resources/subscribe", {"uri": "skill://fix-issue/SKILL.md"}, rid=2)
    assert server.answer(2)["result"] == {}
    status, stderr, _rest = server.leave(how)
    assert status == 0 and stderr == "", stderr


@pytest.mark.parametrize("how", ["eof", "SIGINT", "SIGTERM"])
def test_it_leaves_quietly_with_a_listen_stream_open(tree: dict[str, Path], how: str) -> None:
    """2026-07-28 with a ``subscriptions/listen`` stream open (it never ends by itself): the
    stream is told the connection closed, and the process exits 0 without a word."""
    server = Server(tree)
    server.send("resources/list", MODERN, rid=1)
    assert server.answer(1)["result"]["resources"]
    listen = {**MODERN, "notifications": {"resourcesListChanged": True}}
    server.send("subscriptions/listen", listen, rid="stream")
    server.next(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    status, stderr, rest = server.leave(how)
    assert status == 0 and stderr == "", stderr
    assert [m.get("error", {}).get("code") for m in rest if m.get("id") == "stream"] == [-32000]


def test_a_cancelled_request_is_never_answered(tree: dict[str, Path]) -> None:
    """``notifications/cancelled`` stops a request; as MCP asks, no answer is sent for it."""
    server = Server(tree)
    listen = {**MODERN, "notifications": {"promptsListChanged": True}}
    server.send("subscriptions/listen", listen, rid=1)
    server.next(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    server.send("notifications/cancelled", {"requestId": 1, "reason": "done"})
    server.send("tools/list", MODERN, rid=2)
    server.answer(2)
    status, stderr, rest = server.leave("eof")
    assert status == 0, stderr
    assert not [m for m in [*server.seen, *rest] if m.get("id") == 1]
