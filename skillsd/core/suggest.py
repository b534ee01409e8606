"""Which skills fit a user's request (``skills.suggest``, docs/hooks.md): a score in 0..1 that
means the same thing whatever the catalog, and ``activate`` above a threshold.

The score is **coverage**: the share of the request's informative words (its stems, less the
words every request has: "please", "help", "the", ...) that the skill's own fields contain,
each word weighted by how rare it is in the catalog (inverse document frequency), and each
field by how much it says about the skill (name 1.0, tags 0.9, description and ``when_to_use``
0.8). A word no skill has counts fully against every skill, so a request about something no
skill covers scores low everywhere, which lets a host tell "use this" from "nothing fits".
Naming the skill (``pdf-forms``, "pdf forms") scores at least :data:`NAMED_SCORE`; a skill whose
``paths`` match a file being worked on gains :data:`PATHS_BONUS`.

Built once per catalog (:class:`SuggestIndex`); a query costs one pass over the postings of its
few stems.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.search import parse_tags, stem, tokenize
from skillsd_protocol import SkillMetadata

__all__ = [
    "DEFAULT_THRESHOLD",
    "MAX_ACTIVE_FILES",
    "MAX_ACTIVE_FILE_BYTES",
    "NAMED_SCORE",
    "PATHS_BONUS",
    "SEMANTIC_FLOOR",
    "SEMANTIC_WEIGHT",
    "Scored",
    "SuggestIndex",
    "check_active_files",
    "request_stems",
]

#: ``suggest.threshold``'s default: chosen on bench/suggest_set.json so that requests no skill
#: covers activate nothing (docs/benchmarks.md, "Suggestions").
DEFAULT_THRESHOLD = 0.4
#: The least score of a skill the request names.
NAMED_SCORE = 0.9
#: What a ``paths`` match with an active file adds.
PATHS_BONUS = 0.15
#: ``activeFiles`` bounds: each file is matched against every skill's ``paths`` globs, so these
#: bound what one request can cost.
MAX_ACTIVE_FILES = 1000
MAX_ACTIVE_FILE_BYTES = 4096
#: The optional semantic stage (``skillsd[semantic]``): a cosine similarity over
#: :data:`SEMANTIC_FLOOR` adds :data:`SEMANTIC_WEIGHT` times the excess to the score. Chosen on
#: bench/suggest_set.json: it lifts paraphrased and indirect requests without activating
#: unrelated ones (docs/benchmarks.md, "Suggestions").
SEMANTIC_WEIGHT = 0.4
SEMANTIC_FLOOR = 0.2

#: Field weights: what a word in that field says about the skill.
_NAME, _TAGS, _TEXT = 1.0, 0.9, 0.8

#: Words of any request: they say nothing about which skill fits.
_FILLER_WORDS = """
a about after all also am an and any are as at be been being but by can could did do does
doing done for from get got had has have having he her here him his how i if in into is it
its just let like me mine more most my need needs no not now of off on once one only or our
out over own please same she should so some such than that the their them then there these
they this those through to too under until up us very want wants was we were what when
where which while who why will with would you your yours help make sure thing things stuff
way something using use used via new good best quick quickly really able
"""
_FILLER = frozenset(stem(word) for word in _FILLER_WORDS.split())


def request_stems(text: str) -> list[str]:
    """The informative stems of a request, in order, without repeats."""
    seen: dict[str, None] = {}
    for token in tokenize(text):
        word = stem(token)
        if word not in _FILLER and len(word) > 1:
            seen.setdefault(word, None)
    return list(seen)


def check_active_files(files: Sequence[str] | None) -> None:
    """Refuse ``activeFiles`` of more than :data:`MAX_ACTIVE_FILES` entries, or with an entry
    longer than :data:`MAX_ACTIVE_FILE_BYTES` in UTF-8 (a bad ``activeFiles`` param)."""
    if files is None:
        return
    if len(files) > MAX_ACTIVE_FILES:
        raise SkillsdError(
            f"`activeFiles` holds {len(files)} entries; at most {MAX_ACTIVE_FILES} are allowed",
            InvalidParamsData(field="activeFiles"),
        )
    for n, file in enumerate(files):
        # At most 4 UTF-8 bytes a character: only a long entry needs encoding.
        if len(file) * 4 > MAX_ACTIVE_FILE_BYTES and (
            len(file.encode("utf-8", "surrogatepass")) > MAX_ACTIVE_FILE_BYTES
        ):
            raise SkillsdError(
                f"`activeFiles[{n}]` is longer than {MAX_ACTIVE_FILE_BYTES} bytes",
                InvalidParamsData(field="activeFiles"),
            )


@dataclass(frozen=True, slots=True)
class Scored:
    """One skill's score for a request, and why: the matched words per field."""

    skill: SkillMetadata
    score: float
    matched: dict[str, list[str]]
    named: bool


