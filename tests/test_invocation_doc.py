"""``docs/invocation.md`` says what the code does: every row of its argument table is split
and substituted by the real functions, and its named-argument example gives the text it shows."""

from __future__ import annotations

import re
from pathlib import Path

from skillsd.core.skill.invocation import parse_command, substitute

DOC = (Path(__file__).resolve().parents[1] / "docs" / "invocation.md").read_text()


def _cell(text: str) -> str:
    text = text.strip()
    return "" if text == "(empty)" else text.strip("`")


def test_every_row_of_the_argument_table_is_what_substitution_gives() -> None:
    rows = re.findall(r"^\| `(/[^`]*)` \|(.*)\|$", DOC, re.MULTILINE)
    assert len(rows) >= 4
    for typed, rest in rows:
        name, raw = parse_command(typed)
        assert name
        expected = [_cell(c) for c in rest.split("|")]
        text, _ = substitute("$ARGUMENTS|$0|$1|$2", raw)
        assert text.split("|") == expected, typed


def test_the_named_argument_example() -> None:
    body = "Fix GitHub issue #$issue (priority: $priority)."
    assert f"\n{body}\n" in DOC
    text, _ = substitute(body, "42 high", argument_names=("issue", "priority"))
    assert f"gives `{text}`" in DOC


def test_unused_arguments_are_appended_and_undeclared_words_survive() -> None:
    text, _ = substitute("Echo $HOME and $PATH.\n", "a b")
    assert text == "Echo $HOME and $PATH.\n\nARGUMENTS: a b\n"
    assert "`ARGUMENTS: <raw string>`" in DOC
