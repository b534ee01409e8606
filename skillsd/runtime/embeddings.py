"""The optional semantic stage of ``skills.suggest`` (docs/hooks.md): static word embeddings that
run offline on a CPU, from the extra ``skillsd[semantic]`` (WordLlama, whose wheel ships its
256-dimension weights).

Each skill is embedded from its name, description and ``when_to_use``; the vector is kept by the
SHA-256 of that text, in memory and in ``<user cache dir>/skillsd/embeddings.npz``, so a catalog
of 10 000 skills is embedded once and a changed skill alone is embedded again. A request is one
embedding and one matrix product. Everything here blocks (the model load, the cache file): the
runtime calls it off the event loop.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from typing import Any

import platformdirs

from skillsd_protocol import SkillMetadata

__all__ = ["SemanticIndex", "SemanticModel", "semantic_version"]

log = logging.getLogger(__name__)

#: Vectors kept in the cache file at most (the least recently embedded are dropped past it).
_MAX_CACHED = 100_000


def semantic_version() -> str | None:
    """The installed embedding library's version, or None without the extra."""
    if importlib.util.find_spec("wordllama") is None:
        return None
    try:
        return f"wordllama {importlib.metadata.version('wordllama')}"
    except importlib.metadata.PackageNotFoundError:
        return "wordllama"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _skill_text(skill: SkillMetadata) -> str:
    when = skill.host.when_to_use if skill.host is not None and skill.host.when_to_use else ""
    return f"{skill.name.replace('-', ' ')}. {skill.description} {when}".strip()


class SemanticModel:
    """The loaded model and the vectors it made, by text digest (one per process)."""

    def __init__(self, cache_dir: str | None = None) -> None:
        self._dir = cache_dir or platformdirs.user_cache_dir("skillsd")
        self._lock = threading.Lock()
        self._model: Any = None
        self._vectors: dict[str, Any] = {}
        self._loaded_cache = False

    def _load(self) -> Any:
        if self._model is None:
            from wordllama import WordLlama

            # WordLlama looks for its tokenizer under a folder name its wheel does not use:
            # load from a copy of the wheel's files, never from the network.
            package = os.path.dirname(importlib.util.find_spec("wordllama").origin or "")  # type: ignore[union-attr]
            where = os.path.join(self._dir, "wordllama")
            for sub in ("weights", "tokenizers"):
                os.makedirs(os.path.join(where, sub), exist_ok=True)
                source = os.path.join(package, sub)
                for name in os.listdir(source):
                    target = os.path.join(where, sub, name)
                    if os.path.isfile(os.path.join(source, name)) and not os.path.exists(target):
                        shutil.copyfile(os.path.join(source, name), target)
            self._model = WordLlama.load(cache_dir=where, disable_download=True)
        return self._model

    def _cache_file(self) -> str:
        return os.path.join(self._dir, "embeddings.npz")

    def _read_cache(self) -> None:
        if self._loaded_cache:
            return
        self._loaded_cache = True
        import numpy as np

        try:
            with np.load(self._cache_file()) as data:
                self._vectors.update(zip(data["keys"].tolist(), data["vectors"], strict=True))
        except (OSError, ValueError, KeyError) as exc:
            if not isinstance(exc, FileNotFoundError):
                log.warning("ignoring the embedding cache %s: %s", self._cache_file(), exc)

    def _write_cache(self) -> None:
        import numpy as np

        keys = list(self._vectors)[-_MAX_CACHED:]
        staged = self._cache_file() + f".{os.getpid()}.tmp.npz"
        try:
            os.makedirs(self._dir, exist_ok=True)
            np.savez(
                staged, keys=np.array(keys), vectors=np.stack([self._vectors[k] for k in keys])
            )
            os.replace(staged, self._cache_file())
        except OSError as exc:
            log.warning("cannot write the embedding cache %s: %s", self._cache_file(), exc)

    def vectors(self, texts: Sequence[str]) -> Any:
        """A (len(texts), dim) matrix of unit vectors, embedding only texts not seen before."""
        import numpy as np

        with self._lock:
            model = self._load()
            self._read_cache()
            digests = [
                hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts
            ]
            new = [(d, t) for d, t in zip(digests, texts, strict=True) if d not in self._vectors]
            if new:
                made = model.embed([t for _, t in new], norm=True)
                self._vectors.update(zip((d for d, _ in new), made, strict=True))
                self._write_cache()
            return np.stack([self._vectors[d] for d in digests]) if digests else np.zeros((0, 0))

    def query(self, text: str) -> Any:
        with self._lock:
            return self._load().embed([text], norm=True)[0]


class SemanticIndex:
    """The catalog's skills as vectors: ``index(request)`` is each skill's cosine similarity,
    in the order of the skills it was built from."""

    def __init__(self, model: SemanticModel, skills: Sequence[SkillMetadata]) -> None:
        self._model = model
        self._matrix = model.vectors([_skill_text(s) for s in skills])

    def __call__(self, request: str) -> Sequence[float]:
        if self._matrix.size == 0:
            return []
        similarities: Sequence[float] = (self._matrix @ self._model.query(request)).tolist()
        return similarities
