"""read_skill_file / parse_skill_bytes: bounded reads, diagnostics, stat keys, modes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from skillsd.core import limits
from skillsd.core.skill import fs_skillfile as skillfile
from skillsd.core.skill.fs_skillfile import (
    ParsedSkillFile,
    SkillFields,
    StatKey,
    parse_skill_bytes,
    read_skill_file,
)

GOOD = b"---\nname: demo\ndescription: Does demo things.\n---\n# Demo\n\nBody text.\n"


def make_skill(root: Path, content: bytes, dir_name: str = "demo") -> Path:
    skill_dir = root / dir_name
    skill_dir.mkdir(parents=True, exist_ok=True)
    path = skill_dir / "SKILL.md"
    path.write_bytes(content)
    return path


def codes(parsed: ParsedSkillFile) -> list[tuple[str, str]]:
    return [(d.severity, d.code) for d in parsed.diagnostics]


def test_reads_a_valid_skill(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD)
    parsed = read_skill_file(str(path))
    assert parsed.fields == SkillFields(name="demo", description="Does demo things.")
    assert parsed.diagnostics == []
    assert parsed.path == str(path)
    st = path.stat()
    assert parsed.stat == StatKey(st.st_mtime_ns, st.st_size, st.st_ino)
    assert GOOD[parsed.body_offset :] == b"# Demo\n\nBody text.\n"
    assert parsed.body is None


def test_read_body(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD)
    parsed = read_skill_file(str(path), read_body=True)
    assert parsed.body == "# Demo\n\nBody text.\n"


@pytest.mark.parametrize(
    "content",
    [
        b"\xef\xbb\xbf" + GOOD,
        GOOD.replace(b"\n", b"\r\n"),
        GOOD.replace(b"---\n", b"---   \n"),
        b"---\nname: demo\ndescription: a --- b\n---\nbody",
    ],
    ids=["bom", "crlf", "trailing-spaces", "dashes-in-value"],
)
def test_byte_level_variants_are_valid(tmp_path: Path, content: bytes) -> None:
    parsed = read_skill_file(str(make_skill(tmp_path, content)))
    assert parsed.fields is not None, parsed.diagnostics
    assert parsed.fields.name == "demo"


def test_dashes_in_value_are_kept(tmp_path: Path) -> None:
    path = make_skill(tmp_path, b"---\nname: demo\ndescription: a --- b\n---\nbody")
    parsed = read_skill_file(str(path))
    assert parsed.fields is not None and parsed.fields.description == "a --- b"


def test_values_stay_strings(tmp_path: Path) -> None:
    content = b"---\nname: demo\ndescription: no\nmetadata:\n  version: 1.0\n  beta: yes\n---\n"
    parsed = read_skill_file(str(make_skill(tmp_path, content)))
    assert parsed.fields is not None
    assert parsed.fields.description == "no"
    assert parsed.fields.metadata == {"version": "1.0", "beta": "yes"}


def test_name_no_stays_a_string() -> None:
    parsed = parse_skill_bytes(b"---\nname: no\ndescription: d\n---\n", path="p", dir_name="no")
    assert parsed.fields is not None and parsed.fields.name == "no"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"# no frontmatter\n", "frontmatter.missing"),
        (b"---\nname: demo\n", "frontmatter.unclosed"),
        (b"---\nname: demo\ndescription: \xff\n---\n", "encoding.invalid"),
        (b"---\nname: demo\nname: demo\ndescription: d\n---\n", "yaml.duplicate_key"),
        (b"---\n- a\n- b\n---\n", "yaml.not_mapping"),
        (b"---\n---\nbody\n", "frontmatter.empty"),
        (b"---\nname: demo\ndescription: [x\n---\n", "yaml.invalid"),
    ],
)
def test_file_level_errors(tmp_path: Path, content: bytes, code: str) -> None:
    path = make_skill(tmp_path, content)
    parsed = read_skill_file(str(path))
    assert parsed.fields is None
    assert codes(parsed) == [("error", code)]
    assert parsed.diagnostics[0].path == str(path)
    assert parsed.stat is not None


def test_billion_laughs_file_fails_fast(tmp_path: Path) -> None:
    lines = ["name: demo", "description: d", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 12):
        refs = ",".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    content = ("---\n" + "\n".join(lines) + "\n---\n").encode()
    parsed = read_skill_file(str(make_skill(tmp_path, content)))
    assert codes(parsed) == [("error", "yaml.too_many_nodes")]


def test_name_mismatch_uses_parent_directory(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD, dir_name="elsewhere")
    parsed = read_skill_file(str(path))
    assert parsed.fields is None and codes(parsed) == [("error", "name.mismatch")]
    # An explicit dir_name wins (discovery passes it).
    assert read_skill_file(str(path), dir_name="demo").fields is not None
    lenient = read_skill_file(str(path), mode="lenient")
    assert lenient.fields is not None and codes(lenient) == [("warning", "name.mismatch")]


def test_relative_path_dir_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_skill(tmp_path, GOOD)
    monkeypatch.chdir(tmp_path / "demo")
    parsed = read_skill_file("SKILL.md")
    assert parsed.fields is not None, parsed.diagnostics
    parsed = read_skill_file("./SKILL.md")
    assert parsed.fields is not None, parsed.diagnostics


def test_unicode_directory_and_name(tmp_path: Path) -> None:
    content = "---\nname: 日本語\ndescription: 説明\n---\n".encode()
    parsed = read_skill_file(str(make_skill(tmp_path, content, dir_name="日本語")))
    assert parsed.fields is not None and parsed.fields.name == "日本語"
    content = "---\nname: café\ndescription: d\n---\n".encode()
    parsed = read_skill_file(str(make_skill(tmp_path, content, dir_name="cafe\u0301")))
    assert parsed.fields is not None and parsed.fields.name == "café"


# --- lenient colon retry -------------------------------------------------------------------------

COLON = b"---\nname: demo\ndescription: Use when: the user asks\n---\n"


def test_unquoted_colon_strict_is_yaml_error() -> None:
    parsed = parse_skill_bytes(COLON, path="p", dir_name="demo")
    assert parsed.fields is None and codes(parsed) == [("error", "yaml.invalid")]


def test_unquoted_colon_lenient_retries() -> None:
    parsed = parse_skill_bytes(COLON, path="p", dir_name="demo", mode="lenient")
    assert parsed.fields is not None
    assert parsed.fields.description == "Use when: the user asks"
    (d,) = parsed.diagnostics
    assert (d.severity, d.code, d.field) == ("warning", "yaml.unquoted_colon", "description")


def test_lenient_retry_does_not_hide_other_yaml_errors() -> None:
    content = b"---\nname: demo\ndescription: Use when: asked\nbad: [x\n---\n"
    parsed = parse_skill_bytes(content, path="p", dir_name="demo", mode="lenient")
    assert parsed.fields is None and codes(parsed) == [("error", "yaml.invalid")]


def test_lenient_colon_retry_missing_description_still_excludes() -> None:
    content = b"---\nname: demo\nnote: a: b\n---\n"
    parsed = parse_skill_bytes(content, path="p", dir_name="demo", mode="lenient")
    assert parsed.fields is None
    assert ("error", "description.missing") in codes(parsed)


# --- body advice ---------------------------------------------------------------------------------


def test_body_lines_info(tmp_path: Path) -> None:
    head = b"---\nname: demo\ndescription: d\n---\n"
    at_limit = head + b"line\n" * limits.BODY_ADVISED_MAX_LINES
    parsed = read_skill_file(str(make_skill(tmp_path, at_limit)), read_body=True)
    assert parsed.diagnostics == []
    over = head + b"line\n" * (limits.BODY_ADVISED_MAX_LINES + 1)
    parsed = read_skill_file(str(make_skill(tmp_path, over)), read_body=True)
    assert codes(parsed) == [("info", "body.too_long")]
    assert parsed.fields is not None  # info never fails


def test_body_tokens_info_from_file_size_without_reading_body(tmp_path: Path) -> None:
    head = b"---\nname: demo\ndescription: d\n---\n"
    limit_bytes = limits.BODY_ADVISED_MAX_TOKENS * limits.BYTES_PER_TOKEN
    body = b"x" * (limit_bytes + limits.BYTES_PER_TOKEN) + b"\n"
    parsed = read_skill_file(str(make_skill(tmp_path, head + body)))
    assert codes(parsed) == [("info", "body.too_many_tokens")]
    assert parsed.fields is not None
    fits = b"x" * (limit_bytes + limits.BYTES_PER_TOKEN - 2)
    parsed = read_skill_file(str(make_skill(tmp_path, head + fits)))
    assert parsed.diagnostics == []


def test_body_invalid_utf8_is_a_warning(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD + b"\xff\xfe bad\n")
    parsed = read_skill_file(str(path), read_body=True)
    assert codes(parsed) == [("warning", "encoding.invalid")]
    assert parsed.body is not None and "\ufffd" in parsed.body
    # Discovery never reads the body, so it never sees this.
    assert read_skill_file(str(path)).diagnostics == []


# --- bounded reads -------------------------------------------------------------------------------


class ReadSpy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests: list[int] = []
        self.returned = 0
        real: Callable[[int, int], bytes] = os.read

        def spy(fd: int, n: int) -> bytes:
            self.requests.append(n)
            data = real(fd, n)
            self.returned += len(data)
            return data

        monkeypatch.setattr(skillfile.os, "read", spy)


def test_small_frontmatter_needs_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_skill(tmp_path, GOOD + b"body line\n" * 100_000)
    spy = ReadSpy(monkeypatch)
    parsed = read_skill_file(str(path))
    assert parsed.fields is not None
    assert spy.requests == [limits.FIRST_READ_BYTES]
    assert spy.returned == limits.FIRST_READ_BYTES


def test_large_frontmatter_reads_more_but_not_the_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    description = b"d" * 1000
    head = b"---\nname: demo\ndescription: " + description + b"\n" + b"x-pad: " + b"p" * 20_000
    content = head + b"\n---\n" + b"body line\n" * 100_000
    path = make_skill(tmp_path, content)
    spy = ReadSpy(monkeypatch)
    parsed = read_skill_file(str(path))
    assert parsed.fields is not None, parsed.diagnostics
    assert spy.returned <= limits.MAX_FRONTMATTER_BYTES
    assert len(spy.requests) >= 2


def test_frontmatter_over_bound_is_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = b"---\nname: demo\ndescription: d\npad: " + b"p" * limits.MAX_FRONTMATTER_BYTES
    content += b"\n---\nbody\n" * 1000
    path = make_skill(tmp_path, content)
    spy = ReadSpy(monkeypatch)
    parsed = read_skill_file(str(path))
    assert codes(parsed) == [("error", "frontmatter.too_large")]
    assert spy.returned <= limits.MAX_FRONTMATTER_BYTES


def test_frontmatter_exactly_at_bound_is_accepted(tmp_path: Path) -> None:
    head = b"---\nname: demo\ndescription: d\npad: "
    tail = b"\n---\n"
    pad = b"p" * (limits.MAX_FRONTMATTER_BYTES - len(head) - len(tail))
    path = make_skill(tmp_path, head + pad + tail + b"body\n" * 10)
    parsed = read_skill_file(str(path))
    assert codes(parsed) == [("warning", "field.unknown")]
    path.write_bytes(head + pad + b"p" + tail + b"body\n")
    assert codes(read_skill_file(str(path))) == [("error", "frontmatter.too_large")]


def test_unclosed_small_file_is_unclosed(tmp_path: Path) -> None:
    path = make_skill(tmp_path, b"---\nname: demo\ndescription: d\n" + b"text\n" * 2000)
    assert codes(read_skill_file(str(path))) == [("error", "frontmatter.unclosed")]


def test_prefix_given_to_parse_skill_bytes() -> None:
    parsed = parse_skill_bytes(GOOD[:30], path="p", dir_name="demo", file_size=len(GOOD))
    assert codes(parsed) == [("error", "frontmatter.unclosed")]
    parsed = parse_skill_bytes(GOOD[:50], path="p", dir_name="demo", file_size=10_000_000)
    assert parsed.fields is not None
    assert codes(parsed) == [("info", "body.too_many_tokens")]


# --- file problems -------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "SKILL.md"
    parsed = read_skill_file(str(path))
    assert parsed.fields is None and parsed.stat is None
    assert codes(parsed) == [("error", "file.missing")]
    assert parsed.diagnostics[0].path == str(path)


def test_file_vanishing_between_listing_and_reading(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD)
    listed = str(path)
    path.unlink()
    assert codes(read_skill_file(listed)) == [("error", "file.missing")]


def test_directory_named_skill_md(tmp_path: Path) -> None:
    path = tmp_path / "demo" / "SKILL.md"
    path.mkdir(parents=True)
    parsed = read_skill_file(str(path))
    assert parsed.fields is None
    assert codes(parsed)[0][1] in {"file.not_regular", "file.unreadable"}


def test_fifo_does_not_block(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    (tmp_path / "demo").mkdir()
    path = tmp_path / "demo" / "SKILL.md"
    os.mkfifo(path)
    parsed = read_skill_file(str(path))
    assert codes(parsed) == [("error", "file.not_regular")]
    assert parsed.stat is not None


def test_unreadable_file(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files regardless of their mode")
    path = make_skill(tmp_path, GOOD)
    path.chmod(0)
    try:
        parsed = read_skill_file(str(path))
    finally:
        path.chmod(0o644)
    assert codes(parsed) == [("error", "file.unreadable")]


def test_symlinked_skill_file(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store", GOOD)
    link_dir = tmp_path / "skills" / "demo"
    link_dir.mkdir(parents=True)
    (link_dir / "SKILL.md").symlink_to(real)
    parsed = read_skill_file(str(link_dir / "SKILL.md"))
    assert parsed.fields is not None
    assert parsed.stat is not None and parsed.stat.ino == real.stat().st_ino


def test_stat_key_changes_on_edit(tmp_path: Path) -> None:
    path = make_skill(tmp_path, GOOD)
    first = read_skill_file(str(path)).stat
    path.write_bytes(GOOD + b"more\n")
    second = read_skill_file(str(path)).stat
    assert first is not None and second is not None
    assert first != second and second.size == len(GOOD) + 5


def test_path_with_nul_byte() -> None:
    parsed = read_skill_file("/tmp/x\0y/SKILL.md")
    assert codes(parsed) == [("error", "file.unreadable")]
