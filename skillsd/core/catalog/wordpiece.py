"""Uncased WordPiece tokenization, as BERT-family sentence models cut text: the tokens the
meaning vectors (:mod:`skillsd.core.catalog.meaning_vectors`) are indexed by.

The text is cleaned (control characters dropped, any white space a separator), lowercased and
stripped of accents, CJK ideographs and punctuation become words of their own, and each word is
cut greedily into the longest pieces the vocabulary holds (``"deploying"`` -> ``deploy``,
``##ing``); a word that cannot be cut is the unknown token.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["WordPiece"]

#: A word longer than this (in characters) is the unknown token, as the models were trained.
MAX_WORD_CHARS = 100
_CONTINUATION = "##"


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True  # ASCII symbols ("$", "^", "`") count as punctuation too
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _words(text: str) -> list[str]:
    """The text cleaned, lowercased, without accents, split at white space, punctuation and
    CJK ideographs."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char in " \t\n\r" or unicodedata.category(char) == "Zs":
            out.append(" ")
        elif code == 0 or code == 0xFFFD or unicodedata.category(char) in ("Cc", "Cf"):
            continue
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    words: list[str] = []
    for raw in "".join(out).lower().split():
        plain = "".join(
            c for c in unicodedata.normalize("NFD", raw) if unicodedata.category(c) != "Mn"
        )
        start = 0
        for i, char in enumerate(plain):
            if _is_punctuation(char):
                if i > start:
                    words.append(plain[start:i])
                words.append(char)
                start = i + 1
        if start < len(plain):
            words.append(plain[start:])
    return words


class WordPiece:
    """A vocabulary's tokenizer: :meth:`ids` of a text."""

    def __init__(self, vocab: Sequence[str], unknown: str = "[UNK]") -> None:
        self.vocab = vocab
        self._ids = {token: i for i, token in enumerate(vocab)}
        self._unknown = self._ids[unknown]
        self._longest = max(map(len, vocab))

    def ids(self, text: str, limit: int) -> list[int]:
        """The token ids of ``text``, at most ``limit`` of them (the first)."""
        found: list[int] = []
        for word in _words(text):
            if len(found) >= limit:
                break
            found.extend(self._pieces(word))
        return found[:limit]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self._unknown]
        ids = self._ids
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = min(len(word), start + self._longest)
            piece = None
            while end > start:
                part = word[start:end] if start == 0 else _CONTINUATION + word[start:end]
                piece = ids.get(part)
                if piece is not None:
                    break
                end -= 1
            if piece is None:
                return [self._unknown]
            pieces.append(piece)
            start = end
        return pieces
