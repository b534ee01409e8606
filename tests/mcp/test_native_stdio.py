"""``skillsd mcp`` on stdio is served by skillsd's own JSON-RPC endpoint
(``skillsd/mcp_bridge/native_stdio.py``): it answers and serves the skills without importing the
MCP SDK or pydantic, and it leaves quietly when its client does (stdin closed, SIGINT, SIGTERM),
in both protocol eras. That it speaks MCP as the SDK's server did is what the SDK clients' tests
in this folder (and the TypeScript client's) check."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.daemon.skill_tree import daemon_env
from tests.hang_guard import within

pytestmark = pytest.mark.process

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
#: The 2026-07-28 envelope every request of that era carries.
MODERN = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}
#: Top-level packages of the MCP SDK and of pydantic, which the stdio server must not import.
HEAVY = {"mcp", "mcp_types", "pydantic", "pydantic_core"}


class Server:
    """``python [FLAGS] -m skillsd mcp`` on pipes, spoken to one line at a time."""

    def __init__(self, tree: dict[str, Path], *flags: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *flags, "-m", "skillsd", "mcp"],
            cwd=tree["project"],
            env=daemon_env(tree),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.seen: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, rid: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if rid is not None:
            message["id"] = rid
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def next(self, wanted: Any) -> dict[str, Any]:
        """The next message ``wanted`` accepts (the ones before it are kept in ``seen``)."""
        stdout = self.proc.stdout
        assert stdout is not None

        def read() -> dict[str, Any]:
            while True:
                line = stdout.readline()
                assert line, f"the server exited: {self._stderr()}"
                message: dict[str, Any] = json.loads(line)
                self.seen.append(message)
                if wanted(message):
                    return message

        found = within(30, read)
        assert isinstance(found, dict)
        return found

    def answer(self, rid: Any) -> dict[str, Any]:
        return self.next(lambda m: m.get("id") == rid and "method" not in m)

    def _stderr(self) -> str:
        self.proc.kill()
        return _text(self.proc.stderr)

    def leave(self, how: str) -> tuple[int, str, list[dict[str, Any]]]:
        """The client goes (``eof``: closes stdin, or sends the signal named): the exit
        status, stderr, and what the server still wrote."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if how == "eof":
            self.proc.stdin.close()
        else:
            self.proc.send_signal(getattr(signal, how))
        status = within(10, self.proc.wait)  # a hang guard: leaving takes milliseconds
        assert isinstance(status, int)
        rest = [json.loads(line) for line in self.proc.stdout.read().splitlines() if line.strip()]
        return status, _text(self.proc.stderr), rest


def _text(stream: IO[bytes] | None) -> str:
    assert stream is not None
    return stream.read().decode(errors="replace")


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
