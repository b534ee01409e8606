"""Concurrent requests on one cwd while its files change never produce an internal error: file
operations run in threads of their own while the event loop records loads, grants and answers
in the sessions those threads read, so no shared structure may be iterated while another thread
changes it."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import daemon_env
from tests.support.in_process import InProcessDaemon
from tests.support.skill_tree import write_skill

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("serial")]

SKILLS = [f"tool-{n}" for n in range(12)]
ROUNDS = 30


def _write_tree(tree: dict[str, Path]) -> Path:
    root = tree["project"] / ".agents" / "skills" / "stress"
    for n, name in enumerate(SKILLS):
        write_skill(
            root,
            name,
            f"Stress skill number {n}.",
            extra=f"allowed-tools:\n  - Bash(tool{n}:*)\n  - Read\n",
            body=f"Run $0 with tool {n}.\n",
        )
        (root / name / "notes.md").write_text(f"notes {n}\n")
    return root


def _rewriter(root: Path, stop: threading.Event) -> None:
    n = 0
    while not stop.is_set():
        skill = root / SKILLS[n % len(SKILLS)] / "SKILL.md"
        text = skill.read_text()
        staged = skill.with_suffix(".tmp")
        staged.write_text(text + f"\nEdit {n}.\n")
        os.replace(staged, skill)  # an editor's atomic save: a new inode each time
        n += 1
        time.sleep(0.003)


def _requests(round_: int, cwd: str, session: str) -> list[dict[str, Any]]:
    batch: list[dict[str, Any]] = []
    for k, name in enumerate(SKILLS):
        rid = round_ * 1000 + k * 10
        common = {"cwd": cwd, "sessionId": session}
        batch += [
            {"id": rid, "method": "skills.load", "params": {**common, "name": name, "force": True}},
            {
                "id": rid + 1,
                "method": "skills.readFile",
                "params": {**common, "name": name, "file": "notes.md"},
            },
            {
                "id": rid + 2,
                "method": "skills.invoke",
                "params": {**common, "command": f"/{name} x"},
            },
            {
                "id": rid + 3,
                "method": "tools.call",
                "params": {
                    **common,
                    "name": "skill_read_file",
                    "arguments": {"name": name, "file": "notes.md"},
                },
            },
            {
                "id": rid + 4,
                "method": "permissions.remember",
                "params": {
                    "sessionId": session,
                    "rule": f"Bash(x{round_}-{k}:*)",
                    "decision": "allow",
                },
            },
            {
                "id": rid + 5,
                "method": "permissions.check",
                "params": {**common, "tool": "Bash", "input": "tool1 go"},
            },
        ]
        if k % 4 == 0:
            batch.append({"id": rid + 6, "method": "skills.list", "params": {"cwd": cwd}})
            batch.append(
                {"id": rid + 7, "method": "session.compacted", "params": {"sessionId": session}}
            )
    return batch


def test_concurrent_requests_while_files_change_never_fail_internally(
    tree: dict[str, Path],
) -> None:
    root = _write_tree(tree)
    daemon = InProcessDaemon(daemon_env(tree))
    stop = threading.Event()
    writer = threading.Thread(target=_rewriter, args=(root, stop), daemon=True)
    try:
        cwd = os.fspath(tree["project"])
        opened = daemon.call(0, "session.open", {"cwd": cwd})["result"]
        session = opened["sessionId"]
        writer.start()
        internal: list[Any] = []
        answered = 0
        for round_ in range(ROUNDS):
            batch = _requests(round_, cwd, session)
            # Sent as separate messages, not one batch: each runs as its own task at once.
            daemon.send(
                b"".join(json.dumps({"jsonrpc": "2.0", **m}).encode() + b"\n" for m in batch)
            )
            pending = {m["id"] for m in batch}
            while pending:
                message = daemon.reader.message(timeout=30)
                if "id" not in message:
                    continue  # skills.changed
                pending.discard(message["id"])
                answered += 1
                error = message.get("error")
                if error is not None and error["code"] in (-32603, 0):
                    internal.append(error)
        assert answered == sum(len(_requests(r, cwd, session)) for r in range(ROUNDS))
        assert not internal, internal[:3]
    finally:
        stop.set()
        writer.join(5)
        daemon.kill()
