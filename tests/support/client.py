"""The JSON-RPC test client: requests, errors and notifications over a daemon's pipes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.in_process import InProcessDaemon


class Client:
    """Request/response over the daemon's pipes; notifications are kept aside."""

    def __init__(self, daemon: StdioDaemon | InProcessDaemon, cwd: Path) -> None:
        self.daemon = daemon
        self.cwd = os.fspath(cwd)
        self.notes: list[dict[str, Any]] = []
        self._ids = iter(range(1, 10**9))

    def raw(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        id_ = next(self._ids)
        self.daemon.send(request(id_, method, params))
        while True:
            msg = self.daemon.reader.message()
            if "id" in msg and msg["id"] == id_:
                return msg
            self.notes.append(msg)

    def ok(self, method: str, **params: Any) -> Any:
        params.setdefault("cwd", self.cwd) if method not in _NO_CWD else None
        reply = self.raw(method, params)
        assert "error" not in reply, reply
        return reply["result"]

    def err(self, method: str, **params: Any) -> dict[str, Any]:
        params.setdefault("cwd", self.cwd) if method not in _NO_CWD else None
        reply = self.raw(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def wait_note(self, method: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for note in self.notes:
                if note.get("method") == method:
                    self.notes.remove(note)
                    return note
            self.notes.append(
                self.daemon.reader.message(timeout=max(0.01, deadline - time.monotonic()))
            )


_NO_CWD = {"session.close", "session.compacted", "tools.list", "skills.validate", "ping"}


class Daemons:
    """Starts daemons on one tree (so a test can restart one) and stops them all."""

    def __init__(self, tree: dict[str, Path]) -> None:
        self.tree = tree
        self.started: list[StdioDaemon] = []

    def start(self) -> Client:
        daemon = StdioDaemon(environ=daemon_env(self.tree))
        self.started.append(daemon)
        return Client(daemon, self.tree["project"])

    def stop_all(self) -> None:
        for daemon in self.started:
            daemon.kill()
