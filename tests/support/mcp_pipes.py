"""``skillsd mcp`` on raw pipes, spoken to one JSON line at a time (no MCP SDK in between)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests.hang_guard import within
from tests.support.env import daemon_env

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
        return stream_text(self.proc.stderr)

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
        return status, stream_text(self.proc.stderr), rest


def stream_text(stream: IO[bytes] | None) -> str:
    assert stream is not None
    return stream.read().decode(errors="replace")
