"""HTTP/1.1 on the wire of ``skillsd mcp --http`` (``skillsd/mcp_bridge/http_framing.py``):
requests parsed into events (pipelined ones in order, chunked bodies whole, a head over its
cap refused as it arrives, bytes that are not HTTP refused), and the server answering raw
clients the way HTTP/1.1 has it, on uvloop or, without it, on asyncio's own loop."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from skillsd.mcp_bridge.http_framing import (
    CLOSED,
    END,
    BadRequest,
    RequestHead,
    RequestReader,
    chunk,
    response_head,
)
from tests.support.mcp_http import INIT, TOKEN, http_env, server


def _events(reader: RequestReader) -> list[object]:
    found = []
    while (event := reader.next_event()) is not None:
        found.append(event)
    return found


def test_pipelined_requests_come_out_in_order_with_their_bodies() -> None:
    reader = RequestReader(max_head_bytes=1024)
    wire = (
        b"POST /mcp HTTP/1.1\r\nHost: a\r\nX-Pad:  spaced  \r\nContent-Length: 2\r\n\r\n{}"
        b"DELETE /mcp?x=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    )
    for at in range(0, len(wire), 7):  # in pieces that cut through names, values and bodies
        reader.feed(wire[at : at + 7])
    events = _events(reader)
    first, second = events[0], events[-2]
    assert isinstance(first, RequestHead) and isinstance(second, RequestHead)
    assert (first.method, first.target, first.keep_alive) == ("POST", "/mcp", True)
    assert ("x-pad", "spaced") in first.headers  # names lower-cased, values trimmed
    assert b"".join(e for e in events[1:-3] if isinstance(e, bytes)) == b"{}"
    assert events[-3] is END and events[-1] is END
    assert (second.method, second.target, second.keep_alive) == ("DELETE", "/mcp?x=1", False)
    reader.feed_eof()
    assert _events(reader) == [CLOSED]


def test_a_chunked_body_arrives_whole_and_http_1_0_is_not_kept_alive() -> None:
    reader = RequestReader(max_head_bytes=1024)
    reader.feed(
        b"POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    )
    events = _events(reader)
    head = events[0]
    assert isinstance(head, RequestHead) and not head.http_11 and not head.keep_alive
    assert b"".join(e for e in events if isinstance(e, bytes)) == b"abcde"
    assert events[-1] is END


def test_an_endless_head_is_refused_as_it_arrives() -> None:
    reader = RequestReader(max_head_bytes=4096)
    reader.feed(b"POST /mcp HTTP/1.1\r\nX-Long: ")
    fed = 0
    while not reader.pending:
        reader.feed(b"a" * 1000)
        fed += 1000
        assert fed < 10_000, "the head was held past its cap"
    (refusal,) = _events(reader)
    assert isinstance(refusal, BadRequest) and refusal.status == 431
    reader.feed(b"\r\n\r\n")  # nothing is read after a refusal
    assert _events(reader) == []
    # A head over the cap that comes in one piece is refused too.
    whole = RequestReader(max_head_bytes=64)
    whole.feed(b"GET /mcp HTTP/1.1\r\nX-Long: " + b"a" * 100 + b"\r\n\r\n")
    (refusal,) = _events(whole)
    assert isinstance(refusal, BadRequest) and refusal.status == 431


def test_bytes_that_are_not_http_are_a_400() -> None:
    reader = RequestReader(max_head_bytes=1024)
    reader.feed(b"HELLO\x00 /mcp HTTP/1.1\r\n\r\n")
    (refusal,) = _events(reader)
    assert isinstance(refusal, BadRequest) and refusal.status == 400
    # Both a length and a chunked body: which one ends the request is not said, so neither.
    smuggled = RequestReader(max_head_bytes=1024)
    smuggled.feed(
        b"POST /mcp HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    assert any(isinstance(e, BadRequest) and e.status == 400 for e in _events(smuggled))


def test_replies_are_sized_chunked_or_closed() -> None:
    sized = response_head(200, [(b"content-type", b"application/json")], length=2, close=False)
    assert (
        sized == b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"
    )
    streamed = response_head(200, [], length=None, close=False)
    assert streamed == b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    closing = response_head(404, [], length=None, chunked=False, close=True)
    assert closing == b"HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n"
    assert chunk(b"hello, world") == b"c\r\nhello, world\r\n"


# -- a real server, raw clients ----------------------------------------------------------------


_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: A 2026-07-28 ``tools/list``: it stands alone (no session), so any connection may carry it.
TOOLS = json.dumps(
    {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": _ENVELOPE}}
)
TOOLS_HEADERS = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]


def _request(
    port: int, body: bytes = b"", *, version: str = "1.1", extra: tuple[str, ...] = ()
) -> bytes:
    lines = [
        f"POST /mcp HTTP/{version}",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: Bearer {TOKEN}",
        "Accept: application/json, text/event-stream",
        "Content-Type: application/json",
        *extra,
    ]
    if "Transfer-Encoding: chunked" not in extra:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _read_all(sock: socket.socket) -> bytes:
    received = b""
    while data := sock.recv(65536):
        received += data
    return received


def _replies(port: int, wire: bytes, count: int) -> list[bytes]:
    """Send ``wire``; the first ``count`` sized replies (status line, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(wire)
        received = b""
        replies = []
        while len(replies) < count:
            if b"\r\n\r\n" in received:
                head, rest = received.split(b"\r\n\r\n", 1)
                size = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                if len(rest) >= size:
                    replies.append(head + b"\r\n\r\n" + rest[:size])
                    received = rest[size:]
                    continue
            data = sock.recv(65536)
            assert data, f"the server closed after {len(replies)} replies: {received!r}"
            received += data
        return replies


def _check_the_wire(port: int) -> None:
    # Pipelined: two requests sent at once get two replies, in order, on one connection.
    first = _request(port, json.dumps(INIT).encode())
    replies = _replies(port, first + first, 2)
    assert all(r.startswith(b"HTTP/1.1 200 OK\r\n") for r in replies)
    sessions = {r.lower().split(b"mcp-session-id: ")[1].split(b"\r\n")[0] for r in replies}
    assert len(sessions) == 2
    # HTTP/1.0: answered, then the connection ends.
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(_request(port, TOOLS.encode(), version="1.0", extra=(*TOOLS_HEADERS,)))
        said = _read_all(sock)
    assert said.startswith(b"HTTP/1.1 200 OK\r\n"), said
    assert json.loads(said.split(b"\r\n\r\n", 1)[1])["id"] == 9
    # A head over 64 KiB: 431, and the connection ends.
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nX-Long: " + b"a" * (80 * 1024) + b"\r\n\r\n")
        said = _read_all(sock)
    assert said.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), said[:200]
    assert b"connection: close" in said.lower()
    # Not HTTP: 400, and the connection ends.
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"\x16\x03\x01 hello\r\n\r\n")  # e.g. a TLS client
        said = _read_all(sock)
    assert said.startswith(b"HTTP/1.1 400 Bad Request\r\n"), said[:200]
    # A chunked request body, then a second request on the same connection.
    body = TOOLS.encode()
    pieces = b"".join(chunk(body[at : at + 5]) for at in range(0, len(body), 5))
    chunked = _request(port, extra=(*TOOLS_HEADERS, "Transfer-Encoding: chunked")) + pieces
    chunked += b"0\r\n\r\n"
    for reply in _replies(port, chunked + chunked, 2):
        assert reply.startswith(b"HTTP/1.1 200 OK\r\n"), reply
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["id"] == 9


@pytest.mark.process
def test_raw_clients_on_the_default_loop(tree: dict[str, Path]) -> None:
    with server(tree) as (proc, url):
        _check_the_wire(int(url.rsplit(":", 1)[1].split("/")[0]))
        assert proc.poll() is None


@pytest.mark.process
def test_without_uvloop_the_server_runs_on_asyncio(tree: dict[str, Path], tmp_path: Path) -> None:
    """uvloop is optional: where it is not installed, the same server runs on asyncio's loop."""
    shim = tmp_path / "no-uvloop" / "uvloop"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('uvloop is not installed here')\n")
    env = http_env(tree)
    env["PYTHONPATH"] = str(shim.parent) + (
        ":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    with server(tree, env=env) as (proc, url):
        _check_the_wire(int(url.rsplit(":", 1)[1].split("/")[0]))
        assert proc.poll() is None
