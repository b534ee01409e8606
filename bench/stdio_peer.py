"""A JSON-RPC server spawned on pipes, isolated from the user's environment, and the client that
speaks to it one newline-delimited message at a time. The same client drives skillsd, the MCP
SDK's server and the echo floor, so their numbers compare like for like."""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.contender import BenchUnavailable
from bench.corpus import Corpus

#: How long to wait for one answer before calling the server stuck.
WIRE_TIMEOUT = 10.0
#: Who the bench says it is in ``initialize``.
CLIENT_INFO = {"name": "skillsd-bench", "version": "1"}


def _message(method: str, params: dict[str, Any] | None, rid: int | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if rid is not None:
        message["id"] = rid
    message["method"] = method
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


class StdioPeer:
    """A JSON-RPC server spawned on pipes, spoken to one newline-delimited message at a time.

    Notifications that arrive while waiting for an answer are kept in ``notifications``.
    """

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already searched for a newline
        self._next_id = 0
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self._stderr: list[bytes] = []
        # Drain stderr so a chatty server never blocks on a full pipe.
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-20]  # only the tail is ever shown

    def stderr_tail(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")[-1500:]

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view) :]

    def line(self, deadline: float) -> bytes:
        """The next message line (without its newline)."""
        while True:
            end = self._buf.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buf)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.argv[-1]}: no message in time")
            ready, _, _ = select.select([self._out], [], [], remaining)
            if ready:
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise BenchUnavailable(
                        f"{' '.join(self.argv[1:])} exited: {self.stderr_tail() or 'no stderr'}"
                    )
                self._buf += chunk

    def reserve_ids(self, count: int) -> int:
        """Reserve ``count`` consecutive request ids; return the first."""
        first = self._next_id + 1
        self._next_id += count
        return first

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, bytes]:
        """Send one request; return (seconds until its answer's last byte, the answer line)."""
        rid = self.reserve_ids(1)
        data = _message(method, params, rid)
        marker = f'"id":{rid},'.encode()
        deadline = time.monotonic() + WIRE_TIMEOUT
        start = time.perf_counter()
        self.write(data)
        while True:
            line = self.line(deadline)
            if line.startswith(b'{"jsonrpc":"2.0","method"') or b'"id"' not in line[:64]:
                self.notifications.append((time.perf_counter(), json.loads(line)))
                continue
            elapsed = time.perf_counter() - start
            if marker not in line[:64]:
                raise BenchUnavailable(f"unexpected answer to {method}: {line[:200]!r}")
            return elapsed, line

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A request whose decoded ``result`` is returned (an error is fatal for the contender)."""
        _, line = self.request(method, params)
        answer = json.loads(line)
        if "error" in answer:
            raise BenchUnavailable(f"{method} failed: {answer['error']}")
        return answer["result"]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.write(_message(method, params))

    def handshake(
        self, params: dict[str, Any], initialized: str, *, ping: bool = False
    ) -> StdioPeer:
        """``initialize`` with ``params``, then the ``initialized`` notification (and a ``ping``
        when asked, to know the server answers it); the peer is closed if any of it fails."""
        try:
            self.call("initialize", params)
            self.notify(initialized)
            if ping:
                self.call("ping")
        except BaseException:
            self.close()
            raise
        return self

    def wait_notification(self, method: str, timeout: float) -> tuple[float, dict[str, Any]]:
        """The next ``method`` notification: (perf_counter when it arrived, its params)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (when, message) in enumerate(self.notifications):
                if message.get("method") == method:
                    del self.notifications[i]
                    return when, message.get("params") or {}
            line = self.line(deadline)
            self.notifications.append((time.perf_counter(), json.loads(line)))

    def memory_mb(self) -> tuple[float, float]:
        """(peak RSS ``VmHWM``, current RSS ``VmRSS``) of the server process, in MB."""
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmHWM", "VmRSS"))  # type: ignore[return-value]

    def close(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def spawn_isolated(argv: Sequence[str], corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    """Start ``argv`` on pipes in an environment that sees only the corpus.

    An empty temporary HOME (no real user skill leaks in), a config file raising
    ``discovery.maxDirs`` (``SKILLSD_CONFIG``), the repo root pinned to an empty directory
    (``SKILLSD_ROOT``, also the cwd) and the corpus as the extra root (``AGENT_SKILLS_PATH``);
    other ``SKILLSD_*``/``XDG_*`` variables are removed. The temporary directory is added to
    ``opts.temp_dirs`` for the caller to remove.
    """
    base = Path(tempfile.mkdtemp(prefix="skillsd-bench-daemon-"))
    opts.temp_dirs.append(str(base))
    home, cwd = base / "home", base / "cwd"
    home.mkdir()
    cwd.mkdir()
    config = base / "config.toml"
    config.write_text(f"[discovery]\nmaxDirs = {corpus.max_dirs}\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLSD_", "XDG_")) and k != "AGENT_SKILLS_PATH"
    }
    env.update(
        HOME=str(home),
        SKILLSD_CONFIG=str(config),
        SKILLSD_ROOT=str(cwd),
        AGENT_SKILLS_PATH=corpus.root,
    )
    return StdioPeer(argv, env, str(cwd))
