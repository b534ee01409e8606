"""Profiles: which skills an agent shows its model in full, by name only or not at all in one
project, so that the skills that matter here keep their descriptions (docs/agents.md,
"Profiles"). Pure: the repository's facts, the agent's skills and settings in; a plan out.

What matters here, in order: the skills the user pinned (``profiles.pinned``), then each
skill's relevance to the repository, scored by the suggestion ranker
(:class:`~skillsd.core.catalog.suggest.SuggestIndex`) against a request made of the repository's
languages, file names and README, plus a bonus when a skill's ``paths`` globs match one of its
files. A skill scoring at least half the best score is relevant. A skill used in this
repository (skillsd's use ledger, and Claude Code's transcripts when the user allows them) is
relevant whatever its words: its score is raised to at least that half, and more for more uses,
but never above the best match, so that use alone does not push the matched skills out.

For Claude Code the plan changes nothing when every relevant skill already keeps its
description. Otherwise it sets the fewest of the least relevant others ``name-only`` that it
takes; if names alone overflow, it also hides the least relevant others from the model
(``user-invocable-only``: still a slash command); and last drops the least relevant unpinned
relevant ones to names, until the modelled listing shows every remaining relevant skill in
full. A skill the user set a key for is left as the user set it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from skillsd.core.catalog.path_globs import compile_globs, globs_match, split_path
from skillsd.core.catalog.suggest import SuggestIndex
from skillsd.core.listing.agent_listing import (
    ClaudeCodeSettings,
    Listing,
    Shown,
    claude_code_listing,
)
from skillsd_protocol import SkillMetadata

__all__ = [
    "LANGUAGES",
    "Choice",
    "Plan",
    "RepoFacts",
    "plan_claude_code",
    "relevance",
    "repository_request",
]

#: File endings and the words that name their language or tool.
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".rs": "rust cargo",
    ".go": "go golang",
    ".ts": "typescript javascript",
    ".tsx": "typescript react",
    ".js": "javascript",
    ".jsx": "javascript react",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".php": "php",
    ".cs": "csharp dotnet",
    ".c": "c",
    ".cpp": "cpp",
    ".swift": "swift",
    ".sql": "sql database",
    ".tf": "terraform",
    ".md": "markdown",
    ".ipynb": "jupyter notebook",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".proto": "protobuf",
}
#: Whole file names that say what a project is.
_MANIFESTS: dict[str, str] = {
    "pyproject.toml": "python packaging",
    "package.json": "javascript npm",
    "cargo.toml": "rust crates",
    "go.mod": "go modules",
    "dockerfile": "docker",
    "makefile": "make",
    "alembic.ini": "database migrations",
}
#: At most this much README goes into the request (it is repository-controlled text).
MAX_README_CHARS = 8192
#: The share of the best score a skill needs to count as relevant.
RELEVANT_SHARE = 0.5
#: What a skill's uses here add to its score: this times ln(1 + uses), as a share of the best.
USE_STEP = 0.1


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """What a profile knows of a repository: its README's text and its files (relative POSIX
    paths, bounded by the reader)."""

    readme: str
    files: tuple[str, ...]


def repository_request(facts: RepoFacts) -> str:
    """The repository as a request for the ranker: its languages and tools (by file ending
    and manifest), its folder and file names, and its README."""
    words: dict[str, None] = {}
    for path in facts.files:
        name = path.rsplit("/", 1)[-1].lower()
        words.setdefault(_MANIFESTS.get(name, ""), None)
        words.setdefault(LANGUAGES.get(os.path.splitext(name)[1], ""), None)
    words.pop("", None)
    return " ".join(words) + "\n" + facts.readme[:MAX_README_CHARS]


def relevance(
    skills: Sequence[SkillMetadata], facts: RepoFacts, uses: Mapping[str, int] | None = None
) -> dict[str, tuple[float, str]]:
    """Each skill's relevance to the repository (id -> (score, why)); skills with none are
    absent. ``uses``: how often each skill (by name) was used here, when known; a used skill
    is relevant (see the module's docstring)."""
    files = [split_path(f) for f in facts.files]

    def paths_match(skill: SkillMetadata) -> str | None:
        patterns = skill.host.paths if skill.host is not None else None
        if not patterns:
            return None
        globs = compile_globs(patterns)
        hit = next((f for f in files if globs_match(globs, f)), None)
        return None if hit is None else "/".join(hit)

    found: dict[str, tuple[float, str]] = {}
    for scored in SuggestIndex(skills).rank(repository_request(facts), paths_match=paths_match):
        words = sorted(
            {w for field in ("name", "tags", "description") for w in scored.matched.get(field, [])}
        )
        why = f"the repository mentions {', '.join(words[:4])}" if words else ""
        if "paths" in scored.matched:
            why = f"its paths match {scored.matched['paths'][0]}" + (f"; {why}" if why else "")
        found[scored.skill.id] = (scored.score, why)
    # Use is measured against the best match (or 1 when nothing matches), so that a used skill
    # clears the relevance bar and stays at or under the best.
    base = max((score for score, _ in found.values()), default=0.0) or 1.0
    for skill in skills:
        count = (uses or {}).get(skill.name, 0)
        if count > 0:
            score, why = found.get(skill.id, (0.0, ""))
            bonus = min(1 - RELEVANT_SHARE, USE_STEP * math.log1p(count))
            raised = min(base, max(score, RELEVANT_SHARE * base) + bonus * base)
            said = f"used {count} time{'s' if count != 1 else ''} here"
            found[skill.id] = (raised, f"{why}; {said}" if why else said)
    return found


@dataclass(frozen=True, slots=True)
class Choice:
    """What the plan shows the model of one skill."""

    name: str
    skill_id: str | None
    shown: Shown
    why: str
    score: float | None
    pinned: bool


@dataclass(frozen=True, slots=True)
class Plan:
    """One agent's plan: the keys to write (name -> the agent's own value), the listing
    before and as it will be, and every choice."""

    changes: dict[str, str]
    before: Listing
    after: Listing
    choices: tuple[Choice, ...]


def _with(settings: ClaudeCodeSettings, changes: Mapping[str, str]) -> ClaudeCodeSettings:
    overrides = {**changes, **settings.overrides}  # the user's own keys win
    sources = {**{n: "the profile" for n in changes}, **settings.override_sources}
    return replace(settings, overrides=overrides, override_sources=sources)


def plan_claude_code(
    skills: Sequence[SkillMetadata],
    settings: ClaudeCodeSettings,
    scores: Mapping[str, tuple[float, str]],
    *,
    pinned: Sequence[str] = (),
    context_window: int | None = None,
    usage: Mapping[str, float] | None = None,
) -> Plan:
    """Claude Code's plan for ``skills`` (its view here) under the user's ``settings`` (without
    the profile's own keys), ``scores`` from :func:`relevance` and the ``pinned`` names."""

    def listing(changes: Mapping[str, str]) -> Listing:
        return claude_code_listing(
            skills, _with(settings, changes), context_window=context_window, usage=usage
        )

    before = listing({})
    listed = [e for e in before.entries if not e.bundled and e.shown in ("full", "name-only")]
    by_id = {s.id: s for s in skills}
    pins = set(pinned)
    best = max((score for score, _ in scores.values()), default=0.0)

    def score(entry_id: str | None) -> float:
        return scores.get(entry_id or "", (0.0, ""))[0]

    # Only skills without a key of the user's are the profile's to choose.
    free = [e for e in listed if e.name not in settings.overrides and e.id in by_id]
    relevant = [
        e for e in free if e.name in pins or (best > 0 and score(e.id) >= RELEVANT_SHARE * best)
    ]
    relevant.sort(key=lambda e: (e.name not in pins, -score(e.id)))
    wanted = {e.name for e in relevant}
    others = sorted((e for e in free if e.name not in wanted), key=lambda e: score(e.id))
    changes: dict[str, str] = {}

    def all_full(changes: Mapping[str, str], keep: set[str]) -> bool:
        shown = {e.name: e.shown for e in listing(changes).entries}
        return all(shown.get(name) == "full" for name in keep)

    def fewest(value: str, base: Mapping[str, str]) -> int:
        """How many of the least relevant others must take ``value`` for every relevant skill
        to keep its description (``len(others) + 1``: not even all of them)."""
        lo, hi = 0, len(others) + 1
        while lo < hi:
            mid = (lo + hi) // 2
            trial = {**base, **{e.name: value for e in others[:mid]}}
            if mid <= len(others) and all_full(trial, wanted):
                hi = mid
            else:
                lo = mid + 1
        return lo

    if not all_full(changes, wanted):
        count = fewest("name-only", changes)
        if count <= len(others):
            changes = {e.name: "name-only" for e in others[:count]}
        else:
            # Names alone overflow: hide the least relevant others from the model as well.
            changes = {e.name: "name-only" for e in others}
            count = fewest("user-invocable-only", changes)
            changes.update({e.name: "user-invocable-only" for e in others[:count]})
    if not all_full(changes, wanted):
        # Still too many: keep the most relevant (pins first) that fit, the rest by name.
        lo, hi = 0, len(relevant)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            keep = {e.name for e in relevant[:mid]}
            trial = {**changes, **{e.name: "name-only" for e in relevant[mid:]}}
            if all_full(trial, keep):
                lo = mid
            else:
                hi = mid - 1
        changes.update({e.name: "name-only" for e in relevant[lo:] if e.name not in pins})
    after = listing(changes)
    shown_after = {e.name: e.shown for e in after.entries}
    choices = []
    for entry in free:
        value = score(entry.id)
        why = scores.get(entry.id or "", (0.0, ""))[1]
        pinned_here = entry.name in pins
        if pinned_here:
            why = "pinned" + (f"; {why}" if why else "")
        elif entry.name in wanted:
            why = why or "relevant here"
        else:
            why = "not relevant here" if not why else f"less relevant here ({why})"
        choices.append(
            Choice(
                entry.name,
                entry.id,
                shown_after.get(entry.name, "user-only"),
                why,
                round(value, 4) if value else None,
                pinned_here,
            )
        )
    return Plan(changes, before, after, tuple(choices))
