"""Soak of ``skillsd mcp --http``: many MCP clients at once, latency, HTTP statuses and RSS.

    .venv/bin/python bench/mcp_http_soak.py                  # 1-client baseline, then 200 x 60 s
    .venv/bin/python bench/mcp_http_soak.py --clients 20 --seconds 30 --json

Each pass starts a fresh server (``python -m skillsd mcp --http 127.0.0.1:PORT``, bearer token
in ``$SKILLSD_MCP_TOKEN``) in a temporary copy of ``examples/project`` with ``HOME`` at a copy of
``examples/home`` and an empty config. Every client opens its own session (``initialize`` +
``notifications/initialized``) on a keep-alive connection of its own (a plain asyncio client:
an HTTP library's costs more CPU than the server it measures), then loops until the time is
up, each request sent as soon as the last was answered: ``tools/list``, ``tools/call`` of the
search tool, ``resources/list``, ``resources/read`` and ``prompts/get`` (names taken from the
server's lists). Each request's wall time and HTTP status are recorded (a JSON-RPC error in a
200 reply counts as ``rpc-error``); a thread samples VmRSS/VmHWM of the server and any children
every 0.5 s. Targets, judged on the N-client pass: peak RSS < 256 MiB, p99 < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "soak-" + "t" * 40
HEAD = (
    "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
    f"Authorization: Bearer {TOKEN}\r\n"
)
CLIENT = {"name": "soak", "version": "1"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
RSS_TARGET_MIB, P99_TARGET_MS = 256, 100
#: More arguments for the server (``--server-args "--workers 1"``).
SERVER_ARGS: list[str] = []


def usage(pid: int) -> tuple[float, float, float]:
    """(VmRSS MiB, VmHWM MiB, CPU seconds) summed over ``pid`` and its descendants."""
    rss = hwm = cpu = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        with contextlib.suppress(OSError, KeyError):  # gone, or a zombie
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
            vm = dict(ln.split(":", 1) for ln in Path(f"/proc/{p}/status").read_text().splitlines())
            stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
            rss += int(vm["VmRSS"].split()[0]) / 1024
            hwm += int(vm["VmHWM"].split()[0]) / 1024
    return rss, hwm, cpu


def start_server(tmp: Path, log: Any) -> tuple[subprocess.Popen[bytes], int]:
    drop = ("SKILLSD_ROOT", "AGENT_SKILLS_PATH", "CODEX_HOME")  # Codex's folder follows HOME
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(HOME=str(tmp / "home"), SKILLSD_MCP_TOKEN=TOKEN)
    env.update(SKILLSD_CONFIG=str(tmp / "config.toml"), XDG_STATE_HOME=str(tmp / "state"))
    env.update(XDG_CONFIG_HOME=str(tmp / "xdg"), SKILLSD_RUNTIME_DIR=str(tmp / "run"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}", *SERVER_ARGS]
    proc = subprocess.Popen(cmd, cwd=tmp / "project", env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server did not start (exit {proc.poll()})")


class Reply:
    """One HTTP reply: its status, headers (lower-cased names) and body."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status_code = status
        self.headers = headers
        self.body = body

    def message(self) -> Any:
        """The JSON-RPC message of a JSON or SSE reply (the last event; None when empty)."""
        text = self.body.decode()
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
            text = ([d for d in data if d] or [""])[-1]
        return json.loads(text) if text.strip() else None


