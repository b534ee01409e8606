"""What the loopback tests of remote skills share: machine A (``skillsd mcp --http`` serving a
team's repository behind a token), machine B (a home and a user config naming the remote), and
the JSON-RPC calls the tests make of B's daemon."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support import daemons as h
from tests.support.daemons import free_port
from tests.support.mcp_http import TOKEN

__all__ = ["DEPLOY", "call", "consumer", "remote_named", "skills_of", "team_server", "wait_for"]

DEPLOY = "---\nname: deploy\ndescription: Ship the service to production.\n---\n\nRun it.\n"


def team_token(folder: Path) -> Path:
    """``folder/team.token``: the test server's token in a file only its owner may read, as a
    remote's ``tokenFile`` and ``skillsd mcp --http --token-file`` require."""
    token = folder / "team.token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    return token


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def team_server(
    team: Path, home: Path, token: Path
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``skillsd mcp --http`` serving the team's skills (machine A)."""
    port = free_port()
    environ = h.env(HOME=os.fspath(home), SKILLSD_CONFIG=os.fspath(home / "config.toml"))
    environ.pop("SKILLSD_MCP_TOKEN", None)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}"),
            *("--token-file", os.fspath(token), "--cwd", os.fspath(team)),
        ],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:

        def up() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        wait_for("the team server", up)
        yield proc, url
    finally:
        h.stop(proc)


def consumer(tmp: Path, remotes: str, *, allow: bool = True) -> tuple[dict[str, str], Path]:
    """Machine B: its own home and a user config naming the remote(s)."""
    home = tmp / "home-b"
    home.mkdir(exist_ok=True)
    config = tmp / "config-b.toml"
    # Loading asks nobody here (unless a test wants it to): the user allows every load.
    allowed = '[permissions]\ndefaultAction = "allow"\n\n' if allow else ""
    config.write_text(allowed + remotes)
    project = tmp / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    environ = h.env(
        HOME=os.fspath(home),
        SKILLSD_CONFIG=os.fspath(config),
        XDG_CACHE_HOME=os.fspath(tmp / "cache-b"),
        XDG_STATE_HOME=os.fspath(tmp / "state-b"),
    )
    return environ, project


def call(daemon: h.StdioDaemon, n: list[int], method: str, params: dict[str, Any]) -> Any:
    """The reply to one request (the ``skills.changed`` notifications on the way skipped)."""
    n[0] += 1
    daemon.send(h.request(n[0], method, params))
    while True:
        message = daemon.reader.message()
        if message.get("id") == n[0]:
            return message


def skills_of(daemon: h.StdioDaemon, project: Path, n: list[int]) -> list[dict[str, Any]]:
    reply = call(daemon, n, "skills.list", {"cwd": os.fspath(project)})
    assert "result" in reply, reply
    skills: list[dict[str, Any]] = reply["result"]["skills"]
    return skills


def remote_named(skills: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((s for s in skills if s["scope"] == "remote" and s["name"] == name), None)
