"""``skills.suggest`` matches ``activeFiles`` off the event loop, within bounds, and ``skillsd
eval`` keeps each query within the search limit (docs/security.md).

Before: a skill with ``paths: ["*a*a*a*a*a*a*a*a*b"]`` and a 56-character active file held the
loop 53.6 s (another client's ``ping`` waited 53.0 s); 100 000 active files against 50 globs
held it 12.9 s; a 1 MiB ``triggers.json`` query took ``skillsd eval`` to 1.42 GB.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.prompt_budget import paths_match_reason
from skillsd_protocol import SkillMetadata
from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill

INVALID_PARAMS = -32602
#: The documented bounds of ``activeFiles`` (skillsd.core.catalog.suggest holds them).
MAX_ACTIVE_FILES = 1000
MAX_ACTIVE_FILE_BYTES = 4096
#: Waits for what must happen; only reached when it does not.
TIMEOUT = 10.0


def _active_files(count: int = MAX_ACTIVE_FILES) -> list[str]:
    """``count`` files of 4 096 bytes that the hostile glob nearly matches, and one SQL file."""
    files = []
    for i in range(count - 1):
        name = f"src/{i:04}/"
        files.append(name + "a" * (MAX_ACTIVE_FILE_BYTES - len(name)))
    return [*files, "db/report.sql"]


def _reply(client: Client) -> dict[str, Any]:
    """The next reply (notifications are kept aside)."""
    while True:
        message: dict[str, Any] = client.daemon.reader.message(timeout=TIMEOUT)
        if "id" in message:
            return message
        client.notes.append(message)


def _skills(tree: dict[str, Path]) -> None:
    write_skill(tree["skills"], "stars", "Star power.", extra="paths: ['*a*a*a*a*a*a*a*a*b']\n")
    write_skill(
        tree["skills"], "sql-style", "House style for queries.", extra="paths: '**/*.sql'\n"
    )


def test_a_ping_is_answered_while_a_suggest_matches_its_active_files(
    client: Client, tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matching is held inside until the test has its ``ping`` answer: on the event loop
    the ``ping`` would wait for the whole suggest."""
    _skills(tree)
    entered, release = threading.Event(), threading.Event()

    def gated(files: Iterable[str], root: str) -> Callable[[SkillMetadata], str | None]:
        reason = paths_match_reason(files, root)

        def held(skill: SkillMetadata) -> str | None:
            entered.set()
            release.wait(TIMEOUT)  # bounded, so a loop held here still ends the test
            return reason(skill)

        return held

    monkeypatch.setattr("skillsd.runtime.catalog_requests.paths_match_reason", gated)
    daemon = client.daemon
    daemon.send(
        request(
            1,
            "skills.suggest",
            {"cwd": client.cwd, "prompt": "tidy this query", "activeFiles": _active_files()},
        )
    )
    assert entered.wait(TIMEOUT), "the suggest never reached its paths matching"
    daemon.send(request(2, "ping"))
    first = _reply(client)
    answered_while_held = not release.is_set()
    release.set()
    assert first.get("id") == 2 and "result" in first, first
    assert answered_while_held
    reply = _reply(client)
    assert reply.get("id") == 1, reply
    names = {s["skill"]["name"]: s for s in reply["result"]["suggestions"]}
    assert "paths: **/*.sql matches db/report.sql" in names["sql-style"]["reasons"]
    assert "stars" not in names


@pytest.mark.process
def test_the_hostile_glob_at_the_cap_answers_rightly(tree: dict[str, Path]) -> None:
    """1 000 active files of 4 096 bytes against the backtracking glob: answered, and right. A
    daemon of its own: a backtracking regex holds the GIL, so one in this process would hang
    the test instead of failing it."""
    _skills(tree)
    files = _active_files()
    files[-2] = files[-2][:-1] + "b"  # the glob matches this one only: every other is tried first
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        cwd = os.fspath(tree["project"])
        assert "result" in daemon.call(1, "skills.list", {"cwd": cwd})
        params = {"cwd": cwd, "prompt": "tidy this query", "activeFiles": files}
        daemon.send(request(2, "skills.suggest", params) + request(3, "ping"))
        replies = {}
        for _ in range(2):
            reply = daemon.reader.message(timeout=TIMEOUT)
            replies[reply["id"]] = reply
        assert replies[3] == {"jsonrpc": "2.0", "id": 3, "result": {}}
        suggestions = replies[2]["result"]["suggestions"]
    finally:
        daemon.kill()
    reasons = {s["skill"]["name"]: s["reasons"] for s in suggestions}
    assert f"paths: *a*a*a*a*a*a*a*a*b matches {files[-2]}" in reasons["stars"]
    assert "paths: **/*.sql matches db/report.sql" in reasons["sql-style"]


def _refused(client: Client, files: list[str], method: str = "skills.suggest") -> dict[str, Any]:
    params = {"cwd": client.cwd, "activeFiles": files}
    if method == "skills.suggest":
        params["prompt"] = "tidy this query"
    reply = client.raw(method, params)
    error: dict[str, Any] = reply.get("error", {})
    assert error.get("code") == INVALID_PARAMS, reply
    assert "activeFiles" in error["message"] and error["data"] == {"field": "activeFiles"}
    assert "result" in client.raw("ping")  # and the daemon keeps serving
    return error


def test_active_files_past_the_cap_are_refused_naming_the_field(client: Client) -> None:
    _refused(client, ["a.py"] * (MAX_ACTIVE_FILES + 1))
    _refused(client, ["x" * (MAX_ACTIVE_FILE_BYTES + 1)])
    message = _refused(client, ["ok.py", "é" * 2049])["message"]  # 4 098 bytes
    assert "activeFiles[1]" in message and "4096 bytes" in message
    # skills.prompt matches the same globs against the same list: the same caps.
    _refused(client, ["a.py"] * (MAX_ACTIVE_FILES + 1), "skills.prompt")
    _refused(client, ["x" * (MAX_ACTIVE_FILE_BYTES + 1)], "skills.prompt")
    # At the cap, each entry at its longest: answered.
    at_cap = ["y" * MAX_ACTIVE_FILE_BYTES] * MAX_ACTIVE_FILES
    assert "result" in client.raw(
        "skills.suggest", {"cwd": client.cwd, "prompt": "x", "activeFiles": at_cap}
    )


@pytest.mark.process
def test_eval_refuses_a_query_past_the_search_limit_naming_the_file(
    tree: dict[str, Path],
) -> None:
    evals = tree["pdf"] / "evals"
    evals.mkdir()
    cases = [
        {"query": "fill in this PDF form", "should_trigger": True},
        {"query": "pdf " * 250 + "x", "should_trigger": True},  # 1 001 characters
    ]
    (evals / "triggers.json").write_text(json.dumps(cases))
    out = run_tree_cli(tree, "eval")
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "evals/triggers.json: entry 1: `query` is longer than 1000 characters" in out.stderr
    # 1 000 characters are fine.
    cases[1]["query"] = "pdf " * 250
    (evals / "triggers.json").write_text(json.dumps(cases))
    out = run_tree_cli(tree, "eval")
    assert out.returncode in (0, 1), out.stderr


@pytest.mark.process
def test_eval_refuses_deeply_nested_triggers_without_a_traceback(tree: dict[str, Path]) -> None:
    evals = tree["pdf"] / "evals"
    evals.mkdir()
    (evals / "triggers.json").write_text("[" * 100_000 + "]" * 100_000)
    out = run_tree_cli(tree, "eval")
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "evals/triggers.json: JSON nested deeper than" in out.stderr
    assert "Traceback" not in out.stderr
