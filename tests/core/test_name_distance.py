"""The one edit distance: "did you mean" suggestions and search's typo matching agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.search import SearchIndex
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.errors import SkillsdError
from skillsd.core.name_distance import closest_names, edit_distance


def test_closest_names() -> None:
    names = ["pdf", "pdf-forms", "docx", "xlsx", "pptx", "git-commit"]
    assert closest_names("pfd", names) == ["pdf"]
    assert closest_names("PDF", names) == ["pdf"]
    assert closest_names("git-comit", names) == ["git-commit"]
    assert closest_names("xlsx", names)[0] == "xlsx"
    assert closest_names("docs", names) == ["docx"]
    assert closest_names("", names) == []
    assert len(closest_names("aaaa", [f"aaa{c}" for c in "bcdefghij"])) == 5


def test_a_swap_of_adjacent_letters_is_one_edit() -> None:
    assert edit_distance("lsit", "list", 3) == 1
    assert edit_distance("lsit", "lint", 3) == 2
    # Levenshtein would call both 2 and suggest "lint" first, alphabetically.
    assert closest_names("lsit", ["lint", "list"]) == ["list", "lint"]


def test_resolution_and_search_suggest_the_same_skill_for_a_transposed_name(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    for name in ("lint", "list", "deploy"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill.\n---\nBody\n"
        )
    plan = RootPlan(cwd=str(tmp_path), repo_root=str(tmp_path), roots=(Root(str(root), "extra"),))
    catalog = build_catalog(plan)

    with pytest.raises(SkillsdError) as info:
        catalog.resolve(name="lsit")
    assert info.value.kind == "skill_not_found"
    assert "did you mean list, lint?" in info.value.message

    hits = SearchIndex(catalog.skills).search("lsit").results
    assert [hit.skill.name for hit in hits] == ["list"]
