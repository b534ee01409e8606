"""``skillsd mcp --http`` started for a test, and plain HTTP requests to it."""

from __future__ import annotations

import json
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
