"""The skill format's field rules, strict and lenient."""

from __future__ import annotations

from typing import Any

import pytest

from skillsd.core import limits
from skillsd.core.skill.validation import (
    KNOWN_FIELDS,
    SkillFields,
    split_allowed_tools,
    validate_fields,
    validate_name,
)
from skillsd_protocol import Diagnostic

PATH = "/skills/demo/SKILL.md"


def check(
    raw: dict[str, Any], *, dir_name: str | None = None, mode: str = "strict"
) -> tuple[SkillFields | None, list[Diagnostic]]:
    base: dict[str, Any] = {"name": "demo", "description": "Does demo things."}
    base.update(raw)
    base = {k: v for k, v in base.items() if v is not _DROP}
    if dir_name is None:
        dir_name = base["name"] if isinstance(base.get("name"), str) else "demo"
    return validate_fields(base, path=PATH, dir_name=dir_name, mode=mode)  # type: ignore[arg-type]


_DROP = object()


def codes(diagnostics: list[Diagnostic], severity: str | None = None) -> list[str]:
    return [d.code for d in diagnostics if severity is None or d.severity == severity]


def test_minimal_valid() -> None:
    fields, diagnostics = check({})
    assert diagnostics == []
    assert fields == SkillFields(name="demo", description="Does demo things.")


def test_all_known_fields() -> None:
    fields, diagnostics = check(
        {
            "license": "MIT",
            "compatibility": "Requires git",
            "metadata": {"author": "me", "version": "1.0"},
            "allowed-tools": "Bash(git add:*) Read",
        }
    )
    assert diagnostics == []
    assert fields is not None
    assert fields.license == "MIT"
    assert fields.compatibility == "Requires git"
    assert fields.metadata == {"author": "me", "version": "1.0"}
    assert fields.allowed_tools == ["Bash(git add:*)", "Read"]
    assert fields.extra_fields is None
    expected = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    assert expected == KNOWN_FIELDS


def test_every_diagnostic_has_path_field_and_names_the_field() -> None:
    _, diagnostics = check(
        {"name": "Bad--Name-", "description": "", "compatibility": "", "metadata": "x", "z": "1"},
        dir_name="other",
    )
    assert diagnostics
    for d in diagnostics:
        assert d.path == PATH
        assert d.field is not None
        assert repr(d.field) in d.message or d.field in d.message


# --- name ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pdf-processing", []),
        ("a", []),
        ("a1-b2", []),
        ("x" * limits.MAX_NAME_CHARS, []),
        ("x" * (limits.MAX_NAME_CHARS + 1), ["name.too_long"]),
        ("PDF", ["name.not_lowercase"]),
        ("pdf_processing", ["name.invalid_chars"]),
        ("pdf.processing", ["name.invalid_chars"]),
        ("pdf processing", ["name.invalid_chars"]),
        ("-pdf", ["name.hyphens"]),
        ("pdf-", ["name.hyphens"]),
        ("pdf--processing", ["name.hyphens"]),
        ("café", []),
        ("日本語", []),
        ("naïve-ünïcode", []),
        ("Café", ["name.not_lowercase"]),
        ("ǆ", []),  # a lowercase digraph letter
        ("hello!", ["name.invalid_chars"]),
        ("emoji-😀", ["name.invalid_chars"]),
    ],
)
def test_name_rules(name: str, expected: list[str]) -> None:
    assert [code for code, _ in validate_name(name, None)] == expected


def test_name_several_problems_reported_together() -> None:
    found = [code for code, _ in validate_name("-Bad_Name-", "x")]
    assert found == ["name.not_lowercase", "name.invalid_chars", "name.hyphens", "name.mismatch"]


def test_name_is_nfkc_normalised_and_stripped() -> None:
    # Full-width letters and a decomposed accent normalise to plain "café-ab".
    raw = "  cafe\u0301-\uff41\uff42 \n"
    fields, diagnostics = check({"name": raw}, dir_name="café-ab")
    assert diagnostics == []
    assert fields is not None and fields.name == "café-ab"


