"""Ranking skills for ``skills.search`` (docs/protocol.md): exact path > exact name > name prefix >
relevance.

A :class:`SearchIndex` is built once per catalog (the daemon caches it next to the catalog) and
answers many queries.

Score scale (a float; higher is better; the bands never overlap):

============  ============================================================================
``4.0``       ``exact_path``: the query is the skill's directory or ``SKILL.md`` path
``3.0``       ``exact_name``: the query equals the name (NFKC + casefold)
``(2, 3)``    ``prefix``: ``2 + len(query) / len(name)``, so a closer fit ranks higher
``(0, 1)``    ``token_overlap``: ``s / (1 + s)`` where ``s`` is the BM25F relevance
``0.0``       an empty query: every skill that passes the filters, in catalog tie order
============  ============================================================================

Relevance is BM25F over three fields weighted name > tags > description. Tokens are
NFKC-normalised, casefolded runs of letters/digits (combining marks kept inside a word);
Han/Hiragana/Katakana runs, which are written without spaces, become overlapping character
bigrams. Relevance compares word stems (:func:`stem`, a light English suffix stripper), so
``migration`` finds "migrations" and ``deploy`` finds "deploying".

A hyphenated name yields its parts plus the parts joined (``web-app`` -> ``web``,
``app``, ``webapp``). Name tokens are also matched approximately, at a lower weight: within
Damerau (optimal string alignment) distance 1 for query tokens of >= 4 characters, 2 for >= 8,
and as a prefix for query tokens of >= 3 characters.

Cost is bounded for any query (docs/security.md): only the first 64 distinct stems of a query count,
and tokens over 64 characters get no typo matching (the deletes a typo lookup enumerates grow with
the cube of a token's length); they still match exactly and as a prefix.

Ties: score (rounded to 6 places), then scope (repo > user > extra), then ``SKILL.md`` path.
"""

from __future__ import annotations

import bisect
import heapq
import math
import os
import re
import unicodedata
from array import array
from collections.abc import Collection, Iterable, Sequence
from typing import Final

import msgspec

from skillsd.core import limits
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.name_distance import edit_distance
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import SearchHit, SearchReason, SearchResult
from skillsd_protocol.model import SCOPE_ORDER

__all__ = [
    "FUNCTION_WORDS",
    "SearchIndex",
    "normalize_text",
    "parse_tags",
    "stem",
    "tokenize",
    "unlike_function_word",
]

SCORE_EXACT_PATH: Final = 4.0
SCORE_EXACT_NAME: Final = 3.0
SCORE_PREFIX_BASE: Final = 2.0

#: BM25F parameters: saturation, per-field weight and length normalisation.
_K1: Final = 1.2
_W_NAME, _W_TAGS, _W_DESC = 3.0, 2.0, 1.0
_B_NAME, _B_TAGS, _B_DESC = 0.5, 0.3, 0.75
#: Approximate name matches count for less than an exact token.
_FUZZY_FACTOR: Final = {1: 0.6, 2: 0.4}
_PREFIX_FACTOR: Final = 0.7
_MIN_PREFIX_TOKEN: Final = 3
_MAX_PREFIX_EXPANSIONS: Final = 64
_MIN_FUZZY_VOCAB: Final = 3
#: Longest query token that gets typo matching: its 2-deletes are ~n**2/2 strings of ~n characters.
_MAX_FUZZY_TOKEN: Final = 64
#: Distinct query stems ranked; each costs a postings merge over up to the whole catalog.
_MAX_QUERY_TERMS: Final = 64
_NO_TAGS: Final[frozenset[str]] = frozenset()


def _combining_mark_class() -> str:
    # Marks (Mn/Mc/Me) are not alphanumeric for `re`, yet they belong inside words (Devanagari
    # vowel signs, decomposed accents): collect the BMP ranges once at import.
    ranges: list[tuple[int, int]] = []
    for cp in range(0x300, 0x10000):
        if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in ranges)


