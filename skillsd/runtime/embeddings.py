"""The semantic stage of ``skills.suggest`` (docs/hooks.md): each skill's and each request's
meaning vector (:mod:`skillsd.core.catalog.meaning_vectors`, the token vectors shipped in the
package as ``meaning_vectors.bin``) and their cosine similarities.

Each skill is embedded from its name, description and ``when_to_use``; the vector is kept in
memory by the SHA-256 of that text (at most :data:`MAX_CACHED`), so a changed skill alone is
embedded again when its catalog changes. Everything here blocks (reading the 4 MB file once,
embedding a catalog): the runtime calls it off the event loop.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from importlib import resources

from skillsd.core.catalog.meaning_vectors import DIMENSIONS, MeaningVectors, cosine, skill_text
from skillsd_protocol import SkillMetadata

__all__ = [
    "MAX_CACHED",
    "SemanticIndex",
    "SemanticModel",
    "SemanticUnavailable",
    "semantic_model_name",
]

log = logging.getLogger(__name__)

#: Skill vectors kept at once, a kilobyte each (the least recently used go first).
MAX_CACHED = 20_000
_FILE = "meaning_vectors.bin"


def semantic_model_name() -> str:
    """What ``skillsd doctor`` names the stage's model."""
    return f"meaning vectors ({DIMENSIONS} dimensions)"


class SemanticUnavailable(RuntimeError):
    """The vectors cannot be read (a damaged install); the message names the file and why."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _skill_text(skill: SkillMetadata) -> str:
    when = skill.host.when_to_use if skill.host is not None else None
    return skill_text(skill.name, skill.description, when)


class SemanticModel:
    """The token vectors, read on first use, and the skill vectors made from them, by text
    digest (one per process). ``data``: a vectors file's bytes, instead of the shipped file's."""

    def __init__(self, data: bytes | None = None) -> None:
        self._data = data
        self._lock = threading.Lock()
        self._loaded: MeaningVectors | None = None
        self._failure: str | None = None
        self._made: OrderedDict[str, array[float] | None] = OrderedDict()

    def _model(self) -> MeaningVectors:
        if self._failure is not None:
            raise SemanticUnavailable(self._failure)  # said once, never read again
        if self._loaded is None:
            data = self._data
            try:
                if data is None:
                    data = resources.files("skillsd.core.catalog").joinpath(_FILE).read_bytes()
                self._loaded = MeaningVectors.from_bytes(data)
            except (OSError, ValueError) as exc:
                self._failure = f"{_FILE}: {exc}"
                log.warning("the semantic stage is off: %s", self._failure)
                raise SemanticUnavailable(self._failure) from None
            self._data = None
        return self._loaded

    def problem(self) -> str | None:
        """Why the vectors cannot be read (reading them if not yet read), or None."""
        try:
            with self._lock:
                self._model()
        except SemanticUnavailable as exc:
            return str(exc)
        return None

    def vectors(self, texts: Sequence[str]) -> list[array[float] | None]:
        """Each text's unit vector (None: no token of it has a vector), embedding only texts
        not seen lately."""
        with self._lock:
            model, made = self._model(), self._made
            out: list[array[float] | None] = []
            for text in texts:
                key = _digest(text)
                if key in made:
                    made.move_to_end(key)
                else:
                    made[key] = model.vector(text)
                    if len(made) > MAX_CACHED:
                        made.popitem(last=False)
                out.append(made[key])
            return out

    def query(self, text: str) -> array[float] | None:
        with self._lock:
            return self._model().vector(text)


class SemanticIndex:
    """The catalog's skills as vectors: ``index(request)`` is each skill's cosine similarity,
    in the order of the skills it was built from (0 for a text without a vector)."""

    def __init__(self, model: SemanticModel, skills: Sequence[SkillMetadata]) -> None:
        self._model = model
        self._vectors = model.vectors([_skill_text(s) for s in skills])

    def __call__(self, request: str) -> Sequence[float]:
        query = self._model.query(request)
        if query is None:
            return [0.0] * len(self._vectors)
        return [0.0 if v is None else cosine(query, v) for v in self._vectors]
