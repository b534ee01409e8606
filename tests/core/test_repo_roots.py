"""The remembered repository root (skillsd/core/discovery/fs_repo_roots.py): the same answer as
find_repo_root, and every change to the directories it looked in is seen by the next call."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from skillsd.core.discovery.fs_repo_roots import RepoRoots
from skillsd.core.discovery.fs_roots import ENV_ROOT, find_repo_root
from skillsd.core.policy.config import DEFAULT_MARKERS


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    top = (tmp_path / "top").resolve()
    cwd = top / "a" / "b"
    cwd.mkdir(parents=True)
    return top, cwd


def _agrees(roots: RepoRoots, cwd: Path) -> str:
    found = roots.find(str(cwd), DEFAULT_MARKERS)
    assert found == find_repo_root(str(cwd), DEFAULT_MARKERS, {})
    return found


def test_a_marker_made_or_removed_anywhere_on_the_way_up_is_seen_next_time(
    tmp_path: Path,
) -> None:
    top, cwd = _tree(tmp_path)
    roots = RepoRoots({})
    (top / ".git").mkdir()
    assert _agrees(roots, cwd) == str(top)
    assert _agrees(roots, cwd) == str(top)  # remembered: the same
    (top / "a" / ".hg").mkdir()  # a nearer repository, between the cwd and the old root
    assert _agrees(roots, cwd) == str(top / "a")
    (cwd / ".jj").write_text("")  # a marker that is a file, in the cwd itself
    assert _agrees(roots, cwd) == str(cwd)
    (cwd / ".jj").unlink()
    shutil.rmtree(top / "a" / ".hg")
    assert _agrees(roots, cwd) == str(top)
    shutil.rmtree(top / ".git")
    found = _agrees(roots, cwd)  # none above either: the cwd, or a repository around tmp_path
    assert found in (str(cwd), find_repo_root(str(top), DEFAULT_MARKERS, {}))


def test_a_marker_renamed_into_place_and_a_symlink_marker_are_seen(tmp_path: Path) -> None:
    top, cwd = _tree(tmp_path)
    roots = RepoRoots({})
    (top / ".git").mkdir()
    assert _agrees(roots, cwd) == str(top)
    (cwd / "not-yet").mkdir()
    os.rename(cwd / "not-yet", cwd / ".git")
    assert _agrees(roots, cwd) == str(cwd)
    os.rename(cwd / ".git", cwd / "gone")
    os.symlink("nowhere", top / "a" / ".hg")  # a broken link is a marker too (lexists)
    assert _agrees(roots, cwd) == str(top / "a")


def test_skillsd_root_wins_and_nothing_is_remembered_for_it(tmp_path: Path) -> None:
    top, cwd = _tree(tmp_path)
    (top / ".git").mkdir()
    roots = RepoRoots({ENV_ROOT: str(top / "a")})
    assert roots.find(str(cwd), DEFAULT_MARKERS) == str(top / "a")
    assert roots._known == {}


def test_the_memory_is_bounded_and_a_vanished_cwd_is_not_remembered(tmp_path: Path) -> None:
    top, _cwd = _tree(tmp_path)
    (top / ".git").mkdir()
    roots = RepoRoots({}, most=2)
    dirs = [top / f"d{n}" for n in range(5)]
    for d in dirs:
        d.mkdir()
        assert roots.find(str(d), DEFAULT_MARKERS) == str(top)
    assert len(roots._known) == 2
    gone = top / "gone"
    assert roots.find(str(gone), DEFAULT_MARKERS) == str(top)  # looked up, not remembered
    assert (str(gone), DEFAULT_MARKERS) not in roots._known
