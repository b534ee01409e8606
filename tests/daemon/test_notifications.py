"""`skills.changed` goes to every connection that listed the cwd, and only to those."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import daemons as h
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process


def test_only_connections_that_listed_the_cwd_are_notified(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    write_skill(skills, "alpha", "First skill.")
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    path = tmp_path / "d.sock"
    with h.socket_daemon(path, tmp_path / "run"):
        listers = [h.SocketClient(path) for _ in range(2)]
        bystander = h.SocketClient(path)
        try:
            for n, client in enumerate(listers):
                assert "result" in client.call(n, "skills.list", {"cwd": os.fspath(project)})
            assert "result" in bystander.call(9, "skills.list", {"cwd": os.fspath(other)})
            write_skill(skills, "beta", "Second skill.")
            for client in listers:
                note = client.reader.message()
                assert note["method"] == "skills.changed"
                assert note["params"]["cwd"] == os.fspath(project)
                assert len(note["params"]["added"]) == 1
            # The bystander hears nothing about a cwd it never listed: its next message is
            # the reply to its next request.
            assert bystander.call(10, "ping") == {"jsonrpc": "2.0", "id": 10, "result": {}}
        finally:
            for client in [*listers, bystander]:
                client.close()
