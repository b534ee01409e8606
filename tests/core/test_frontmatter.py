"""Frontmatter extraction (byte-exact rules) and the safe YAML loader."""

from __future__ import annotations

import string
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skillsd.core import limits
from skillsd.core.skill import frontmatter
from skillsd.core.skill.frontmatter import (
    FrontmatterError,
    Located,
    decode_frontmatter,
    load_frontmatter,
    locate_frontmatter,
    quote_colon_values,
)
from tests.support.hostile_yaml import BILLION_LAUGHS


def split(data: bytes) -> tuple[bytes, bytes]:
    located = locate_frontmatter(data, at_eof=True)
    assert located is not None
    return data[located.yaml_start : located.yaml_end], data[located.body_offset :]


def error_code(data: bytes, *, at_eof: bool = True, limit: int | None = None) -> str:
    with pytest.raises(FrontmatterError) as info:
        if limit is None:
            locate_frontmatter(data, at_eof=at_eof)
        else:
            locate_frontmatter(data, at_eof=at_eof, limit=limit)
    return info.value.code


# --- extraction ----------------------------------------------------------------------------------


def test_plain_lf() -> None:
    assert split(b"---\nname: a\n---\nbody\n") == (b"name: a\n", b"body\n")


def test_crlf() -> None:
    assert split(b"---\r\nname: a\r\n---\r\nbody\r\n") == (b"name: a\r\n", b"body\r\n")


def test_bom_is_skipped() -> None:
    data = b"\xef\xbb\xbf---\nname: a\n---\nbody"
    located = locate_frontmatter(data, at_eof=True)
    assert located == Located(yaml_start=7, yaml_end=15, body_offset=19)
    assert split(data) == (b"name: a\n", b"body")


def test_trailing_spaces_on_both_delimiters() -> None:
    assert split(b"---   \nname: a\n---  \t\nbody") == (b"name: a\n", b"body")


def test_delimiter_inside_a_value_does_not_close() -> None:
    data = b"---\ndescription: a --- b\nname: x\n---\nbody"
    yaml_text, body = split(data)
    assert yaml_text == b"description: a --- b\nname: x\n"
    assert body == b"body"
    assert load_frontmatter(yaml_text.decode())["description"] == "a --- b"


def test_longer_dash_line_does_not_close() -> None:
    yaml_text, body = split(b"---\na: |\n  x\n----\n  y\n---\nbody")
    assert yaml_text == b"a: |\n  x\n----\n  y\n"
    assert body == b"body"


def test_indented_delimiter_does_not_close() -> None:
    yaml_text, _ = split(b"---\na: |\n   ---\nb: c\n---\n")
    assert yaml_text == b"a: |\n   ---\nb: c\n"


def test_closing_line_at_end_of_file_without_newline() -> None:
    assert split(b"---\nname: a\n---") == (b"name: a\n", b"")
    assert split(b"---\nname: a\n---  ") == (b"name: a\n", b"")


def test_empty_frontmatter_block() -> None:
    assert split(b"---\n---\nbody") == (b"", b"body")


def test_body_is_everything_after_closing_line() -> None:
    _, body = split(b"---\na: b\n---\n\n---\nmore ---\n")
    assert body == b"\n---\nmore ---\n"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"name: a\n",
        b"\n---\nname: a\n---\n",
        b" ---\nname: a\n---\n",
        b"----\nname: a\n---\n",
        b"--- name: a\n---\n",
        b"---x\n",
        b"\xef\xbb\xbf\xef\xbb\xbf---\na: b\n---\n",
        b"---\rname: a\r---\r",  # lone CR is not a line ending
    ],
)
def test_missing_opening_line(data: bytes) -> None:
    assert error_code(data) == "frontmatter.missing"


def test_utf16_file_is_an_encoding_error() -> None:
    data = "---\nname: a\n---\n".encode("utf-16")
    assert error_code(data) == "encoding.invalid"


@pytest.mark.parametrize(
    "data",
    [
        b"---",
        b"---\n",
        b"---\nname: a\n",
        b"---\nname: a\ndescription: x --- y\n",
        b"---\nname: a\n--- x\n",
        b"---\nname: a\n---x\n",
    ],
)
def test_unclosed(data: bytes) -> None:
    assert error_code(data) == "frontmatter.unclosed"


def test_unclosed_message_says_not_closed() -> None:
    with pytest.raises(FrontmatterError, match="not closed"):
        locate_frontmatter(b"---\nname: a\n", at_eof=True)


def test_prefix_without_closing_asks_for_more() -> None:
    assert locate_frontmatter(b"---\nname: a\n", at_eof=False) is None
    assert locate_frontmatter(b"", at_eof=False) is None
    assert locate_frontmatter(b"---", at_eof=False) is None


def test_prefix_ending_mid_candidate_asks_for_more() -> None:
    # '---' at the very end may continue as '----' or '--- x' in the bytes not read yet.
    assert locate_frontmatter(b"---\na: b\n---", at_eof=False) is None
    assert locate_frontmatter(b"---\na: b\n---\r", at_eof=False) is None
    assert locate_frontmatter(b"---\na: b\n---\n", at_eof=False) == Located(4, 9, 13)


