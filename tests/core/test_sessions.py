from __future__ import annotations

import msgspec
import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.sessions import SessionStore
from tests.core.skill_fixtures import make_skill


def test_open_unknown_id_creates_then_resumes() -> None:
    store = SessionStore()
    s1, resumed = store.open("abc", "/w")
    assert (s1.id, resumed) == ("abc", False)
    s2, resumed = store.open("abc", "/elsewhere")
    assert s2 is s1 and resumed is True
    fresh, resumed = store.open(None, "/w")
    assert len(fresh.id) == 32 and not resumed and len(store) == 2


def test_unknown_session_is_session_not_found() -> None:
    store = SessionStore()
    with pytest.raises(SkillsdError) as info:
        store.get("nope")
    assert info.value.kind == "session_not_found" and "nope" in info.value.message
    with pytest.raises(SkillsdError):
        store.close("nope")


def test_reload_suppression_is_by_path_and_mtime() -> None:
    session, _ = SessionStore().open(None, "/w")
    skill = make_skill("a", mtime_ms=1.0)
    assert not session.is_current(skill)
    session.record_load(skill)
    assert session.is_current(skill)
    assert not session.is_current(msgspec.structs.replace(skill, mtime_ms=2.0))


def test_grants_are_reference_counted_per_rule() -> None:
    session, _ = SessionStore().open(None, "/w")
    a = make_skill("a", allowed_tools=["Read", "Bash(git:*)"])
    b = make_skill("b", allowed_tools=["Read"])
    session.record_load(a)
    session.record_load(b)
    assert session.grants()[0] == {"Read": ["a", "b"], "Bash(git:*)": ["a"]}
    unloaded, revoked = session.unload(a)
    assert unloaded and revoked == ["Bash(git:*)"]
    assert session.grants()[0] == {"Read": ["b"]}
    assert session.unload(a) == (False, [])
    assert session.unload(b) == (True, ["Read"])


def test_repo_skill_grants_count_only_while_their_root_is_trusted() -> None:
    session, _ = SessionStore().open(None, "/repo")
    repo = make_skill("a", allowed_tools=["Bash(*)"])
    user = make_skill("u", root="/home/me/.agents/skills", scope="user", allowed_tools=["Read"])
    session.record_load(repo, "/repo")
    session.record_load(user)
    trusted: set[str] = set()
    assert session.grants(trusted.__contains__) == ({"Read": ["u"]}, {"Bash(*)": ["a"]})
    info = session.info(trusted.__contains__)
    assert [g.rule for g in info.grants] == ["Read"]
    assert [(g.rule, g.granted_by) for g in info.withheld_grants] == [("Bash(*)", ["a"])]
    trusted.add("/repo")  # decided later: the same session sees it at once
    assert session.grants(trusted.__contains__) == ({"Bash(*)": ["a"], "Read": ["u"]}, {})


def test_reloading_a_changed_skill_does_not_double_count_grants() -> None:
    session, _ = SessionStore().open(None, "/w")
    a = make_skill("a", allowed_tools=["Read"])
    session.record_load(a)
    session.record_load(msgspec.structs.replace(a, mtime_ms=5.0))
    assert session.unload(a) == (True, ["Read"])


def test_compaction_forgets_all_but_retained() -> None:
    session, _ = SessionStore().open(None, "/w")
    a, b, c = make_skill("a"), make_skill("b"), make_skill("c")
    for s in (a, b, c):
        session.record_load(s)
    assert sorted(session.compacted([b.id])) == sorted([a.id, c.id])
    assert not session.is_current(a) and session.is_current(b)
    assert session.compacted(None) == [b.id]
    assert session.info().loaded == []
