"""How near two names are: the one edit distance behind "did you mean" suggestions and search's
typo matching, so both agree on what a typo is (a swapped pair of letters is one edit)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from skillsd.core import limits

__all__ = ["MAX_SUGGESTIONS", "closest_names", "edit_distance", "normalize_name"]

#: How many names a "did you mean" suggestion lists at most.
MAX_SUGGESTIONS = 5
#: Longer names (over the skill format's limit) get no suggestions: each comparison costs about
#: ``len * len / 1.5``, which a hostile request against a catalog of long names must not multiply.
_MAX_SUGGESTED_QUERY = limits.MAX_NAME_CHARS


def normalize_name(name: str) -> str:
    """A name as the catalog indexes it (NFKC, stripped), for lookups by user-given names."""
    return unicodedata.normalize("NFKC", name).strip()


def edit_distance(a: str, b: str, max_distance: int) -> int:
    """Optimal-string-alignment (Damerau) distance, or ``max_distance + 1`` once it is exceeded.

    Insertions, deletions, substitutions and swaps of two adjacent characters each count one.
    Only the diagonal band ``|i - j| <= max_distance`` is computed (a cell outside it is
    already further apart), so the cost is ``len(a) * (2 * max_distance + 1)`` at most.
    """
    if abs(len(a) - len(b)) > max_distance:
        return max_distance + 1
    if a == b:
        return 0
    over = max_distance + 1
    width = len(b) + 1
    prev2: list[int] = []
    prev = [j if j <= max_distance else over for j in range(width)]
    for i in range(1, len(a) + 1):
        cur = [over] * width
        if i <= max_distance:
            cur[0] = i
        row_min = cur[0]
        ai = a[i - 1]
        for j in range(max(1, i - max_distance), min(len(b), i + max_distance) + 1):
            cost = 0 if ai == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ai == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            row_min = min(row_min, v)
        if row_min > max_distance:
            return over
        prev2, prev = prev, cur
    return min(prev[len(b)], over)


def closest_names(query: str, names: Iterable[str], limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Up to ``limit`` names within edit distance ``max(2, len(query) // 3)``, closest first
    (none for a query longer than any valid name)."""
    query = normalize_name(query).lower()
    if not query or len(query) > _MAX_SUGGESTED_QUERY:
        return []
    bound = max(2, len(query) // 3)
    query_chars = set(query)
    scored: list[tuple[int, str]] = []
    for name in names:
        # Each edit changes at most two members of the character-set difference: a cheap bound
        # that skips most of a 10 000-name catalog before the quadratic distance.
        if len(query_chars.symmetric_difference(name)) > 2 * bound:
            continue
        distance = edit_distance(query, name, bound)
        if distance <= bound:
            scored.append((distance, name))
    scored.sort()
    return [name for _, name in scored[:limit]]
