"""Suggestions that read the whole skill, mean the same at any catalog size, and offer
candidates (docs/hooks.md): on real skill folders, the published corpus where it matters, and
the daemon and hook for what a host sees."""

from __future__ import annotations

import json
import os
import shutil
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skillsd.cli.hook import hook_output
from skillsd.core.catalog.fs_skill_evidence import BODY_BYTES, EvidenceCache, read_evidence
from skillsd.core.catalog.suggest import (
    CANDIDATE_THRESHOLD,
    COMMON_FLOOR,
    DEFAULT_THRESHOLD,
    FOREIGN_CANDIDATE,
    LEAD,
    LEAD_FLOOR,
    RELATED_FACTOR,
    SuggestIndex,
    verdicts,
    word_rarity,
)
from skillsd.core.catalog.word_forms import word_form
from skillsd.runtime.embeddings import SemanticIndex, SemanticModel
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import Suggestion
from tests.corpora import CORPORA, needs_corpora
from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.root_catalog import catalog
from tests.support.skill_tree import write_skill

ROOT = Path(__file__).resolve().parents[1]


def index_of(*roots: Path) -> SuggestIndex:
    return SuggestIndex.read(catalog(*roots), EvidenceCache())


MEANING = SemanticModel()
_MEANINGS: weakref.WeakKeyDictionary[SuggestIndex, SemanticIndex] = weakref.WeakKeyDictionary()


def meaning(index: SuggestIndex, request: str) -> Sequence[float]:
    """The semantic stage's similarities of ``index``'s skills to ``request``, as the daemon
    computes them (on by default)."""
    if index not in _MEANINGS:
        _MEANINGS[index] = SemanticIndex(MEANING, index.skills)
    return _MEANINGS[index](request)


def decide(index: SuggestIndex, request: str) -> list[tuple[str, bool, bool]]:
    """The top three as ``skills.suggest`` marks them by default: (name, activate,
    candidate)."""
    ranked = index.rank(request, similarity=meaning(index, request), limit=3)
    marks = verdicts(
        [s.score for s in ranked],
        DEFAULT_THRESHOLD,
        CANDIDATE_THRESHOLD,
        foreign=[bool(s.foreign) for s in ranked],
    )
    return [(s.skill.name, m.activate, m.candidate) for s, m in zip(ranked, marks, strict=True)]


def offered(index: SuggestIndex, request: str) -> dict[str, str]:
    """The skills activated or offered as candidates for ``request``, with which."""
    return {
        name: "activate" if on else "candidate"
        for name, on, near in decide(index, request)
        if on or near
    }


# -- what the index reads -----------------------------------------------------------------------


def test_evidence_is_the_body_outline_resource_names_and_trigger_queries(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "release-desk",
        "Helps with releases.",
        body="Intro paragraph about changelogs.\n\n```sh\n# not a heading\nsecret-word\n```\n"
        "## Tagging a version\nBump the semver tag.\nSecond line.\n\nA later paragraph.\n",
    )
    (skill / "scripts").mkdir()
    (skill / "scripts" / "bump_version.py").write_text("")
    (skill / "references").mkdir()
    (skill / "references" / "semver-rules.md").write_text("")
    (skill / "evals").mkdir()
    (skill / "evals" / "triggers.json").write_text(
        json.dumps(
            [
                {"query": "cut a new release", "should_trigger": True},
                {"query": "release the hostages", "should_trigger": False},
                {"query": "", "should_trigger": True},  # not a case: left out
            ]
        )
    )
    (found,) = catalog(tmp_path)
    evidence = read_evidence(found)
    assert evidence.headings == "Tagging a version"
    assert (
        evidence.paragraphs == "Intro paragraph about changelogs. Bump the semver tag. Second line."
    )
    assert "secret-word" not in evidence.paragraphs + evidence.headings  # code is not prose
    assert evidence.resources == "bump_version semver-rules"
    assert evidence.positives == ("cut a new release",)
    assert evidence.negatives == ("release the hostages",)