_WORD_RE: Final = re.compile(f"[\\w{_combining_mark_class()}]+")
_CJK_RUN_RE: Final = re.compile(
    "[\u3005\u3006\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f]+"
)


def normalize_text(text: str) -> str:
    """NFKC-normalise and casefold ``text`` (the form every comparison in search uses)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _split_word(word: str, out: list[str]) -> None:
    if word.isascii():
        out.append(word)
        return
    pos = 0
    for m in _CJK_RUN_RE.finditer(word):
        if m.start() > pos:
            out.append(word[pos : m.start()])
        run = m.group()
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = m.end()
    if pos < len(word):
        out.append(word[pos:])


def tokenize(text: str) -> list[str]:
    """Split text into normalised search tokens (see the module docstring)."""
    out: list[str] = []
    for run in _WORD_RE.findall(normalize_text(text)):
        # `\w` includes "_", which separates words here (snake_case, __init__).
        for word in run.split("_") if "_" in run else (run,):
            if word:
                _split_word(word, out)
    return out


_VOWELS: Final = frozenset("aeiouy")
#: Shortest stem a suffix may leave: "using" stays, "tests" becomes "test".
_MIN_STEM: Final = 3


def _strip(word: str, suffix: str) -> str | None:
    """``word`` without ``suffix`` when a real stem (with a vowel) remains, else None."""
    if not word.endswith(suffix):
        return None
    base = word[: len(word) - len(suffix)]
    if len(base) < _MIN_STEM or not _VOWELS.intersection(base):
        return None
    return base


#: Function words another word can stem to ("theme" and "them", "news" and "new", "noted" and
#: "not"): such a word keeps its own form instead (:func:`unlike_function_word`).
_FUNCTION_TEXT = """
them not should will one new our her their what out can off over still here who are your own
mine good being these
"""
FUNCTION_WORDS: Final = frozenset(_FUNCTION_TEXT.split())


def unlike_function_word(token: str, form: str) -> str:
    """``form``, the stem of ``token``, unless it is a function word ``token`` is not: then
    ``token`` itself, less a plural "s" (``themes`` -> ``theme``, ``news`` -> ``news``)."""
    if form not in FUNCTION_WORDS or token in FUNCTION_WORDS:
        return form
    single = token[:-1]
    plural = token.endswith("s") and single not in FUNCTION_WORDS and len(single) > _MIN_STEM
    return single if plural else token


def stem(token: str) -> str:
    """A light English stem of a lowercase ASCII token; other tokens are returned unchanged.

    Plurals, ``-ing``, ``-ed`` and ``-ation`` go, then a final ``e``; a doubled final consonant
    left by ``-ing``/``-ed`` is undoubled. So migration, migrations, migrate, migrating and
    migrated all become ``migrat``; deploy, deploys, deploying and deployed ``deploy``. Both
    the index and the query use it, so agreement matters more than linguistic accuracy; but a
    word never becomes a function word it is not ("theme" stays ``theme``, not "them").
    """
    return unlike_function_word(token, _stem(token))


def _stem(token: str) -> str:
    if len(token) <= _MIN_STEM or not token.isascii() or not token.isalpha():
        return token
    word = token
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = _strip(word, suffix)
        if base is not None:
            if len(base) > _MIN_STEM and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, mapped -> map
            word = base
            break
    else:
        base = _strip(word, "ation")
        if base is not None:
            word = base + "at"
    if word.endswith("e") and len(word) > _MIN_STEM + 1:
        word = word[:-1]
    return word


def _name_tokens(name: str) -> tuple[list[str], str | None]:
    """The name's tokens, plus its parts joined (``webapp``) when it has several parts."""
    parts = tokenize(name)
    joined = "".join(parts)
    if len(parts) > 1 and joined not in parts:
        parts.append(joined)
        return parts, joined
    return parts, None


def parse_tags(skill: SkillMetadata) -> frozenset[str]:
    """The skill's ``metadata.tags`` (comma-separated), trimmed and normalised; empty if none."""
    raw = (skill.metadata or {}).get("tags")
    if not raw:
        return frozenset()
    return frozenset(t for t in (normalize_text(p).strip() for p in raw.split(",")) if t)


