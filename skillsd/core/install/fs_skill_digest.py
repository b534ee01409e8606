"""The digest of a skill folder: what the lock file records and what any tool can recompute.

One line per regular file of the skill (anything named ``.git``, at any depth, excluded;
symlinks and other non-regular entries left out), sorted by the bytes of the path: the path
relative to the skill folder (POSIX ``/``, its UTF-8 bytes; a name that is not UTF-8 keeps its
raw bytes), one NUL byte, the file's lowercase hex SHA-256, ``\\n``. The digest is
``"sha256:"`` + the lowercase hex SHA-256 of those lines. ``docs/install-skills.md`` shows a
shell equivalent.

The per-file digests are kept too: they name the files that differ when a skill was edited.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import NamedTuple

import msgspec

from skillsd.core.fs.bounded_read import sha256_of_file
from skillsd.core.fs.fs_boundary import TreeLimit, walk_tree

__all__ = [
    "DIGEST_PREFIX",
    "FileChanges",
    "ListedFile",
    "TreeTooLarge",
    "compare_files",
    "digest_of_files",
    "file_digests",
    "is_digest",
    "list_files",
    "skill_digest",
]

DIGEST_PREFIX = "sha256:"


class TreeTooLarge(Exception):
    """The folder holds more files or bytes than the caller allows."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class FileChanges(msgspec.Struct, kw_only=True):
    """Relative paths added, changed and removed between two versions of a skill, each sorted."""

    added: list[str] = msgspec.field(default_factory=list)
    changed: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def names(self) -> list[str]:
        """Every path that differs, sorted."""
        return sorted([*self.added, *self.changed, *self.removed])


def is_digest(text: str) -> bool:
    """Whether ``text`` has the digest's form: ``sha256:`` and 64 lowercase hex digits."""
    hex_part = text[len(DIGEST_PREFIX) :]
    return (
        text.startswith(DIGEST_PREFIX)
        and len(hex_part) == 64
        and all(c in "0123456789abcdef" for c in hex_part)
    )


def _hash_file(path: str) -> str:
    # Not following links: the entry was a regular file when listed; a symlink swapped in
    # since is refused.
    return sha256_of_file(path, None, follow_links=False)[0]


class ListedFile(NamedTuple):
    """A regular file of a skill: its relative POSIX path, its path on disk, size and mtime."""

    rel: str
    path: str
    size: int
    mtime_ns: int


def list_files(
    skill_dir: str, *, max_files: int | None = None, max_bytes: int | None = None
) -> list[ListedFile]:
    """Every regular file under ``skill_dir`` (``.git`` left out, symlinks neither followed nor
    listed), walked by the filesystem boundary's :func:`~skillsd.core.fs.fs_boundary.walk_tree`.
    Raises :class:`TreeTooLarge` past ``max_files`` files or ``max_bytes`` bytes, past four
    folders or files per allowed file (empty folders cost a walk too), or deeper than 64
    folders; ``OSError`` if the folder cannot be read."""
    found: list[ListedFile] = []
    total = 0
    entries = None if max_files is None else max_files * 4 + 1000
    try:
        for rel, entry in walk_tree(skill_dir, max_entries=entries):
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            found.append(ListedFile(rel, entry.path, st.st_size, st.st_mtime_ns))
            total += st.st_size
            if max_files is not None and len(found) > max_files:
                raise TreeTooLarge(f"{skill_dir} holds more than {max_files} files", max_files)
            if max_bytes is not None and total > max_bytes:
                raise TreeTooLarge(f"{skill_dir} holds more than {max_bytes} bytes", max_bytes)
    except TreeLimit as exc:
        raise TreeTooLarge(str(exc), exc.limit) from None
    return found


def file_digests(
    skill_dir: str,
    *,
    max_files: int | None = None,
    max_bytes: int | None = None,
    listed: list[ListedFile] | None = None,
) -> dict[str, str]:
    """Relative POSIX path -> lowercase hex SHA-256 of every regular file under ``skill_dir``
    (:func:`list_files`, or the ``listed`` files a caller already has). Raises
    :class:`TreeTooLarge` past the limits (counted before anything is hashed), ``OSError`` if
    the folder cannot be read."""
    if listed is None:
        listed = list_files(skill_dir, max_files=max_files, max_bytes=max_bytes)
    return {f.rel: _hash_file(f.path) for f in listed}


def _path_bytes(rel: str) -> bytes:
    # os.fsencode gives the name's bytes back exactly: UTF-8 for UTF-8 names, the raw bytes
    # (kept by surrogateescape) for the rest.
    return os.fsencode(rel)


def digest_of_files(files: Mapping[str, str]) -> str:
    """The skill digest of a relative path -> hex SHA-256 map."""
    lines = sorted(
        _path_bytes(rel) + b"\0" + hexdigest.encode() + b"\n" for rel, hexdigest in files.items()
    )
    return DIGEST_PREFIX + hashlib.sha256(b"".join(lines)).hexdigest()


def skill_digest(skill_dir: str) -> str:
    """The digest of the skill folder ``skill_dir``."""
    return digest_of_files(file_digests(skill_dir))


def compare_files(before: Mapping[str, str], after: Mapping[str, str]) -> FileChanges:
    """What changed from ``before`` to ``after`` (both relative path -> hex SHA-256)."""
    return FileChanges(
        added=sorted(set(after) - set(before)),
        changed=sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
        removed=sorted(set(before) - set(after)),
    )
