"""Requests per second of ``skillsd mcp --http`` from one keep-alive client.

    .venv/bin/python bench/mcp_http_throughput.py                 # this tree only
    .venv/bin/python bench/mcp_http_throughput.py --before f51bc4b  # and an earlier commit

Each server runs in a temporary copy of ``examples/project`` (``HOME`` a copy of
``examples/home``, an empty config, the bearer token in ``$SKILLSD_MCP_TOKEN``). The client is
one TCP connection kept alive, written here on a plain socket (no HTTP library, so the client
costs little next to the server): it opens an MCP session, then for each method sends requests
one after another for ``--seconds`` and counts the answers, and the server's CPU time per
answer (user + system, all its threads, from ``/proc``): a figure that moves less than the
rate when the machine is shared. ``ping`` and ``tools/list`` measure
the HTTP face itself; the others add the runtime's work (a search, a file read, a render).
``--before REV`` extracts that commit with ``git archive`` and measures its server the same
way in the same run (the named baseline); ``f51bc4b`` is the last commit whose HTTP face was
the MCP SDK's on uvicorn.
Target: at least 2 000 requests/s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-" + "t" * 40
TARGET = 2000
#: More arguments for the servers (``--server-args "--workers 1"``; an older commit must know
#: them).
SERVER_ARGS: list[str] = []
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


class KeepAlive:
    """One HTTP/1.1 connection, one request at a time."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port = port
        self.buffer = b""
        self.session: str | None = None

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(message).encode()
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            f"Authorization: Bearer {TOKEN}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        if self.session:
            head.append(f"Mcp-Session-Id: {self.session}")
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        return self._reply()

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def _reply(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            size = int(headers["content-length"])
            while len(self.buffer) < size:
                self._fill()
            body, self.buffer = self.buffer[:size], self.buffer[size:]
            return status, headers, body
        body = b""  # chunked
        while True:
            while b"\r\n" not in self.buffer:
                self._fill()
            size_line, self.buffer = self.buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(self.buffer) < size + 2:
                self._fill()
            body += self.buffer[:size]
            self.buffer = self.buffer[size + 2 :]
            if size == 0:
                return status, headers, body


def answer(body: bytes) -> Any:
    """The JSON-RPC message of a reply sent as JSON or as SSE events (the last one)."""
    text = body.decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
    return json.loads([d for d in data if d][-1])


@contextmanager
def server(python_path: str | None) -> Iterator[tuple[int, int]]:
    with tempfile.TemporaryDirectory(prefix="skillsd-http-bench-") as tmp_name:
        tmp = Path(tmp_name)
        shutil.copytree(ROOT / "examples" / "home", tmp / "home", symlinks=True)
        shutil.copytree(ROOT / "examples" / "project", tmp / "project", symlinks=True)
        (tmp / "config.toml").write_text(os.environ.get("BENCH_CONFIG", ""))
        env = dict(os.environ, HOME=str(tmp / "home"), SKILLSD_MCP_TOKEN=TOKEN)
        env["SKILLSD_CONFIG"] = str(tmp / "config.toml")
        env["XDG_STATE_HOME"] = str(tmp / "state")
        env["XDG_RUNTIME_DIR"] = str(tmp / "run")
        if python_path:
            env["PYTHONPATH"] = python_path
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        argv = [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}"]
        argv += SERVER_ARGS
        proc = subprocess.Popen(
            argv,
            cwd=tmp / "project",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("the server did not start") from None
                    time.sleep(0.1)
            yield port, proc.pid
        finally:
            proc.terminate()
            proc.wait(10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its workers (every thread)."""
    total, todo = 0.0, [pid]
    while todo:
        each = todo.pop()
        for task in Path(f"/proc/{each}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def measure(port: int, pid: int, seconds: float) -> tuple[dict[str, float], dict[str, float]]:
    """Requests per second and server CPU microseconds per request, by method."""
    client = KeepAlive(port)
    status, headers, body = client.post(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    )
    assert status == 200, (status, body[:200])
    client.session = headers.get("mcp-session-id")
    client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = answer(client.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})[2])
    search = next(t["name"] for t in tools["result"]["tools"] if "search" in t["name"])
    listed = answer(client.post({"jsonrpc": "2.0", "id": 3, "method": "resources/list"})[2])
    prompts = answer(client.post({"jsonrpc": "2.0", "id": 4, "method": "prompts/list"})[2])
    calls = {
        "ping": ("ping", None),
        "tools/list": ("tools/list", None),
        "tools/call search": ("tools/call", {"name": search, "arguments": {"query": "release"}}),
        "resources/list": ("resources/list", None),
        "resources/read": ("resources/read", {"uri": listed["result"]["resources"][0]["uri"]}),
        "prompts/get": ("prompts/get", {"name": prompts["result"]["prompts"][0]["name"]}),
    }
    rates: dict[str, float] = {}
    cpu_us: dict[str, float] = {}
    request_id = 10
    for label, (method, params) in calls.items():
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        done, start, cpu = 0, time.perf_counter(), cpu_seconds(pid)
        while (elapsed := time.perf_counter() - start) < seconds:
            request_id += 1
            status, _headers, body = client.post(dict(message, id=request_id))
            assert status == 200 and b'"error"' not in body[:200], (status, body[:200])
            done += 1
        rates[label] = round(done / elapsed)
        cpu_us[label] = round(1e6 * (cpu_seconds(pid) - cpu) / done)
    client.sock.close()
    return rates, cpu_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per method")
    parser.add_argument("--before", help="also measure this commit's server (git archive)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--server-args", default="", help='e.g. "--workers 1"')
    args = parser.parse_args()
    SERVER_ARGS[:] = args.server_args.split()
    rows: dict[str, dict[str, float]] = {}
    cpu_rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="skillsd-before-") as before_dir:
        servers: list[tuple[str, str | None]] = [("this tree", None)]
        if args.before:
            archive = subprocess.run(
                ["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", before_dir], input=archive, check=True)
            where = os.pathsep.join(
                [before_dir, f"{before_dir}/protocol", f"{before_dir}/clients/python"]
            )
            servers.append((f"{args.before}", where))
        for name, path in servers:
            with server(path) as (port, pid):
                rows[name], cpu_rows[name] = measure(port, pid, args.seconds)
    if args.json:
        report = {"nproc": os.cpu_count(), "rows": rows, "cpu_us": cpu_rows, "target": TARGET}
        print(json.dumps(report, indent=2))
        return
    methods = list(next(iter(rows.values())))
    print("| server | " + " | ".join(f"{m} req/s" for m in methods) + " |")
    print("|---|" + "---|" * len(methods))
    for name, rates in rows.items():
        print(f"| {name} | " + " | ".join(str(rates[m]) for m in methods) + " |")
    print()
    print("| server | " + " | ".join(f"{m} CPU us/req" for m in methods) + " |")
    print("|---|" + "---|" * len(methods))
    for name, cpu in cpu_rows.items():
        print(f"| {name} | " + " | ".join(str(cpu[m]) for m in methods) + " |")
    for method, rate in rows["this tree"].items():
        print(f"target >= {TARGET} req/s, {method}: {'met' if rate >= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
