"""Start-up of ``skillsd mcp`` on stdio, as a host sees it: spawn -> first answer.

    .venv/bin/python bench/mcp_startup.py               # 7 runs each, medians
    .venv/bin/python bench/mcp_startup.py --runs 11 --json

Each run spawns a fresh ``python -m skillsd mcp`` in a temporary copy of ``examples/project``
(``HOME`` a copy of ``examples/home``, an empty config) and times, from just before the spawn:

- ``initialize``: the answer to ``initialize`` (the handshake era's first request);
- ``tools/list``: then ``notifications/initialized`` and the answer to ``tools/list``;
- ``discover``: in a separate spawn, the answer to ``server/discover`` carrying the 2026-07-28
  envelope, the probe a host sends first to learn whether the server speaks that version.

For comparison the same is timed for ``skillsd serve``'s own ``initialize`` and ``tools.list``.
Hosts give a server a fixed time to answer its first request (the bound this is judged on is
400 ms to the ``tools/list`` answer); the machine's load counts, so run it on a quiet machine
and read the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLIENT = {"name": "skillsd-bench", "version": "1"}
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT,
}
#: How long one answer may take before the run is called stuck.
TIMEOUT = 30.0


def _env(tmp: Path) -> dict[str, str]:
    drop = ("SKILLSD_ROOT", "AGENT_SKILLS_PATH", "CODEX_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(HOME=str(tmp / "home"), SKILLSD_CONFIG=str(tmp / "config.toml"))
    env.update(XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "xdg"))
    env.update(SKILLSD_RUNTIME_DIR=str(tmp / "run"))
    return env


class Peer:
    """A spawned server spoken to one newline-delimited JSON-RPC message at a time."""

    def __init__(self, argv: list[str], tmp: Path) -> None:
        self.name = " ".join(argv[1:])
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            cwd=tmp / "project",
            env=_env(tmp),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self._next = 0

    def send(self, method: str, params: dict[str, Any] | None, *, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self._next += 1
            message["id"] = self._next
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        return self._next

    def answer(self, rid: int) -> float:
        """Seconds from the spawn until the answer to ``rid`` arrived."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.name}: exited before answering")
            message = json.loads(line)
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise SystemExit(f"{self.name}: {message['error']}")
                return time.perf_counter() - self.start
        raise SystemExit(f"{self.name}: no answer in {TIMEOUT} s")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def mcp_run(tmp: Path) -> dict[str, float]:
    argv = [sys.executable, "-m", "skillsd", "mcp"]
    peer = Peer(argv, tmp)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
    initialize = peer.answer(peer.send("initialize", init))
    peer.send("notifications/initialized", None, notify=True)
    tools = peer.answer(peer.send("tools/list", {}))
    peer.close()
    probe = Peer(argv, tmp)
    discover = probe.answer(probe.send("server/discover", {"_meta": MODERN}))
    probe.close()
    return {"initialize": initialize, "tools/list": tools, "discover": discover}


def serve_run(tmp: Path) -> dict[str, float]:
    peer = Peer([sys.executable, "-m", "skillsd", "serve"], tmp)
    initialize = peer.answer(peer.send("initialize", {"clientInfo": CLIENT}))
    peer.send("initialized", {}, notify=True)
    tools = peer.answer(peer.send("tools.list", {}))
    peer.close()
    return {"initialize": initialize, "tools.list": tools}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="spawns per measure (default 7)")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillsd-mcp-startup-") as name:
        tmp = Path(name)
        shutil.copytree(ROOT / "examples" / "project", tmp / "project")
        shutil.copytree(ROOT / "examples" / "home", tmp / "home")
        (tmp / "config.toml").write_text("")
        mcp_run(tmp)  # untimed: the bytecode caches are written once
        runs: dict[str, list[float]] = {}
        for _ in range(args.runs):  # interleaved, so drift is shared
            for face, measures in (("mcp", mcp_run(tmp)), ("serve", serve_run(tmp))):
                for what, seconds in measures.items():
                    runs.setdefault(f"{face} {what}", []).append(seconds)
    medians = {key: round(statistics.median(v) * 1000, 1) for key, v in runs.items()}
    if args.json:
        print(json.dumps({"runs": args.runs, "median_ms": medians}, indent=2))
        return
    print(f"spawn -> answer, median of {args.runs} (ms; min .. max)")
    for key, values in runs.items():
        low, high = min(values) * 1000, max(values) * 1000
        print(f"  {key:<20} {medians[key]:>7.1f}   ({low:.0f} .. {high:.0f})")


if __name__ == "__main__":
    main()
