"""Property-based fuzzing of frontmatter extraction, YAML loading and field validation.

Whatever the bytes, parsing a SKILL.md never raises, never hangs and never balloons: every
problem is a diagnostic with a documented code, and what is accepted obeys the skill format's field
rules.
"""

from __future__ import annotations

import os
import tempfile
import unicodedata
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from skillsd.core import limits
from skillsd.core.skill.frontmatter import FrontmatterError, load_frontmatter, locate_frontmatter
from skillsd.core.skill.fs_skillfile import ParsedSkillFile, parse_skill_bytes, read_skill_file
from skillsd.core.skill.validation import KNOWN_FIELDS, validate_fields
from tests.hardening.fuzzing import DOCUMENTED_CODES, bounded, fuzz_settings

pytestmark = pytest.mark.slow  # hundreds of generated cases per test: seconds each

LOCATE_CODES = {
    "frontmatter.missing",
    "frontmatter.unclosed",
    "frontmatter.too_large",
    "encoding.invalid",
}
LOAD_CODES = {
    "yaml.invalid",
    "yaml.duplicate_key",
    "yaml.too_many_nodes",
    "yaml.too_deep",
    "yaml.not_mapping",
    "frontmatter.empty",
}
PATH = "/skills/demo/SKILL.md"

# -- strategies ----------------------------------------------------------------------------------

_WORD = st.text(
    alphabet=st.sampled_from(
        [*"abcdemnz-_09 :#&*!|>'\"%@`[]{},?.\\\t", "é", "日", "ǅ", "\u2028", "\x85", "\ufeff"]
    ),
    max_size=12,
)
_KEYS = st.sampled_from(
    [*sorted(KNOWN_FIELDS), "model", "x", "tags", "<<", "? k", "name ", "-", "~", "null"]
)
# Lines that exercise every corner of libyaml and of the fast path: anchors, aliases, tags,
# flow and block collections, block scalars, directives, document markers, comments.
_YAML_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _KEYS, _WORD),
    st.builds(lambda k, v: f"  {k}: {v}", _KEYS, _WORD),
    st.builds(lambda k, v: f"- {k}: {v}", _KEYS, _WORD),
    st.builds(lambda k, a: f"{k}: &{a} [x, {{y: z}}]", _KEYS, st.sampled_from("abc")),
    st.builds(lambda k, a: f"{k}: *{a}", _KEYS, st.sampled_from("abcd")),
    st.builds(lambda k, a: f"{k}: [*{a}, *{a}, *{a}]", _KEYS, st.sampled_from("abc")),
    st.builds(lambda k: f"{k}: !!python/object/apply:os.system ['true']", _KEYS),
    st.builds(lambda k, v: f"{k}: |\n  {v}\n  more", _KEYS, _WORD),
    st.builds(lambda k, v: f'{k}: "{v}\\u00e9\\x41"', _KEYS, _WORD),
    st.builds(lambda k: f"{k}:", _KEYS),
    st.sampled_from(["%YAML 1.1", "---", "...", "--- x", "# c", "", "  ", "\t", "[", "]", "{"]),
    _WORD,
)
_EOL = st.sampled_from(["\n"] * 4 + ["\r\n"] * 2 + ["\r", "\n\n"])


@st.composite
def skill_documents(draw: st.DrawFn) -> bytes:
    """SKILL.md-shaped bytes: frontmatter from hostile YAML lines, then a body; sometimes
    mutated at the byte level (invalid UTF-8, NULs, cut delimiters)."""
    eol = draw(_EOL)
    lines = draw(st.lists(_YAML_LINE, max_size=6))
    if draw(st.integers(0, 3)):
        lines = ["name: demo", "description: A demo skill.", *lines]
    # Weighted towards well-formed delimiters so that the YAML and the fields get exercised.
    head = draw(st.sampled_from(["---"] * 6 + ["---  ", "--- x", "", "\ufeff---", "----"]))
    close = draw(st.sampled_from(["---"] * 6 + ["--- ", "", "...", " ---"]))
    body = draw(st.text(max_size=40))
    text = eol.join([head, *lines, close, body])
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 3]))):
        at = draw(st.integers(0, len(data)))
        junk = draw(st.binary(min_size=1, max_size=3))
        data = data[:at] + junk + data[at + draw(st.integers(0, 2)) :]
    return data


_FIELD_VALUES: st.SearchStrategy[Any] = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["demo", "Demo", "de--mo", "-demo", "\uff44\uff45\uff4d\uff4f", "demo" * 20, "x" * 1100]
    ),
    st.lists(st.text(max_size=10), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5) | st.lists(st.text(), max_size=1)),
)


@st.composite
def dumped_documents(draw: st.DrawFn) -> bytes:
    """Well-formed YAML (written by PyYAML's dumper) with hostile field values: these reach
    the field rules, where hand-written lines mostly stop at the YAML."""
    fields = draw(st.dictionaries(st.one_of(_KEYS, st.text(max_size=6)), _FIELD_VALUES, max_size=6))
    if draw(st.integers(0, 3)):
        fields = {"name": "demo", "description": draw(st.text(min_size=1, max_size=60)), **fields}
    dumped = yaml.safe_dump(fields, allow_unicode=draw(st.booleans()), sort_keys=False)
    return f"---\n{dumped}---\n{draw(st.text(max_size=20))}".encode("utf-8", "surrogatepass")


