"""Which skills fit a user's request (``skills.suggest``, docs/hooks.md): a score in 0..1 that
means the same thing whatever the catalog, ``activate`` above a threshold, and ``candidate``
for close ones when nothing activates.

The score is **coverage**: the share of the request's informative words that the skill's own
words hold. Each request word weighs what it says in general, not in this catalog: words every
request has ("please", "the") weigh nothing, generic ones ("file", "create", "project") weigh
:data:`GENERIC_WEIGHT`, any other word 1. That weight comes from a fixed background (the word
lists below), never from the installed skills, so adding or removing skills changes no other
skill's score: ``activate`` means the same with 30 skills or 3 000.

How much a skill holds a word is the evidence of each of its fields, combined as independent
evidence (``1 - prod(1 - e)``): its name (1.0), tags, description and ``when_to_use``, the
queries of its ``evals/triggers.json`` that should trigger it, its body's headings, the names of
its resource files and its body's first paragraphs (:data:`FIELDS`). A field longer than its
reference length counts for less (``sqrt(reference / length)``), so a skill cannot win by
breadth: a description that lists every API term matches much, each match weakly. A request
word also finds the words of its task group (:mod:`skillsd.core.catalog.task_words`), for
:data:`RELATED_FACTOR` of a match; a word of the skill answers for one word of the request.
Past its name and tags, a skill's word counts for less the more published skills use it
(:func:`word_rarity`, from the fixed table :mod:`skillsd.core.catalog.common_skill_words`):
"use" or "create" in a description says little about which skill fits.

The skill's own trigger queries count twice: as words, and as whole requests. A request close
to one of its ``should_trigger: true`` queries scores at least that closeness; close to one of
its ``should_trigger: false`` queries (closer than to any positive one), its score shrinks by
it, so the author's "not this" holds. Naming the skill (``pdf-forms``, "pdf forms") scores at
least :data:`NAMED_SCORE`; a skill whose ``paths`` match a file being worked on gains
:data:`PATHS_BONUS`.

Words miss a request that describes a situation ("the client can't see the site yet") rather
than the task: the semantic stage adds what the request and the skill mean, the cosine of their
meaning vectors (:mod:`skillsd.core.catalog.meaning_vectors`), above :data:`SEMANTIC_FLOOR`. It
too depends on the request and the skill alone, so the score stays calibrated.

Built once per catalog (:class:`SuggestIndex`); a query costs one pass over the postings of its
few stems.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from skillsd.core.catalog.common_skill_words import WORD_SHARES
from skillsd.core.catalog.fs_skill_evidence import NO_EVIDENCE, EvidenceCache, SkillEvidence
from skillsd.core.catalog.search import parse_tags, tokenize
from skillsd.core.catalog.task_words import implied_words, related_words, written_form
from skillsd.core.catalog.technology_names import named_technologies
from skillsd.core.catalog.word_forms import word_form
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd_protocol import SkillMetadata

__all__ = [
    "CANDIDATE_THRESHOLD",
    "COMMON_FLOOR",
    "COMMON_SHARE",
    "DEFAULT_THRESHOLD",
    "FIELDS",
    "FOREIGN_CANDIDATE",
    "GENERIC_WEIGHT",
    "LEAD",
    "LEAD_FLOOR",
    "MAX_ACTIVE_FILES",
    "MAX_ACTIVE_FILE_BYTES",
    "MAX_CANDIDATES",
    "NAMED_SCORE",
    "PATHS_BONUS",
    "RELATED_FACTOR",
    "SCORE_DECIMALS",
    "SEMANTIC_FLOOR",
    "SEMANTIC_WEIGHT",
    "Scored",
    "SuggestIndex",
    "Verdict",
    "check_active_files",
    "request_stems",
    "round_score",
    "verdicts",
    "word_rarity",
]

#: ``suggest.threshold``'s default: chosen on the tuning sets (docs/benchmarks.md,
#: "Suggestions") so that unrelated requests rarely activate anything, and at most 0.60 so
#: that words alone (the semantic stage off) still activate a clear match.
DEFAULT_THRESHOLD = 0.60
#: ``suggest.candidateThreshold``'s default: when nothing activates and the best scores at
#: least this, up to :data:`MAX_CANDIDATES` skills within :data:`NEAR_BEST` of it are offered
#: as candidates (not a skill that never mentions a technology the request names, below
#: :data:`FOREIGN_CANDIDATE`).
CANDIDATE_THRESHOLD = 0.38
MAX_CANDIDATES = 3
#: When no score reaches the candidate threshold, a best skill that scores at least
#: :data:`LEAD_FLOOR` and leads the runner-up by :data:`LEAD` is offered alone: weak evidence,
#: but for one skill only (a request that fits nothing scores several skills alike).
LEAD_FLOOR = 0.30
LEAD = 0.15
#: A skill that never mentions a technology the request names is offered from this score: so
#: close a fit is about the request's subject whatever the technology.
FOREIGN_CANDIDATE = 0.50
#: How far behind the best suggestion another may be and still activate or be a candidate.
NEAR_BEST = 0.1
#: The least score of a skill the request names.
NAMED_SCORE = 0.9
#: What a ``paths`` match with an active file adds.
PATHS_BONUS = 0.15
#: Scores and thresholds are compared and shown at this many decimals, everywhere.
SCORE_DECIMALS = 2
#: ``activeFiles`` bounds: each file is matched against every skill's ``paths`` globs, so these
#: bound what one request can cost.
MAX_ACTIVE_FILES = 1000
MAX_ACTIVE_FILE_BYTES = 4096
#: The semantic stage (:mod:`skillsd.core.catalog.meaning_vectors`, on unless
#: ``suggest.semantic`` is false): a cosine similarity over :data:`SEMANTIC_FLOOR` adds
#: :data:`SEMANTIC_WEIGHT` times the excess to the score. The floor is where the current vectors
#: (token vectors averaged in context) keep unrelated requests as quiet as the earlier ones at
#: the two thresholds above, on the tuning sets with 981 unrelated requests (docs/benchmarks.md,
#: "Sets as hard as the maintainers', and what they say").
SEMANTIC_WEIGHT = 1.0
SEMANTIC_FLOOR = 0.35

#: What a generic word of a request weighs (a specific one weighs 1).
GENERIC_WEIGHT = 0.3
#: The request's weight a score is the share of, at least (one or two words are thin evidence)
#: and at most (in a long request, the words that matter are a few of many).
LEAST_WORDS = 1.0
MOST_WORDS = 5.0
#: What a skill's word of the same task group (:mod:`skillsd.core.catalog.task_words`) counts for,
#: against the request's own word.
RELATED_FACTOR = 0.7

#: The fields of a skill: name, weight (what one of its words says about the skill) and
#: reference length in distinct words (longer fields count for less).
FIELDS: tuple[tuple[str, float, int], ...] = (
    ("name", 1.0, 4),
    ("tags", 0.9, 8),
    ("description", 0.85, 30),
    ("when_to_use", 0.85, 30),
    ("triggers", 0.75, 60),
    ("headings", 0.5, 40),
    ("resources", 0.5, 20),
    ("body", 0.35, 120),
)
_FIELD_NAMES = tuple(name for name, _, _ in FIELDS)
#: Fields from the description on: a word most skills use there says little about this one.
_FIRST_DISCOUNTED = 2

#: A word more than this share of published skills use (:mod:`common_skill_words`) counts
#: for less in a skill's description and body, down to :data:`COMMON_FLOOR` of its weight.
COMMON_SHARE = 0.02
COMMON_FLOOR = 0.5
_SHARES = {
    word: float(share)
    for word, share in (line.split() for line in WORD_SHARES.splitlines() if line)
}


def word_rarity(word: str) -> float:
    """What the word counts for in a skill's description and body: 1 for a word few published
    skills use, less the more use it (``log(1 / share) / log(1 / COMMON_SHARE)``), at least
    :data:`COMMON_FLOOR`. A fixed background, never the installed catalog."""
    share = _SHARES.get(word)
    if share is None or share <= COMMON_SHARE:
        return 1.0
    return max(COMMON_FLOOR, math.log(1.0 / share) / math.log(1.0 / COMMON_SHARE))


#: :func:`word_rarity` of every listed word, worked out once (an index build asks per word).
_RARITY = {word: word_rarity(word) for word in _SHARES}


_NO_MATCH = (0.0, -1)
_NO_EVIDENCE = (0.0, -1, "")

#: Words of any request: they say nothing about which skill fits. The tokenizer splits at an
#: apostrophe, so "don't" arrives as "don" (and "t", too short to count).
_FILLER_WORDS = """
a about after all also am an and any are as at be been being but by can could did do does
doing done for from get got had has have having he her here him his how i if in into is it
its just let like me mine more most my need needs no not now of off on once one only or our
out over own please same she should so some such than that the their them then there these
they this those through to too under until up us very want wants was we were what when
where which while who why will with would you your yours help make sure thing things stuff
way something using use used via new good best quick quickly really able im dont cant lets
hey hi thanks thank ok okay yes yeah also just still again
don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn hadn ain re ll ve
"""
_FILLER = frozenset(word_form(word) for word in _FILLER_WORDS.split())

#: Words a request about almost anything may use: they count, but for little.
_GENERIC_WORDS = """
add added adding all another anything around ask based before better bit both build built
change changes check come create created current day days different each else every
everything example explain few file files find first fix follow give go going great hand
have idea include info information instead issue item items keep kind know last later
latest look lot lots made many maybe mean might more much name next note number old open
other part people person piece place point pretty problem project put read ready right run
running say see seem set setup show simple small some someone start step still support take
tell test text thing think time today tomorrow try turn two understand update version want
week well whole without work working write writing wrong year yesterday app application code
data page list output input run result results content form format type value values way
need needed goes going went getting doing does done tool tools thing system team api apis
sdk sdks
"""
_GENERIC = frozenset(word_form(word) for word in _GENERIC_WORDS.split()) - _FILLER


def word_weight(word: str) -> float:
    """What a request's stem ``word`` says, from the fixed background: 0 for filler,
    :data:`GENERIC_WEIGHT` for generic words, else 1."""
    if word in _FILLER:
        return 0.0
    return GENERIC_WEIGHT if word in _GENERIC else 1.0


def round_score(score: float) -> float:
    """A score as compared with the threshold and shown: :data:`SCORE_DECIMALS` decimals."""
    return round(score, SCORE_DECIMALS)


def request_stems(text: str) -> list[str]:
    """The informative stems of a request, in order, without repeats."""
    seen: dict[str, None] = {}
    for token in tokenize(text):
        word = word_form(token)
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
    """One skill's score for a request (unrounded: ranking uses it whole), and why: the matched
    words per field, and the closeness to its own trigger queries, the semantic similarity and
    the ``paths`` glob when they count (empty past the ``explain`` first of a ranking).
    ``foreign``: the technologies the request names (as it writes them) that the skill's text
    never mentions; such a skill is a candidate only on a close fit (:func:`verdicts`)."""

    skill: SkillMetadata
    score: float
    matched: dict[str, list[str]]
    named: bool
    foreign: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a host is told about one ranked skill."""

    score: float
    activate: bool
    candidate: bool


