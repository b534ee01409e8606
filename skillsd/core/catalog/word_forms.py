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

from skillsd.core.catalog.search import stem

__all__ = ["word_form"]

#: The least length of what is left after a fold.
_MIN_BASE = 4
#: Function words a content word can stem to ("theme" and "them", "news" and "new", "noted" and
#: "not"): a word that is not one of them but stems to one keeps its own form (less a plural
#: "s"), so that it is not taken for the function word.
_FUNCTION_TEXT = """
them not should will one new our her their what out can off over still here who are your own
mine good being there these
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
_FUNCTION_STEMS = frozenset(stem(word) for word in _FUNCTION_WORDS)


@functools.lru_cache(maxsize=1 << 16)
def word_form(token: str) -> str:
    """The matching form of a lowercase token (bounded cache: a catalog's skills share most of
    their words)."""
    form = _folded(token)
    if form in _FUNCTION_STEMS and token not in _FUNCTION_WORDS:
        single = token[:-1]
        plural = token.endswith("s") and single not in _FUNCTION_WORDS and len(single) > _MIN_BASE
        return single if plural else token  # themes -> theme, news -> news
    return form


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
