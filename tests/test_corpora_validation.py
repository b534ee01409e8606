"""The real, published skills in ``shared/corpora``: known-invalid ones rejected with the right code
in strict mode and loaded with warnings in lenient mode; every other one valid in both."""

from __future__ import annotations

import pytest

from skillsd.core.skill.fs_skillfile import read_skill_file
from tests.corpora import CORPORA, KNOWN_INVALID


def corpus_skills() -> list[str]:
    if not CORPORA.is_dir():
        return []
    return sorted(str(p.parent.relative_to(CORPORA)) for p in CORPORA.rglob("SKILL.md"))


pytestmark = pytest.mark.skipif(
    not CORPORA.is_dir(),
    reason=f"skill corpora not found at {CORPORA} (shared/ is not checked out)",
)


def test_corpus_is_complete() -> None:
    skills = corpus_skills()
    assert len(skills) == 30
    # The openai skills live under dot-folders; a scan that skipped them would find none.
    assert sum(s.startswith("openai-skills/") for s in skills) == 10
    assert set(KNOWN_INVALID) <= set(skills)


@pytest.mark.parametrize("skill", corpus_skills())
def test_corpus_skill(skill: str) -> None:
    path = str(CORPORA / skill / "SKILL.md")
    strict = read_skill_file(path, mode="strict", read_body=True)
    lenient = read_skill_file(path, mode="lenient", read_body=True)
    errors = [d.code for d in strict.diagnostics if d.severity == "error"]
    if skill in KNOWN_INVALID:
        assert strict.fields is None
        assert errors == [KNOWN_INVALID[skill]]
        assert lenient.fields is not None
        warnings = [d.code for d in lenient.diagnostics if d.severity == "warning"]
        assert warnings == [KNOWN_INVALID[skill]]
        assert not any(d.severity == "error" for d in lenient.diagnostics)
    else:
        assert strict.fields is not None, strict.diagnostics
        assert errors == []
        assert lenient.fields == strict.fields
    for parsed in (strict, lenient):
        assert all(d.path == path for d in parsed.diagnostics)


def test_corpus_field_values() -> None:
    parsed = read_skill_file(
        str(CORPORA / "vercel-agent-skills/skills/composition-patterns/SKILL.md"), mode="lenient"
    )
    assert parsed.fields is not None
    assert parsed.fields.name == "vercel-composition-patterns"
    assert parsed.fields.metadata == {"author": "vercel", "version": "1.0.0"}
    assert parsed.fields.license == "MIT"
    assert parsed.fields.description.startswith("React composition patterns that scale.")
    claude = read_skill_file(
        str(CORPORA / "anthropics-skills/skills/claude-api/SKILL.md"), mode="lenient"
    )
    assert claude.fields is not None
    (warning,) = [d for d in claude.diagnostics if d.severity == "warning"]
    assert "1068" in warning.message
