"""The state file: persistence, atomic replace, injected write failures, corrupt files."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.fs_state import STATE_FILE, StateStore, default_state_path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_changes_survive_a_new_store_and_the_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "state" / STATE_FILE
    store = StateStore(os.fspath(path))
    assert store.read().disabled == [] and store.problem is None  # no file yet
    store.set_enabled(["id1", "/r/pdf"], False, key="/r/pdf/SKILL.md")
    store.remember("skill_load(pdf)", "allow")
    store.remember("bash(git push:*)", "deny")

    again = StateStore(os.fspath(path))  # what a restarted daemon sees
    assert again.disabled() == {"/r/pdf/SKILL.md"}
    assert again.always() == {"skill_load(pdf)": "allow", "bash(git push:*)": "deny"}
    on_disk = json.loads(path.read_text())
    assert on_disk["version"] == 1 and on_disk["disabled"] == ["/r/pdf/SKILL.md"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert leftovers(path.parent) == []


def test_a_projects_flags_win_there_over_the_users_own_however_they_are_spelled(
    tmp_path: Path,
) -> None:
    path = tmp_path / STATE_FILE
    # The user disabled pdf by its folder and by its id (a hand-edited file), and old by path.
    path.write_text(json.dumps({"version": 1, "disabled": ["/r/pdf", "abc123", "/r/old/SKILL.md"]}))
    store = StateStore(os.fspath(path))
    store.set_project_enabled("/repo", ["abc123", "/r/pdf"], True, key="/r/pdf/SKILL.md")
    store.set_project_enabled("/repo", [], False, key="/r/web/SKILL.md")
    assert store.disabled("/repo") == {"/r/old/SKILL.md", "/r/web/SKILL.md"}
    assert (
        store.disabled("/elsewhere") == store.disabled() == {"/r/pdf", "abc123", "/r/old/SKILL.md"}
    )
    # Changing one's mind in the project replaces the flag (under any alias).
    store.set_project_enabled("/repo", ["abc123", "/r/pdf"], False, key="/r/pdf/SKILL.md")
    assert store.project_flags("/repo") == {"/r/web/SKILL.md": False, "/r/pdf/SKILL.md": False}
    assert store.disabled("/repo") == {
        "/r/pdf",
        "abc123",
        "/r/old/SKILL.md",
        "/r/web/SKILL.md",
        "/r/pdf/SKILL.md",
    }


def test_enabling_removes_the_skill_under_any_alias(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    path.write_text(json.dumps({"version": 1, "disabled": ["abc123", "/r/pdf", "/r/other"]}))
    store = StateStore(os.fspath(path))
    store.set_enabled(["abc123", "/r/pdf"], True, key="/r/pdf/SKILL.md")
    assert store.disabled() == {"/r/other"}
    store.set_enabled([], False, key="/r/pdf/SKILL.md")
    store.set_enabled([], False, key="/r/pdf/SKILL.md")  # idempotent
    assert store.read().disabled == ["/r/other", "/r/pdf/SKILL.md"]


class _DiskFullAfter:
    """A temp file that accepts ``budget`` bytes, then fails like a full disk."""

    def __init__(self, path: str, budget: int) -> None:
        self._fh = open(path, "xb")  # noqa: SIM115 - closed by __exit__
        self._budget = budget

    def write(self, data: bytes) -> int:
        self._fh.write(data[: self._budget])
        self._fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def __enter__(self) -> _DiskFullAfter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


def test_a_write_failing_midway_leaves_the_old_state_intact(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    good = StateStore(os.fspath(path))
    good.remember("read", "allow")
    before = path.read_bytes()
    opened: list[str] = []

    def failing(temp: str) -> IO[bytes]:
        opened.append(temp)
        return _DiskFullAfter(temp, budget=7)  # type: ignore[return-value]

    store = StateStore(os.fspath(path), open_temp=failing)
    with pytest.raises(SkillsdError) as info:
        store.set_enabled([], False, key="/r/pdf/SKILL.md")
    assert info.value.kind == "state_write_failed"
    assert os.fspath(path) in info.value.message
    assert "No space left on device" in info.value.message
    assert "previous state is unchanged" in info.value.message
    assert opened and os.path.dirname(opened[0]) == os.fspath(tmp_path)  # same filesystem
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []
    # Neither this store's cache nor a fresh reader sees the half-made change.
    assert store.disabled() == frozenset() and store.always() == {"read": "allow"}
    assert StateStore(os.fspath(path)).always() == {"read": "allow"}


def test_a_failing_fsync_aborts_before_the_rename(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    path.write_bytes(b'{"version": 1, "disabled": ["old"]}')
    read_end, write_end = os.pipe()

    class PipeBacked:
        """Writes go to a real temp file; fsync is asked of a pipe, which refuses (EINVAL)."""

        def __init__(self, temp: str) -> None:
            self.fh = open(temp, "xb")  # noqa: SIM115 - closed by __exit__

        def write(self, data: bytes) -> int:
            return self.fh.write(data)

        def flush(self) -> None:
            self.fh.flush()

        def fileno(self) -> int:
            return write_end

        def __enter__(self) -> PipeBacked:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

    try:
        with pytest.raises(SkillsdError, match="previous state is unchanged"):
            StateStore(os.fspath(path), open_temp=PipeBacked).remember("bash", "allow")  # type: ignore[arg-type]
    finally:
        os.close(read_end)
        os.close(write_end)
    assert path.read_bytes() == b'{"version": 1, "disabled": ["old"]}'
    assert leftovers(tmp_path) == []


_CRASHING_WRITER = """
import os, sys
from skillsd.core.policy.fs_state import StateStore