class SuggestIndex:
    """The catalog's skills as word weights per field, for :meth:`rank`."""

    def __init__(self, skills: Sequence[SkillMetadata]) -> None:
        self._skills = list(skills)
        #: stem -> [(skill index, field weight, field name)], the best field per skill.
        self._postings: dict[str, list[tuple[int, float, str]]] = {}
        self._names: dict[str, list[int]] = {}
        for i, skill in enumerate(self._skills):
            best: dict[str, tuple[float, str]] = {}
            for field, weight, words in self._fields(skill):
                for word in words:
                    if word not in best or best[word][0] < weight:
                        best[word] = (weight, field)
            for word, (weight, field) in best.items():
                self._postings.setdefault(word, []).append((i, weight, field))
            name = " ".join(tokenize(skill.name))
            if name:
                self._names.setdefault(name, []).append(i)
        count = max(1, len(self._skills))
        self._idf = {w: math.log(1 + count / len(p)) for w, p in self._postings.items()}
        #: What a word no skill has weighs: as much as the rarest word.
        self._unknown = math.log(1 + count)

    @staticmethod
    def _fields(skill: SkillMetadata) -> Iterable[tuple[str, float, set[str]]]:
        host = skill.host
        text = skill.description + " " + (host.when_to_use or "" if host is not None else "")
        yield "name", _NAME, {stem(t) for t in tokenize(skill.name)}
        tags = " ".join(parse_tags(skill))
        yield "tags", _TAGS, {stem(t) for t in tokenize(tags)}
        yield "description", _TEXT, {stem(t) for t in tokenize(text)}

    def __len__(self) -> int:
        return len(self._skills)

    def rank(
        self,
        request: str,
        *,
        usable: Callable[[SkillMetadata], bool] = lambda _: True,
        paths_match: Callable[[SkillMetadata], str | None] | None = None,
        similarity: Sequence[float] | None = None,
    ) -> list[Scored]:
        """Every usable skill that shares a word with ``request`` (or that ``paths_match``
        selects, saying why, or whose ``similarity`` to it, in the order of the index's
        skills, passes :data:`SEMANTIC_FLOOR`), best first."""
        words = request_stems(request)
        # Reasons quote the request's own words, not their stems.
        said: dict[str, str] = {}
        for token in tokenize(request):
            said.setdefault(stem(token), token)
        total = sum(self._idf.get(w, self._unknown) for w in words) or 1.0
        gained: dict[int, float] = {}
        matched: dict[int, dict[str, list[str]]] = {}
        for word in words:
            for i, weight, field in self._postings.get(word, ()):
                gained[i] = gained.get(i, 0.0) + weight * self._idf[word]
                matched.setdefault(i, {}).setdefault(field, []).append(said.get(word, word))
        spoken = " " + " ".join(tokenize(request)) + " "
        named = {i for name, ids in self._names.items() if f" {name} " in spoken for i in ids}
        for i in named:
            gained.setdefault(i, 0.0)
        selected: dict[int, str] = {}
        if paths_match is not None:
            for i, skill in enumerate(self._skills):
                if (why := paths_match(skill)) is not None:
                    selected[i] = why
                    gained.setdefault(i, 0.0)
        meaning = {i: value for i, value in enumerate(similarity or ()) if value > SEMANTIC_FLOOR}
        for i in meaning:
            gained.setdefault(i, 0.0)
        found: list[Scored] = []
        for i, gain in gained.items():
            skill = self._skills[i]
            if not usable(skill):
                continue
            score = gain / total
            reasons = matched.get(i, {})
            if i in meaning:
                score += SEMANTIC_WEIGHT * (meaning[i] - SEMANTIC_FLOOR)
                reasons = {**reasons, "meaning": [f"{meaning[i]:.2f}"]}
            if i in named:
                score = max(score, NAMED_SCORE)
            if i in selected:
                score += PATHS_BONUS
                reasons = {**reasons, "paths": [selected[i]]}
            found.append(Scored(skill, min(1.0, round(score, 4)), reasons, i in named))
        found.sort(key=lambda s: (-s.score, s.skill.path))
        return found