def verdicts(
    scores: Sequence[float],
    threshold: float,
    candidate_threshold: float,
    *,
    held: Sequence[bool] = (),
    foreign: Sequence[bool] = (),
) -> list[Verdict]:
    """``activate`` and ``candidate`` for ranked ``scores`` (best first), compared at
    :data:`SCORE_DECIMALS` decimals as they are shown: a skill activates when its score reaches
    ``threshold`` and is within :data:`NEAR_BEST` of the best; when none does and the best
    reaches ``candidate_threshold``, up to :data:`MAX_CANDIDATES` as near the best are
    candidates; when the best does not reach it either, the best alone is one if it reaches
    :data:`LEAD_FLOOR` and leads the runner-up by :data:`LEAD` (so ``scores`` should hold at
    least two). ``held[i]``: the skill may be neither (the session loaded it already).
    ``foreign[i]``: the request names a technology the skill never mentions (``Scored.foreign``),
    so below :data:`FOREIGN_CANDIDATE` it is not a candidate (a guess about another subject);
    it may still activate."""
    bar, near = round_score(threshold), round_score(candidate_threshold)
    rounded = [round_score(score) for score in scores]
    blocked = [n < len(held) and held[n] for n in range(len(scores))]
    elsewhere = [
        n < len(foreign) and foreign[n] and score < FOREIGN_CANDIDATE
        for n, score in enumerate(rounded)
    ]
    ordered = sorted(rounded, reverse=True)
    best = ordered[0] if ordered else 0.0  # a loaded skill that fits best still sets the bar
    runner_up = ordered[1] if len(ordered) > 1 else 0.0
    # Skills clearly behind the best one are not what the request is about: they neither
    # activate beside it nor are offered with it. (Only a skill that fits the request better
    # can hold another back; unrelated skills never do.)
    close = [score >= best - NEAR_BEST - 1e-9 for score in rounded]
    active = [
        score >= bar and near_best and not block
        for score, near_best, block in zip(rounded, close, blocked, strict=True)
    ]
    # Whether to offer anything is the best one's call; once offered, the skills as close to it
    # as those that would activate beside it are offered with it (siblings often split a topic).
    offering = not any(active) and best >= near
    # Below that, one skill far ahead of every other is still worth a look (alone).
    leading = (
        not any(active) and not offering and best >= LEAD_FLOOR and best - runner_up >= LEAD - 1e-9
    )
    offered = 0
    found = []
    for score, near_best, block, other, on in zip(
        rounded, close, blocked, elsewhere, active, strict=True
    ):
        candidate = False
        if offering and not block and not other and near_best:
            candidate = offered < MAX_CANDIDATES
            offered += 1
        elif leading and score == best and not block and not other and not offered:
            candidate = True
            offered += 1
        found.append(Verdict(score, on, candidate))
    return found


