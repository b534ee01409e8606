"""``skillsd mcp --http`` on its own HTTP server (``skillsd/mcp_bridge/native_http.py``): what
the SDK clients and the conformance suite do not reach. A change on disk reaches a session's
GET stream and a 2026-07-28 listen stream, and never rides in another request's reply; the
2026-07-28 routing headers must agree with the body; a deleted session is gone; and serving
HTTP imports neither the MCP SDK nor pydantic."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mcp_http import INIT, TOKEN, KeepAlive, json_reply, open_session, post, server

pytestmark = pytest.mark.process

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class EventStream(KeepAlive):
    """A raw connection reading one streamed reply's server-sent events."""

    def __init__(self, port: int, method: str, headers: dict[str, str], body: bytes = b"") -> None:
        super().__init__(port)
        self.send(method, body, headers=headers)
        self.head()
        self.head_text = self.raw_head


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _headers(**extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        **extra,
    }


def _edit(tree: dict[str, Path]) -> None:
    skill = tree["project"] / ".claude" / "skills" / "fix-issue" / "SKILL.md"
    skill.write_text(skill.read_text().replace("description:", "description: Edited.", 1))


def test_a_change_on_disk_reaches_the_get_stream_and_no_other_reply(
    tree: dict[str, Path],
) -> None:
    with server(tree) as (_proc, url):
        session = open_session(url)
        listed = post(
            url,
            {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
            **{"Mcp-Session-Id": session},
        )
        assert listed.status_code == 200
        stream = EventStream(_port(url), "GET", _headers(**{"Mcp-Session-Id": session}))
        try:
            assert (
                stream.head_text.startswith("HTTP/1.1 200")
                and "text/event-stream" in stream.head_text
            )
            second = EventStream(_port(url), "GET", _headers(**{"Mcp-Session-Id": session}))
            assert second.head_text.startswith("HTTP/1.1 409"), second.head_text  # one per session
            second.close()
            _edit(tree)
            changed = stream.next_event()
            assert changed["method"].endswith("/list_changed"), changed
            # The requests after it get their answers alone, as JSON.
            listed = post(
                url,
                {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
                **{"Mcp-Session-Id": session},
            )
            assert listed.headers["content-type"] == "application/json"
            assert json_reply(listed)["id"] == 3
        finally:
            stream.close()


def test_a_listen_stream_hears_a_change_on_2026_07_28(tree: dict[str, Path]) -> None:
    with server(tree) as (_proc, url):
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "subscriptions/listen",
            "params": {"notifications": {"resourcesListChanged": True}, "_meta": ENVELOPE},
        }
        headers = _headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})
        stream = EventStream(_port(url), "POST", headers, json.dumps(body).encode())
        try:
            assert "mcp-session-id" not in stream.head_text.lower()  # each request stands alone
            acknowledged = stream.next_event()
            assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
            assert acknowledged["params"]["notifications"] == {"resourcesListChanged": True}
            _edit(tree)
            changed = stream.next_event()
            assert changed["method"] == "notifications/resources/list_changed", changed
            assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
        finally:
            stream.close()


def test_2026_07_28_routing_headers_must_agree_with_the_body(tree: dict[str, Path]) -> None:
    listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": ENVELOPE}}
    version = {"MCP-Protocol-Version": MODERN}
    with server(tree) as (_proc, url):
        ok = post(url, listing, **version, **{"Mcp-Method": "tools/list"})
        assert ok.status_code == 200 and "skill_search" in ok.text
        assert "mcp-session-id" not in ok.headers
        wrong = post(url, listing, **version, **{"Mcp-Method": "prompts/list"})
        assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
        missing = post(url, listing, **version)
        assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020
        read = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "resources/read",
            "params": {"uri": "skill://fix-issue/SKILL.md", "_meta": ENVELOPE},
        }
        named = {"Mcp-Method": "resources/read", "Mcp-Name": "skill://other/SKILL.md"}
        mismatch = post(url, read, **version, **named)
        assert mismatch.status_code == 400 and "mcp-name" in mismatch.json()["error"]["message"]
        unknown = dict(listing, method="no/such", id=6)
        missing_method = post(url, unknown, **version, **{"Mcp-Method": "no/such"})
        assert missing_method.status_code == 404
        assert missing_method.json()["error"]["code"] == -32601


def test_a_deleted_session_is_gone(tree: dict[str, Path]) -> None:
    import httpx2

    with server(tree) as (_proc, url):
        session = open_session(url)
        ended = httpx2.delete(url, headers=_headers(**{"Mcp-Session-Id": session}), timeout=30)
        assert ended.status_code == 200
        after = post(
            url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **{"Mcp-Session-Id": session}
        )
        assert after.status_code == 404
        assert post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status_code == 400
        assert post(url, INIT).status_code == 200  # a new one opens


def test_serving_http_imports_neither_the_sdk_nor_pydantic() -> None:
    probe = (
        "import sys, skillsd.cli.mcp, skillsd.mcp_bridge.native_http, "
        "skillsd.mcp_bridge.transports\n"
        "heavy = sorted({n.split('.')[0] for n in sys.modules} & "
        "{'mcp', 'pydantic', 'pydantic_core', 'starlette', 'uvicorn', 'anyio', 'httpx'})\n"
        "print(heavy)"
    )
    started = time.monotonic()
    said = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert said == "[]", said
    assert time.monotonic() - started < 60


def test_a_head_request_gets_headers_and_no_body(tree: dict[str, Path]) -> None:
    """``codex doctor`` probes with ``HEAD``: it gets a status and headers (no body, as HTTP has
    it), and the server goes on."""
    with server(tree) as (proc, url):
        for headers in ({}, {"Authorization": f"Bearer {TOKEN}"}):
            sock = socket.create_connection(("127.0.0.1", _port(url)))
            sock.settimeout(20)
            lines = ["HEAD /mcp HTTP/1.1", f"Host: 127.0.0.1:{_port(url)}"]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(4096)
                assert chunk, f"no reply: {received!r}"
                received += chunk
            status = received.split(b"\r\n", 1)[0]
            assert status in (b"HTTP/1.1 401 Unauthorized", b"HTTP/1.1 405 Method Not Allowed")
            assert received.endswith(b"\r\n\r\n"), received  # the headers, nothing after
            sock.close()
        assert post(url, INIT).status_code == 200
        assert proc.poll() is None