class Connection:
    """One keep-alive HTTP/1.1 connection of one client, on asyncio streams: written here so
    that the load generator costs little next to the server (an HTTP library's client spent
    more CPU per request than the server it measured)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(self, method: str, body: bytes, sid: str | None) -> Reply:
        if self.streams is None:
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.streams
        head = f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{HEAD}"
        if sid:
            head += f"Mcp-Session-Id: {sid}\r\n"
        writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        try:
            lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if "content-length" in headers:
                data = await reader.readexactly(int(headers["content-length"]))
            else:
                data = await self._chunked(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            raise
        if headers.get("connection") == "close":
            self.close()
        return Reply(int(lines[0].split()[1]), headers, data)

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader) -> bytes:
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readexactly(2)
        return b"".join(parts)

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.statuses: Counter[str] = Counter()
        self.by_method: dict[str, list[float]] = {}

    async def call(
        self, conn: Connection, body: dict[str, Any], sid: str | None = None
    ) -> tuple[Reply | None, Any]:
        start = time.perf_counter()
        try:
            response = await conn.request("POST", json.dumps(body).encode(), sid)
            message = response.message()
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            self.statuses[type(exc).__name__] += 1
            return None, None
        self.latencies.append(time.perf_counter() - start)
        self.by_method.setdefault(str(body.get("method")), []).append(self.latencies[-1])
        bad = isinstance(message, dict) and "error" in message and response.status_code == 200
        self.statuses["rpc-error" if bad else str(response.status_code)] += 1
        return response, message


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}


async def open_session(stats: Stats, conn: Connection) -> str | None:
    response, _ = await stats.call(conn, rpc("initialize", INIT))
    if response is None or response.status_code != 200:
        return None
    sid = response.headers["mcp-session-id"]
    await stats.call(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


async def discover(port: int) -> list[dict[str, Any]]:
    """The loop's requests, with names taken from the server's own lists."""
    stats, conn = Stats(), Connection(port)
    sid = await open_session(stats, conn)
    tools = (await stats.call(conn, rpc("tools/list"), sid))[1]["result"]["tools"]
    search = next(t["name"] for t in tools if "search" in t["name"])
    res = (await stats.call(conn, rpc("resources/list"), sid))[1]["result"]["resources"]
    prompts = (await stats.call(conn, rpc("prompts/list"), sid))[1]["result"]["prompts"]
    await conn.request("DELETE", b"", sid)
    conn.close()
    return [
        rpc("tools/list"),
        rpc("tools/call", {"name": search, "arguments": {"query": "release notes"}}),
        rpc("resources/list"),
        rpc("resources/read", {"uri": res[0]["uri"]}),
        rpc("prompts/get", {"name": prompts[0]["name"]}),
    ]


async def client(stats: Stats, port: int, loop: list[Any], end: float) -> None:
    conn = Connection(port)
    sid = None
    while sid is None and time.monotonic() < end:
        sid = await open_session(stats, conn)
        if sid is None:
            await asyncio.sleep(0.5)  # e.g. 503 at the session cap
    for n, body in enumerate(itertools.cycle(loop), 3):
        if time.monotonic() >= end:
            break
        await stats.call(conn, dict(body, id=n), sid)
    conn.close()


async def drive(port: int, clients: int, seconds: float) -> tuple[Stats, float]:
    loop = await discover(port)
    stats, start = Stats(), time.monotonic()
    end = start + seconds
    await asyncio.gather(*(client(stats, port, loop, end) for _ in range(clients)))
    return stats, time.monotonic() - start


def run_pass(examples: Path, clients: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="skillsd-soak-") as tmp_name:
        tmp = Path(tmp_name)
        shutil.copytree(examples / "home", tmp / "home", symlinks=True)
        shutil.copytree(examples / "project", tmp / "project", symlinks=True)
        (tmp / "config.toml").write_text(os.environ.get("BENCH_CONFIG", ""))
        log = (tmp / "server.log").open("wb")
        proc, port = start_server(tmp, log)
        try:
            samples, stop = [usage(proc.pid)], threading.Event()

            def sample() -> None:
                while not stop.wait(0.5):
                    samples.append(usage(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            idle, _, cpu0 = samples[0]
            mine = time.process_time()
            sampler.start()
            stats, elapsed = asyncio.run(drive(port, clients, seconds))
            mine = time.process_time() - mine
            time.sleep(1.0)
            stop.set()
            sampler.join()
            final, hwm, cpu = usage(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
            log.close()
            said = (tmp / "server.log").read_text(errors="replace").splitlines()
        errors = [ln for ln in said if not ln.startswith("skillsd mcp: ")][:20]
    ms = sorted(x * 1000 for x in stats.latencies) or [0.0]
    peak = max([hwm, *(s[0] for s in samples)])
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": sum(stats.statuses.values()),
        "req_per_s": round(sum(stats.statuses.values()) / elapsed, 1),
        "statuses": dict(sorted(stats.statuses.items())),
        **{f"p{q}_ms": round(ms[min(len(ms) - 1, len(ms) * q // 100)], 1) for q in (50, 95, 99)},
        "max_ms": round(ms[-1], 1),
        "p99_ms_by_method": {
            method: round(1000 * sorted(each)[len(each) * 99 // 100], 1)
            for method, each in sorted(stats.by_method.items())
            if len(each) >= 100
        },
        "idle_rss_mib": round(idle, 1),
        "peak_rss_mib": round(peak, 1),
        "final_rss_mib": round(final, 1),
        "server_cpu_pct": round(100 * (cpu - cpu0) / elapsed),
        "bench_cpu_pct": round(100 * mine / elapsed),
        "server_stderr": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--baseline-seconds", type=float, default=10.0)
    parser.add_argument("--examples", type=Path, default=ROOT / "examples")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--server-args", default="", help='e.g. "--workers 1"')
    args = parser.parse_args()
    SERVER_ARGS[:] = args.server_args.split()
    rows = [run_pass(args.examples, 1, args.baseline_seconds)]
    rows.append(run_pass(args.examples, args.clients, args.seconds))
    last = rows[-1]
    verdict = {"rss_met": last["peak_rss_mib"] < RSS_TARGET_MIB}
    verdict["p99_met"] = last["p99_ms"] < P99_TARGET_MS
    if args.json:
        print(json.dumps({"nproc": os.cpu_count(), "rows": rows, **verdict}, indent=2))
        return
    cols = "clients requests req/s statuses p50_ms p95_ms p99_ms peak_RSS_MiB final_RSS_MiB"
    keys = "clients requests req_per_s statuses p50_ms p95_ms p99_ms peak_rss_mib final_rss_mib"
    print("| " + " | ".join(cols.split()) + " |")
    print("|" + "---|" * len(cols.split()))
    for row in rows:
        cells = [row[k] for k in keys.split()]
        cells[3] = " ".join(f"{code}:{n}" for code, n in row["statuses"].items())
        print("| " + " | ".join(str(c) for c in cells) + " |")
    met = {True: "met", False: "NOT met"}
    print(f"target RSS<{RSS_TARGET_MIB} MiB: {met[verdict['rss_met']]} ({last['peak_rss_mib']})")
    print(f"target p99<{P99_TARGET_MS} ms: {met[verdict['p99_met']]} ({last['p99_ms']})")


if __name__ == "__main__":
    main()
