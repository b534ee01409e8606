"""The runtime's use cases (skillsd/runtime/use_cases.py): one entry per request for every
face, the CLI included, and file-reading steps that never hold the daemon's event loop.

The parity tests run a real ``skillsd serve`` and real ``skillsd`` CLI processes on one tree and
compare what they print; the blocking test makes opening one skill's files hang (as on a stalled
network filesystem) and proves the daemon still answers ``ping`` meanwhile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillsd.cli import main as cli_main
from skillsd.cli import validate as cli_validate
from skillsd.runtime import use_cases
from tests.support.daemons import StdioDaemon, notification, request
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_skill

# Config defaults that differ from the built-in ones, so a face that forgot to apply them (or
# applied its own) shows up in the comparison.
CONFIG = """\
[permissions]
allow = ["skill_load"]
[prompt]
format = "markdown"
maxEntries = 3
[search]
defaultLimit = 1
"""


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    return make_project(tmp_path)


class Daemon:
    """``skillsd serve`` on pipes, one call at a time."""

    def __init__(self, environ: dict[str, str]) -> None:
        self.proc = StdioDaemon(environ=environ)
        self._ids = iter(range(1, 10**9))

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        id_ = next(self._ids)
        self.proc.send(request(id_, method, params))
        return id_

    def reply(self, timeout: float = 10.0) -> dict[str, Any]:
        while True:
            msg: dict[str, Any] = self.proc.reader.message(timeout=timeout)
            if "id" in msg:
                return msg

    def ok(self, method: str, **params: Any) -> Any:
        id_ = self.send(method, params)
        reply = self.reply()
        assert reply["id"] == id_ and "error" not in reply, reply
        return reply["result"]


@pytest.fixture
def daemon(tree: dict[str, Path]) -> Iterator[Daemon]:
    d = Daemon(daemon_env(tree))
    try:
        yield d
    finally:
        d.proc.kill()


def cli(tree: dict[str, Path], *args: str) -> Any:
    """Run ``skillsd ARGS --json`` in the project and decode what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", *args, "--json"],
        cwd=tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


# -- (a) the daemon and the CLI answer the same request with the same Struct -----------------


@pytest.mark.process
def test_show_json_is_exactly_what_skills_load_returns(
    daemon: Daemon, tree: dict[str, Path]
) -> None:
    project = os.fspath(tree["project"])
    for fmt in ("codelia", "spec", "markdown"):
        loaded = daemon.ok("skills.load", cwd=project, name="pdf-forms", format=fmt)
        assert loaded["alreadyLoaded"] is False and "Run scripts/fill.py." in loaded["body"]
        assert cli(tree, "show", "pdf-forms", "--format", fmt) == loaded
    # By path too (the CLI's reference parsing picks `path`), with the default format.
    by_path = daemon.ok("skills.load", cwd=project, path=os.fspath(tree["pdf"]))
    assert cli(tree, "show", os.fspath(tree["pdf"])) == by_path


@pytest.mark.process
def test_list_search_and_prompt_match_the_daemon(daemon: Daemon, tree: dict[str, Path]) -> None:
    project = os.fspath(tree["project"])
    assert cli(tree, "list") == daemon.ok("skills.list", cwd=project)
    assert cli(tree, "list", "--scope", "user") == daemon.ok(
        "skills.list", cwd=project, scope="user"
    )

    searched = daemon.ok("skills.search", cwd=project, query="release notes")
    assert searched["count"] == 2 and len(searched["results"]) == 1  # config defaultLimit
    assert cli(tree, "search", "release notes") == searched
    assert cli(tree, "search", "release notes", "--limit", "5") == daemon.ok(
        "skills.search", cwd=project, query="release notes", limit=5
    )

    prompt = daemon.ok("skills.prompt", cwd=project)
    assert prompt["shown"] == 3 and prompt["truncated"] is True  # config maxEntries
    assert not prompt["text"].startswith("<")  # config format: markdown, not xml
    assert cli(tree, "prompt") == prompt
    assert cli(tree, "prompt", "--format", "xml", "--max-bytes", "400", "--no-location") == (
        daemon.ok("skills.prompt", cwd=project, format="xml", maxBytes=400, includeLocation=False)
    )


