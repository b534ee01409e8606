"""Which skills a prompt catalog keeps within a token budget, chosen by relevance
(docs/embedding.md).

Pure decisions over a catalog's skills;
:func:`skillsd.core.catalog.catalog_prompt.render_catalog_within` renders them. The rules:

- the budget is ``tokens``, or ``percent`` (default 2) of ``contextWindow`` (as Codex sizes its
  skill list); a token is estimated as 4 UTF-8 bytes, rounded up;
- a skill with ``paths`` globs (docs/conformance.md) is shown only while one of them matches an
  active file, when active files are given; globs follow gitignore semantics, relative to the
  repository root (:mod:`skillsd.core.catalog.path_globs`, which matches without backtracking);
- skills are considered in priority order: those whose ``paths`` matched first, then by
  relevance to ``query`` (the search ranking), then the rest in catalog order; each
  keeps its full description while it fits, then its name alone, then it is omitted;
- whatever is kept is printed in catalog order, so an unchanged catalog gives byte-identical
  text (a host's prompt cache stays valid).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from skillsd.core.catalog.path_globs import compile_globs, globs_match, split_path
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import PromptBudget

__all__ = [
    "Choice",
    "EntryState",
    "budget_tokens",
    "choose_entries",
    "estimate_tokens",
    "paths_matcher",
]

EntryState = Literal["full", "name"]


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as the context budget estimates them: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def budget_tokens(budget: PromptBudget) -> int | None:
    """The budget in tokens (None: no budget given in it)."""
    if budget.tokens is not None:
        return budget.tokens
    if budget.context_window is not None:
        return max(1, int(budget.context_window * budget.percent / 100))
    return None


def _relative(path: str, repo_root: str) -> str | None:
    absolute = path if os.path.isabs(path) else os.path.join(repo_root, path)
    rel = os.path.relpath(os.path.normpath(absolute), repo_root)
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return None  # outside the repository: no glob of it can match
    return rel.replace(os.sep, "/")


def paths_matcher(active_files: Iterable[str], repo_root: str) -> Callable[[SkillMetadata], bool]:
    """Whether a skill's ``paths`` globs match one of ``active_files`` (absolute, or relative
    to ``repo_root``). A skill without ``paths`` never matches."""
    why = paths_match_reason(active_files, repo_root)
    return lambda skill: why(skill) is not None


def paths_match_reason(
    active_files: Iterable[str], repo_root: str
) -> Callable[[SkillMetadata], str | None]:
    """For a skill, which of its ``paths`` globs matches which active file (``"**/*.sql
    matches db/report.sql"``), or None when none does."""
    # Each file is split once; the globs, compiled once per distinct set (copies share one).
    files = [
        (rel, split_path(rel)) for f in active_files if (rel := _relative(f, repo_root)) is not None
    ]
    cache: dict[tuple[str, ...], str | None] = {}

    def reason(skill: SkillMetadata) -> str | None:
        texts = tuple(skill.host.paths or ()) if skill.host is not None else ()
        if not texts:
            return None
        if texts not in cache:
            globs = compile_globs(texts)
            hit = next((f for f in files if globs_match(globs, f[1])), None)
            cache[texts] = None if hit is None else f"{_glob_for(texts, hit[1])} matches {hit[0]}"
        return cache[texts]

    return reason


def _glob_for(texts: tuple[str, ...], names: tuple[str, ...]) -> str:
    """The first of the globs ``texts`` that matches the file alone (a negated glob may be
    needed for the whole set, so the set's answer is the one that counts)."""
    return next((t for t in texts if globs_match(compile_globs([t]), names)), texts[0])


@dataclass(frozen=True, slots=True)
class Choice:
    """The kept skills (index into the candidates -> full description or name only); the
    rest are omitted."""

    kept: dict[int, EntryState]


def choose_entries(
    count: int,
    priority: Sequence[int],
    *,
    full_size: Callable[[int], int],
    name_size: Callable[[int], int],
    room: int,
    most: int | None = None,
) -> Choice:
    """Walk ``priority`` (indexes of the ``count`` candidates, most important first; the rest
    follow in index order) and keep each with its full entry while it fits in ``room`` bytes,
    then with its name alone, then not at all; at most ``most`` are kept."""
    order = list(dict.fromkeys([*priority, *range(count)]))
    kept: dict[int, EntryState] = {}
    used = 0
    describing = True
    for index in order:
        if most is not None and len(kept) >= most:
            break
        if describing:
            size = full_size(index)
            if used + size <= room:
                kept[index] = "full"
                used += size
                continue
            describing = False
        size = name_size(index)
        if used + size > room:
            break
        kept[index] = "name"
        used += size
    return Choice(kept)