_ANY_DOCUMENT = st.one_of(skill_documents(), dumped_documents(), st.binary(max_size=600))


def check_parsed(parsed: ParsedSkillFile, mode: str) -> None:
    """The invariants every parse outcome keeps, whatever the input."""
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    for diag in parsed.diagnostics:
        assert diag.code in DOCUMENTED_CODES, diag
        assert diag.severity in ("error", "warning", "info")
        assert diag.path == PATH and diag.message
    assert (parsed.fields is None) == bool(errors), parsed.diagnostics
    fields = parsed.fields
    if fields is None:
        return
    name = fields.name
    assert name == unicodedata.normalize("NFKC", name).strip()
    assert name and name == name.lower() and all(c.isalnum() or c == "-" for c in name)
    assert not (name.startswith("-") or name.endswith("-") or "--" in name)
    assert fields.description and fields.description == fields.description.strip()
    if mode == "strict":
        assert name == "demo"  # the directory name: a mismatch is an error in strict mode
        assert len(name) <= limits.MAX_NAME_CHARS
        assert len(fields.description) <= limits.MAX_DESCRIPTION_CHARS
    if fields.compatibility is not None:
        assert 0 < len(fields.compatibility) <= limits.MAX_COMPATIBILITY_CHARS
    if fields.metadata is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in fields.metadata.items())
    if fields.allowed_tools is not None:
        assert all(isinstance(t, str) and t for t in fields.allowed_tools)
    assert not KNOWN_FIELDS & set(fields.extra_fields or {})