def _trigger_words(queries: Iterable[str]) -> list[dict[str, float]]:
    return [{w: word_weight(w) for w in request_stems(q)} for q in queries]


def _closeness(request: dict[str, float], queries: Sequence[dict[str, float]]) -> float:
    """How close the request is to the closest of ``queries``: the cosine of their weighted
    word sets (1: the same informative words)."""
    mine = math.sqrt(sum(v * v for v in request.values()))
    best = 0.0
    for query in queries:
        theirs = math.sqrt(sum(v * v for v in query.values()))
        if not mine or not theirs:
            continue
        shared = sum(v * v for w, v in request.items() if w in query)
        best = max(best, shared / (mine * theirs))
    return best


class SuggestIndex:
    """The catalog's skills as word evidence per field, for :meth:`rank`.

    ``evidence``: each skill's :class:`~skillsd.core.catalog.fs_skill_evidence.SkillEvidence` in the
    order of ``skills`` (read through an
    :class:`~skillsd.core.catalog.fs_skill_evidence.EvidenceCache`); without it skills are ranked on
    their frontmatter alone.

    The postings are flat arrays (stem -> a slice of skill indexes, evidence and the strongest
    field), a few bytes a posting, so a large catalog's index stays small.
    """

    def __init__(
        self,
        skills: Sequence[SkillMetadata],
        evidence: Sequence[SkillEvidence] | None = None,
    ) -> None:
        self._skills = list(skills)
        self._names: dict[str, list[int]] = {}
        self._longest_name = 0
        #: Per skill with trigger queries: (positives, negatives) as weighted word sets.
        self._triggers: dict[int, tuple[list[dict[str, float]], list[dict[str, float]]]] = {}
        terms: dict[str, int] = {}
        term_of = array("i")
        doc_of = array("i")
        value_of = array("f")
        field_of = array("B")
        for i, skill in enumerate(self._skills):
            found = evidence[i] if evidence is not None else NO_EVIDENCE
            for word, (value, field) in self._skill_words(skill, found).items():
                term_of.append(terms.setdefault(word, len(terms)))
                doc_of.append(i)
                value_of.append(value)
                field_of.append(field)
            parts = tokenize(skill.name)
            if parts:
                self._names.setdefault(" ".join(parts), []).append(i)
                self._longest_name = max(self._longest_name, len(parts))
            if found.positives or found.negatives:
                self._triggers[i] = (
                    _trigger_words(found.positives),
                    _trigger_words(found.negatives),
                )
        # Counting sort by term: each term's postings become one contiguous slice.
        offsets = array("i", [0]) * (len(terms) + 1)
        for t in term_of:
            offsets[t + 1] += 1
        for t in range(len(terms)):
            offsets[t + 1] += offsets[t]
        cursor = offsets[:-1]
        total = len(term_of)
        self._docs = array("i", [0]) * total
        self._values = array("f", [0.0]) * total
        self._fields = array("B", [0]) * total
        for n in range(total):
            t = term_of[n]
            pos = cursor[t]
            cursor[t] = pos + 1
            self._docs[pos] = doc_of[n]
            self._values[pos] = value_of[n]
            self._fields[pos] = field_of[n]
        self._terms = terms
        self._offsets = offsets

    @staticmethod
    def _skill_words(skill: SkillMetadata, found: SkillEvidence) -> dict[str, tuple[float, int]]:
        """Each stem of the skill with its combined evidence and its strongest field."""
        host = skill.host
        texts = (
            skill.name,
            " ".join(sorted(parse_tags(skill))),
            skill.description,
            (host.when_to_use or "") if host is not None else "",
            " ".join(found.positives),
            found.headings,
            found.resources,
            found.paragraphs,
        )
        missing: dict[str, float] = {}
        strongest: dict[str, tuple[float, int]] = {}
        for field, ((_, weight, reference), text) in enumerate(zip(FIELDS, texts, strict=True)):
            if not text:
                continue
            words = {word_form(t) for t in set(tokenize(text))}
            if field == 0:
                parts = tokenize(text)
                if len(parts) > 1 and parts[-1] in ("skill", "skills"):
                    # "pdf-skills": a name's trailing "skills" says what every skill is.
                    words.discard(word_form(parts[-1]))
                words.add("".join(parts))  # "pdf-forms" also as "pdfforms"
            base = weight * math.sqrt(reference / max(reference, len(words)))
            for word in words:
                if len(word) < 2:
                    continue
                value = base if field < _FIRST_DISCOUNTED else base * _RARITY.get(word, 1.0)
                missing[word] = missing.get(word, 1.0) * (1.0 - value)
                if word not in strongest or strongest[word][0] < value:
                    strongest[word] = (value, field)
        return {w: (1.0 - missing[w], strongest[w][1]) for w in missing}

    @classmethod
    def read(cls, skills: Sequence[SkillMetadata], cache: EvidenceCache) -> SuggestIndex:
        """The index of ``skills`` with their evidence, read (bounded) through ``cache``. Only
        skills the model may use are read: the others are never suggested."""
        evidence = [cache.get(skill) if skill.invocation.model else NO_EVIDENCE for skill in skills]
        return cls(skills, evidence)

    def __len__(self) -> int:
        return len(self._skills)

    @property
    def skills(self) -> Sequence[SkillMetadata]:
        return self._skills

    def rank(
        self,
        request: str,
        *,
        usable: Callable[[SkillMetadata], bool] = lambda _: True,
        paths_match: Callable[[SkillMetadata], str | None] | None = None,
        similarity: Sequence[float] | None = None,
        explain: int = 3,
        limit: int | None = None,
    ) -> list[Scored]:
        """Every usable skill that shares a word with ``request`` (or that ``paths_match``
        selects, saying why, or whose ``similarity`` to it, in the order of the index's
        skills, passes :data:`SEMANTIC_FLOOR`), best first (the first ``limit`` of them); the
        first ``explain`` with their matched words."""
        words = request_stems(request)
        words += [w for w in implied_words(request) if w not in words]
        weights = {w: word_weight(w) for w in words}
        total = min(max(sum(weights.values()), LEAST_WORDS), MOST_WORDS)
        joined = "".join(tokenize(request))
        looked = [*words, joined] if joined and len(words) > 1 and joined not in weights else words
        spoken = tokenize(request)
        named = self._named(spoken)
        selected: dict[int, str] = {}
        if paths_match is not None:
            for i, skill in enumerate(self._skills):
                if (why := paths_match(skill)) is not None:
                    selected[i] = why
        meaning = {i: value for i, value in enumerate(similarity or ()) if value > SEMANTIC_FLOOR}
        scores = {i: min(1.0, gain / total) for i, gain in self._gains(looked, weights).items()}
        _add_meaning(scores, meaning)
        notes = self._judged(scores, weights)  # the author's "not this" holds against meaning too
        _add_stages(scores, named, selected)
        said: dict[str, str] = {}
        for token in spoken:
            said.setdefault(word_form(token), token)  # reasons quote the request's own words
        technologies = named_technologies(words)
        skills = self._skills
        found: list[Scored] = []
        for i in _best_first(scores, skills, limit):
            if limit is not None and len(found) >= limit:
                break
            if not usable(skills[i]):
                continue
            reasons: dict[str, list[str]] = {}
            if len(found) < explain:
                reasons = self._matched(i, said, looked, weights)
                if notes.get(i):
                    field, closeness = notes[i].split(": ")
                    reasons[field] = [closeness]
                reasons.update(_stage_reasons(i, meaning, selected))
            foreign = tuple(said.get(t, t) for t in technologies if not self._holds(i, t))
            found.append(Scored(skills[i], scores[i], reasons, i in named, foreign))
        return found

    def _named(self, spoken: list[str]) -> set[int]:
        """The skills whose name the request's tokens say. A one-word name ("linear",
        "notion") is an ordinary word too: it names the skill only beside the word "skill"
        ("the linear skill")."""
        skill_said = "skill" in spoken or "skills" in spoken
        named: set[int] = set()
        for size in range(1 if skill_said else 2, min(self._longest_name, len(spoken)) + 1):
            for start in range(len(spoken) - size + 1):
                named.update(self._names.get(" ".join(spoken[start : start + size]), ()))
        return named

    def _judged(self, scores: dict[int, float], weights: dict[str, float]) -> dict[int, str]:
        """Each scored skill's score after its own trigger queries (:func:`_judge`), in
        place; the reasons, by skill."""
        notes: dict[int, str] = {}
        for i, (positives, negatives) in self._triggers.items():
            if i in scores:
                scores[i], notes[i] = _judge(weights, scores[i], positives, negatives)
        return notes

    def _holds(self, i: int, term: str) -> bool:
        """Whether skill ``i``'s own words hold the stem ``term`` (in any field)."""
        return self._position(i, self._terms.get(term)) >= 0

    def _gains(self, looked: list[str], weights: dict[str, float]) -> dict[int, float]:
        """Each skill's weighted evidence for the request's words: per word, the skill's own
        evidence for it, or for a word of its group for less (:data:`RELATED_FACTOR`), the
        better of the two. A word of the skill answers for one word of the request: once it
        counted (for itself, or for a word of its group), it does not count again for another
        word of its group, so "outline", "steps" and "plan" do not each count a skill's one
        "plan"."""
        docs, values, offsets = self._docs, self._values, self._offsets
        related: dict[str, list[tuple[int, int]]] = {}
        for word in looked:
            if weights.get(word, 1.0) and (found := self._related_slices(word)):
                related[word] = found
        gained: dict[int, float] = {}
        # A term the request says itself counts for itself only; one in the groups of several
        # request words is contested: a skill counts it for the first of them.
        spoken: set[int] = set()
        claims = Counter(lo for found in related.values() for lo, _ in found)
        contested = {lo for lo, n in claims.items() if n > 1}
        for word in looked:  # the request's own words first: they always count
            weight = weights.get(word, 1.0)
            tid = self._terms.get(word) if weight else None
            if tid is None:
                continue
            lo, hi = offsets[tid], offsets[tid + 1]
            spoken.add(lo)
            get = gained.get
            for d, v in zip(docs[lo:hi], values[lo:hi], strict=True):
                gained[d] = get(d, 0.0) + weight * v
        self._add_related(gained, related, spoken, contested, weights)
        return gained

    def _add_related(
        self,
        gained: dict[int, float],
        related: dict[str, list[tuple[int, int]]],
        spoken: set[int],
        contested: set[int],
        weights: dict[str, float],
    ) -> None:
        """Adds to ``gained`` what each request word's group holds beyond its own word (see
        :meth:`_gains`): ``spoken``, the terms the request says itself; ``contested``, those in
        the groups of several request words, which one skill counts once."""
        docs, values, offsets = self._docs, self._values, self._offsets
        taken: set[tuple[int, int]] = set()  # (skill, the term's first posting)
        for word, found in related.items():
            best: dict[int, tuple[float, int]] = {}
            for lo, hi in found:
                if lo in spoken:
                    continue
                shared = lo in contested
                for d, v in zip(docs[lo:hi], values[lo:hi], strict=True):
                    v *= RELATED_FACTOR
                    if v > best.get(d, _NO_MATCH)[0] and not (shared and (d, lo) in taken):
                        best[d] = (v, lo)
            if not best:
                continue
            weight = weights.get(word, 1.0)
            tid = self._terms.get(word)
            own: dict[int, float] = {}
            if tid is not None:
                lo, hi = offsets[tid], offsets[tid + 1]
                own = dict(zip(docs[lo:hi], values[lo:hi], strict=True))
            for d, (v, lo) in best.items():
                surplus = v - own.get(d, 0.0)
                if surplus > 0.0:
                    gained[d] = gained.get(d, 0.0) + weight * surplus
                    if lo in contested:
                        taken.add((d, lo))

    def _related_slices(self, word: str) -> list[tuple[int, int]]:
        """The postings of the words of ``word``'s task group present in the index."""
        found = []
        for term in sorted(related_words(word)):
            tid = self._terms.get(term)
            if tid is not None:
                found.append((self._offsets[tid], self._offsets[tid + 1]))
        return found

    def _position(self, i: int, tid: int | None) -> int:
        """Where skill ``i``'s posting of the term ``tid`` is, or -1 when it has none."""
        if tid is None:
            return -1
        lo, hi = self._offsets[tid], self._offsets[tid + 1]
        pos = bisect.bisect_left(self._docs, i, lo, hi)  # postings are in skill order
        return pos if pos < hi and self._docs[pos] == i else -1

    def _matched(
        self, i: int, said: dict[str, str], looked: list[str], weights: dict[str, float]
    ) -> dict[str, list[str]]:
        """The request's words skill ``i`` holds, by the field of the evidence that counted for
        each, as :meth:`_gains` counts it (a word of the same task group is shown as
        ``ship (~deploy)``)."""
        counted: dict[str, tuple[float, int, str]] = {}  # word -> (value, field, term)
        taken: set[str] = set()
        spoken = [word for word in looked if weights.get(word, 1.0)]
        for word in spoken:
            pos = self._position(i, self._terms.get(word))
            if pos >= 0:
                counted[word] = (self._values[pos], self._fields[pos], word)
                taken.add(word)
        for word in spoken:
            pick = None
            for term in sorted(related_words(word)):
                pos = self._position(i, self._terms.get(term))
                if pos < 0 or term in taken:
                    continue
                value = RELATED_FACTOR * self._values[pos]
                if value > (pick or counted.get(word) or _NO_EVIDENCE)[0]:
                    pick = (value, self._fields[pos], term)
            if pick is not None:
                counted[word] = pick
                taken.add(pick[2])
        matched: dict[str, list[str]] = {}
        for word in spoken:
            if word in counted:
                _, field, term = counted[word]
                shown = said.get(word, word)
                note = shown if term == word else f"{shown} (~{written_form(term)})"
                matched.setdefault(_FIELD_NAMES[field], []).append(note)
        return matched