def _max_typos(token: str) -> int:
    n = len(token)
    if n > _MAX_FUZZY_TOKEN:
        return 0
    return 2 if n >= 8 else 1 if n >= 4 else 0


def _deletes(token: str, depth: int) -> set[str]:
    found = {token}
    frontier = {token}
    for _ in range(depth):
        frontier = {s[:i] + s[i + 1 :] for s in frontier for i in range(len(s))}
        found |= frontier
    return found


def _stemmed(token: str, stems: dict[str, str]) -> str:
    """``stem(token)``, computed once per distinct token (and the same string every time)."""
    got = stems.get(token)
    if got is None:
        got = stems[token] = stem(token)
    return got


def _path_key(path: str) -> str:
    normal = os.path.normpath(path)
    return path if normal == path else normal  # keep the catalog's string: no duplicate


def _add(table: dict[str, int | tuple[int, ...]], key: str, i: int) -> None:
    # Nearly every key names one skill: store a bare int, a tuple only for shared keys.
    have = table.get(key)
    if have is None:
        table[key] = i
    elif isinstance(have, int):
        if have != i:
            table[key] = (have, i)
    elif i not in have:
        table[key] = (*have, i)


def _lookup(table: dict[str, int | tuple[int, ...]], key: str) -> tuple[int, ...]:
    have = table.get(key)
    return () if have is None else (have,) if isinstance(have, int) else have


class _Inverted:
    """Term -> (skill indexes, precomputed weights), stored as compressed sparse rows.

    One dict of terms and three flat arrays instead of an object per term keeps a 10 000-skill
    index to a few megabytes.
    """

    __slots__ = ("docs", "offsets", "terms", "weights")

    def __init__(self, doc_freq: dict[str, int]) -> None:
        self.terms: dict[str, int] = {}
        self.offsets = array("i", [0])
        for tid, (term, count) in enumerate(doc_freq.items()):
            self.terms[term] = tid
            self.offsets.append(self.offsets[-1] + count)
        total = self.offsets[-1]
        self.docs = array("i", [0]) * total
        self.weights = array("d", [0.0]) * total

    def get(self, term: str) -> tuple[array[int], array[float]] | None:
        tid = self.terms.get(term)
        if tid is None:
            return None
        lo, hi = self.offsets[tid], self.offsets[tid + 1]
        return self.docs[lo:hi], self.weights[lo:hi]


