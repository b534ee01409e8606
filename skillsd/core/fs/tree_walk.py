"""The one way skillsd walks a directory tree: breadth first, loop-free, bounded.

Discovery's scan, command discovery, a skill's file listing and the directories the watcher
watches all come from :class:`TreeWalk`, so they agree on what is reachable and none of them can
be sent around a symlink loop (``cat/self -> cat``, ``back -> <root>``) or down a tree without
end (``extraRoots: ["/usr"]``):

- every directory is entered once, by its real path (a second way to it, a loop, is skipped);
- at most ``max_dirs`` directories are listed and none deeper than ``max_depth`` below the root
  (``depth_hit``/``dirs_hit`` say that something was left out);
- names in ``skip_names`` (``.git``, ``node_modules``) are never entered (nor, with
  ``skip_hidden``, any name starting with ``.``);
- an entry whose name is not UTF-8 is left out and reported in ``undecodable`` (as text with
  each such byte written ``\\xNN``): every path skillsd reports must be JSON text, and such a
  name could not even be asked for again.

The caller sees each directory's sorted listing and may say, per directory, not to descend
(discovery never enters a skill directory). Nothing here raises for a directory that cannot be
listed: ``on_error`` hears about it and the walk goes on.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from skillsd.core import limits
from skillsd.core.fs.real_path import real_path

__all__ = ["TreeWalk", "WalkedDir", "display_name", "is_undecodable"]


def is_undecodable(name: str) -> bool:
    """Whether a file name came from bytes that are not UTF-8 (Python keeps those as lone
    surrogates, which no JSON text can carry)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def display_name(path: str) -> str:
    """``path`` as text that can always be shown and sent: each byte that is not UTF-8 written
    ``\\xNN`` (the documented form of such a name in diagnostics)."""
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate that no file name produced
        return path.encode("utf-8", errors="backslashreplace").decode("utf-8")
    return raw.decode("utf-8", errors="backslashreplace")


@dataclass(slots=True)
class WalkedDir:
    """One directory the walk listed: as reached, its real path, its depth below the root
    (the root is 0) and its entries in listing order (undecodable names left out)."""

    path: str
    real: str
    depth: int
    entries: list[os.DirEntry[str]]
    #: Set to False to skip this directory's subdirectories.
    descend: bool = True


def _join(real_dir: str, name: str) -> str:
    return real_dir + name if real_dir.endswith(os.sep) else real_dir + os.sep + name


@dataclass(slots=True)
class TreeWalk:
    """A breadth-first walk of ``root`` (see the module docstring); iterate it once."""

    root: str
    max_depth: int = limits.DEFAULT_MAX_DEPTH
    max_dirs: int = limits.DEFAULT_MAX_DIRS
    skip_names: frozenset[str] = limits.SKIPPED_DIR_NAMES
    #: Whether hidden directories (a name starting with ``.``) are never entered either.
    skip_hidden: bool = False
    #: Called with (directory, error) when a directory cannot be listed.
    on_error: Callable[[str, OSError], None] | None = None
    #: The root's listing when the caller already made it (it is not listed again).
    root_entries: list[os.DirEntry[str]] | None = None
    #: The root's real path when the caller already resolved it.
    real_root: str | None = None
    #: Real paths of the directories entered (or queued), the root included.
    visited: set[str] = field(default_factory=set)
    #: Directories listed below the root (the root is not counted against ``max_dirs``).
    listed: int = 0
    depth_hit: bool = False
    dirs_hit: bool = False
    #: Entries left out because their names are not UTF-8, as :func:`display_name` shows them.
    undecodable: list[str] = field(default_factory=list)

    def _list(self, path: str) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError as exc:
            if self.on_error is not None:
                self.on_error(path, exc)
            return None
        return self._decodable(entries)

    def _decodable(self, entries: list[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
        """``entries`` without those whose names are not UTF-8 (which are noted)."""
        # One C-level check for the whole listing: almost every name is plain ASCII.
        if "".join([e.name for e in entries]).isascii():
            return entries
        kept = [e for e in entries if not is_undecodable(e.name)]
        if len(kept) != len(entries):
            self.undecodable += [display_name(e.path) for e in entries if is_undecodable(e.name)]
        return kept

    def __iter__(self) -> Iterator[WalkedDir]:
        real_root = self.real_root or real_path(self.root)
        self.visited.add(real_root)
        entries = self.root_entries
        if entries is not None:
            entries = self._decodable(entries)
        queue: deque[tuple[str, str, int, list[os.DirEntry[str]] | None]] = deque(
            [(self.root, real_root, 0, entries)]
        )
        while queue:
            path, real, depth, listing = queue.popleft()
            if listing is None:
                if depth > 0:
                    if self.listed >= self.max_dirs:
                        self.dirs_hit = True
                        return
                    self.listed += 1
                listing = self._list(path)
                if listing is None:
                    continue
            walked = WalkedDir(path, real, depth, listing)
            yield walked
            if not walked.descend:
                continue
            # By name: which directories fit in ``max_dirs`` does not depend on the listing.
            for entry in sorted(listing, key=_entry_name):
                name = entry.name
                if name in self.skip_names or (self.skip_hidden and name.startswith(".")):
                    continue
                try:
                    if not entry.is_dir():
                        continue
                    link = entry.is_symlink()
                except OSError:
                    continue  # vanished between the listing and the type check
                if depth >= self.max_depth:
                    self.depth_hit = True
                    continue
                try:
                    child_real = os.path.realpath(entry.path) if link else _join(real, name)
                except OSError:
                    continue  # the link changed while being resolved: gone for this walk
                if child_real in self.visited:
                    continue  # a loop, or a directory already reached another way
                self.visited.add(child_real)
                queue.append((entry.path, child_real, depth + 1, None))


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name
