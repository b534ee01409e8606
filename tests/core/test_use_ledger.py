"""The use ledger in-process: its record format, reading what a crash or a hand edit left, the
report's counting rules, the writer's bound and modes, and Claude Code's transcripts in the
format the real agent writes (a capture of Claude Code 2.1.328, kept in tests/fixtures)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import msgspec
import pytest

from skillsd.core import limits
from skillsd.core.listing.fs_claude_transcripts import project_folder, transcript_uses
from skillsd.core.listing.use_ledger import (
    FOLLOW_SECONDS,
    UNNAMED_CLIENT,
    Event,
    UseRecord,
    build_report,
    decode_ledger,
    encode_record,
    event_of,
    iso_time,
    make_record,
    use_counts,
)
from skillsd.core.policy.config import LedgerConfig
from skillsd.runtime.use_ledger_file import LEDGER_FILE, UseLedger, read_ledger
from skillsd_protocol import SkillMetadata

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "skill-use-2.1.328.jsonl"
)
#: Where the fixture was captured (rewritten to each test's folders).
CAPTURED_PROJECT = "/tmp/wt36b_cc/proj"
CAPTURED_HOME = "/tmp/wt36b_cc/home"
T0 = 1_790_000_000.0


def skill(name: str, scope: str = "user", *, enabled: bool = True) -> SkillMetadata:
    return msgspec.convert(
        {
            "id": f"id-{name}-{scope}",
            "name": name,
            "description": f"The {name} skill.",
            "path": f"/skills/{scope}/{name}/SKILL.md",
            "dir": f"/skills/{scope}/{name}",
            "scope": scope,
            "root": f"/skills/{scope}",
            "enabled": enabled,
            "mtimeMs": 0.0,
            "size": 1,
            "resources": {"scripts": 0, "references": 0, "assets": 0, "other": 0},
            "diagnostics": [],
        },
        SkillMetadata,
    )


def record(kind: str, name: str, at: float, **kw: str | None) -> UseRecord:
    made = make_record(
        kind,
        skill(name),
        repo=kw.pop("repo", None) or "/repo",
        at=at,
        client=kw.pop("client", "claude-code"),
        session=kw.pop("session", None),
    )
    return made


# -- the record format ---------------------------------------------------------------------


def test_a_record_is_one_json_line_with_its_fields_named() -> None:
    line = encode_record(record("load", "pdf", T0, session="s1"))
    assert line is not None and line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "v": 1,
        "at": "2026-09-21T14:13:20.000Z",
        "kind": "load",
        "skill": "pdf",
        "repo": "/repo",
        "id": "id-pdf-user",
        "client": "claude-code",
        "session": "s1",
    }


def test_each_text_field_is_bounded_so_a_line_stays_small() -> None:
    made = make_record(
        "load",
        skill("x" * 10_000),
        repo="/r" * 10_000,
        at=T0,
        client="c" * 10_000,
        session="s" * 999,
    )
    line = encode_record(made)
    assert line is not None and len(line) <= limits.LEDGER_LINE_BYTES
    assert (
        len(made.skill) == 256 and len(made.client or "") == 128 and len(made.session or "") == 128
    )


def test_torn_and_corrupt_lines_are_skipped_each_with_a_message_naming_it() -> None:
    good = [encode_record(record("load", n, T0 + i)) for i, n in enumerate(("a", "b"))]
    assert all(good)
    data = (
        (good[0] or b"")
        + b"{not json\n"
        + b'{"v": 9, "at": "2026-01-01T00:00:00Z", "kind": "load", "skill": "x", "repo": "/r"}\n'
        + b'{"v": 1, "at": "yesterday", "kind": "load", "skill": "x", "repo": "/r"}\n'
        + b'{"v": 1, "at": "2026-01-01T00:00:00Z", "kind": "eat", "skill": "x", "repo": "/r"}\n'
        + b"\n"
        + (good[1] or b"")
        + (good[0] or b"")[:30]  # a write torn by a crash: no newline at its end
    )
    records, skipped = decode_ledger(data, "usage.jsonl")
    assert [r.skill for r in records] == ["a", "b"]
    assert skipped[0].startswith("usage.jsonl line 2: not a ledger record (")
    assert skipped[1] == (
        "usage.jsonl line 3: not a ledger record (version 9, time '2026-01-01T00:00:00Z')"
    )
    assert skipped[2] == "usage.jsonl line 4: not a ledger record (version 1, time 'yesterday')"
    assert skipped[3].startswith("usage.jsonl line 5: not a ledger record (Invalid enum value")
    assert skipped[4] == "usage.jsonl line 8: no newline at its end (a torn write)"
    assert len(skipped) == 5


# -- the report ------------------------------------------------------------------------------


def test_the_report_counts_uses_by_agent_and_lists_the_skills_never_used() -> None:
    events = [
        event_of(record("load", "pdf", T0, client="claude-code")),
        event_of(record("load", "pdf", T0 + 5, client="codex")),
        event_of(record("invoke", "pdf", T0 + 9, client="claude-code")),
        event_of(record("load", "deploy", T0 + 1, client=None)),
    ]
    catalog = [skill("pdf"), skill("deploy", "repo"), skill("lint"), skill("off", enabled=False)]
    result = build_report(
        events, catalog, repo="/repo", since=None, ledger_enabled=True, transcripts=False
    )
    assert result.records == 4
    [pdf, deploy] = result.used
    assert (pdf.name, pdf.uses, pdf.loads, pdf.invokes) == ("pdf", 3, 2, 1)
    assert pdf.by_agent == {"claude-code": 2, "codex": 1} and pdf.id == "id-pdf-user"
    assert pdf.last_used == iso_time(T0 + 9)
    assert deploy.by_agent == {UNNAMED_CLIENT: 1}
    # A disabled skill is not "never used": it is off.
    assert [(s.name, s.scope) for s in result.never_used] == [("lint", "user")]
    assert result.ignored == [] and result.problems == []


def test_since_leaves_out_what_came_before() -> None:
    events = [
        event_of(record("load", "old", T0)),
        event_of(record("load", "new", T0 + 100)),
    ]
    result = build_report(
        events,
        [skill("old"), skill("new")],
        repo="/repo",
        since=T0 + 50,
        ledger_enabled=True,
        transcripts=False,
    )
    assert [u.name for u in result.used] == ["new"] and result.records == 1
    assert [s.name for s in result.never_used] == ["old"]
    assert result.since == iso_time(T0 + 50)


def test_a_suggestion_is_followed_by_a_use_in_its_session_or_soon_after_in_the_repository() -> None:
    far = FOLLOW_SECONDS + 60
    events = sorted(
        [
            # Taken soon after (another client, no session): followed.
            event_of(record("activation", "soon", T0)),
            event_of(record("load", "soon", T0 + 60, client="codex")),
            # Taken much later but in the same session: followed.
            event_of(record("activation", "late", T0, session="s1")),
            event_of(record("load", "late", T0 + far, session="s1")),
            # Taken much later, in another session: ignored.
            event_of(record("activation", "other", T0, session="s1")),
            event_of(record("load", "other", T0 + far, session="s2")),
            # Used before it was suggested, never after: ignored (twice; one a candidate).
            event_of(record("load", "before", T0 - 10)),
            event_of(record("activation", "before", T0)),
            event_of(record("candidate", "before", T0 + 1)),
        ],
        key=lambda e: e.at,
    )
    result = build_report(
        events, [], repo="/repo", since=None, ledger_enabled=True, transcripts=False
    )
    rows = {r.name: (r.suggested, r.activated, r.ignored) for r in result.ignored}
    assert rows == {"before": (2, 1, 2), "other": (1, 1, 1)}
    assert [r.name for r in result.ignored] == ["before", "other"]  # most ignored first


def test_problems_are_listed_up_to_five_then_counted() -> None:
    result = build_report(
        [],
        [],
        repo="/r",
        since=None,
        ledger_enabled=False,
        transcripts=False,
        skipped=[f"line {n}" for n in range(8)],
    )
    assert [p.message for p in result.problems] == [
        "line 0",
        "line 1",
        "line 2",
        "line 3",
        "line 4",
        "and 3 more skipped",
    ]
    assert {p.code for p in result.problems} == {"ledger.skipped"}


def test_use_counts_are_per_repository_and_count_only_uses() -> None:
    records = [
        record("load", "pdf", T0),
        record("invoke", "pdf", T0 + 1),
        record("activation", "pdf", T0 + 2),
        record("load", "pdf", T0 + 3, repo="/elsewhere"),
        record("load", "lint", T0 - 100),
    ]
    assert use_counts(records, "/repo") == {"pdf": 2, "lint": 1}
    assert use_counts(records, "/repo", since=T0 - 1) == {"pdf": 2}


# -- the writer ------------------------------------------------------------------------------


def test_the_writer_keeps_two_bounded_private_files(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "ledger"
    config = LedgerConfig(max_bytes=4096)
    ledger = UseLedger(os.fspath(folder), config=lambda: config)
    for n in range(200):
        ledger.record(record("load", f"skill-{n:03}", T0 + n, session="s"))
    ledger.flush(30)
    assert ledger.dropped == 0
    current, previous = folder / LEDGER_FILE, folder / (LEDGER_FILE + ".1")
    assert sorted(p.name for p in folder.iterdir()) == [
        LEDGER_FILE,
        LEDGER_FILE + ".1",
        "usage.lock",
    ]
    assert current.stat().st_size <= 4096 and previous.stat().st_size <= 4096
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in (current, previous):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    records, problems = read_ledger(os.fspath(folder), 4096)
    assert problems == []
    names = [r.skill for r in records]
    # The newest records, in order, and the oldest rotated away.
    assert names[-1] == "skill-199" and names == sorted(names) and "skill-000" not in names


def test_a_ledger_folder_others_could_read_is_made_private(tmp_path: Path) -> None:
    folder = tmp_path / "ledger"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    (folder / LEDGER_FILE).write_text("")
    os.chmod(folder / LEDGER_FILE, 0o644)
    ledger = UseLedger(os.fspath(folder))
    ledger.record(record("load", "pdf", T0))
    ledger.flush(30)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / LEDGER_FILE).stat().st_mode) == 0o600
    assert len((folder / LEDGER_FILE).read_text().splitlines()) == 1


def test_a_ledger_turned_off_records_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ledger"
    ledger = UseLedger(os.fspath(folder), config=lambda: LedgerConfig(enabled=False))
    ledger.record(record("load", "pdf", T0))
    ledger.flush(5)
    assert not folder.exists()
    unreadable = UseLedger(os.fspath(folder), config=lambda: None)  # a config that is invalid
    unreadable.record(record("load", "pdf", T0))
    unreadable.flush(5)
    assert not folder.exists()


def test_a_full_queue_drops_and_counts_instead_of_growing(tmp_path: Path) -> None:
    fifo = tmp_path / "ledger"
    fifo.mkdir()
    os.mkfifo(fifo / LEDGER_FILE)  # never a regular file: every append fails at once
    ledger = UseLedger(os.fspath(fifo), queue_size=4)
    for n in range(50):
        ledger.record(record("load", f"s{n}", T0))
    ledger.flush(30)
    assert ledger.dropped == 50
    assert ledger._queue.qsize() == 0  # nothing held


# -- Claude Code's transcripts -------------------------------------------------------------


def _transcripts(home: Path, project: Path, *extra_lines: str) -> Path:
    text = FIXTURE.read_text().replace(CAPTURED_PROJECT, os.fspath(project))
    text = text.replace(CAPTURED_HOME, os.fspath(home))
    folder = home / ".claude" / "projects" / project_folder(os.fspath(project))
    folder.mkdir(parents=True)
    path = folder / "5d7c7635-7417-4471-9f00-940b7ab0d5b3.jsonl"
    path.write_text(text + "".join(line + "\n" for line in extra_lines))
    return path


def test_the_skill_tool_uses_of_a_real_claude_code_transcript_are_read(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "my_repo"
    project.mkdir()
    _transcripts(home, project)
    found = transcript_uses(os.fspath(project), home=os.fspath(home), env={})
    assert found.problems == [] and found.files == 1
    [use] = found.events
    assert (use.skill, use.kind, use.agent) == ("pdf-forms", "load", "claude-code")
    assert use.session == "5d7c7635-7417-4471-9f00-940b7ab0d5b3"
    assert iso_time(use.at) == "2026-11-26T22:31:55.360Z"
    # The folder name is Claude Code's: every character but letters and digits becomes '-'.
    assert project_folder("/tmp/wt36b_cc/proj") == "-tmp-wt36b-cc-proj"


def test_transcripts_of_other_repositories_long_lines_and_old_uses_are_left_out(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "repo"
    project.mkdir()
    real = json.loads(FIXTURE.read_text().splitlines()[4])
    assert real["message"]["content"][0]["name"] == "Skill"
    # A folder whose name collides ("/repo-x" and "/repo/x" mangle alike): its cwd decides.
    elsewhere = {**real, "cwd": os.fspath(tmp_path / "repo-x"), "timestamp": "2026-11-27T00:00:00Z"}
    beneath = {**real, "cwd": os.fspath(project / "sub"), "timestamp": "2026-11-28T00:00:00Z"}
    huge = {**real, "padding": "x" * (limits.TRANSCRIPT_LINE_BYTES + 10)}
    _transcripts(home, project, json.dumps(elsewhere), json.dumps(huge), json.dumps(beneath))
    found = transcript_uses(os.fspath(project), home=os.fspath(home), env={})
    assert sorted(iso_time(e.at) for e in found.events) == [
        "2026-11-26T22:31:55.360Z",
        "2026-11-28T00:00:00.000Z",
    ]
    later = transcript_uses(os.fspath(project), home=os.fspath(home), env={}, since=T0 + 10**8)
    assert later.events == []
    # $CLAUDE_CONFIG_DIR moves the whole folder.
    moved = transcript_uses(
        os.fspath(project),
        home=os.fspath(tmp_path / "nobody"),
        env={"CLAUDE_CONFIG_DIR": os.fspath(home / ".claude")},
    )
    assert len(moved.events) == 2


def test_a_transcript_that_is_not_a_regular_file_is_reported_not_waited_on(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "repo"
    project.mkdir()
    folder = home / ".claude" / "projects" / project_folder(os.fspath(project))
    folder.mkdir(parents=True)
    os.mkfifo(folder / "a.jsonl")
    os.symlink("/dev/zero", folder / "b.jsonl")
    found = transcript_uses(os.fspath(project), home=os.fspath(home), env={})
    assert found.events == []  # a FIFO and a link are not listed as transcripts


@pytest.mark.parametrize("text", ["", "\n\n", "{}\n"])
def test_an_empty_or_foreign_ledger_reads_as_no_records(text: str, tmp_path: Path) -> None:
    records, skipped = decode_ledger(text.encode(), "f")
    assert records == []
    assert skipped == ([] if text != "{}\n" else [skipped[0]])


def test_an_event_of_a_record_keeps_its_session_and_names_an_unnamed_client() -> None:
    event = event_of(record("invoke", "pdf", T0, client=None, session="s"))
    assert event == Event(T0, "invoke", "pdf", UNNAMED_CLIENT, "s")


def test_a_line_longer_than_several_reads_is_skipped_and_the_next_one_read(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "repo"
    project.mkdir()
    real = json.loads(FIXTURE.read_text().splitlines()[4])
    after = {**real, "cwd": os.fspath(project), "timestamp": "2026-11-29T00:00:00Z"}
    # 2.5 MiB of one line naming the Skill tool: past the cap, and across three reads.
    giant = {**after, "padding": '"Skill" "tool_use" ' * (140 * 1024)}
    _transcripts(home, project, json.dumps(giant), json.dumps(after))
    found = transcript_uses(os.fspath(project), home=os.fspath(home), env={})
    assert sorted(iso_time(e.at) for e in found.events) == [
        "2026-11-26T22:31:55.360Z",
        "2026-11-29T00:00:00.000Z",
    ]


def test_skill_use_counts_reads_the_ledger_and_transcripts_when_allowed(tmp_path: Path) -> None:
    from skillsd.runtime.usage_report import skill_use_counts

    home, project = tmp_path / "home", tmp_path / "repo"
    project.mkdir()
    _transcripts(home, project)  # one Skill use of pdf-forms by Claude Code
    state = tmp_path / "state" / "state.json"
    ledger = UseLedger(os.fspath(state.parent / "ledger"))
    repo = os.fspath(project)
    ledger.record(
        make_record("load", skill("pdf-forms"), repo=repo, at=T0, client="c", session=None),
        make_record("invoke", skill("lint"), repo=repo, at=T0, client="c", session=None),
        make_record("activation", skill("lint"), repo=repo, at=T0, client="c", session=None),
        make_record("load", skill("lint"), repo="/other", at=T0, client="c", session=None),
    )
    ledger.flush(30)
    common = {"state_path": os.fspath(state), "home": os.fspath(home), "env": {}}
    assert skill_use_counts(repo, **common) == {"pdf-forms": 1, "lint": 1}
    allowed = LedgerConfig(agent_transcripts=True)
    assert skill_use_counts(repo, ledger=allowed, **common) == {
        "pdf-forms": 2,
        "lint": 1,
    }