def _add_meaning(scores: dict[int, float], meaning: dict[int, float]) -> None:
    """The semantic stage, added to ``scores`` in place."""
    get = scores.get
    for i, value in meaning.items():
        scores[i] = get(i, 0.0) + SEMANTIC_WEIGHT * (value - SEMANTIC_FLOOR)


def _add_stages(scores: dict[int, float], named: set[int], selected: dict[int, str]) -> None:
    """A named skill's least score and the ``paths`` bonus, added to ``scores`` in place, each
    score then capped at 1."""
    get = scores.get
    for i in named:
        scores[i] = max(get(i, 0.0), NAMED_SCORE)
    for i in selected:
        scores[i] = get(i, 0.0) + PATHS_BONUS
    for i, score in scores.items():
        if score > 1.0:
            scores[i] = 1.0


def _stage_reasons(
    i: int, meaning: dict[int, float], selected: dict[int, str]
) -> dict[str, list[str]]:
    """Why skill ``i`` ranks beyond its words: its semantic similarity, its ``paths`` glob."""
    reasons: dict[str, list[str]] = {}
    if i in meaning:
        reasons["meaning"] = [f"{meaning[i]:.2f}"]
    if i in selected:
        reasons["paths"] = [selected[i]]
    return reasons


def _best_first(
    scores: dict[int, float], skills: Sequence[SkillMetadata], limit: int | None
) -> Iterator[int]:
    """Skill indexes by score, best first (ties by path): the few best sorted first, the whole
    order only when the caller skips so many (unusable skills) that it needs more."""

    def key(i: int) -> tuple[float, str]:
        return (-scores[i], skills[i].path)

    if limit is None or len(scores) <= 4 * limit + 16:
        yield from sorted(scores, key=key)
        return
    top = heapq.nsmallest(4 * limit + 16, scores, key=key)
    yield from top
    yield from sorted(scores, key=key)[len(top) :]


def _judge(
    request: dict[str, float],
    score: float,
    positives: list[dict[str, float]],
    negatives: list[dict[str, float]],
) -> tuple[float, str]:
    """The score after the skill's own trigger queries, and the reason: at least the closeness
    to its closest positive one; shrunk by the closeness to a negative one that is closer."""
    near = _closeness(request, positives)
    far = _closeness(request, negatives)
    if far > near:
        return score * (1.0 - far), f"unlike its triggers: {far:.2f}"
    if near > score:
        return near, f"like its triggers: {near:.2f}"
    return score, ""
