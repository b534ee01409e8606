"""The skill digest: the lock file's algorithm, checked against an independent shell pipeline."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from skillsd.core.install.fs_skill_digest import (
    TreeTooLarge,
    compare_files,
    digest_of_files,
    file_digests,
    is_digest,
    skill_digest,
)

#: The digest as docs/install-skills.md shows it for any POSIX shell.
SHELL_DIGEST = r"""
cd "$1" && find . -name .git -prune -o -type f -print0 | LC_ALL=C sort -z |
while IFS= read -r -d '' f; do
  printf '%s\0%s\n' "${f#./}" "$(sha256sum < "$f" | cut -c1-64)"
done | sha256sum | cut -c1-64
"""


def _tree(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    (root / "scripts" / "run.sh").write_text("echo hi\n")
    (root / "références.md").write_text("accents\n")
    (root / "a b.txt").write_bytes(b"\x00\x01binary")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "scripts" / "vendored").mkdir()
    (root / "scripts" / "vendored" / ".git").write_text("gitdir: ../../.git/modules/v\n")
    (root / "scripts" / "vendored" / "tool.py").write_text("print(1)\n")
    (root / "link.md").symlink_to("SKILL.md")
    return root


@pytest.mark.process
@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs coreutils sha256sum")
def test_digest_equals_an_independent_shell_computation(tmp_path: Path) -> None:
    root = _tree(tmp_path / "demo")
    # find -type f leaves symlinks out, as the digest does.
    out = subprocess.run(
        ["bash", "-c", SHELL_DIGEST, "digest", str(root)], capture_output=True, check=True
    )
    assert skill_digest(str(root)) == "sha256:" + out.stdout.decode().strip()


def test_lines_are_exactly_path_nul_hex_newline_sorted_by_bytes(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / "b").mkdir(parents=True)
    (root / "b" / "x").write_bytes(b"1")
    (root / "a").write_bytes(b"2")
    (root / "B").write_bytes(b"3")
    h = {k: hashlib.sha256(v).hexdigest() for k, v in {"b/x": b"1", "a": b"2", "B": b"3"}.items()}
    expected = b"".join(f"{p}\0{h[p]}\n".encode() for p in ["B", "a", "b/x"])
    assert skill_digest(str(root)) == "sha256:" + hashlib.sha256(expected).hexdigest()
    assert file_digests(str(root)) == h


def test_git_folder_and_symlinks_do_not_count(tmp_path: Path) -> None:
    root = _tree(tmp_path / "demo")
    before = skill_digest(str(root))
    (root / ".git" / "index").write_bytes(b"changed")
    (root / "other-link").symlink_to("/etc/passwd")
    assert skill_digest(str(root)) == before
    (root / "scripts" / "run.sh").write_text("echo changed\n")
    assert skill_digest(str(root)) != before


def test_non_utf8_name_keeps_its_raw_bytes(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    raw = b"caf\xe9.md"
    with open(os.path.join(os.fsencode(root), raw), "wb") as fh:
        fh.write(b"x")
    line = raw + b"\0" + hashlib.sha256(b"x").hexdigest().encode() + b"\n"
    assert skill_digest(str(root)) == "sha256:" + hashlib.sha256(line).hexdigest()


def test_compare_names_added_changed_removed() -> None:
    before = {"a": "1", "b": "2", "c": "3"}
    after = {"a": "1", "b": "9", "d": "4"}
    changes = compare_files(before, after)
    assert (changes.added, changes.changed, changes.removed) == (["d"], ["b"], ["c"])
    assert changes.names() == ["b", "c", "d"]
    assert not compare_files(before, dict(before))
    assert digest_of_files(before) != digest_of_files(after)


def test_limits_refuse_before_hashing(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}").write_bytes(b"x" * 10)
    with pytest.raises(TreeTooLarge, match="more than 4 files"):
        file_digests(str(root), max_files=4)
    with pytest.raises(TreeTooLarge, match="more than 49 bytes"):
        file_digests(str(root), max_bytes=49)
    assert len(file_digests(str(root), max_files=5, max_bytes=50)) == 5


def test_digest_form() -> None:
    assert is_digest("sha256:" + "0" * 64)
    assert not is_digest("sha256:" + "A" * 64)
    assert not is_digest("sha1:" + "0" * 64)
    assert not is_digest("sha256:" + "0" * 63)