def test_directory_name_is_nfkc_normalised_too() -> None:
    # macOS stores file names decomposed (NFD).
    fields, diagnostics = check({"name": "café"}, dir_name="cafe\u0301")
    assert diagnostics == [] and fields is not None


def test_nfkc_ligature_name() -> None:
    # U+FB01 (fi ligature) becomes "fi" under NFKC.
    fields, _ = check({"name": "\ufb01le"}, dir_name="file")
    assert fields is not None and fields.name == "file"


def test_name_mismatch_strict_and_lenient() -> None:
    fields, diagnostics = check({"name": "other"}, dir_name="demo")
    assert fields is None
    (d,) = diagnostics
    assert (d.severity, d.code, d.field) == ("error", "name.mismatch", "name")
    assert "'other'" in d.message and "'demo'" in d.message
    fields, diagnostics = check({"name": "other"}, dir_name="demo", mode="lenient")
    assert fields is not None and fields.name == "other"
    assert [(d.severity, d.code) for d in diagnostics] == [("warning", "name.mismatch")]


def test_name_check_skipped_without_dir_name() -> None:
    fields, diagnostics = validate_fields(
        {"name": "anything", "description": "d"}, path=PATH, dir_name=None
    )
    assert fields is not None and diagnostics == []


def test_too_long_name_lenient_is_a_warning() -> None:
    long_name = "n" * 70
    fields, diagnostics = check({"name": long_name}, mode="lenient")
    assert fields is not None
    assert codes(diagnostics, "warning") == ["name.too_long"]
    fields, diagnostics = check({"name": long_name})
    assert fields is None and codes(diagnostics, "error") == ["name.too_long"]


def test_bad_characters_stay_errors_in_lenient() -> None:
    fields, diagnostics = check({"name": "Bad"}, dir_name="Bad", mode="lenient")
    assert fields is None
    assert codes(diagnostics, "error") == ["name.not_lowercase"]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (_DROP, "name.missing"),
        ("", "name.missing"),
        ("   ", "name.missing"),
        (["a"], "name.invalid"),
    ],
)
def test_name_missing_or_wrong_type(raw: object, code: str) -> None:
    fields, diagnostics = check({"name": raw}, dir_name="demo", mode="lenient")
    assert fields is None
    assert codes(diagnostics) == [code]
    assert diagnostics[0].field == "name"


# --- description ---------------------------------------------------------------------------------


def test_description_limit_edge() -> None:
    fields, diagnostics = check({"description": "d" * limits.MAX_DESCRIPTION_CHARS})
    assert fields is not None and diagnostics == []
    fields, diagnostics = check({"description": "d" * (limits.MAX_DESCRIPTION_CHARS + 1)})
    assert fields is None
    (d,) = diagnostics
    assert d.code == "description.too_long" and d.field == "description"
    assert "1025" in d.message and "1024" in d.message


def test_description_too_long_lenient_loads() -> None:
    fields, diagnostics = check({"description": "d" * 2000}, mode="lenient")
    assert fields is not None
    assert [(d.severity, d.code) for d in diagnostics] == [("warning", "description.too_long")]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (_DROP, "description.missing"),
        ("", "description.missing"),
        (" \n\t", "description.missing"),
        ({"a": "b"}, "description.invalid"),
    ],
)
def test_missing_description_excludes_in_both_modes(raw: object, code: str, mode: str) -> None:
    fields, diagnostics = check({"description": raw}, mode=mode)
    assert fields is None
    assert codes(diagnostics, "error") == [code]


def test_description_is_stripped() -> None:
    fields, _ = check({"description": "  spaced out \n"})
    assert fields is not None and fields.description == "spaced out"


# --- optional fields -----------------------------------------------------------------------------


def test_license() -> None:
    fields, _ = check({"license": "Apache-2.0"})
    assert fields is not None and fields.license == "Apache-2.0"
    fields, diagnostics = check({"license": ["MIT"]})
    assert fields is None and codes(diagnostics) == ["license.invalid"]


