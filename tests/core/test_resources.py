"""Skill file listing, whole-SKILL.md reads and contained, paged readFile (docs/protocol.md)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.core.skill.fs_resources import list_skill_files, read_resource, read_skill_file_content


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    d = tmp_path / "skills" / "demo"
    (d / "references").mkdir(parents=True)
    (d / "scripts").mkdir()
    (d / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\n# Demo\n")
    (d / "references" / "a.md").write_text("alpha\n")
    (d / "scripts" / "run.sh").write_text("echo hi\n")
    return d


# -- listing ------------------------------------------------------------------------------------


def test_listing_is_relative_sorted_and_skips_top_skill_md(skill: Path) -> None:
    (skill / "b.txt").write_text("b")
    (skill / "references" / "SKILL.md").write_text("nested")
    assert list_skill_files(str(skill)) == [
        "b.txt",
        "references/SKILL.md",
        "references/a.md",
        "scripts/run.sh",
    ]


def test_listing_depth_limit(skill: Path) -> None:
    deep = skill / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (skill / "a" / "b" / "at3.md").write_text("x")  # depth 3: listed
    (deep / "at4.md").write_text("x")  # depth 4: not listed
    files = list_skill_files(str(skill))
    assert "a/b/at3.md" in files
    assert "a/b/c/at4.md" not in files
    assert list_skill_files(str(skill), max_depth=1) == []  # top level holds only SKILL.md


def test_listing_count_limit(skill: Path) -> None:
    many = skill / "assets"
    many.mkdir()
    for i in range(limits.MAX_LISTED_FILES + 20):
        (many / f"f{i:04d}.txt").write_text("x")
    files = list_skill_files(str(skill))
    assert len(files) == limits.MAX_LISTED_FILES
    assert files[0] == "assets/f0000.txt"
    assert files == sorted(files)


def test_listing_omits_escaping_symlinks_and_survives_loops(skill: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    os.symlink(outside, skill / "out-dir")
    os.symlink(outside / "secret.txt", skill / "out-file")
    os.symlink(skill / "references" / "a.md", skill / "inside-link.md")
    os.symlink(skill, skill / "references" / "loop")
    os.symlink(skill / "missing", skill / "broken")
    os.mkfifo(skill / "pipe")
    files = list_skill_files(str(skill))
    assert "inside-link.md" in files
    assert not any(f.startswith(("out-dir", "out-file", "broken", "pipe")) for f in files)
    assert not any("loop" in f for f in files)


def test_listing_skips_git_and_missing_dir(skill: Path, tmp_path: Path) -> None:
    (skill / ".git").mkdir()
    (skill / ".git" / "HEAD").write_text("x")
    (skill / ".hidden").write_text("x")
    files = list_skill_files(str(skill))
    assert ".hidden" in files and not any(f.startswith(".git/") for f in files)
    assert list_skill_files(str(tmp_path / "nope")) == []


# -- whole SKILL.md -----------------------------------------------------------------------------


def test_read_skill_file_content_text_and_body(tmp_path: Path) -> None:
    p = tmp_path / "SKILL.md"
    p.write_bytes(b"\xef\xbb\xbf---\r\nname: x\r\n---\r\n# Body\r\nline\r\n")
    content = read_skill_file_content(str(p))
    assert content.text == "---\nname: x\n---\n# Body\nline\n"
    assert content.body == "# Body\nline\n"


def test_read_skill_file_content_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "SKILL.md"
    p.write_bytes(b"---\nname: x\n---\n" + b"a" * 100)
    size = p.stat().st_size
    assert read_skill_file_content(str(p), max_bytes=size).body == "a" * 100
    with pytest.raises(SkillsdError) as err:
        read_skill_file_content(str(p), max_bytes=size - 1)
    assert err.value.kind == "too_large"
    assert str(p) in err.value.message


def test_read_skill_file_content_missing_and_broken(tmp_path: Path) -> None:
    with pytest.raises(SkillsdError) as err:
        read_skill_file_content(str(tmp_path / "SKILL.md"))
    assert err.value.kind == "skill_not_found"
    p = tmp_path / "SKILL.md"
    p.write_text("---\nname: x\n")
    with pytest.raises(SkillsdError) as err:
        read_skill_file_content(str(p))
    assert err.value.kind == "invalid_skill"
    assert err.value.data.diagnostics[0].code == "frontmatter.unclosed"


def test_read_skill_file_content_replaces_bad_utf8_in_body(tmp_path: Path) -> None:
    p = tmp_path / "SKILL.md"
    p.write_bytes(b"---\nname: x\n---\nbad \xff byte\n")
    assert read_skill_file_content(str(p)).body == "bad \ufffd byte\n"


# -- readFile refusals --------------------------------------------------------------------------


def _refused(skill: Path, file: str) -> SkillsdError:
    with pytest.raises(SkillsdError) as err:
        read_resource(str(skill), file)
    assert err.value.kind == "path_not_allowed", err.value.message
    assert err.value.data.file == file
    return err.value


@pytest.mark.parametrize(
    ("file", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("../demo/SKILL.md", "'..'"),
        ("references/../SKILL.md", "'..'"),
        ("..", "'..'"),
        ("refer\x00ences/a.md", "NUL"),
        ("references\\a.md", "backslash"),
        ("references", "directory"),
        ("references/", "directory"),
        (".", "directory"),
        ("", "empty"),
    ],
)
def test_readfile_refuses_bad_paths(skill: Path, file: str, reason: str) -> None:
    err = _refused(skill, file)
    assert reason in err.message


def test_readfile_refuses_symlink_escapes(skill: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside / "secret.txt", skill / "leak.txt")
    os.symlink(outside, skill / "references" / "up")
    assert "outside the skill" in _refused(skill, "leak.txt").message
    assert "outside the skill" in _refused(skill, "references/up/secret.txt").message
    # Existence outside is not revealed: a missing file behind the escape is refused too.
    assert "outside the skill" in _refused(skill, "references/up/nothing.txt").message


def test_readfile_refuses_fifo_without_blocking(skill: Path) -> None:
    os.mkfifo(skill / "pipe")
    assert "not a regular file" in _refused(skill, "pipe").message
    os.symlink(skill / "pipe", skill / "pipe-link")
    assert "not a regular file" in _refused(skill, "pipe-link").message


def test_readfile_symlink_loop_is_refused(skill: Path) -> None:
    os.symlink(skill / "loop-b", skill / "loop-a")
    os.symlink(skill / "loop-a", skill / "loop-b")
    with pytest.raises(SkillsdError) as err:
        read_resource(str(skill), "loop-a")
    assert err.value.kind in ("path_not_allowed", "resource_not_found")


def test_readfile_missing_is_resource_not_found(skill: Path) -> None:
    for file in ("references/nope.md", "references/a.md/under-a-file", "%2e%2e/SKILL.md"):
        with pytest.raises(SkillsdError) as err:
            read_resource(str(skill), file)
        assert err.value.kind == "resource_not_found", file
        assert file in err.value.message


def test_readfile_percent_dots_are_a_literal_name(skill: Path) -> None:
    (skill / "%2e%2e").mkdir()
    (skill / "%2e%2e" / "x.txt").write_text("literal")
    assert read_resource(str(skill), "%2e%2e/x.txt").content == "literal"


def test_readfile_negative_window_is_invalid(skill: Path) -> None:
    for kwargs in ({"offset": -1}, {"length": -5}):
        with pytest.raises(SkillsdError) as err:
            read_resource(str(skill), "references/a.md", **kwargs)  # type: ignore[arg-type]
        assert err.value.kind == "invalid_params"
        assert next(iter(kwargs)) in err.value.message


# -- readFile content ---------------------------------------------------------------------------


def test_readfile_text(skill: Path) -> None:
    r = read_resource(str(skill), "./references//a.md")
    assert r.file == "./references//a.md"
    assert r.path == os.path.realpath(skill / "references" / "a.md")
    assert (r.size, r.encoding, r.content, r.truncated) == (6, "utf-8", "alpha\n", False)


def test_readfile_inside_symlink_reports_real_path(skill: Path) -> None:
    os.symlink(skill / "references" / "a.md", skill / "alias.md")
    r = read_resource(str(skill), "alias.md")
    assert r.path == os.path.realpath(skill / "references" / "a.md")
    assert r.content == "alpha\n"


def test_readfile_paging(skill: Path) -> None:
    (skill / "big.txt").write_bytes(b"0123456789" * 3)
    first = read_resource(str(skill), "big.txt", length=12)
    assert (first.content, first.truncated, first.size) == ("012345678901", True, 30)
    last = read_resource(str(skill), "big.txt", offset=24, length=12)
    assert (last.content, last.truncated) == ("456789", False)
    past = read_resource(str(skill), "big.txt", offset=99)
    assert (past.content, past.truncated, past.encoding) == ("", False, "utf-8")
    empty = read_resource(str(skill), "big.txt", length=0)
    assert (empty.content, empty.truncated) == ("", True)


def test_readfile_default_window(skill: Path) -> None:
    (skill / "huge.txt").write_bytes(b"x" * (limits.DEFAULT_READ_BYTES + 5))
    r = read_resource(str(skill), "huge.txt")
    assert len(r.content) == limits.DEFAULT_READ_BYTES
    assert r.truncated
    rest = read_resource(str(skill), "huge.txt", offset=limits.DEFAULT_READ_BYTES)
    assert (rest.content, rest.truncated) == ("xxxxx", False)


def test_readfile_binary_is_base64(skill: Path) -> None:
    data = bytes(range(256))
    (skill / "assets").mkdir()
    (skill / "assets" / "blob.bin").write_bytes(data)
    r = read_resource(str(skill), "assets/blob.bin")
    assert r.encoding == "base64"
    assert base64.b64decode(r.content) == data
    (skill / "assets" / "nul.txt").write_bytes(b"text\x00with nul")
    assert read_resource(str(skill), "assets/nul.txt").encoding == "base64"


def test_readfile_window_never_splits_a_character(skill: Path) -> None:
    text = "日本語のテキスト"  # 3 bytes per character
    (skill / "ja.md").write_text(text, encoding="utf-8")
    offset, pieces = 0, []
    while True:
        r = read_resource(str(skill), "ja.md", offset=offset, length=7)
        assert r.encoding == "utf-8"
        pieces.append(r.content)
        offset += len(r.content.encode("utf-8"))
        if not r.truncated:
            break
    assert pieces[0] == "日本"  # 7 bytes hold two whole characters; the third waits
    assert "".join(pieces) == text


def test_readfile_window_smaller_than_a_character_falls_back(skill: Path) -> None:
    (skill / "e.md").write_text("é", encoding="utf-8")
    r = read_resource(str(skill), "e.md", length=1)
    assert r.encoding == "base64" and base64.b64decode(r.content) == b"\xc3"
    assert r.truncated


def test_readfile_truncated_multibyte_at_end_of_file_is_binary(skill: Path) -> None:
    (skill / "cut.md").write_bytes("ok é".encode()[:-1])
    assert read_resource(str(skill), "cut.md").encoding == "base64"
