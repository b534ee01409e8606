"""Discovery over the real-world corpora in ../shared/corpora (skills written elsewhere)."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.policy.config import Config
from tests.corpora import CORPORA, KNOWN_INVALID, needs_corpora

pytestmark = needs_corpora


def _plan() -> RootPlan:
    return RootPlan(cwd=str(CORPORA), repo_root=str(CORPORA), roots=(Root(str(CORPORA), "extra"),))


def _rel(path: str) -> str:
    return str(Path(path).parent.relative_to(CORPORA))


def test_every_skill_file_is_found_including_dot_folders() -> None:
    on_disk = {str(p.parent.relative_to(CORPORA)) for p in CORPORA.rglob("SKILL.md")}
    assert len(on_disk) == 30
    catalog = build_catalog(_plan(), Config(validation="lenient"))
    found = {_rel(s.path) for s in catalog.skills} | {_rel(e.path) for e in catalog.errors}
    assert found == on_disk
    dotted = {d for d in found if "/." in "/" + d}
    assert len(dotted) == 10
    assert all(d.startswith("openai-skills/skills/.") for d in dotted)
    assert catalog.diagnostics == []


def test_strict_mode_lists_the_known_invalid_skills_as_errors() -> None:
    catalog = build_catalog(_plan(), Config(validation="strict"))
    assert len(catalog.skills) == 24
    errors = {_rel(e.path): e for e in catalog.errors}
    assert set(errors) == set(KNOWN_INVALID)
    for rel, code in KNOWN_INVALID.items():
        codes = [d.code for d in errors[rel].diagnostics if d.severity == "error"]
        assert code in codes, (rel, codes)
        assert errors[rel].message


def test_lenient_mode_keeps_them_with_warnings() -> None:
    catalog = build_catalog(_plan(), Config(validation="lenient"))
    assert catalog.errors == []
    assert len(catalog.skills) == 30
    by_dir = {_rel(s.path): s for s in catalog.skills}
    for rel, code in KNOWN_INVALID.items():
        warnings = [d.code for d in by_dir[rel].diagnostics if d.severity == "warning"]
        assert code in warnings, (rel, warnings)
    # Two corpora ship a `skill-creator`: both kept, each pointing at the other.
    creators = catalog.by_name["skill-creator"]
    assert len(creators) == 2
    assert creators[0].same_name == [creators[1].id]
    assert creators[1].same_name == [creators[0].id]


def test_a_second_build_reuses_every_parse() -> None:
    first = build_catalog(_plan())
    second = build_catalog(_plan(), previous=first)
    assert (second.stats.parsed, second.stats.reused) == (0, 30)
    assert second.generation == first.generation
