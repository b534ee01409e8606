"""What a request or a skill means, as a vector: the semantic stage of ``skills.suggest``
(docs/hooks.md), in pure Python.

A text's vector is the mean of its WordPiece tokens' vectors, made unit length; two texts are
as close as the cosine of their vectors. The token vectors are static: each is what a sentence
model (all-MiniLM-L6-v2, first fine-tuned on requests people write paired with the published
skills they need, never the skills the benchmark sets are written over) makes of that token on
average in the texts it was trained with (published skills and requests), centred and cut to
:data:`DIMENSIONS` principal directions; then refined as this module
uses them, so that a request that shares a skill's subject but asks for another task is less
similar to it than the skill's own requests; stored as bytes (``bench/meaning_model.py`` builds
the file; docs/benchmarks.md says how it was chosen).

Summing a text's token vectors is the cost that counts (a catalog of 1 000 skills is a thousand
texts). Each stored row is one byte per dimension, its value plus 128; a row read as a Python
integer with one 32-bit field per dimension lets a single big-integer addition add every
dimension at once, with no carry between fields (a text has at most :data:`MAX_TOKENS` tokens of
at most 255 a field).

The file (``meaning_vectors.bin``) is parsed by :meth:`MeaningVectors.from_bytes`: a first line
naming the format, a JSON line (``model``, ``dimensions``, ``tokens``, ``rows``,
``vocab_bytes``), the vocabulary one token a line, each token's row as a little-endian int32
(-1: a token with no vector), and the rows.
"""

from __future__ import annotations

import json
import math
import operator
import sys
from array import array
from collections.abc import Sequence
from functools import lru_cache

from skillsd.core.catalog.wordpiece import WordPiece

__all__ = [
    "DIMENSIONS",
    "MAGIC",
    "MAX_CHARS",
    "MAX_TOKENS",
    "MeaningVectors",
    "cosine",
    "skill_text",
]

MAGIC = b"skillsd meaning vectors 1\n"
DIMENSIONS = 256
#: Tokens of a text that count (the first): a skill's name, description and ``when_to_use``
#: fit, and a long prompt's opening says what it asks.
MAX_TOKENS = 256
#: Characters of a text read (the first): more than :data:`MAX_TOKENS` tokens take, so a
#: skill's long ``when_to_use`` costs no more than a short one.
MAX_CHARS = 16 * MAX_TOKENS
#: Rows kept as big integers at once (a few thousand tokens make most texts).
_CACHED_ROWS = 4096
_OFFSET = 128
#: An array type code of 32-bit unsigned fields.
_FIELD = next(code for code in "ILH" if array(code).itemsize == 4)


def skill_text(name: str, description: str, when_to_use: str | None) -> str:
    """The text a skill's vector is made from (the vectors were trained on the same)."""
    return f"{name.replace('-', ' ')}. {description} {when_to_use or ''}".strip()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two unit vectors."""
    return float(sum(map(operator.mul, a, b)))


class MeaningVectors:
    """The token vectors of one model: :meth:`vector` of a text."""

    def __init__(
        self, model: str, vocab: Sequence[str], rows_of: array[int], matrix: bytes
    ) -> None:
        self.model = model
        self.tokenizer = WordPiece(vocab)
        self._rows_of = rows_of
        self._matrix = matrix
        self._row = lru_cache(maxsize=_CACHED_ROWS)(self._row_integer)

    @classmethod
    def from_bytes(cls, data: bytes) -> MeaningVectors:
        """The vectors of a ``meaning_vectors.bin`` file's bytes; ``ValueError`` saying what is
        wrong with any other."""
        if not data.startswith(MAGIC):
            raise ValueError("not a skillsd meaning-vectors file")
        end = data.find(b"\n", len(MAGIC))
        try:
            head = json.loads(data[len(MAGIC) : end])
            model, dims = str(head["model"]), int(head["dimensions"])
            tokens, rows, vocab_bytes = (
                int(head["tokens"]),
                int(head["rows"]),
                int(head["vocab_bytes"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"a meaning-vectors header it cannot read ({exc})") from None
        if dims != DIMENSIONS:
            raise ValueError(f"{dims} dimensions, not {DIMENSIONS}")
        at = end + 1
        vocab = data[at : at + vocab_bytes].decode("utf-8").split("\n")
        at += vocab_bytes
        rows_of = array("i")
        rows_of.frombytes(data[at : at + 4 * tokens])
        if sys.byteorder != "little":
            rows_of.byteswap()
        at += 4 * tokens
        matrix = data[at:]
        if len(vocab) != tokens or len(rows_of) != tokens or len(matrix) != rows * dims:
            raise ValueError(
                f"{len(vocab)} tokens, {len(rows_of)} row numbers and {len(matrix)} bytes of "
                f"rows, not {tokens}, {tokens} and {rows * dims}"
            )
        if any(not -1 <= r < rows for r in rows_of):
            raise ValueError("a token's row number is out of range")
        return cls(model, vocab, rows_of, matrix)

    @property
    def rows_of(self) -> array[int]:
        """Each token's row of :attr:`matrix`, -1 for a token without a vector."""
        return self._rows_of

    @property
    def matrix(self) -> bytes:
        """The rows, :data:`DIMENSIONS` bytes each: a dimension's value plus 128."""
        return self._matrix

    def _row_integer(self, row: int) -> int:
        start = row * DIMENSIONS
        fields = array(_FIELD, iter(self._matrix[start : start + DIMENSIONS]))
        return int.from_bytes(fields.tobytes(), sys.byteorder)

    def vector(self, text: str) -> array[float] | None:
        """The unit vector of ``text`` (single precision: a kilobyte), or None when none of its
        tokens has a vector."""
        rows_of, row = self._rows_of, self._row
        total = count = 0
        for token in self.tokenizer.ids(text[:MAX_CHARS], MAX_TOKENS):
            r = rows_of[token]
            if r >= 0:
                total += row(r)
                count += 1
        if not count:
            return None
        fields = array(_FIELD)
        fields.frombytes(total.to_bytes(4 * DIMENSIONS, sys.byteorder))
        shift = _OFFSET * count
        values = [value - shift for value in fields]
        norm = math.sqrt(sum(v * v for v in values))
        if not norm:
            return None
        return array("f", [v / norm for v in values])