@pytest.mark.process
def test_suggest_and_diagnosis_match_the_daemon(daemon: Daemon, tree: dict[str, Path]) -> None:
    """The CLI's suggest, doctor and doctor --agents print what the daemon's methods answer."""
    project = os.fspath(tree["project"])
    suggested = daemon.ok("skills.suggest", cwd=project, prompt="fill a pdf form", limit=3)
    assert suggested["suggestions"], suggested
    assert cli(tree, "suggest", "fill a pdf form") == suggested
    report = daemon.ok("doctor.report", cwd=project)
    assert report["skills"]["total"] >= 1 and report["cwd"] == os.path.realpath(project)
    printed = cli(tree, "doctor")
    # A trial of file watching and the state file are of their moment; the rest is the same.
    for key in ("watch", "state"):
        printed.pop(key), report.pop(key)
    assert printed == report
    matrix = daemon.ok("agents.matrix", cwd=project, allAgents=True)
    assert matrix["allAgents"] is True and "claude-code" in matrix["agents"]
    assert cli(tree, "doctor", "--agents", "--all") == matrix


@pytest.mark.process
def test_personas_answer_under_both_names(daemon: Daemon, tree: dict[str, Path]) -> None:
    """``agents.list``/``agents.get`` are the deprecated names of ``personas.*``: the same."""
    project = os.fspath(tree["project"])
    assert daemon.ok("agents.list", cwd=project) == daemon.ok("personas.list", cwd=project)


@pytest.mark.process
def test_validate_judges_a_skill_file_the_same_way(daemon: Daemon, tree: dict[str, Path]) -> None:
    odd = write_skill(
        tree["tmp"] / "loose", "odd-one", "Has an unknown field.", extra="color: red\n"
    )
    broken = tree["skills"] / "broken"
    for skill_dir in (tree["pdf"], odd, broken):
        for mode in ("strict", "lenient"):
            served = daemon.ok("skills.validate", path=os.fspath(skill_dir), mode=mode)
            (printed,) = cli(tree, "validate", os.fspath(skill_dir), "--mode", mode)
            assert (printed["valid"], printed["diagnostics"]) == (
                served["valid"],
                served["diagnostics"],
            ), (skill_dir, mode)
    assert daemon.ok("skills.validate", path=os.fspath(broken))["valid"] is False