def crash(temp):
    fh = open(temp, "xb")
    class Dying:
        def __enter__(self): return self
        def __exit__(self, *a): fh.close()
        def write(self, data):
            fh.write(data[: len(data) // 2]); fh.flush()
            os._exit(9)  # the process dies mid-write: no cleanup, no rename
    return Dying()

StateStore(sys.argv[1], open_temp=crash).remember("bash", "allow")
"""


@pytest.mark.process
def test_a_crash_mid_write_leaves_the_old_state_readable(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    StateStore(os.fspath(path)).remember("read", "allow")
    before = path.read_bytes()
    proc = subprocess.run([sys.executable, "-c", _CRASHING_WRITER, os.fspath(path)], check=False)
    assert proc.returncode == 9
    assert path.read_bytes() == before
    assert len(leftovers(tmp_path)) == 1  # the torn temp file, never the state itself
    store = StateStore(os.fspath(path))
    assert store.always() == {"read": "allow"} and store.problem is None
    store.remember("bash", "deny")  # the next writer cleans up after the crash
    assert leftovers(tmp_path) == []
    assert StateStore(os.fspath(path)).always() == {"read": "allow", "bash": "deny"}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"{not json", "not valid"),
        (b'{"version": 1, "disabled": "oops"}', "not valid"),
        (b'{"version": 1, "permissions": {"read": "maybe"}}', "not valid"),
        (b'{"version": 7}', "version 7"),
    ],
)
def test_a_corrupt_file_is_reported_and_never_overwritten(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    path = tmp_path / STATE_FILE
    path.write_bytes(content)
    store = StateStore(os.fspath(path))
    assert store.disabled() == frozenset() and store.always() == {}
    problem = store.problem
    assert problem is not None
    assert (problem.severity, problem.code, problem.path) == (
        "error",
        "state.unreadable",
        os.fspath(path),
    )
    assert fragment in problem.message and "fix or remove" in problem.message
    with pytest.raises(SkillsdError) as info:
        store.remember("read", "allow")
    assert info.value.kind == "state_unreadable" and os.fspath(path) in info.value.message
    assert path.read_bytes() == content
    # Once the user repairs the file, it is picked up without a restart.
    path.write_bytes(b'{"version": 1, "disabled": ["x"]}')
    assert store.problem is None and store.disabled() == {"x"}


def test_an_unusable_state_directory_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = StateStore(os.fspath(blocker / "skillsd" / STATE_FILE))
    with pytest.raises(SkillsdError) as info:
        store.set_enabled([], False, key="/x/SKILL.md")
    assert info.value.kind == "state_write_failed"
    assert "not a directory" in info.value.message.lower()
    # A file where the state directory itself should be is named as such.
    store = StateStore(os.fspath(blocker / STATE_FILE))
    with pytest.raises(SkillsdError, match=f"{blocker} is not a directory"):
        store.remember("read", "allow")


def test_writers_sharing_the_file_do_not_lose_each_others_changes(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / STATE_FILE)
    first, second = StateStore(path), StateStore(path)
    first.remember("read", "allow")
    assert second.always() == {"read": "allow"}  # cached now
    first.remember("bash", "deny")
    second.set_enabled([], False, key="/s/SKILL.md")  # re-reads under the lock before writing
    final = StateStore(path).read()
    assert final.permissions == {"read": "allow", "bash": "deny"}
    assert final.disabled == ["/s/SKILL.md"]
    assert first.changed() and first.disabled() == {"/s/SKILL.md"}


def test_default_path_honours_xdg_state_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", os.fspath(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_state_path() == os.fspath(tmp_path / "xdg" / "skillsd" / STATE_FILE)
    assert default_state_path().endswith(os.path.join("skillsd", STATE_FILE))
