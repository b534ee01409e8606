"""``skillsd mcp --http`` started for a test, and plain HTTP requests to it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from tests.support.daemons import free_port
from tests.support.env import daemon_env

#: The bearer token the HTTP tests' servers require (``$SKILLSD_MCP_TOKEN``).
TOKEN = "test-token-" + "x" * 32


def http_env(tree: dict[str, Path]) -> dict[str, str]:
    """The tree's environment with the HTTP server's token set."""

    return {**daemon_env(tree), "SKILLSD_MCP_TOKEN": TOKEN}


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


@contextmanager
def server(
    tree: dict[str, Path], *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}", *args],
        cwd=tree["project"],
        env=env if env is not None else http_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx2.get(url, timeout=0.5)
                break
            except httpx2.TransportError:
                if proc.poll() is not None:
                    said = proc.stderr.read().decode() if proc.stderr else ""
                    raise AssertionError(said) from None
                time.sleep(0.1)
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(10)


def memory_mib(pid: int, key: str) -> float:
    """``key`` of ``/proc/<pid>/status`` (``VmRSS:``, ``VmHWM:``) in MiB, summed over the
    server and its worker processes."""
    total, todo = 0.0, [pid]
    while todo:
        each = todo.pop()
        for task in Path(f"/proc/{each}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
        with open(f"/proc/{each}/status", encoding="ascii") as status:
            total += next(int(ln.split()[1]) for ln in status if ln.startswith(key)) / 1024
    return total


def post(url: str, body: Any, token: str | None = TOKEN, **headers: str) -> httpx2.Response:
    sent = dict(ACCEPT, **headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=json.dumps(body), headers=sent, timeout=60)


def json_reply(response: httpx2.Response) -> Any:
    """The JSON-RPC message of a reply sent as JSON or as one SSE event."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = next(d for d in data if d)
    return json.loads(text)


def open_session(url: str) -> str:
    response = post(url, INIT)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    post(
        url,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        **{"Mcp-Session-Id": session},
    )
    return session


class KeepAlive:
    """One raw HTTP/1.1 connection, one request at a time (replies sized or chunked)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.port = port
        self.buffer = b""
        self.raw_head = ""

    def send(
        self,
        method: str,
        body: Any = None,
        session: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send a request: ``body`` as JSON (bytes as they are), with the token and the usual
        headers, or with ``headers`` alone."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode() if body else b""
        if headers is None:
            headers = {
                "Authorization": f"Bearer {TOKEN}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            }
        lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(data)}")
        if session is not None:
            lines.append(f"Mcp-Session-Id: {session}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)

    def head(self) -> tuple[int, dict[str, str]]:
        """The next reply's status and headers (names lower-cased); ``raw_head`` its text."""
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        raw, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.raw_head = raw.decode("latin-1")
        lines = self.raw_head.split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(lines[0].split()[1]), headers

    def reply(self) -> tuple[int, dict[str, str], Any]:
        """The next reply: its status, headers and JSON-RPC message (None if it has none)."""
        status, headers = self.head()
        if "content-length" in headers:
            size = int(headers["content-length"])
            while len(self.buffer) < size:
                self._fill()
            body, self.buffer = self.buffer[:size], self.buffer[size:]
        else:
            body = b""
            while True:
                while b"\r\n" not in self.buffer:
                    self._fill()
                size_line, self.buffer = self.buffer.split(b"\r\n", 1)
                size = int(size_line, 16)
                while len(self.buffer) < size + 2:
                    self._fill()
                body, self.buffer = body + self.buffer[:size], self.buffer[size + 2 :]
                if size == 0:
                    break
        text = body.decode()
        if text.lstrip().startswith("{"):
            return status, headers, json.loads(text)
        data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
        return status, headers, json.loads(data[-1]) if data else None

    def call(self, body: Any, session: str | None = None) -> tuple[int, dict[str, str], Any]:
        self.send("POST", body, session)
        return self.reply()

    def next_event(self, within: float = 20.0) -> dict[str, Any]:
        """The next server-sent event's message on a streamed reply (pings skipped)."""
        deadline = time.monotonic() + within
        while True:
            _before, found, rest = self.buffer.partition(b"data: ")
            if found and b"\r\n" in rest:
                line, _, self.buffer = rest.partition(b"\r\n")
                return dict(json.loads(line))
            left = deadline - time.monotonic()
            assert left > 0, f"no event within {within}s"
            self.sock.settimeout(left)
            self._fill()

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        assert chunk, "the connection ended"
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()
