"""Hostile files against the real daemon (docs/security.md, issue 13 items 2-5 and 8): FIFOs and
``/dev/zero`` where a config, state or agent file goes, symlink loops and a huge extra root,
create/delete churn and a watcher that dies, names that are not UTF-8. Every case reproduces the
original failure with a deadline: the daemon must answer (and keep answering) in time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import Client
from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill

pytestmark = [pytest.mark.slow, pytest.mark.process]

#: Generous: each of these hung forever (or took minutes) before.
DEADLINE = 20.0


@pytest.fixture
def start(tree: dict[str, Path]) -> Iterator[Any]:
    daemons: list[StdioDaemon] = []

    def run(**extra: str) -> Client:
        daemon = StdioDaemon(environ=daemon_env(tree, **extra))
        daemons.append(daemon)
        return Client(daemon, tree["project"])

    yield run
    for daemon in daemons:
        daemon.kill()


def timed(client: Client, method: str, **params: Any) -> dict[str, Any]:
    """A request that must be answered before the deadline (the reader times out otherwise)."""
    params.setdefault("cwd", client.cwd)
    started = time.monotonic()
    reply = client.raw(method, params)
    assert time.monotonic() - started < DEADLINE, f"{method} took too long"
    return reply


def test_a_fifo_or_dev_zero_config_is_an_error_naming_the_file(
    tree: dict[str, Path], start: Any
) -> None:
    project_config = tree["project"] / ".agents" / "skillsd.toml"
    os.mkfifo(project_config)
    client = start()
    listed = timed(client, "skills.list")
    assert "error" in listed, listed
    assert os.fspath(project_config) in listed["error"]["message"]
    assert "not a regular file" in listed["error"]["message"]
    assert "result" in client.raw("ping")
    project_config.unlink()
    project_config.symlink_to("/dev/zero")
    listed = timed(client, "skills.list")
    assert listed["error"]["data"]["kind"] == "invalid_config", listed
    assert "larger than" in listed["error"]["message"] or "regular" in listed["error"]["message"]
    # Every method on that cwd says the same, at once; other work goes on.
    searched = timed(client, "skills.search", query="pdf")
    assert searched["error"]["data"]["kind"] == "invalid_config"
    assert "result" in client.raw("ping")


def test_fifo_or_dev_zero_user_config_and_state(tree: dict[str, Path], start: Any) -> None:
    user_config = tree["tmp"] / "config.toml"  # the daemon's SKILLSD_CONFIG
    user_config.unlink()
    os.mkfifo(user_config)
    state_dir = tree["tmp"] / "state" / "skillsd"
    state_dir.mkdir(parents=True)
    (state_dir / "state.json").symlink_to("/dev/zero")
    client = start()
    listed = timed(client, "skills.list")
    assert "error" in listed and os.fspath(user_config) in listed["error"]["message"]
    assert listed["error"]["code"] != -32603
    user_config.unlink()
    user_config.write_text("")
    listed = timed(client, "skills.list")
    assert "result" in listed, listed
    # The state file is unusable: said once in the diagnostics, never read without end.
    assert any("state" in (d.get("path") or "") for d in listed["result"]["diagnostics"])


def test_a_fifo_agent_file_never_holds_a_worker(tree: dict[str, Path], start: Any) -> None:
    agents = tree["project"] / ".agents" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    os.mkfifo(agents / "stuck.md")
    client = start()
    # Six at once filled the worker pool forever before; now each answers in time.
    ids = [f"a{n}" for n in range(6)]
    for rid in ids:
        client.daemon.send(request(rid, "agents.list", {"cwd": client.cwd}))
    replies: dict[str, Any] = {}
    deadline = time.monotonic() + DEADLINE
    while len(replies) < len(ids) and time.monotonic() < deadline:
        msg = client.daemon.reader.message()
        if msg.get("id") in ids:
            replies[msg["id"]] = msg
    assert len(replies) == len(ids)
    for reply in replies.values():
        errors = reply["result"]["errors"]
        assert any("stuck.md" in e["path"] and "regular file" in e["message"] for e in errors)
    assert "result" in timed(client, "skills.load", name="pdf-forms")
    doctor = subprocess.run(
        [sys.executable, "-m", "skillsd", "doctor"],
        cwd=tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert doctor.returncode in (0, 1), doctor.stderr


def test_symlink_loops_and_a_huge_extra_root(tree: dict[str, Path], start: Any) -> None:
    skills = tree["skills"]
    (skills / "cat").mkdir()
    write_skill(skills / "cat", "inner", "Inside a category with loops.")
    (skills / "cat" / "back").symlink_to(skills)
    (skills / "cat" / "self").symlink_to(skills / "cat")
    client = start()
    listed = timed(client, "skills.list", extraRoots=["/usr"])
    assert "result" in listed, listed
    names = [s["name"] for s in listed["result"]["skills"]]
    assert names.count("inner") == 1
    inspect = timed(client, "context.inspect")
    assert inspect["result"]["skills"]["watch"]["mode"] in ("watching", "stat")
    # Still live: a new skill beside the loops is announced.
    write_skill(skills / "cat", "later", "Added while the daemon runs.")
    client.wait_note("skills.changed", timeout=DEADLINE)
    # And the stdio daemon still exits on EOF.
    client.daemon.close_stdin()
    assert client.daemon.wait(timeout=DEADLINE) == 0


def test_churn_then_a_dead_watcher_falls_back_and_restarts(
    tree: dict[str, Path], start: Any
) -> None:
    client = start()
    if True:
        assert "result" in timed(client, "skills.list")
        skills = tree["skills"]
        stop = threading.Event()

        def churn() -> None:
            n = 0
            while not stop.is_set():
                path = skills / f"churn-{n % 3}"
                write_skill(skills, path.name, "Here and gone.")
                shutil.rmtree(path, ignore_errors=True)
                n += 1

        worker = threading.Thread(target=churn)
        worker.start()
        time.sleep(1.0)  # some thousands of creations and deletions
        stop.set()
        worker.join()
        # After the churn the watcher still works: a new skill is seen by a notification.
        client.notes.clear()
        write_skill(skills, "after-churn", "Written after the churn.")
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            names = {s["name"] for s in timed(client, "skills.list")["result"]["skills"]}
            if "after-churn" in names:
                break
            time.sleep(0.1)
        assert "after-churn" in names
        watch = timed(client, "context.inspect")["result"]["skills"]["watch"]
        assert watch["mode"] == "watching", watch

        # The watcher's thread dies: the next request says so, sees changes by stat-validation,
        # and the watcher comes back.
        assert "result" in client.raw("_test.stopWatcher")
        watch = timed(client, "context.inspect")["result"]["skills"]["watch"]
        assert watch["mode"] == "stat" and "watcher" in watch["reason"], watch
        write_skill(skills, "while-dead", "Written while the watcher was down.")
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            names = {s["name"] for s in timed(client, "skills.list")["result"]["skills"]}
            if "while-dead" in names:
                break
            time.sleep(0.05)
        assert "while-dead" in names
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            timed(client, "skills.list")
            watch = timed(client, "context.inspect")["result"]["skills"]["watch"]
            if watch["mode"] == "watching":
                break
            time.sleep(0.1)
        assert watch["mode"] == "watching", watch
        client.notes.clear()
        write_skill(skills, "after-restart", "Seen by the restarted watcher.")
        note = client.wait_note("skills.changed", timeout=DEADLINE)
        assert note["params"]["added"]


def test_names_that_are_not_utf8(tree: dict[str, Path], start: Any) -> None:
    skills = os.fsencode(tree["skills"])
    bad_dir = os.path.join(skills, b"bad-\xff-skill")
    os.mkdir(bad_dir)
    with open(os.path.join(bad_dir, b"SKILL.md"), "wb") as fh:
        fh.write(
            b"---\nname: bad-skill\ndescription: Lives in a folder whose name is not UTF-8.\n---\n"
        )
    pdf = os.fsencode(tree["skills"] / "pdf-forms")
    with open(os.path.join(pdf, b"notes-\xfe.md"), "wb") as fh:
        fh.write(b"a resource with a Latin-1 name\n")
    os.mkdir(os.path.join(os.fsencode(tree["project"]), b".claude"))
    os.makedirs(os.path.join(os.fsencode(tree["project"]), b".claude", b"commands"))
    with open(
        os.path.join(os.fsencode(tree["project"]), b".claude", b"commands", b"x\xff.md"), "wb"
    ) as fh:
        fh.write(b"A command with a bad name.\n")
    client = start()
    listed = timed(client, "skills.list")
    assert "result" in listed, listed
    undecodable = [
        d["message"]
        for d in listed["result"]["diagnostics"]
        if d["code"] == "discovery.undecodable_name"
    ]
    assert any("bad-\\xff-skill" in message for message in undecodable), undecodable
    assert any("notes-\\xfe.md" in message for message in undecodable), undecodable
    for method, params in (
        ("skills.search", {"query": "pdf"}),
        ("skills.load", {"name": "pdf-forms"}),
        ("skills.mentions", {"text": "use $pdf-forms"}),
        ("context.inspect", {"includeSkills": True}),
        ("skills.commands", {}),
        ("skills.readFile", {"name": "pdf-forms", "file": "references/fields.md"}),
    ):
        reply = timed(client, method, **params)
        assert "result" in reply, (method, reply)
    loaded = timed(client, "skills.load", name="pdf-forms", force=True)["result"]
    assert not any("notes-" in f for f in loaded["files"])
    out = subprocess.run(
        [sys.executable, "-m", "skillsd", "list", "--json"],
        cwd=tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        timeout=DEADLINE,
    )
    assert out.returncode == 0, out.stderr
    assert b"Traceback" not in out.stderr


def test_a_reply_holding_an_undecodable_name_is_sent_escaped(start: Any) -> None:
    client = start()
    reply = client.raw("_test.badText")
    assert reply["result"] == {"text": "skills/bad-\\xff-name"}
    assert "result" in client.raw("ping")