def test_evidence_reads_are_bounded_and_never_wait(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "big",
        "A big skill.",
        body="# Early heading\n\n" + "filler text\n" * (BODY_BYTES // 12) + "# Late heading\n",
    )
    (skill / "evals").mkdir()
    os.mkfifo(skill / "evals" / "triggers.json")  # a FIFO is never opened for reading
    (found,) = catalog(tmp_path)
    evidence = read_evidence(found)
    assert "Early" in evidence.headings and "Late" not in evidence.headings
    assert evidence.positives == () and evidence.negatives == ()


def test_evidence_is_read_again_only_when_a_file_changed(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "notes", "Take notes.", body="# Meeting minutes\n")
    (found,) = catalog(tmp_path)
    cache = EvidenceCache()
    first = cache.get(found)
    assert cache.get(found) is first
    (skill / "scripts").mkdir()
    (skill / "scripts" / "export_minutes.py").write_text("")
    again = cache.get(found)
    assert again is not first and again.resources == "export_minutes"
    (skill / "SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\n# Agendas\n")
    assert cache.get(found).headings == "Agendas"


def test_the_body_and_resources_make_a_skill_findable(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "db-helper",
        "Helps with the database.",
        body="# Writing migrations\nEach migration is reversible.\n",
    )
    write_skill(tmp_path, "charts", "Draws charts from tables.")
    index = index_of(tmp_path)
    (first, *_) = index.rank("add a reversible migration", explain=1)
    assert first.skill.name == "db-helper"
    assert set(first.matched) >= {"headings", "body"}


def test_a_vocabulary_heavy_description_does_not_win_by_breadth(tmp_path: Path) -> None:
    words = (
        "api sdk client server request response stream token model prompt webhook queue cache "
        "database schema migration deploy build test lint format release version branch merge "
        "review comment issue ticket sprint plan spec design layout theme color font chart "
        "table csv json yaml markdown pdf slides poster image video audio email calendar"
    )
    write_skill(tmp_path, "everything-kit", f"Covers {words} and more.")
    write_skill(tmp_path, "csv-charts", "Draw a chart from a CSV table.")
    ranked = index_of(tmp_path).rank("draw a chart from my csv table of sales")
    assert [s.skill.name for s in ranked[:2]] == ["csv-charts", "everything-kit"]
    assert ranked[1].score < DEFAULT_THRESHOLD < ranked[0].score


def test_a_word_of_the_skill_counts_for_one_word_of_the_request(tmp_path: Path) -> None:
    write_skill(tmp_path, "sprint-kickoff", "Plan the sprint with the team.")
    index = index_of(tmp_path)
    (alone,) = index.rank("plan", explain=1)
    # "outline" is of the same task group as "plan", but the skill's one "plan" already
    # counted for the request's own "plan": it does not count again for "outline".
    (both,) = index.rank("plan outline", explain=1)
    assert both.score == pytest.approx(alone.score / 2)
    assert both.matched == {"description": ["plan"]}
    # Alone, "outline" finds the skill through "plan", for less than the word itself.
    (related,) = index.rank("outline", explain=1)
    assert related.score == pytest.approx(RELATED_FACTOR * alone.score)
    assert related.matched == {"description": ["outline (~plan)"]}
    # Two request words of one group share the skill's one word: the first takes it.
    (two,) = index.rank("outline roadmap", explain=1)
    assert two.score == pytest.approx(related.score / 2)


def test_a_word_most_published_skills_use_counts_for_less(tmp_path: Path) -> None:
    # The background is fixed (published skills, not the installed ones): "use" is in nearly
    # every skill, "deploy" in some, "mandala" in almost none.
    assert word_rarity(word_form("use")) == COMMON_FLOOR
    assert COMMON_FLOOR < word_rarity(word_form("deploy")) < 1.0
    assert word_rarity(word_form("mandala")) == 1.0
    # It is keyed by today's word forms ("databases" and "themes" fold to listed forms).
    assert word_rarity(word_form("databases")) < 1.0 and word_rarity(word_form("themes")) < 1.0
    write_skill(tmp_path, "file-helper", "Use this to create, copy and move files and folders.")
    write_skill(tmp_path, "mandala-art", "Draw mandala patterns.")
    index = index_of(tmp_path)
    ranked = {s.skill.name: s.score for s in index.rank("create a mandala and move it")}
    # Without the discount the helper's "create" and "move" outweighed the one "mandala".
    assert ranked["mandala-art"] > ranked["file-helper"]


def test_a_trailing_skills_in_a_name_says_nothing_about_the_skill(tmp_path: Path) -> None:
    """Every skill is one: "mobile-ui-skills" is about mobile UI, "skill-creator" about skills."""
    write_skill(tmp_path / "a", "mobile-ui-skills", "Guidelines for mobile screens.")
    write_skill(tmp_path / "b", "skill-creator", "Create and improve agent instructions.")
    index = index_of(tmp_path)
    ranked = index.rank("write a new skill", explain=2)
    assert [s.skill.name for s in ranked] == ["skill-creator"]
    assert index.rank("mobile ui screens")[0].skill.name == "mobile-ui-skills"
    assert index.rank("use the mobile-ui-skills skill")[0].named


def test_a_skills_own_negative_queries_do_not_activate_it(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path / "a", "db-migrations", "Write and run database schema migrations."
    )
    negatives = ["migrate my photos to a new phone", "write database schema migrations for mongodb"]
    (skill / "evals").mkdir()
    (skill / "evals" / "triggers.json").write_text(
        json.dumps(
            [{"query": "add a column to the users table", "should_trigger": True}]
            + [{"query": q, "should_trigger": False} for q in negatives]
        )
    )
    write_skill(tmp_path / "b", "db-migrations", "Write and run database schema migrations.")
    with_triggers = index_of(tmp_path / "a")
    without = index_of(tmp_path / "b")
    # Without its triggers the skill activates on the second; with them, on neither.
    assert ("db-migrations", True, False) in decide(without, negatives[1])
    for query in negatives:
        assert not any(on for _, on, _ in decide(with_triggers, query)), query
    # A positive query activates it although it shares no word with its description.
    assert decide(with_triggers, "add a column to the users table")[0][:2] == (
        "db-migrations",
        True,
    )


# -- the published skills: the misses the issue names ------------------------------------------


@needs_corpora
def test_ship_to_production_offers_deploy_to_vercel(tmp_path: Path) -> None:
    """The docs' own example, with only Vercel's deploy skill installed and with the corpus."""
    alone = tmp_path / "skills"
    shutil.copytree(CORPORA / "vercel-agent-skills" / "skills" / "deploy-to-vercel", alone / "d")
    request = "ship the project to production"
    assert "deploy-to-vercel" in offered(index_of(alone), request)
    assert "deploy-to-vercel" in offered(index_of(CORPORA), request)


@needs_corpora
def test_a_red_actions_build_is_gh_fix_ci() -> None:
    index = index_of(CORPORA)
    first = decide(index, "the GitHub Actions build on my PR is red")[0]
    assert first == ("gh-fix-ci", True, False)


@needs_corpora
def test_a_slack_announcement_is_internal_comms() -> None:
    index = index_of(CORPORA)
    request = "write a slack announcement for the team about the new release"
    assert "internal-comms" in offered(index, request)


@needs_corpora
def test_the_semantic_stage_offers_what_words_alone_miss() -> None:
    """Requests of the tuning set that share too few words with the skill they need: on words
    alone nothing is offered; with the semantic stage (the default) the skill is."""
    index = index_of(CORPORA)
    for request, skill in (
        (
            "I keep pasting the same 30 lines of instructions every time I do DB migrations, "
            "can we package that so the agent just knows",
            "skill-creator",
        ),
        (
            "build the signup page for my ceramics studio site, want it to feel bespoke and "
            "opinionated",
            "frontend-design",
        ),
    ):
        ranked = index.rank(request, limit=3)
        marks = verdicts([s.score for s in ranked], DEFAULT_THRESHOLD, CANDIDATE_THRESHOLD)
        assert not any(m.activate or m.candidate for m in marks), request
        assert skill in offered(index, request), request


@needs_corpora
def test_an_unrelated_request_gets_neither_activation_nor_candidates() -> None:
    index = index_of(CORPORA)
    for request in ("what is the capital of Australia", "a banana bread recipe please"):
        assert offered(index, request) == {}, request


@needs_corpora
def test_activation_is_the_same_with_1000_unrelated_skills_added(tmp_path: Path) -> None:
    """The corpus alone and the corpus plus 1 000 generated skills (bench/gen_corpus.py) give
    each corpus skill the same score, so the same activation, on every request of the sets,
    with the semantic stage as without it."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from gen_corpus import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate(tmp_path / "generated", 1000, seed=3)
    small = index_of(CORPORA)
    big = index_of(CORPORA, tmp_path / "generated")
    assert len(big) > len(small) + 900
    corpus = {s.path for s in small.skills}
    requests = [
        row["query"]
        for name in ("suggest_set.json", "suggest_tune.json")
        for row in json.loads((ROOT / "bench" / name).read_text())
    ]
    changed = []
    for request in requests:
        alone = {
            s.skill.path: s.score for s in small.rank(request, similarity=meaning(small, request))
        }
        among = {
            s.skill.path: s.score
            for s in big.rank(request, similarity=meaning(big, request))
            if s.skill.path in corpus
        }
        if alone != among:
            changed.append(request)
        on_alone = {p for p, score in alone.items() if round(score, 2) >= DEFAULT_THRESHOLD}
        on_among = {p for p, score in among.items() if round(score, 2) >= DEFAULT_THRESHOLD}
        assert on_alone == on_among, request
    assert changed == []
    assert len(requests) > 300


# -- what hosts see -----------------------------------------------------------------------------


def test_candidates_are_offered_only_when_nothing_activates() -> None:
    marks = verdicts([0.45, 0.4, 0.3, 0.2], 0.5, 0.36)
    assert [(m.activate, m.candidate) for m in marks] == [
        (False, True),
        (False, True),
        (False, False),  # under the candidate threshold
        (False, False),
    ]
    active = verdicts([0.6, 0.45], 0.5, 0.36)
    assert [(m.activate, m.candidate) for m in active] == [(True, False), (False, False)]
    # A skill clearly behind the best one is neither; a loaded one is never either.
    assert [m.candidate for m in verdicts([0.48, 0.37], 0.5, 0.36)] == [True, False]
    held = verdicts([0.7, 0.45], 0.5, 0.36, held=[True, False])
    assert [(m.activate, m.candidate) for m in held] == [(False, False), (False, False)]
    # The best one decides whether anything is offered; those close to it come with it.
    siblings = verdicts([0.4, 0.33, 0.31, 0.2], 0.5, 0.36)
    assert [m.candidate for m in siblings] == [True, True, True, False]
    assert not any(m.candidate for m in verdicts([0.35, 0.34], 0.5, 0.36))
    # A skill that never mentions a technology the request names is not offered; the others
    # near the best still are, and activation is not touched.
    elsewhere = verdicts([0.4, 0.38, 0.35], 0.5, 0.36, foreign=[True, False, False])
    assert [m.candidate for m in elsewhere] == [False, True, True]
    assert verdicts([0.6], 0.5, 0.36, foreign=[True])[0].activate


def test_one_skill_far_ahead_is_offered_alone_under_the_candidate_threshold() -> None:
    """Under the candidate threshold a best skill is offered only when it leads every other by
    LEAD: weak evidence, but for one skill; a request that fits nothing scores several alike."""
    lead = [m.candidate for m in verdicts([0.33, 0.17, 0.1], 0.6, 0.38)]
    assert lead == [True, False, False]
    assert LEAD_FLOOR <= 0.33 < CANDIDATE_THRESHOLD and LEAD <= 0.33 - 0.17
    assert not any(m.candidate for m in verdicts([0.33, 0.2], 0.6, 0.38))  # a close runner-up
    assert not any(m.candidate for m in verdicts([0.29, 0.05], 0.6, 0.38))  # under the floor
    assert not verdicts([0.33, 0.1], 0.6, 0.38, held=[True, False])[0].candidate
    assert not verdicts([0.33, 0.1], 0.6, 0.38, foreign=[True, False])[0].candidate
    # The runner-up is found wherever it is; a lone skill leads nothing scored.
    assert [m.candidate for m in verdicts([0.1, 0.33], 0.6, 0.38)] == [False, True]
    assert verdicts([0.33], 0.6, 0.38)[0].candidate


def test_a_close_fit_is_offered_whatever_technology_the_request_names() -> None:
    """From FOREIGN_CANDIDATE, a skill that never mentions the request's technology is still
    offered: so close a fit is about the request's subject."""
    marks = verdicts([FOREIGN_CANDIDATE, 0.45], 0.6, 0.38, foreign=[True, False])
    assert [m.candidate for m in marks] == [True, True]
    under = verdicts([FOREIGN_CANDIDATE - 0.01, 0.45], 0.6, 0.38, foreign=[True, False])
    assert [m.candidate for m in under] == [False, True]


@needs_corpora
def test_terse_and_platform_naming_requests_reach_their_skill() -> None:
    """Two requests the candidate threshold and the technology rule used to turn away."""
    index = index_of(CORPORA)
    assert offered(index, "whats in my linear queue rn") == {"linear": "candidate"}
    request = (
        "we want the balance card on ios/android to flip when you tap it, and it needs to stay"
        " at 60fps even when the JS thread is busy with the sync"
    )
    (best, *_) = index.rank(request, similarity=meaning(index, request), limit=3)
    assert best.skill.name == "vercel-react-native-skills" and best.foreign
    assert offered(index, request).get("vercel-react-native-skills") == "candidate"


@needs_corpora
def test_a_question_about_another_technology_is_offered_no_skill() -> None:
    index = index_of(CORPORA)
    request = "convert this vue 2 options api component to the composition api"
    ranked = index.rank(request, similarity=meaning(index, request), limit=3)
    # It shares "composition" and "component" with a React skill, and some of its meaning:
    # enough for a candidate by score alone...
    assert ranked[0].skill.name == "vercel-composition-patterns"
    assert ranked[0].score >= CANDIDATE_THRESHOLD and ranked[0].foreign == ("vue",)
    assert verdicts([s.score for s in ranked], DEFAULT_THRESHOLD, CANDIDATE_THRESHOLD)[0].candidate
    # ...but it is about Vue, which that skill never mentions.
    assert offered(index, request) == {}


def test_ordinary_words_that_look_like_technology_names_name_none(tmp_path: Path) -> None:
    write_skill(tmp_path, "kanban-board", "Build an interactive kanban board for the chat.")
    index = index_of(tmp_path)
    # "window" is the matching form of "windows"; "prettier" and "bootstrap" are ordinary words
    # as often: none of them makes the skill a guess about another technology.
    for request in (
        "build me a kanban board I can use right inside the chat window",
        "make the kanban board prettier",
        "bootstrap a kanban board for the chat",
    ):
        (hit,) = index.rank(request, limit=1)
        assert hit.skill.name == "kanban-board" and hit.foreign == (), request
    # A technology the skill never mentions still counts.
    (hit,) = index.rank("build a kanban board for the chat in svelte", limit=1)
    assert hit.foreign == ("svelte",)


def test_the_daemon_marks_candidates(client: Client, tree: dict[str, Path]) -> None:
    write_skill(
        tree["skills"],
        "changelog-writer",
        "Keep CHANGELOG.md in the keep-a-changelog format.",
        body="# Sections\nAdded, changed, fixed.\n",
    )
    result = client.ok("skills.suggest", prompt="keep a list of what changed")
    hits = {s["skill"]["name"]: s for s in result["suggestions"]}
    hit = hits["changelog-writer"]
    assert hit["activate"] is False and hit["candidate"] is True
    assert CANDIDATE_THRESHOLD <= hit["score"] < DEFAULT_THRESHOLD
    quiet = client.ok("skills.suggest", prompt="what is the capital of Australia")
    assert not any(s["activate"] or s["candidate"] for s in quiet["suggestions"])


def test_the_daemon_judges_a_lead_against_the_runner_up_at_any_limit(
    client: Client, tree: dict[str, Path]
) -> None:
    """``limit: 1`` shows one suggestion, but whether it leads is judged against the next."""
    write_skill(
        tree["skills"],
        "changelog-writer",
        "Keep CHANGELOG.md in the keep-a-changelog format.",
        body="# Sections\nAdded, changed, fixed.\n",
    )
    write_skill(
        tree["skills"],
        "changelog-check",
        "Check that CHANGELOG.md has an entry for every user-visible change on this branch.",
    )
    for limit in (1, 3):
        result = client.ok("skills.suggest", prompt="what changed since friday", limit=limit)
        first = result["suggestions"][0]
        assert len(result["suggestions"]) == limit
        assert first["skill"]["name"] == "changelog-check"
        assert LEAD_FLOOR <= first["score"] < CANDIDATE_THRESHOLD
        assert not any(s["candidate"] or s["activate"] for s in result["suggestions"]), limit


def test_the_daemon_says_which_technology_a_skill_never_mentions(
    client: Client, tree: dict[str, Path]
) -> None:
    write_skill(
        tree["skills"],
        "notes-drafter",
        "Draft release notes from the merged pull requests.",
        body="# Sections\nAdded, changed, fixed.\n",
    )

    def hit(prompt: str) -> dict[str, Any]:
        result = client.ok("skills.suggest", prompt=prompt)
        (found,) = [s for s in result["suggestions"] if s["skill"]["name"] == "notes-drafter"]
        return found

    lock = hit("release the redis lock once merged")
    assert CANDIDATE_THRESHOLD <= lock["score"] < DEFAULT_THRESHOLD
    assert lock["candidate"] is False and lock["activate"] is False
    assert "never mentions: redis" in lock["reasons"]
    # The command line says why it is not a candidate.
    out = run_tree_cli(tree, "suggest", "release the redis lock once merged")
    assert "notes-drafter" in out.stdout and "(not offered)" in out.stdout, out.stdout
    assert "never mentions: redis" in out.stdout
    # A skill that fits well still activates: the rule is about guesses only.
    notes = hit("draft the release notes from the merged pull requests of our redis fork")
    assert notes["activate"] is True and "never mentions: redis" in notes["reasons"]


def _suggestion(name: str, activate: bool, candidate: bool) -> Suggestion:
    skill = SkillMetadata(
        id=name,
        name=name,
        description=f"Does {name} things.\nLine two.",
        path=f"/home/u/.agents/skills/{name}/SKILL.md",
        dir=f"/home/u/.agents/skills/{name}",
        scope="user",
        root="/home/u/.agents/skills",
        mtime_ms=0,
        size=1,
        enabled=True,
        resources={"scripts": 0, "references": 0, "assets": 0, "other": 0},  # type: ignore[arg-type]
        diagnostics=[],
    )
    return Suggestion(
        skill=skill,
        score=0.4,
        activate=activate,
        loaded=False,
        candidate=candidate,
        reasons=["description: things"],
    )


def test_the_hook_names_candidates_briefly_and_asks_to_check() -> None:
    output = hook_output(
        "claude-code", [_suggestion("alpha", False, True), _suggestion("beta", False, False)]
    )
    assert output is not None
    context = output["hookSpecificOutput"]["additionalContext"]
    first, *entries = context.split("\n")
    assert "before you start, check whether one applies" in first
    assert entries == [
        '- alpha: "Does alpha things. Line two." (/home/u/.agents/skills/alpha/SKILL.md)'
    ]
    # Activated skills take the place of candidates; neither: nothing is said.
    active = hook_output("codex", [_suggestion("alpha", True, False)])
    assert active is not None
    assert (
        "read each one's SKILL.md before you start"
        in (active["hookSpecificOutput"]["additionalContext"])
    )
    assert hook_output("gemini", [_suggestion("beta", False, False)]) is None
