"""The form of a word that suggestions match on (``skills.suggest``, docs/hooks.md): the search
stem (:func:`skillsd.core.catalog.search.stem`), with a few derivational endings of English folded
further, so that a request and a skill agree on one word written two ways.

The search stem removes inflections (plurals, ``-ing``, ``-ed``); a request written as people
write it also varies the derivation: "deployment" for "deploy", "reviewer" for "review",
"verified" for "verify", "optimise" for "optimize". Each fold here keeps a base long enough to
stay one word's own (a short word such as "server" or "paper" is left alone), and both the index
and the request use it, so agreement matters more than linguistic accuracy.
"""

from __future__ import annotations

import functools

from skillsd.core.catalog.search import stem, unlike_function_word

__all__ = ["word_form"]

#: The least length of what is left after a fold.
_MIN_BASE = 4


@functools.lru_cache(maxsize=1 << 16)
def word_form(token: str) -> str:
    """The matching form of a lowercase token (bounded cache: a catalog's skills share most of
    their words)."""
    # A fold may land on a function word too ("shoulder" -> "should").
    return unlike_function_word(token, _folded(token))


def _folded(token: str) -> str:
    """The search stem of ``token`` with the derivational folds above."""
    word = stem(token)
    if not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ment") and len(word) - 4 >= _MIN_BASE:
        return stem(word[:-4])  # deployment -> deploy, management -> manag
    if word.endswith("er") and len(word) - 2 >= _MIN_BASE + 1:
        base = word[:-2]
        if base[-1] == base[-2] and base[-1] not in "lsz":
            base = base[:-1]  # wrapper -> wrap
        return stem(base)  # reviewer -> review, installer -> install
    if word.endswith("i") and len(word) - 1 >= _MIN_BASE:
        return word[:-1] + "y"  # verifi(ed) -> verify, appli(es) -> apply
    if word.endswith("is") and not word.endswith("sis") and len(word) - 2 >= _MIN_BASE:
        return word[:-2] + "iz"  # optimis(e) -> optimiz, like optimiz(e)
    return word
