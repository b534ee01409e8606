"""A profile's relevance (pure): what the repository's words say of each skill, and what its
use here adds: a used skill clears the relevance bar whatever its words, ranks higher the more
it was used, and never above the best match."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.listing.listing_profile import RELEVANT_SHARE, RepoFacts, relevance
from skillsd.core.policy.config import Config
from skillsd_protocol import SkillMetadata
from tests.listing.fixtures import write_skill

FACTS = RepoFacts("# ledger\n\nShips its schema changes as database migrations.\n", ("README.md",))


def _skills(tmp_path: Path) -> dict[str, SkillMetadata]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    folder = home / ".claude/skills"
    write_skill(folder, "migrate", "Writes database migrations and checks the schema.")
    write_skill(folder, "schema", "Reviews a schema.")
    write_skill(folder, "paint", "Paints watercolour birds on handmade paper.")
    write_skill(folder, "fold", "Folds origami cranes from square sheets.")
    env = {"HOME": str(home)}
    plan = compute_roots(str(project), Config(), home=str(home), env=env)
    return {s.name: s for s in build_catalog(plan, Config()).seen_by("claude-code")}


def test_use_makes_an_unmatched_skill_relevant_but_not_the_best(tmp_path: Path) -> None:
    skills = _skills(tmp_path)
    words = relevance(list(skills.values()), FACTS)
    assert skills["paint"].id not in words and skills["fold"].id not in words
    best = max(score for score, _ in words.values())
    assert words[skills["migrate"].id][0] == best

    scores = relevance(list(skills.values()), FACTS, {"paint": 1, "fold": 40, "migrate": 3})
    paint, fold = scores[skills["paint"].id], scores[skills["fold"].id]
    assert paint[1] == "used 1 time here" and fold[1] == "used 40 times here"
    assert RELEVANT_SHARE * best < paint[0] < fold[0] <= best
    # The best match stays the best: use does not push the matched skills out.
    assert max(score for score, _ in scores.values()) == best
    assert scores[skills["migrate"].id][1].endswith("; used 3 times here")
    # A matched skill nobody used keeps its score.
    assert scores[skills["schema"].id] == words[skills["schema"].id]


def test_use_alone_when_nothing_matches(tmp_path: Path) -> None:
    skills = _skills(tmp_path)
    empty = RepoFacts("", ())
    assert relevance(list(skills.values()), empty) == {}
    scores = relevance(list(skills.values()), empty, {"paint": 1, "fold": 2})
    assert set(scores) == {skills["paint"].id, skills["fold"].id}
    best = max(score for score, _ in scores.values())
    assert all(score >= RELEVANT_SHARE * best for score, _ in scores.values())