class SearchIndex:
    """An immutable search index over one catalog's skill list (order as given by the catalog).

    ``enabled`` is read from the skills at query time, so flipping it on a cached catalog needs
    no rebuild; per-session disables are passed to :meth:`search` as ``disabled_ids``.
    """

    # Complex by design: the index is built in one pass over every field.
    def __init__(self, skills: Sequence[SkillMetadata]) -> None:  # noqa: C901
        self.skills: tuple[SkillMetadata, ...] = tuple(skills)
        n = len(self.skills)
        order = sorted(
            range(n), key=lambda i: (SCOPE_ORDER[self.skills[i].scope], self.skills[i].path)
        )
        self._tie_rank = array("i", [0]) * n
        for rank, i in enumerate(order):
            self._tie_rank[i] = rank
        self._tags: dict[int, frozenset[str]] = {}
        self._by_path: dict[str, int | tuple[int, ...]] = {}
        self._by_name: dict[str, int | tuple[int, ...]] = {}
        names: list[tuple[str, int]] = []

        # Pass 1: tokens per field (interned, so repeated words share one string), document
        # frequencies and field lengths.
        interned: dict[str, str] = {}
        #: Token -> its stem (shared strings): the relevance postings are keyed by stems.
        stems: dict[str, str] = {}
        #: Name tokens as written: typo and prefix matching works on those, not on stems.
        raw_names: list[list[str]] = []
        doc_tokens: list[tuple[list[str], list[str], list[str]]] = []
        lengths = [0, 0, 0]
        df: dict[str, int] = {}
        name_df: dict[str, int] = {}
        joined_names: set[str] = set()
        for i, skill in enumerate(self.skills):
            name_cf = normalize_text(skill.name)
            if name_cf == skill.name:
                name_cf = skill.name
            _add(self._by_name, name_cf, i)
            names.append((name_cf, i))
            _add(self._by_path, _path_key(skill.path), i)
            _add(self._by_path, _path_key(skill.dir), i)
            tags = parse_tags(skill)
            if tags:
                self._tags[i] = tags
            name_tokens, joined = _name_tokens(skill.name)
            if joined is not None:
                joined_names.add(joined)
            fields = (
                [_stemmed(t, stems) for t in name_tokens],
                [_stemmed(t, stems) for tag in sorted(tags) for t in tokenize(tag)],
                [_stemmed(t, stems) for t in tokenize(skill.description)],
            )
            raw_names.append([interned.setdefault(t, t) for t in name_tokens])
            doc_tokens.append(fields)
            for k in range(3):
                lengths[k] += len(fields[k])
            for term in set(raw_names[-1]):
                name_df[term] = name_df.get(term, 0) + 1
            for term in set(fields[0]).union(fields[1], fields[2]):
                df[term] = df.get(term, 0) + 1
        del interned
        names.sort()
        self._names = [nm for nm, _ in names]
        self._name_ids = [i for _, i in names]

        # Pass 2: BM25F weights. Everything but the query's idf-free part is query independent,
        # so each posting stores its final contribution idf * tf / (k1 + tf).
        avg = [max(total / n, 1.0) if n else 1.0 for total in lengths]
        params = ((_W_NAME, _B_NAME), (_W_TAGS, _B_TAGS), (_W_DESC, _B_DESC))
        self._postings = _Inverted(df)
        self._name_postings = _Inverted(name_df)
        cursor = self._postings.offsets[:-1]
        name_cursor = self._name_postings.offsets[:-1]
        for i, fields in enumerate(doc_tokens):
            norms = [
                w / (1.0 - b + b * len(f) / avg[k])
                for k, ((w, b), f) in enumerate(zip(params, fields, strict=True))
            ]
            tf: dict[str, float] = {}
            for k in range(3):
                for term in fields[k]:
                    tf[term] = tf.get(term, 0.0) + norms[k]
            for term, value in tf.items():
                idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
                tid = self._postings.terms[term]
                pos = cursor[tid]
                cursor[tid] = pos + 1
                self._postings.docs[pos] = i
                self._postings.weights[pos] = idf * value / (_K1 + value)
            names_as_written = raw_names[i]
            for term in set(names_as_written):
                value = names_as_written.count(term) * norms[0]
                term_df = df[stems[term]]
                idf = math.log(1.0 + (n - term_df + 0.5) / (term_df + 0.5))
                tid = self._name_postings.terms[term]
                pos = name_cursor[tid]
                name_cursor[tid] = pos + 1
                self._name_postings.docs[pos] = i
                self._name_postings.weights[pos] = idf * value / (_K1 + value)
        del doc_tokens, raw_names, stems

        self._name_vocab = sorted(name_df)
        # Symmetric-delete index for typo matching: each name token is filed under its
        # 1-deletes (and 2-deletes when long, which a query token of >= 8 characters may need).
        # Kept as a sorted array of variant hashes -> vocabulary positions (12 bytes an entry,
        # not a dict of strings): hash collisions only add candidates that the exact distance
        # check then rejects. Joined names and tokens with digits (ids, versions) are left out:
        # a typo there is not a near miss anyone means.
        keys = array("q")
        vids = array("i")
        for vid, term in enumerate(self._name_vocab):
            if len(term) < _MIN_FUZZY_VOCAB or not term.isalpha() or term in joined_names:
                continue
            if len(term) > _MAX_FUZZY_TOKEN + 2:  # beyond any typo-matched query token's reach
                continue
            for variant in _deletes(term, 2 if len(term) >= 8 else 1):
                keys.append(hash(variant))
                vids.append(vid)
        by_key = sorted(range(len(keys)), key=keys.__getitem__)
        self._delete_keys = array("q", [keys[j] for j in by_key])
        self._delete_vids = array("i", [vids[j] for j in by_key])

    def __len__(self) -> int:
        return len(self.skills)

    # -- query ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        tags: Iterable[str] | None = None,
        cwd: str | None = None,
        disabled_ids: Collection[str] = (),
        include_disabled: bool = False,
        default_limit: int = limits.DEFAULT_SEARCH_LIMIT,
        max_limit: int = limits.MAX_SEARCH_LIMIT,
    ) -> SearchResult:
        """Rank the skills against ``query``; see the module docstring for the rules.

        ``limit`` defaults to ``default_limit`` and is clamped to ``max_limit``; a limit below 1
        is an ``invalid_params`` error. ``tags`` keeps skills carrying any of them (an empty list
        filters nothing). ``cwd`` anchors a relative path query. Disabled skills (and those in
        ``disabled_ids``) are left out unless ``include_disabled``; then they come back marked
        ``enabled: false``, so a UI can find them to enable them again.
        """
        if limit is None:
            limit = default_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SkillsdError(
                f"limit must be a positive integer, got {limit!r}", InvalidParamsData(field="limit")
            )
        limit = min(limit, max_limit)
        if scope is not None and scope not in SCOPE_ORDER:
            raise SkillsdError(
                f"scope must be one of {', '.join(SCOPE_ORDER)}, got {scope!r}",
                InvalidParamsData(field="scope"),
            )
        wanted_tags = frozenset(t for t in (normalize_text(x).strip() for x in tags or ()) if t)
        skills, tie, tag_sets = self.skills, self._tie_rank, self._tags

        def passes(i: int) -> bool:
            skill = skills[i]
            return (
                (
                    include_disabled
                    or (skill.enabled and not (disabled_ids and skill.id in disabled_ids))
                )
                and (scope is None or skill.scope == scope)
                and (not wanted_tags or not tag_sets.get(i, _NO_TAGS).isdisjoint(wanted_tags))
            )

        def shown(i: int) -> SkillMetadata:
            skill = skills[i]
            if disabled_ids and skill.enabled and skill.id in disabled_ids:
                return msgspec.structs.replace(skill, enabled=False)
            return skill

        stripped = query.strip()
        if not stripped:  # every skill that passes the filters, in tie order
            ids = sorted((i for i in range(len(skills)) if passes(i)), key=tie.__getitem__)
            hits = [SearchHit(skill=shown(i), score=0.0, reason="token_overlap") for i in ids]
            return SearchResult(results=hits[:limit], count=len(ids), truncated=len(ids) > limit)

        # The three exact bands hold few skills; relevance may hold most of the catalog, so it
        # is ranked by raw BM25 sum with a threshold pass instead of building a key per skill.
        strong_found = self._strong(stripped, cwd)
        strong = [(score, i, reason) for i, (score, reason) in strong_found.items() if passes(i)]
        strong.sort(key=lambda item: (-item[0], tie[item[1]]))
        relevance = self._relevance(tokenize(stripped))
        for i in strong_found:
            relevance.pop(i, None)
        rel_ids = [i for i in relevance if passes(i)]
        count = len(strong) + len(rel_ids)

        need = max(limit - len(strong), 0)
        if len(rel_ids) > need:
            if need:
                kth = heapq.nlargest(need, map(relevance.__getitem__, rel_ids))[-1]
                rel_ids = [i for i in rel_ids if relevance[i] >= kth]
            else:
                rel_ids = []
        rel_ids.sort(key=lambda i: (-relevance[i], tie[i]))

        hits = [
            SearchHit(skill=shown(i), score=score, reason=reason) for score, i, reason in strong
        ]
        for i in rel_ids[:need]:
            s = relevance[i]
            hits.append(
                SearchHit(
                    skill=shown(i),
                    score=min(round(s / (1.0 + s), 6), 0.999999),
                    reason="token_overlap",
                )
            )
        return SearchResult(results=hits[:limit], count=count, truncated=count > limit)

    def _strong(self, query: str, cwd: str | None) -> dict[int, tuple[float, SearchReason]]:
        """Skills matched by exact path, exact name or name prefix, with their banded score."""
        found: dict[int, tuple[float, SearchReason]] = {}
        for i in self._path_matches(query, cwd):
            found[i] = (SCORE_EXACT_PATH, "exact_path")
        qn = normalize_text(query)
        for i in _lookup(self._by_name, qn):
            found.setdefault(i, (SCORE_EXACT_NAME, "exact_name"))
        names = self._names
        for pos in range(bisect.bisect_left(names, qn), len(names)):
            name = names[pos]
            if not name.startswith(qn):
                break
            if name != qn:
                score = round(SCORE_PREFIX_BASE + len(qn) / len(name), 6)
                found.setdefault(self._name_ids[pos], (score, "prefix"))
        return found

    def _path_matches(self, query: str, cwd: str | None) -> list[int]:
        candidate = os.path.expanduser(query)
        if not os.path.isabs(candidate):
            if cwd is None:
                return []
            candidate = os.path.join(cwd, candidate)
        return list(_lookup(self._by_path, _path_key(candidate)))

    def _relevance(self, tokens: list[str]) -> dict[int, float]:
        """Raw BM25F sums per matching skill (exact tokens, plus approximate name matches)."""
        total: dict[int, float] = {}
        by_stem: dict[str, str] = {}
        for token in tokens:
            by_stem.setdefault(stem(token), token)  # one word form counts once
            if len(by_stem) == _MAX_QUERY_TERMS:
                break
        for token_stem, token in by_stem.items():
            post = self._postings.get(token_stem)
            approx = self._approximate_name_terms(token)
            docs: Iterable[int]
            weights: Iterable[float]
            if approx:
                # A query token counts once per skill: the best of its exact and near matches.
                per_doc = dict(zip(*post, strict=True)) if post else {}
                for term, factor in approx:
                    near = self._name_postings.get(term)
                    assert near is not None  # the vocabulary is the name index's own terms
                    for d, w in zip(*near, strict=True):
                        if w * factor > per_doc.get(d, 0.0):
                            per_doc[d] = w * factor
                docs, weights = per_doc.keys(), per_doc.values()
            elif post is not None:
                docs, weights = post
            else:
                continue
            if not total:
                total = dict(zip(docs, weights, strict=True))
            else:
                get = total.get
                for d, w in zip(docs, weights, strict=True):
                    total[d] = get(d, 0.0) + w
        return total

    def _approximate_name_terms(self, token: str) -> list[tuple[str, float]]:
        """Name-vocabulary terms near ``token`` (typos, prefixes), each with its weight factor."""
        found: dict[str, float] = {}
        max_d = _max_typos(token)
        if max_d:
            keys, vids, vocab = self._delete_keys, self._delete_vids, self._name_vocab
            candidates: set[str] = set()
            for variant in _deletes(token, max_d):
                h = hash(variant)
                pos = bisect.bisect_left(keys, h)
                while pos < len(keys) and keys[pos] == h:
                    candidates.add(vocab[vids[pos]])
                    pos += 1
            for term in candidates:
                if term == token:
                    continue
                d = edit_distance(token, term, max_d)
                if d <= max_d:
                    found[term] = _FUZZY_FACTOR[d]
        if len(token) >= _MIN_PREFIX_TOKEN:
            vocab = self._name_vocab
            pos = bisect.bisect_right(vocab, token)
            end = min(pos + _MAX_PREFIX_EXPANSIONS, len(vocab))
            while pos < end and vocab[pos].startswith(token):
                found[vocab[pos]] = max(found.get(vocab[pos], 0.0), _PREFIX_FACTOR)
                pos += 1
        return sorted(found.items())
