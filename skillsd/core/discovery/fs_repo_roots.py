"""The repository root of a cwd, remembered while the directories that decided it are unchanged.

:func:`~skillsd.core.discovery.fs_roots.find_repo_root` looks for a marker (``.git``, ...) in the
cwd and each of its ancestors: one ``lstat`` per marker per directory, on every request of a process
that serves many (about 0.1 ms for a cwd three levels below ``/`` with no marker). Whether a
marker exists in a directory changes only with that directory's entries or permissions, which
change its ``mtime`` or ``ctime``; so one ``stat`` of each directory the search looked in tells
whether the remembered answer still holds. The directory is statted before its markers are
looked for: a marker made in between shows up as a changed directory on the next call.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from skillsd.core.discovery.fs_roots import ENV_ROOT, find_repo_root

__all__ = ["RepoRoots"]

#: What identifies a directory's entries and permissions at one moment.
_DirKey = tuple[int, int, int, int]

#: Cwds remembered per process (least recently used dropped first).
MAX_REMEMBERED = 256


def _dir_key(path: str) -> _DirKey | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


class RepoRoots:
    """:func:`~skillsd.core.discovery.fs_roots.find_repo_root` with a bounded memory of its
    answers."""

    def __init__(self, env: Mapping[str, str], *, most: int = MAX_REMEMBERED) -> None:
        self._env = env
        self._most = most
        #: (cwd, markers) -> (root, the directories looked in with their keys then).
        self._known: OrderedDict[
            tuple[str, tuple[str, ...]], tuple[str, tuple[tuple[str, _DirKey], ...]]
        ] = OrderedDict()

    def find(self, cwd: str, markers: Iterable[str]) -> str:
        """The repository root of the absolute ``cwd`` (as :func:`find_repo_root` says)."""
        markers = tuple(markers)
        if self._env.get(ENV_ROOT):
            return find_repo_root(cwd, markers, self._env)  # no directory is looked in
        key = (cwd, markers)
        known = self._known.get(key)
        if known is not None:
            root, looked = known
            if all(_dir_key(path) == was for path, was in looked):
                self._known.move_to_end(key)
                return root
            del self._known[key]
        root, seen = self._search(cwd, markers)
        if seen is not None:
            self._known[key] = (root, seen)
            while len(self._known) > self._most:
                self._known.popitem(last=False)
        return root

    @staticmethod
    def _search(
        cwd: str, markers: tuple[str, ...]
    ) -> tuple[str, tuple[tuple[str, _DirKey], ...] | None]:
        """The root, and the directories looked in with their keys (None: one could not be
        statted, so the answer is not remembered)."""
        looked: list[tuple[str, _DirKey]] | None = []
        current = cwd
        while True:
            dir_key = _dir_key(current)
            if dir_key is None:
                looked = None
            elif looked is not None:
                looked.append((current, dir_key))
            if any(os.path.lexists(os.path.join(current, marker)) for marker in markers):
                return current, None if looked is None else tuple(looked)
            parent = os.path.dirname(current)
            if parent == current:
                return cwd, None if looked is None else tuple(looked)
            current = parent
