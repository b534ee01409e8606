"""What identifies one version of a file on disk, for "re-read only when it changed" caches."""

from __future__ import annotations

import os

import msgspec

__all__ = ["StatKey", "stat_key"]


class StatKey(msgspec.Struct, frozen=True, array_like=True):
    """A file version: a change in any part (an editor's atomic save makes a new inode) means
    the file must be read again."""

    mtime_ns: int
    size: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> StatKey:
        return cls(st.st_mtime_ns, st.st_size, st.st_ino)


def stat_key(path: str) -> StatKey | None:
    """The current version of the file at ``path`` (symlinks followed), or None if it has none."""
    try:
        return StatKey.of(os.stat(path))
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