def test_size_limit_edge() -> None:
    limit = 64
    # The block (opening line through closing line) is exactly at the limit: accepted.
    head = b"---\nk: "
    tail = b"\n---\n"
    value = b"v" * (limit - len(head) - len(tail))
    exact = head + value + tail
    assert len(exact) == limit
    assert locate_frontmatter(exact + b"body", at_eof=True, limit=limit) is not None
    # One byte more: too large, whether or not the closing line was read.
    over = head + value + b"v" + tail
    assert error_code(over + b"body", limit=limit) == "frontmatter.too_large"
    assert error_code(over[:limit], at_eof=False, limit=limit) == "frontmatter.too_large"


def test_default_limit_is_64_kib() -> None:
    big = b"---\n" + b"k: " + b"v" * limits.MAX_FRONTMATTER_BYTES + b"\n---\n"
    assert error_code(big) == "frontmatter.too_large"
    small = b"---\nk: " + b"v" * (limits.MAX_FRONTMATTER_BYTES - 20) + b"\n---\n"
    assert locate_frontmatter(small, at_eof=True) is not None


def test_invalid_utf8_in_frontmatter() -> None:
    data = b"---\nname: caf\xe9\n---\n"
    located = locate_frontmatter(data, at_eof=True)
    assert located is not None
    with pytest.raises(FrontmatterError) as info:
        decode_frontmatter(data, located)
    assert info.value.code == "encoding.invalid"
    assert "offset 13" in info.value.message


# --- YAML ----------------------------------------------------------------------------------------


def test_every_scalar_is_a_string() -> None:
    data = load_frontmatter(
        "name: no\nversion: 1.0\ncount: 012\nflag: true\nempty: ~\nwhen: 2024-01-01\n"
    )
    assert data == {
        "name": "no",
        "version": "1.0",
        "count": "012",
        "flag": "true",
        "empty": "~",
        "when": "2024-01-01",
    }


def test_yaml_path_also_keeps_strings() -> None:
    # A flow list forces the libyaml path (the fast path does not take it).
    data = load_frontmatter("a: [1.0, no, null, 0x1f]\nb: {c: yes}\n")
    assert data == {"a": ["1.0", "no", "null", "0x1f"], "b": {"c": "yes"}}


def test_tags_are_ignored_not_executed() -> None:
    data = load_frontmatter("a: !!python/object:os.system echo\nb: !!int 5\n")
    assert data == {"a": "echo", "b": "5"}