def test_compatibility_edges() -> None:
    fields, diagnostics = check({"compatibility": "c" * limits.MAX_COMPATIBILITY_CHARS})
    assert fields is not None and diagnostics == []
    fields, diagnostics = check({"compatibility": "c" * (limits.MAX_COMPATIBILITY_CHARS + 1)})
    assert fields is None and codes(diagnostics) == ["compatibility.too_long"]
    fields, diagnostics = check({"compatibility": ""})
    assert fields is None and codes(diagnostics) == ["compatibility.invalid"]
    fields, diagnostics = check({"compatibility": {"os": "linux"}})
    assert fields is None and codes(diagnostics) == ["compatibility.invalid"]


def test_metadata_rules() -> None:
    fields, _ = check({"metadata": {"tags": "pdf,forms"}})
    assert fields is not None and fields.metadata == {"tags": "pdf,forms"}
    fields, diagnostics = check({"metadata": {"ok": "x", "nested": {"a": "b"}, "list": ["c"]}})
    assert fields is None
    (d,) = diagnostics
    assert d.code == "metadata.invalid" and d.field == "metadata"
    assert "'nested'" in d.message and "'list'" in d.message
    fields, diagnostics = check({"metadata": "author: me"})
    assert fields is None and codes(diagnostics) == ["metadata.invalid"]


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("Read", ["Read"]),
        ("Bash(git:*) Read", ["Bash(git:*)", "Read"]),
        ("Bash(git add:*)  Read\tWrite", ["Bash(git add:*)", "Read", "Write"]),
        ("Read, Grep, Glob", ["Read", "Grep", "Glob"]),
        ("Bash(a, b) Read", ["Bash(a, b)", "Read"]),
        ("Bash(echo (x y)) Read", ["Bash(echo (x y))", "Read"]),
        ("", []),
        ("Bash(git:* Read", None),
        ("Read) Bash(", None),
    ],
)
def test_split_allowed_tools(text: str, rules: list[str] | None) -> None:
    assert split_allowed_tools(text) == rules


def test_allowed_tools_forms() -> None:
    fields, _ = check({"allowed-tools": ["Bash(git add:*)", " Read "]})
    assert fields is not None and fields.allowed_tools == ["Bash(git add:*)", "Read"]
    for bad in ({"Read": "yes"}, ["Read", ["nested"]], "Bash(unclosed"):
        fields, diagnostics = check({"allowed-tools": bad})
        assert fields is None
        (d,) = diagnostics
        assert d.code == "allowed_tools.invalid" and d.field == "allowed-tools"


def test_unknown_fields_kept_verbatim_with_warnings() -> None:
    extra = {"model": "opus", "user-invocable": "false", "hooks": {"pre": ["a", "b"]}}
    fields, diagnostics = check(dict(extra))
    assert fields is not None
    assert fields.extra_fields == extra
    # Host fields skillsd honours (docs/conformance.md) are `field.host`; the rest stay
    # `field.unknown`.
    assert [(d.severity, d.code, d.field) for d in diagnostics] == [
        ("warning", "field.host", "model"),
        ("warning", "field.host", "user-invocable"),
        ("warning", "field.unknown", "hooks"),
    ]
    assert fields.invocation.user is False and fields.invocation.model is True


def test_lenient_keeps_other_errors() -> None:
    fields, diagnostics = check({"metadata": {"a": {"b": "c"}}}, mode="lenient")
    assert fields is None and codes(diagnostics, "error") == ["metadata.invalid"]


@pytest.mark.parametrize(
    ("tools", "bad"),
    [(["Read", "Bad Tool("], "Bad Tool("), ("Read Bash()", "Bash()")],
)
def test_malformed_allowed_tools_rule_is_a_warning_naming_it(tools: object, bad: str) -> None:
    fields, diagnostics = validate_fields(
        {"name": "a", "description": "d", "allowed-tools": tools},
        path="/s/a/SKILL.md",
        dir_name="a",
    )
    assert fields is not None  # still usable: the bad rule just grants nothing
    (diag,) = diagnostics
    assert (diag.severity, diag.code, diag.field) == (
        "warning",
        "allowed_tools.bad_rule",
        "allowed-tools",
    )
    assert repr(bad) in diag.message and "grants nothing" in diag.message
