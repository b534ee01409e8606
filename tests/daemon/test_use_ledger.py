"""The use ledger through the real processes: what ``skillsd serve`` and ``skillsd mcp`` serve
lands in a private, bounded file beside the state file; ``ledger.enabled = false`` records
nothing; ``usage.report`` and ``skillsd usage`` read it back, skipping (and naming) what a crash
or a hand edit broke; Claude Code's transcripts are read only when the user allows it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.listing.fs_claude_transcripts import project_folder
from tests.support.cli import run_tree_cli as run_cli
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env
from tests.support.hooks import EXAMPLE, run_hook
from tests.support.mcp_pipes import INIT, Server
from tests.support.skill_tree import make_project

pytestmark = pytest.mark.process

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "skill-use-2.1.328.jsonl"
)
ALLOW_LOADS = '[permissions]\nallow = ["skill_load"]\n'


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    tree = make_project(tmp_path)
    (tmp_path / "config.toml").write_text(ALLOW_LOADS)
    return tree


def ledger_dir(tree: dict[str, Path]) -> Path:
    return tree["tmp"] / "state" / "skillsd" / "ledger"


def ledger_lines(tree: dict[str, Path]) -> list[dict[str, Any]]:
    path = ledger_dir(tree) / "usage.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def daemon(tree: dict[str, Path]) -> Iterator[StdioDaemon]:
    started = StdioDaemon(environ=daemon_env(tree))
    try:
        yield started
    finally:
        started.kill()


def introduce(client: Client, name: str) -> None:
    reply = client.raw("initialize", {"clientInfo": {"name": name, "version": "1"}})
    assert "result" in reply, reply


def test_a_load_through_the_daemon_lands_in_a_private_ledger(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    client = Client(daemon, tree["project"])
    introduce(client, "my-agent")
    client.ok("session.open", sessionId="chat-1")
    client.ok("skills.load", name="pdf-forms", sessionId="chat-1")
    client.ok("skills.invoke", name="commit-message", arguments="fix the parser")
    # The report waits for the writer: what was served before it is in it.
    report = client.ok("usage.report")
    root = os.path.realpath(tree["project"])
    assert report["repo"] == root and report["ledgerEnabled"] is True
    used = {u["name"]: u for u in report["used"]}
    assert used["pdf-forms"]["loads"] == 1 and used["pdf-forms"]["byAgent"] == {"my-agent": 1}
    assert used["commit-message"]["invokes"] == 1
    assert "release-notes" in {s["name"] for s in report["neverUsed"]}
    lines = ledger_lines(tree)
    assert [(x["kind"], x["skill"], x["client"], x["repo"]) for x in lines] == [
        ("load", "pdf-forms", "my-agent", root),
        ("invoke", "commit-message", "my-agent", root),
    ]
    assert lines[0]["session"] == "chat-1" and "session" not in lines[1]
    assert lines[0]["v"] == 1 and lines[0]["at"].endswith("Z")
    folder = ledger_dir(tree)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "usage.jsonl").stat().st_mode) == 0o600
    # Nothing in the repository.
    assert not list(tree["project"].rglob("usage.jsonl*"))


def test_suggestions_are_recorded_and_one_not_taken_is_reported(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    client = Client(daemon, tree["project"])
    introduce(client, "hook")
    hits = client.ok("skills.suggest", prompt="fill in the PDF form fields")["suggestions"]
    activated = [h["skill"]["name"] for h in hits if h["activate"]]
    assert activated == ["pdf-forms"]
    report = client.ok("usage.report")
    [ignored] = [r for r in report["ignored"] if r["name"] == "pdf-forms"]
    assert (ignored["suggested"], ignored["activated"], ignored["ignored"]) == (1, 1, 1)
    client.ok("skills.load", name="pdf-forms")  # taken soon after: no longer ignored
    report = client.ok("usage.report")
    assert "pdf-forms" not in {r["name"] for r in report["ignored"]}
    kinds = {(x["kind"], x["skill"]) for x in ledger_lines(tree)}
    assert ("activation", "pdf-forms") in kinds and ("load", "pdf-forms") in kinds


def test_ledger_enabled_false_records_nothing(tree: dict[str, Path], daemon: StdioDaemon) -> None:
    (tree["tmp"] / "config.toml").write_text(ALLOW_LOADS + "[ledger]\nenabled = false\n")
    client = Client(daemon, tree["project"])
    client.ok("skills.load", name="pdf-forms")
    client.ok("skills.suggest", prompt="fill in the PDF form fields")
    report = client.ok("usage.report")
    assert report["ledgerEnabled"] is False and report["records"] == 0 and report["used"] == []
    assert not ledger_dir(tree).exists()
    # A repository cannot turn it back on: its [ledger] table is ignored.
    (tree["project"] / ".agents" / "skillsd.toml").write_text("[ledger]\nenabled = true\n")
    client.ok("skills.load", name="pdf-forms")
    assert client.ok("usage.report")["records"] == 0 and not ledger_dir(tree).exists()


def test_the_ledger_rotates_within_its_bound(tree: dict[str, Path], daemon: StdioDaemon) -> None:
    (tree["tmp"] / "config.toml").write_text(ALLOW_LOADS + "[ledger]\nmaxBytes = 4096\n")
    client = Client(daemon, tree["project"])
    introduce(client, "looping-agent")
    for _ in range(60):  # about 300 bytes a line: four files' worth
        client.ok("skills.load", name="pdf-forms")
    report = client.ok("usage.report")
    folder = ledger_dir(tree)
    assert sorted(p.name for p in folder.iterdir()) == [
        "usage.jsonl",
        "usage.jsonl.1",
        "usage.lock",
    ]
    for name in ("usage.jsonl", "usage.jsonl.1"):
        assert (folder / name).stat().st_size <= 4096
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    # What is left is the newest: fewer than 60 loads, at least one file's worth.
    loads = report["used"][0]["loads"]
    assert 4096 // 400 < loads < 60 and report["problems"] == []


def test_a_torn_or_corrupt_line_is_skipped_with_a_clear_message(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    root = os.path.realpath(tree["project"])
    folder = ledger_dir(tree)
    folder.mkdir(parents=True)
    good = {"v": 1, "at": "2026-11-20T10:00:00.000Z", "kind": "load", "skill": "release-notes",
            "repo": root, "client": "codex"}  # fmt: skip
    (folder / "usage.jsonl").write_text(
        "garbage that is not json\n" + json.dumps(good) + "\n" + json.dumps(good)[:25]
    )
    client = Client(daemon, tree["project"])
    report = client.ok("usage.report")
    path = os.fspath(folder / "usage.jsonl")
    messages = [p["message"] for p in report["problems"]]
    assert messages[0].startswith(f"{path} line 1: not a ledger record (")
    assert messages[1] == f"{path} line 3: no newline at its end (a torn write)"
    assert report["used"][0]["name"] == "release-notes" and report["used"][0]["loads"] == 1
    # The CLI says the same on stderr and goes on.
    done = run_cli(tree, "usage")
    assert done.returncode == 0, done.stderr
    assert f"skillsd usage: skipped: {path} line 1: not a ledger record (" in done.stderr
    assert "release-notes  1 use (1 load), last " in done.stdout
    # A new record is appended after the torn one, on a line of its own.
    client.ok("skills.load", name="pdf-forms")
    after = client.ok("usage.report")
    assert {u["name"] for u in after["used"]} == {"release-notes", "pdf-forms"}


def test_skillsd_mcp_records_what_its_client_loads_under_the_clients_name(
    tree: dict[str, Path],
) -> None:
    server = Server(tree)
    try:
        server.send("initialize", INIT, rid=1)  # clientInfo.name "t"
        server.answer(1)
        server.send("notifications/initialized")
        server.send("tools/call", {"name": "skill_load", "arguments": {"name": "pdf-forms"}}, rid=2)
        assert server.answer(2)["result"].get("isError") is not True
        # A host reading the skill's SKILL.md resource for its model loads it too; its other
        # files do not count.
        for rid, uri in (
            (3, "skill://commit-message/SKILL.md"),
            (4, "skill://pdf-forms/scripts/fill.py"),
        ):
            server.send("resources/read", {"uri": uri}, rid=rid)
            assert "contents" in server.answer(rid)["result"]
    finally:
        server.leave("eof")
    lines = ledger_lines(tree)  # the process flushed nothing by hand: the writer wrote it
    assert [(x["kind"], x["skill"], x["client"]) for x in lines] == [
        ("load", "pdf-forms", "t"),
        ("load", "commit-message", "t"),
    ]
    assert lines[0]["repo"] == os.path.realpath(tree["project"])


# -- skillsd usage ---------------------------------------------------------------------------


def write_ledger(tree: dict[str, Path], *records: dict[str, Any]) -> None:
    folder = ledger_dir(tree)
    folder.mkdir(parents=True, exist_ok=True)
    root = os.path.realpath(tree["project"])
    with open(folder / "usage.jsonl", "a") as fh:
        for record in records:
            fh.write(json.dumps({"v": 1, "repo": root, **record}) + "\n")


def iso(seconds_ago: float) -> str:
    moment = time.gmtime(time.time() - seconds_ago)
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", moment)


def test_skillsd_usage_prints_used_never_used_and_not_taken(tree: dict[str, Path]) -> None:
    write_ledger(
        tree,
        {"at": iso(3 * 86400), "kind": "load", "skill": "pdf-forms", "client": "codex"},
        {"at": iso(600), "kind": "load", "skill": "pdf-forms", "client": "claude-code"},
        {"at": iso(500), "kind": "invoke", "skill": "pdf-forms", "client": "claude-code"},
        {"at": iso(400), "kind": "activation", "skill": "release-notes", "session": "x"},
        {"at": iso(300), "kind": "load", "skill": "elsewhere", "repo": "/another/repo"},
    )
    done = run_cli(tree, "usage")
    assert done.returncode == 0 and done.stderr == ""
    out = done.stdout.splitlines()
    root = os.path.realpath(tree["project"])
    assert out[0] == f"Skill use in {root}"
    assert out[2] == "Used (1):"
    assert out[3].startswith("  pdf-forms  3 uses (2 loads, 1 invocation), last ")
    assert out[3].endswith("; by claude-code 2, codex 1")
    never = out[out.index("Never used (3 of the skills here now):") + 1 :][:3]
    assert sorted(never) == [
        "  commit-message (user)",
        "  release-notes (repo)",
        "  release-notes (user)",
    ]
    assert "Suggested but not taken (1):" in out
    taken = out[out.index("Suggested but not taken (1):") + 1]
    assert taken.startswith(
        "  release-notes: 1 of 1 suggestion not followed by a use (1 activated)"
    )
    assert out[-1] == (
        "Ledger: on; Claude Code's transcripts: not read (allow it with "
        "ledger.agentTranscripts = true). Local only."
    )
    # --since: a duration or a date.
    recent = json.loads(run_cli(tree, "usage", "--since", "1d", "--json").stdout)
    assert [(u["name"], u["uses"], u["byAgent"]) for u in recent["used"]] == [
        ("pdf-forms", 2, {"claude-code": 2})
    ]
    assert recent["since"] is not None and recent["records"] == 3
    dated = json.loads(run_cli(tree, "usage", "--since", "2000-01-01", "--json").stdout)
    assert dated["used"][0]["uses"] == 3
    bad = run_cli(tree, "usage", "--since", "last tuesday")
    assert bad.returncode == 2
    assert bad.stderr == (
        "skillsd usage: --since 'last tuesday': give a duration (30m, 12h, 7d, 2w) or a date "
        "(2026-11-01)\n"
    )


def test_skillsd_usage_with_nothing_recorded(tree: dict[str, Path]) -> None:
    done = run_cli(tree, "usage")
    assert done.returncode == 0
    assert "Used (0):\n  (none recorded)\n" in done.stdout
    assert "Suggested but not taken (0):\n  (none)\n" in done.stdout


def test_claude_codes_transcripts_are_read_only_when_the_user_allows_it(
    tree: dict[str, Path],
) -> None:
    project = os.path.realpath(tree["project"])
    folder = tree["home"] / ".claude" / "projects" / project_folder(project)
    folder.mkdir(parents=True)
    text = FIXTURE.read_text().replace("/tmp/wt36b_cc/proj", project)
    (folder / "5d7c7635-7417-4471-9f00-940b7ab0d5b3.jsonl").write_text(text)
    off = json.loads(run_cli(tree, "usage", "--json").stdout)
    assert off["transcripts"] is False and off["used"] == []
    (tree["tmp"] / "config.toml").write_text(ALLOW_LOADS + "[ledger]\nagentTranscripts = true\n")
    on = json.loads(run_cli(tree, "usage", "--json").stdout)
    assert on["transcripts"] is True
    assert [(u["name"], u["loads"], u["byAgent"]) for u in on["used"]] == [
        ("pdf-forms", 1, {"claude-code": 1})
    ]
    # A repository's config cannot allow it.
    (tree["tmp"] / "config.toml").write_text(ALLOW_LOADS)
    (tree["project"] / ".agents" / "skillsd.toml").write_text("[ledger]\nagentTranscripts = true\n")
    assert json.loads(run_cli(tree, "usage", "--json").stdout)["transcripts"] is False


def test_the_hooks_suggestions_are_counted_under_their_agent(
    hook_env: dict[str, str],
) -> None:
    event = {"session_id": "abc", "cwd": str(EXAMPLE), "prompt": "draft the release notes for v2.1"}
    # The first hook starts the hook_env daemon (through the client), the next one finds it.
    for agent in ("claude-code", "gemini"):
        done = run_hook(agent, json.dumps(event), hook_env)
        assert done.returncode == 0 and "release-notes" in done.stdout, done.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "skillsd", "usage", "--json"],
        cwd=EXAMPLE,
        env=hook_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert usage.returncode == 0, usage.stderr
    [row] = [r for r in json.loads(usage.stdout)["ignored"] if r["name"] == "release-notes"]
    assert (row["suggested"], row["activated"], row["ignored"]) == (2, 2, 2)
    folder = Path(hook_env["XDG_STATE_HOME"]) / "skillsd" / "ledger"
    lines = [json.loads(x) for x in (folder / "usage.jsonl").read_text().splitlines()]
    activations = [x["client"] for x in lines if x["kind"] == "activation"]
    assert activations == ["claude-code", "gemini"]