@pytest.mark.parametrize(
    "text",
    [
        "name: a\nname: b\n",
        "name: a\ndescription: x\nname: a\n",
        "metadata:\n  k: a\n  k: b\n",
        "a: {x: 1, x: 2}\n",
    ],
)
def test_duplicate_keys(text: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(text)
    assert info.value.code == "yaml.duplicate_key"
    assert "line" in info.value.message


def test_duplicate_key_names_the_key_and_line() -> None:
    with pytest.raises(FrontmatterError, match=r"duplicate key 'name' \(line 3"):
        load_frontmatter("name: a\ndescription: d\nname: b\n")


def test_billion_laughs_is_refused() -> None:
    # Fully expanded this is 9**9 (~387 million) strings: without the node budget the test would
    # run out of memory rather than fail.
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(BILLION_LAUGHS)
    assert info.value.code == "yaml.too_many_nodes"


def test_small_aliases_still_work() -> None:
    data = load_frontmatter("a: &x [p, q]\nb: *x\nname: &n hello\nc: *n\n")
    assert data == {"a": ["p", "q"], "b": ["p", "q"], "name": "hello", "c": "hello"}
    assert data["a"] is not data["b"]  # expanded, not shared


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter("a: &x [*x]\n")
    assert info.value.code in {"yaml.too_deep", "yaml.invalid"}


def test_node_budget_edge() -> None:
    # The mapping itself, one key and one list node use 3 of the budget; each item takes one.
    fits = limits.MAX_YAML_NODES - 3
    text = "a: [" + ",".join(["x"] * fits) + "]\n"
    assert len(load_frontmatter(text)["a"]) == fits
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter("a: [" + ",".join(["x"] * (fits + 1)) + "]\n")
    assert info.value.code == "yaml.too_many_nodes"


def test_depth_edge() -> None:
    # The top mapping is depth 0; each '[' adds one level.
    levels = limits.MAX_YAML_DEPTH - 1
    ok = load_frontmatter("a: " + "[" * levels + "x" + "]" * levels + "\n")
    assert isinstance(ok["a"], list)
    levels += 1
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter("a: " + "[" * levels + "x" + "]" * levels + "\n")
    assert info.value.code == "yaml.too_deep"


@pytest.mark.parametrize("opener", ["[", "{a: ", "- "])
def test_very_deep_nesting_is_refused_not_crashing(opener: str) -> None:
    # 30 000 levels overflow libyaml's recursive composer (a segfault, not an exception) unless
    # depth is checked from the event stream first.
    closer = {"[": "]", "{a: ": "}", "- ": ""}[opener]
    depth = 30_000
    prefix = "a:\n  " if opener == "- " else "a: "
    text = prefix + opener * depth + "x" + closer * depth + "\n"
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(text)
    assert info.value.code == "yaml.too_deep"


@pytest.mark.parametrize(
    ("text", "kind"),
    [("- a\n- b\n", "a list"), ("just text\n", "a single string"), ("'quoted'\n", "a single")],
)
def test_not_a_mapping(text: str, kind: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(text)
    assert info.value.code == "yaml.not_mapping"
    assert kind in info.value.message


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_frontmatter(text: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(text)
    assert info.value.code == "frontmatter.empty"


@pytest.mark.parametrize(
    "text",
    [
        "description: Use this: when needed\n",
        "name: [unclosed\n",
        "a: b\n c: d\n",
        "a:\tb\n\tc: d\n",
        "? [a, b]\n: c\n",
    ],
)
def test_invalid_yaml(text: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(text)
    assert info.value.code == "yaml.invalid"
    assert "line" in info.value.message or "mapping keys" in info.value.message


def test_invalid_yaml_message_has_position() -> None:
    with pytest.raises(FrontmatterError, match=r"line 2, column \d+"):
        load_frontmatter("name: a\ndescription: x: y\n")


def test_pure_python_loader_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontmatter, "_Loader", yaml.BaseLoader)
    assert load_frontmatter("a: [1, 2]\nb: c\n") == {"a": ["1", "2"], "b": "c"}
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter(BILLION_LAUGHS)
    assert info.value.code == "yaml.too_many_nodes"
    with pytest.raises(FrontmatterError) as info:
        load_frontmatter("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert info.value.code == "yaml.too_deep"


# --- fast path equivalence -----------------------------------------------------------------------


def reference(text: str) -> Any:
    return yaml.load(text, Loader=yaml.CBaseLoader)


@pytest.mark.parametrize(
    "text",
    [
        "name: a\ndescription: b c  d\n",
        "name: \"1.0\"\nv: 'x y'\n",
        "metadata:\n  author: me\n  version: '2'\nname: x\n",
        "metadata:\n    a: b\n\n    c: d\nlicense: MIT\n",
        "# comment\nname: x\n\ndescription: C# and F#, [brackets] {braces}, a,b\n",
        "name: café\ndescription: 日本語の説明\n",
        "a: b   \nc:    d\n",
        "a: x:y\nb: http://example.com/a?b=c#frag\n",
    ],
)
def test_fast_path_matches_libyaml(text: str) -> None:
    fast = frontmatter._fast_load(text)
    assert fast is not None, "expected the fast path to take this"
    assert fast == reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: b: c\n",
        "a: b # comment\n",
        "a: |\n  x\n",
        "a:\n  - x\n",
        "a:\n",
        "a: b\n  continued\n",
        'a: "x\\ty"\n',
        "a: 'it''s'\n",
        "a: *ref\n",
        "a: b\na: c\n",
        "a: b\tc\n",
        "a: b\u2028c\n",
        "a: -b\n",
        "a: b:\n",
        "a:\n  b: c\n   d: e\n",
    ],
)
def test_fast_path_declines_what_it_is_not_sure_of(text: str) -> None:
    assert frontmatter._fast_load(text) is None


_KEY = st.text(alphabet=string.ascii_letters + string.digits + "_-.", min_size=1, max_size=8)
_VALUE = st.text(
    alphabet=st.sampled_from([*string.printable, "é", "日", "\u2028", "\x85", "\ufeff", "ǅ"]),
    max_size=20,
)
_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _KEY, _VALUE),
    st.builds(lambda k: f"{k}:", _KEY),
    st.builds(lambda k, v, n: f"{' ' * n}{k}: {v}", _KEY, _VALUE, st.integers(1, 4)),
    st.just(""),
    st.builds(lambda v: f"# {v}", _VALUE),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=6))
def test_fast_path_agrees_with_libyaml_property(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    fast = frontmatter._fast_load(text)
    if fast is None:
        return
    assert fast == reference(text)


# --- lenient colon repair ------------------------------------------------------------------------


def test_quote_colon_values_repairs_and_names_keys() -> None:
    repaired = quote_colon_values('name: x\ndescription: Use for: PDFs and "forms"\n')
    assert repaired is not None
    text, keys = repaired
    assert keys == ["description"]
    assert load_frontmatter(text)["description"] == 'Use for: PDFs and "forms"'


def test_quote_colon_values_handles_nested_and_backslashes() -> None:
    repaired = quote_colon_values("metadata:\n  hint: a: b\\c\n")
    assert repaired is not None
    assert load_frontmatter(repaired[0]) == {"metadata": {"hint": "a: b\\c"}}
    assert repaired[1] == ["hint"]


@pytest.mark.parametrize(
    "text", ["name: x\n", "a: 'b: c'\n", 'a: "b: c"\n', "a: |\n  b: c\n", "a: [b: c]\n"]
)
def test_quote_colon_values_leaves_other_lines(text: str) -> None:
    assert quote_colon_values(text) is None
