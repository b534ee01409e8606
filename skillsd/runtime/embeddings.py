"""The optional semantic stage of ``skills.suggest`` (docs/hooks.md): static word embeddings that
run offline on a CPU, from the extra ``skillsd[semantic]`` (WordLlama, whose wheel ships its
256-dimension weights).

Each skill is embedded from its name, description and ``when_to_use``; the vector is kept by the
SHA-256 of that text, in memory and in ``<user cache dir>/skillsd/embeddings.npz``, so a catalog
of 10 000 skills is embedded once and a changed skill alone is embedded again. A request is one
embedding and one matrix product. Everything here blocks (the model load, the cache file): the
runtime calls it off the event loop.

The cache file is data, checked before use (:func:`read_cache`): never unpickled, each member's
size in the zip directory and each array's shape and type in its ``.npy`` header checked before
a byte of it is inflated. Anything else is discarded with one warning and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import io
import logging
import os
import shutil
import struct
import threading
import zipfile
import zlib
from collections.abc import Sequence
from typing import Any

import platformdirs

from skillsd.core.fs.atomic_files import atomic_write
from skillsd.core.fs.bounded_read import open_regular_file
from skillsd_protocol import SkillMetadata

__all__ = ["BadCache", "SemanticIndex", "SemanticModel", "read_cache", "semantic_version"]

log = logging.getLogger(__name__)

#: Vectors kept in the cache file at most (the least recently embedded are dropped past it).
_MAX_CACHED = 100_000
#: A key: the hex SHA-256 of the embedded text, stored as 64 UCS-4 characters.
_KEY_CHARS = 64
#: The longest ``.npy`` header read (numpy writes well under 200 bytes for these arrays).
_MAX_HEADER_BYTES = 4096
_NPY_MAGIC = b"\x93NUMPY"
#: A zip's end record: signature, disk numbers, entries (this disk, all), directory size and
#: offset, comment length.
_END_RECORD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = b"PK\x06\x07"


class BadCache(ValueError):
    """The embeddings cache file is not what :class:`SemanticModel` writes; the reason says
    why."""


def _npy_header(member: Any) -> tuple[tuple[int, ...], bool, Any, int]:
    """``(shape, fortran order, dtype, header bytes)`` of the ``.npy`` stream ``member``,
    refusing a header longer than :data:`_MAX_HEADER_BYTES` before reading it."""
    import numpy as np

    lead = member.read(len(_NPY_MAGIC) + 2)
    if len(lead) != len(_NPY_MAGIC) + 2 or not lead.startswith(_NPY_MAGIC):
        raise BadCache("a member is not a .npy array")
    version = (lead[-2], lead[-1])
    if version == (1, 0):
        size_bytes, read_header = 2, np.lib.format.read_array_header_1_0
    elif version == (2, 0):
        size_bytes, read_header = 4, np.lib.format.read_array_header_2_0
    else:
        raise BadCache(f"a .npy format version {version[0]}.{version[1]} it does not write")
    raw_size = member.read(size_bytes)
    if len(raw_size) != size_bytes:
        raise BadCache("a truncated .npy header")
    size = struct.unpack("<H" if size_bytes == 2 else "<I", raw_size)[0]
    if size > _MAX_HEADER_BYTES:
        raise BadCache(f"a .npy header of {size} bytes")
    header = member.read(size)
    if len(header) != size:
        raise BadCache("a truncated .npy header")
    try:
        shape, fortran, dtype = read_header(io.BytesIO(raw_size + header))
    except ValueError as exc:  # numpy's own checks of the header's text
        raise BadCache(f"a .npy header it cannot read ({exc})") from None
    return tuple(shape), bool(fortran), dtype, len(lead) + size_bytes + size


def _check_end_record(raw: Any, size: int) -> None:
    """Refuse a zip whose directory is not two small entries, before ``zipfile`` parses it (a
    directory of millions of entries would cost more than the cache it describes)."""
    if size < _END_RECORD.size + 20:
        raise BadCache(f"{size} bytes, too short for a zip archive")
    raw.seek(size - _END_RECORD.size - 20)
    tail = raw.read(_END_RECORD.size + 20)
    locator, end = tail[:4], _END_RECORD.unpack(tail[20:])
    if end[0] != b"PK\x05\x06" or end[7] != 0 or locator == _ZIP64_LOCATOR:
        raise BadCache("not a zip archive as numpy writes one")
    if end[4] != 2 or end[5] > 4096:
        raise BadCache(f"a zip directory of {end[4]} entries and {end[5]} bytes")
    raw.seek(0)


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: Any, dim: int | None, limit: int
) -> Any:
    """The array of one member, of ``dtype`` and shape ``(n,)`` (``dim`` None) or ``(n, dim)``
    with ``n`` at most :data:`_MAX_CACHED`: its size in the zip directory and its header are
    checked first, and no more bytes than they promise are inflated."""
    import numpy as np

    name = info.filename
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise BadCache(f"{name}: compression method {info.compress_type}")
    if info.file_size > limit:
        raise BadCache(f"{name}: {info.file_size} bytes once inflated")
    with archive.open(info) as member:
        shape, fortran, found, header_bytes = _npy_header(member)
        if found != dtype or fortran:
            raise BadCache(f"{name}: type {found}, not {dtype}")
        rows = shape[0] if shape else -1
        want = (rows,) if dim is None else (rows, dim)
        if shape != want or not 0 <= rows <= _MAX_CACHED:
            form = "(n,)" if dim is None else f"(n, {dim})"
            raise BadCache(f"{name}: shape {shape}, not {form} with n <= {_MAX_CACHED}")
        size = rows * (dim or 1) * dtype.itemsize
        if info.file_size != header_bytes + size:
            raise BadCache(f"{name}: {info.file_size} bytes for {size} of data")
        data = member.read(size)  # to the member's end: its CRC is checked too
    if len(data) != size:
        raise BadCache(f"{name}: truncated")
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def read_cache(path: str, dim: int) -> dict[str, Any]:
    """The vectors of the cache file ``path`` by text digest, each ``dim`` float32s.

    The file must hold exactly ``keys.npy`` (``<U64``, one dimension) and ``vectors.npy``
    (little-endian float32, ``(len(keys), dim)``, finite), at most :data:`_MAX_CACHED` of
    them: the zip directory's uncompressed sizes and the ``.npy`` headers are checked before
    any array is read, so a small file that would inflate to gigabytes is refused unread.
    Raises ``FileNotFoundError`` and :class:`BadCache` (and ``OSError`` from the read)."""
    import numpy as np

    keys_limit = _MAX_HEADER_BYTES + 16 + _MAX_CACHED * _KEY_CHARS * 4
    vectors_limit = _MAX_HEADER_BYTES + 16 + _MAX_CACHED * dim * 4
    fd, st = open_regular_file(path)  # a FIFO or a device there is refused, never waited on
    with os.fdopen(fd, "rb") as raw:
        if st.st_size > keys_limit + vectors_limit + 64 * 1024:
            raise BadCache(f"{st.st_size} bytes, more than a cache of {_MAX_CACHED} vectors")
        _check_end_record(raw, st.st_size)
        try:
            with zipfile.ZipFile(raw) as archive:
                infos = {info.filename: info for info in archive.infolist()}
                if sorted(infos) != ["keys.npy", "vectors.npy"]:
                    raise BadCache(f"members {sorted(infos)}, not keys.npy and vectors.npy")
                keys = _read_member(
                    archive, infos["keys.npy"], np.dtype(f"<U{_KEY_CHARS}"), None, keys_limit
                )
                vectors = _read_member(
                    archive, infos["vectors.npy"], np.dtype("<f4"), dim, vectors_limit
                )
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise BadCache(f"a damaged archive ({exc})") from None
    if len(keys) != len(vectors):
        raise BadCache(f"{len(keys)} keys for {len(vectors)} vectors")
    if not np.isfinite(vectors).all():
        raise BadCache("vectors that are not finite numbers")
    return dict(zip(keys.tolist(), vectors, strict=True))


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

    def _read_cache(self, model: Any) -> None:
        if self._loaded_cache:
            return
        self._loaded_cache = True
        import numpy as np

        path = self._cache_file()
        dim = int(np.asarray(model.embed(["dimension"], norm=True)).shape[1])
        try:
            self._vectors.update(read_cache(path, dim))
        except FileNotFoundError:
            pass
        except Exception as exc:  # whatever is wrong with it, a cache is only thrown away
            log.warning("discarding the embedding cache %s (%s); it is rebuilt", path, exc)
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _write_cache(self) -> None:
        import numpy as np

        keys = list(self._vectors)[-_MAX_CACHED:]
        data = io.BytesIO()
        np.savez(
            data,
            keys=np.array(keys, dtype=f"<U{_KEY_CHARS}"),
            vectors=np.stack([self._vectors[k] for k in keys]).astype("<f4", copy=False),
        )
        try:
            # Derived from the model and the skills: a crash may lose it, never tear it.
            atomic_write(self._cache_file(), data.getvalue(), durable=False)
        except OSError as exc:
            log.warning("cannot write the embedding cache %s: %s", self._cache_file(), exc)

    def vectors(self, texts: Sequence[str]) -> Any:
        """A (len(texts), dim) matrix of unit vectors, embedding only texts not seen before."""
        import numpy as np

        with self._lock:
            model = self._load()
            self._read_cache(model)
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
