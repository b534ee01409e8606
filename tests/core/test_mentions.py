from __future__ import annotations

from typing import Any

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.skill.mentions import find_mentions, mentions_hint, resolve_mentions
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import AmbiguousSkillData, SkillNotFoundData
from tests.core.skill_fixtures import make_skill

PDF = make_skill("pdf-forms")
REVIEW_A = make_skill("review", root="/repo/.agents/skills")
REVIEW_B = make_skill("review", root="/home/u/.agents/skills", scope="user")
CAFE = make_skill("café")
SKILLS = [PDF, REVIEW_A, REVIEW_B, CAFE]
NAMES = {s.name for s in SKILLS}


def resolver(*, path: str | None = None, name: str | None = None, **_: Any) -> SkillMetadata:
    """A catalog-like resolver with the real rules: path exact, name unique."""
    if path is not None:
        for s in SKILLS:
            if path in (s.path, s.dir):
                return s
        raise SkillsdError(f"No skill at {path}", SkillNotFoundData())
    matches = [s for s in SKILLS if s.name == name]
    if not matches:
        raise SkillsdError(f"No skill named {name!r}", SkillNotFoundData())
    if len(matches) > 1:
        raise SkillsdError(f"{len(matches)} skills are named {name!r}", AmbiguousSkillData())
    return matches[0]


def test_bare_mentions_only_for_known_names_and_shell_isms_ignored() -> None:
    text = "Use $pdf-forms. echo $PATH $HOME $1 ${x} and $unknown-skill costs $5"
    found = find_mentions(text, NAMES)
    assert [(m.text, m.start, m.end) for m in found] == [("$pdf-forms", 4, 14)]
    assert text[4:14] == "$pdf-forms"


def test_offsets_are_code_points_not_bytes() -> None:
    text = "日本語で $café を使って"
    (m,) = find_mentions(text, NAMES)
    assert text[m.start : m.end] == "$café"
    assert (m.start, m.end) == (5, 10)


def test_linked_form_is_always_reported_and_path_wins() -> None:
    text = f"see [$whatever]({PDF.path}) and [$pdf-forms](/nope/SKILL.md)"
    found = find_mentions(text, NAMES)
    assert [m.link for m in found] == [PDF.path, "/nope/SKILL.md"]
    resolved = resolve_mentions(found, resolver)
    assert resolved[0].skill == PDF
    # A linked path that is not a catalog skill is an error: no fallback to the name.
    assert resolved[1].skill is None and resolved[1].error is not None
    assert resolved[1].error.kind == "skill_not_found"


def test_ambiguous_bare_name_is_an_error() -> None:
    (m,) = resolve_mentions(find_mentions("run $review now", NAMES), resolver)
    assert m.error is not None and m.error.kind == "ambiguous_skill"


def test_mentions_inside_words_or_after_dollar_are_ignored() -> None:
    assert find_mentions("a$pdf-forms $$pdf-forms", NAMES) == []


def test_hint_lists_each_resolved_skill_once_and_is_empty_otherwise() -> None:
    resolved = resolve_mentions(find_mentions("$pdf-forms then $pdf-forms", NAMES), resolver)
    hint = mentions_hint(resolved)
    assert hint.startswith("<skill_mentions>") and hint.endswith("</skill_mentions>")
    assert hint.count("pdf-forms:") == 1 and PDF.path in hint
    assert mentions_hint(resolve_mentions(find_mentions("$review", NAMES), resolver)) == ""


@pytest.mark.parametrize("text", ["", "no mentions here", "$", "[$](x)", "$-x"])
def test_degenerate_text(text: str) -> None:
    assert resolve_mentions(find_mentions(text, NAMES), resolver) == []
