"""A client that asks for a large reply and never reads it holds no request slot of
``skillsd mcp --http``: past the write deadline its request is dropped, its connection cut and
its slot freed, so other clients keep being answered."""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path

import httpx2
import pytest

from tests.support.mcp_http import ACCEPT, TOKEN, http_env, json_reply, open_session, server
from tests.support.skill_tree import write_skill

pytestmark = [pytest.mark.slow, pytest.mark.process, pytest.mark.xdist_group("serial")]

#: The server's write deadline in these tests (30 s by default).
DEADLINE = 2.0
LARGE = "skill://big-ref/references/large.md"
MODERN = "2026-07-28"


def _big_skill(tree: dict[str, Path]) -> None:
    big = write_skill(tree["project"] / ".agents" / "skills", "big-ref", "Has a big reference.")
    (big / "references").mkdir()
    (big / "references" / "large.md").write_text("line of text\n" * ((8 << 20) // 13 - 1))


def _read_request(request_id: int, session: str | None) -> tuple[dict[str, str], bytes]:
    """The headers and body of a ``resources/read`` of the large file: in a session, or on
    2026-07-28 (no session) when ``session`` is None."""
    params: dict[str, object] = {"uri": LARGE}
    headers = dict(ACCEPT, Authorization=f"Bearer {TOKEN}")
    if session is None:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers.update(
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/read", "Mcp-Name": LARGE}
        )
    else:
        headers["Mcp-Session-Id"] = session
    body = {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": params}
    return headers, json.dumps(body).encode()


def _ask_for_large(port: int, session: str | None, request_id: int) -> socket.socket:
    """A raw connection that has asked for the large file and read nothing yet."""
    headers, body = _read_request(request_id, session)
    conn = socket.socket()
    # A small receive window: the reply piles up in the server, not in this kernel.
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.connect(("127.0.0.1", port))
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "", ""]
    conn.sendall("\r\n".join(lines).encode() + body)
    return conn


def _drain(conn: socket.socket, within: float) -> tuple[int, bool]:
    """Bytes read until the server ends the connection (or ``within`` passes), and whether
    it ended."""
    conn.settimeout(within)
    got = 0
    try:
        while chunk := conn.recv(1 << 20):
            got += len(chunk)
    except ConnectionResetError:
        pass
    except TimeoutError:
        return got, False
    return got, True


@pytest.mark.parametrize("era", ["session", MODERN])
def test_clients_that_never_read_hold_no_slot(tree: dict[str, Path], era: str) -> None:
    _big_skill(tree)
    env = {**http_env(tree), "SKILLSD_HTTP_WRITE_SECONDS": str(DEADLINE)}
    with server(tree, env=env) as (_proc, url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        session = open_session(url) if era == "session" else None
        other = open_session(url)
        stalled = [_ask_for_large(port, session, 10 + n) for n in range(4)]
        try:
            # Every one of them has its reply begun, so each holds a slot.
            for conn in stalled:
                assert select.select([conn], [], [], 20)[0], "no reply begun"
            started = time.monotonic()
            listed = httpx2.post(
                url,
                content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
                headers=dict(ACCEPT, Authorization=f"Bearer {TOKEN}", **{"Mcp-Session-Id": other}),
                timeout=DEADLINE + 20,  # no answer within 60 s before
            )
            latency = time.monotonic() - started
            assert listed.status_code == 200
            assert "skill_search" in json.dumps(json_reply(listed)["result"])
            assert latency < DEADLINE + 10, latency  # about the deadline, unloaded
            # Past the deadline every stalled reply is dropped, not kept for later: its
            # connection ends before the whole reply (over 8 MiB) has come.
            time.sleep(3 * DEADLINE)
            for conn in stalled:
                got, ended = _drain(conn, within=10)
                assert ended and got < 8 << 20, got
        finally:
            for conn in stalled:
                conn.close()


def test_a_client_that_reads_within_the_deadline_gets_the_whole_reply(
    tree: dict[str, Path],
) -> None:
    _big_skill(tree)
    env = {**http_env(tree), "SKILLSD_HTTP_WRITE_SECONDS": str(DEADLINE)}
    with server(tree, env=env) as (_proc, url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with _ask_for_large(port, open_session(url), 3) as conn:
            assert select.select([conn], [], [], 20)[0], "no reply begun"
            time.sleep(DEADLINE / 2)  # a pause shorter than the deadline is no offence
            conn.settimeout(DEADLINE + 10)
            received = b""
            while not _whole(received):
                chunk = conn.recv(1 << 20)
                assert chunk, f"cut after {len(received)} bytes"
                received += chunk
            assert len(received) > 8_000_000, len(received)


def _whole(received: bytes) -> bool:
    """Whether ``received`` holds a whole HTTP reply (sized, or chunked)."""
    head, found, body = received.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return body.endswith(b"\r\n0\r\n\r\n")  # the end of a chunked body


def test_clients_that_never_finish_their_body_hold_no_slot(tree: dict[str, Path]) -> None:
    env = {**http_env(tree), "SKILLSD_HTTP_WRITE_SECONDS": str(DEADLINE)}
    with server(tree, env=env) as (_proc, url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        session, other = open_session(url), open_session(url)
        stalled = []
        for _ in range(4):
            conn = socket.create_connection(("127.0.0.1", port))
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nMcp-Session-Id: {session}\r\n"
                "Accept: application/json, text/event-stream\r\n"
                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            conn.sendall(head.encode())  # 1 byte of the 100 promised, and no more
            stalled.append(conn)
        try:
            # The stalled bodies reach the server before the request that must not wait for
            # them (nothing tells a client its bytes were read; this gives them time to be).
            time.sleep(0.5)
            started = time.monotonic()
            listed = httpx2.post(
                url,
                content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
                headers=dict(ACCEPT, Authorization=f"Bearer {TOKEN}", **{"Mcp-Session-Id": other}),
                timeout=DEADLINE + 20,
            )
            assert listed.status_code == 200
            assert time.monotonic() - started < DEADLINE + 10
            for conn in stalled:
                conn.settimeout(10)
                answer = conn.recv(4096).decode()
                assert answer.startswith("HTTP/1.1 408"), answer
                assert "did not arrive within 2s" in answer, answer
        finally:
            for conn in stalled:
                conn.close()
