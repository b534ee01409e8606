"""The one tree walk (issue 13): loop-free, bounded, undecodable names left out and shown."""

from __future__ import annotations

import os
from pathlib import Path

from skillsd.core.fs.tree_walk import TreeWalk, display_name, is_undecodable


def test_loops_are_entered_once_and_limits_hold(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a" / "b" / "c" / "d").mkdir(parents=True)
    (root / "a" / "back").symlink_to(root)
    (root / "a" / "self").symlink_to(root / "a")
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / ".hidden").mkdir()
    walk = TreeWalk(os.fspath(root), max_depth=3, max_dirs=100)
    seen = [(os.path.relpath(d.path, root), d.depth) for d in walk]
    assert seen == [(".", 0), (".hidden", 1), ("a", 1), ("a/b", 2), ("a/b/c", 3)]
    assert walk.depth_hit and not walk.dirs_hit
    assert walk.visited == {
        os.path.realpath(p)
        for p in (root, root / ".hidden", root / "a", root / "a/b", root / "a/b/c")
    }
    hidden = TreeWalk(os.fspath(root), skip_hidden=True)
    assert ".hidden" not in [os.path.basename(d.path) for d in hidden]
    few = TreeWalk(os.fspath(root), max_dirs=2)
    assert len(list(few)) == 3 and few.dirs_hit  # the root plus two


def test_descend_false_prunes_and_errors_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "skill" / "scripts").mkdir(parents=True)
    (root / "vanishing").mkdir()
    errors: list[tuple[str, type[OSError]]] = []
    walk = TreeWalk(os.fspath(root), on_error=lambda path, exc: errors.append((path, type(exc))))
    names = []
    for directory in walk:
        names.append(os.path.basename(directory.path))
        if directory.depth == 0:
            (root / "vanishing").rmdir()  # queued, gone before it is listed
        if directory.path.endswith("skill"):
            directory.descend = False
    assert names == ["root", "skill"]
    assert errors == [(os.fspath(root / "vanishing"), FileNotFoundError)]


def test_undecodable_names_are_left_out_and_shown_with_escapes(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path)
    os.mkdir(os.path.join(root, b"caf\xe9"))
    open(os.path.join(root, b"ok.txt"), "wb").close()
    walk = TreeWalk(os.fspath(tmp_path))
    listed = [e.name for d in walk for e in d.entries]
    assert listed == ["ok.txt"]
    assert walk.undecodable == [os.fspath(tmp_path) + "/caf\\xe9"]
    assert is_undecodable(os.fsdecode(b"caf\xe9")) and not is_undecodable("café")
    assert display_name(os.fsdecode(b"a/\xff")) == "a/\\xff"
    assert display_name("lone \ud800") == "lone \\ud800"