def test_every_cli_catalog_command_goes_through_its_use_case(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process: each command calls the use case the daemon calls, not a copy of it."""
    monkeypatch.chdir(tree["project"])
    for key, value in daemon_env(tree).items():
        monkeypatch.setenv(key, value)
    calls: list[str] = []

    def spy(module: Any, name: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("list_skills", "search", "suggest", "load", "prompt"):
        spy(use_cases, name)
    spy(cli_validate, "skill_file_verdict")
    commands = {
        "list_skills": ["list"],
        "search": ["search", "pdf"],
        "suggest": ["suggest", "fill a pdf form"],
        "load": ["show", "pdf-forms"],
        "prompt": ["prompt"],
        "skill_file_verdict": ["validate", os.fspath(tree["pdf"])],
    }
    for name, argv in commands.items():
        calls.clear()
        assert cli_main(argv) == 0, capsys.readouterr().err
        assert calls == [name], argv
    capsys.readouterr()


# -- (b) a slow filesystem read never blocks the event loop ----------------------------------

# Loaded into the daemon (SKILLSD_TEST_HOOKS): once ARMED exists, opening any file of the
# `slow-skill` skill hangs until GATE exists (at most 20 s), as on a stalled network filesystem.
# STARTED says an open is hanging now.
SLOW_OPEN_HOOK = """\
import os
import time

_real_open = os.open
_DIR = os.environ["SLOW_OPEN_DIR"]
_ARMED, _GATE, _STARTED = (os.path.join(_DIR, n) for n in ("armed", "gate", "started"))


def _slow_open(path, *args, **kwargs):
    if "slow-skill" in os.fsdecode(path) and os.path.exists(_ARMED):
        with open(_STARTED, "w"):
            pass
        deadline = time.monotonic() + 20
        while not os.path.exists(_GATE) and time.monotonic() < deadline:
            time.sleep(0.005)
    return _real_open(path, *args, **kwargs)


def register(router):
    os.open = _slow_open
"""


@pytest.mark.process
def test_a_slow_read_does_not_hold_the_event_loop(tree: dict[str, Path]) -> None:
    control = tree["tmp"] / "control"
    control.mkdir()
    hook = tree["tmp"] / "slow_open_hook.py"
    hook.write_text(SLOW_OPEN_HOOK, encoding="utf-8")
    slow = write_skill(tree["skills"], "slow-skill", "Lives on a slow disk.", body="Slow body.\n")
    (slow / "notes.md").write_text("slow notes\n", encoding="utf-8")
    project = os.fspath(tree["project"])
    environ = daemon_env(tree, SKILLSD_TEST_HOOKS=os.fspath(hook), SLOW_OPEN_DIR=os.fspath(control))
    d = Daemon(environ)
    try:
        assert "slow-skill" in {s["name"] for s in d.ok("skills.list", cwd=project)["skills"]}
        session = d.ok("session.open", cwd=project)["sessionId"]
        d.ok("skills.load", sessionId=session, name="slow-skill")  # for `active` below
        slow_requests: list[tuple[str, dict[str, Any]]] = [
            ("skills.load", {"cwd": project, "name": "slow-skill"}),
            ("skills.readFile", {"cwd": project, "name": "slow-skill", "file": "notes.md"}),
            ("skills.prompt", {"sessionId": session, "active": True}),
            (
                "tools.call",
                {"cwd": project, "name": "skill_load", "arguments": {"name": "slow-skill"}},
            ),
            (
                "tools.call",
                {
                    "cwd": project,
                    "name": "skill_read_file",
                    "arguments": {"name": "slow-skill", "file": "notes.md"},
                },
            ),
        ]
        (control / "armed").touch()
        for method, params in slow_requests:
            for name in ("gate", "started"):
                (control / name).unlink(missing_ok=True)
            slow_id = d.send(method, params)
            deadline = time.monotonic() + 10
            while not (control / "started").exists():
                assert time.monotonic() < deadline, f"{method} never opened the slow file"
                time.sleep(0.005)
            # The read is hanging now. A loop running it could not answer this.
            ping_id = d.send("ping")
            first = d.reply(timeout=5.0)
            assert first["id"] == ping_id and "error" not in first, (method, first)
            (control / "gate").touch()
            done = d.reply()
            assert done["id"] == slow_id and "error" not in done, (method, done)
            text = json.dumps(done["result"])
            assert "Slow body." in text or "slow notes" in text, (method, done)
    finally:
        d.proc.kill()


@pytest.mark.process
@pytest.mark.xdist_group("serial")
def test_stuck_reads_are_cut_off_and_cancelled_ones_free_their_slot(
    tree: dict[str, Path],
) -> None:
    """The robustness rules: a read that never returns does not hold a file-operation slot for
    good. Five stuck loads (more than the four slots) each end with -32800 after the time limit,
    a cancelled one at once, and a load of another skill is answered meanwhile."""
    control = tree["tmp"] / "control"
    control.mkdir()
    hook = tree["tmp"] / "slow_open_hook.py"
    hook.write_text(SLOW_OPEN_HOOK, encoding="utf-8")
    write_skill(tree["skills"], "slow-skill", "Lives on a stalled disk.", body="Slow body.\n")
    project = os.fspath(tree["project"])
    environ = daemon_env(
        tree,
        SKILLSD_TEST_HOOKS=os.fspath(hook),
        SLOW_OPEN_DIR=os.fspath(control),
        SKILLSD_FILE_OP_SECONDS="1.5",
    )
    (tree["tmp"] / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
    d = Daemon(environ)
    try:
        d.ok("skills.list", cwd=project)
        (control / "armed").touch()  # from now on the slow skill's files never open (20 s)
        started = time.monotonic()
        stuck = [d.send("skills.load", {"cwd": project, "name": "slow-skill"}) for _ in range(5)]
        cancelled = d.send("skills.load", {"cwd": project, "name": "slow-skill", "force": True})
        d.proc.send(notification("$/cancelRequest", {"id": cancelled}))
        healthy = d.send("skills.load", {"cwd": project, "name": "pdf-forms"})
        replies = {}
        while len(replies) < 7:
            message = d.reply(timeout=15.0)
            replies[message["id"]] = message
        assert "Run scripts/fill.py" in replies[healthy]["result"]["body"]
        assert replies[cancelled]["error"]["code"] == -32800
        for rid in stuck:
            error = replies[rid]["error"]
            assert error["code"] == -32800 and "longer than 1.5 s" in error["message"], error
        # Well before the stuck opens would have given up on their own (20 s).
        assert time.monotonic() - started < 12
        assert d.ok("ping") == {}
    finally:
        (control / "gate").touch()
        d.proc.kill()