def only_strings(value: Any, depth: int = 0) -> bool:
    """No implicit typing: every scalar, at any depth, is a string."""
    assert depth <= limits.MAX_YAML_DEPTH + 1
    if isinstance(value, dict):
        return all(isinstance(k, str) and only_strings(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(only_strings(v, depth + 1) for v in value)
    return isinstance(value, str)


# -- properties ----------------------------------------------------------------------------------


@fuzz_settings(300)
@given(_ANY_DOCUMENT, st.sampled_from(["strict", "lenient"]))
def test_parsing_any_bytes_yields_only_documented_diagnostics(data: bytes, mode: str) -> None:
    with bounded(peak_bytes=16 * 1024 * 1024):
        parsed = parse_skill_bytes(data, path=PATH, dir_name="demo", mode=mode, read_body=True)  # type: ignore[arg-type]
    check_parsed(parsed, mode)
    if parsed.fields is not None:
        assert parsed.body is not None and 0 < parsed.body_offset <= len(data)


@fuzz_settings(200)
@given(_ANY_DOCUMENT)
def test_lenient_accepts_everything_strict_accepts_with_the_same_fields(data: bytes) -> None:
    strict = parse_skill_bytes(data, path=PATH, dir_name="demo", mode="strict")
    lenient = parse_skill_bytes(data, path=PATH, dir_name="demo", mode="lenient")
    check_parsed(lenient, "lenient")
    if strict.fields is not None:
        assert lenient.fields == strict.fields
    if not any(d.code == "yaml.unquoted_colon" for d in lenient.diagnostics):
        # Without a YAML repair, lenient only ever demotes errors, never adds one. (A repaired
        # file is read further, so it may fail on a field strict mode never got to.)
        assert {d.code for d in lenient.diagnostics if d.severity == "error"} <= {
            d.code for d in strict.diagnostics if d.severity == "error"
        }


@fuzz_settings(300)
@given(_ANY_DOCUMENT, st.booleans(), st.integers(8, 400))
def test_locate_never_disagrees_with_itself_on_a_longer_prefix(
    data: bytes, at_eof: bool, limit: int
) -> None:
    """Discovery reads a prefix, then more: an answer given on a prefix must be the answer on
    the whole file, and any failure is one of the documented ones."""
    try:
        whole = locate_frontmatter(data, at_eof=True, limit=limit)
    except FrontmatterError as exc:
        assert exc.code in LOCATE_CODES
        whole_code: str | None = exc.code
    else:
        whole_code = None
        assert whole is not None
        assert 0 < whole.yaml_start <= whole.yaml_end + 1 <= whole.body_offset + 1
        assert whole.body_offset <= min(limit, len(data))
        assert data[whole.yaml_end :].startswith(b"---")
    for cut in sorted({len(data) // 3, len(data) // 2, len(data) - 1}):
        if cut < 0:
            continue
        try:
            partial = locate_frontmatter(data[:cut], at_eof=False, limit=limit)
        except FrontmatterError as exc:
            assert exc.code == whole_code, (cut, exc.code, whole_code)
        else:
            assert partial is None or (whole_code is None and partial == whole), (cut, partial)


@fuzz_settings(300)
@given(st.lists(_YAML_LINE, max_size=14).map("\n".join))
def test_yaml_loading_is_all_strings_or_a_documented_error(text: str) -> None:
    with bounded(peak_bytes=16 * 1024 * 1024):
        try:
            value = load_frontmatter(text)
        except FrontmatterError as exc:
            assert exc.code in LOAD_CODES, exc.code
            assert exc.message
            return
    assert isinstance(value, dict) and only_strings(value)


@st.composite
def alias_bombs(draw: st.DrawFn) -> tuple[str, int]:
    """``l0: &l0 [x, x]``, ``l1: &l1 [*l0, *l0, ...]``...: (text, nodes once expanded)."""
    levels = draw(st.integers(1, 14))
    fan = draw(st.integers(1, 12))
    lines = [f"l0: &l0 [{', '.join(['lol'] * fan)}]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * fan)}]")
    # Expanded size: each level's list is one node plus fan copies of the level below.
    size, total = 1 + fan, 0
    for _ in range(levels):
        total += size
        size = 1 + fan * size
    return "\n".join(lines), total


@fuzz_settings(120)
@given(alias_bombs())
def test_alias_expansion_is_bounded(bomb: tuple[str, int]) -> None:
    text, expanded = bomb
    with bounded(seconds=5.0, peak_bytes=32 * 1024 * 1024):
        try:
            value = load_frontmatter(text)
        except FrontmatterError as exc:
            assert exc.code == "yaml.too_many_nodes"
            assert expanded > limits.MAX_YAML_NODES // 2  # refused only when really large
            return
    assert only_strings(value)
    assert expanded <= limits.MAX_YAML_NODES  # what was accepted fits the budget


@fuzz_settings(120)
@given(
    st.integers(1, 3000),
    st.sampled_from(["[", "{a: ", "- ", "a:\n"]),
    st.booleans(),
)
def test_any_nesting_depth_loads_or_is_too_deep(depth: int, opener: str, closed: bool) -> None:
    if opener == "- ":
        text = "".join(" " * (2 * i) + "-\n" for i in range(depth)) + " " * (2 * depth) + "x\n"
    elif opener == "a:\n":
        text = "".join(" " * i + "a:\n" for i in range(depth)) + " " * depth + "a: x\n"
    else:
        close = ("]" if opener == "[" else "}") * depth if closed else ""
        text = "k: " + opener * depth + "x" + close + "\n"
    with bounded(seconds=5.0, peak_bytes=32 * 1024 * 1024):
        try:
            value = load_frontmatter(text)
        except FrontmatterError as exc:
            assert exc.code in {"yaml.too_deep", "yaml.invalid", "yaml.not_mapping"}, exc.code
            if exc.code != "yaml.too_deep":
                assert not closed or depth <= limits.MAX_YAML_DEPTH or opener == "- "
            return
    assert depth <= limits.MAX_YAML_DEPTH
    assert only_strings(value)


_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.text(max_size=30) | st.text(alphabet="a-", min_size=60, max_size=70),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


@fuzz_settings(300)
@given(
    st.dictionaries(st.one_of(_KEYS, st.text(max_size=8)), _VALUES, max_size=8),
    st.sampled_from(["strict", "lenient"]),
    st.one_of(st.none(), st.text(max_size=8)),
)
def test_validation_of_any_mapping_never_raises(
    raw: dict[str, Any], mode: str, dir_name: str | None
) -> None:
    fields, diagnostics = validate_fields(raw, path=PATH, dir_name=dir_name, mode=mode)  # type: ignore[arg-type]
    assert {d.code for d in diagnostics} <= DOCUMENTED_CODES
    assert (fields is None) == any(d.severity == "error" for d in diagnostics)
    if fields is not None:
        assert isinstance(fields.name, str) and fields.name
        assert isinstance(fields.description, str) and fields.description


@fuzz_settings(60)
@given(_ANY_DOCUMENT, st.binary(min_size=0, max_size=9000))
def test_the_bounded_disk_read_reaches_the_in_memory_verdict(data: bytes, tail: bytes) -> None:
    """``read_skill_file`` reads a 4 KiB prefix (more only for a long frontmatter) and never the
    body; it must accept, reject and diagnose exactly as a parse of the whole file does."""
    content = data + tail
    with tempfile.TemporaryDirectory() as tmp:
        skill = os.path.join(tmp, "demo")
        os.mkdir(skill)
        path = os.path.join(skill, "SKILL.md")
        with open(path, "wb") as fh:
            fh.write(content)
        on_disk = read_skill_file(path)
    in_memory = parse_skill_bytes(content, path=path, dir_name="demo")
    assert on_disk.fields == in_memory.fields

    def verdict(parsed: ParsedSkillFile) -> set[tuple[str, str]]:
        # body.too_long needs the whole body; discovery reports it only for small files.
        return {(d.severity, d.code) for d in parsed.diagnostics if d.code != "body.too_long"}

    assert verdict(on_disk) == verdict(in_memory)
