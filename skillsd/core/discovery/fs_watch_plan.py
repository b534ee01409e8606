"""What to watch so that every change to a catalog is noticed: the one derivation the daemon's
watcher and ``skillsd doctor`` share.

Exactly the directories the scan visited are watched, each on its own (never a recursive
watch, which would walk whatever is there: a symlink loop, all of ``/usr``): the roots and
category folders the scan listed, every skill's directory and the subfolders the catalog reads,
and the command folders. A root or command folder that does not exist yet is noticed through
its nearest existing ancestor (an *anchor*), where only events on the way to it count.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.fs_roots import nearest_existing_ancestor

__all__ = ["WatchPlan", "changed_since", "watch_plan"]


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """The directories to watch for one catalog and how to tell which events concern it."""

    #: Every directory to watch (real paths), each alone.
    directories: frozenset[str]
    #: Directories watched only to see a missing root or command folder appear.
    anchors: frozenset[str]
    #: The directories between a missing folder and its anchor, the folder included.
    ancestors_of_missing: frozenset[str]
    #: The catalog's roots and command folders that exist (what people are shown).
    roots: tuple[str, ...]

    def relevant(self, path: str) -> bool:
        """Whether an event at ``path`` (in a watched directory, or one itself) can change
        the catalog."""
        if path in self.ancestors_of_missing:
            return True
        for directory in (os.path.dirname(path), path):
            if directory in self.directories and directory not in self.anchors:
                return True
        return False


def watch_plan(catalog: Catalog) -> WatchPlan:
    """What to watch for ``catalog`` (checks which missing roots exist now)."""
    content: set[str] = set(catalog.walked)
    content.update(catalog.commands.walked)
    for skill_dir, subdirs in catalog.skill_dirs():
        content.add(skill_dir)
        content.update(os.path.join(skill_dir, sub) for sub in subdirs)
    anchors: set[str] = set()
    ancestors: set[str] = set()
    roots: list[str] = []
    for path in [r.path for r in catalog.roots] + list(catalog.plan.command_dirs):
        if os.path.isdir(path):
            roots.append(path)
            continue
        if os.path.isfile(path):  # a root given as a SKILL.md path: its skill is watched
            continue
        anchor = nearest_existing_ancestor(path)
        real_anchor = os.path.realpath(anchor)
        if real_anchor not in content:
            anchors.add(real_anchor)
        # Events arrive under the anchor's real path: spell the way down the same way.
        walk = real_anchor
        for part in os.path.relpath(path, anchor).split(os.sep):
            walk = os.path.join(walk, part)
            ancestors.add(walk)
    return WatchPlan(
        directories=frozenset(content | anchors),
        anchors=frozenset(anchors),
        ancestors_of_missing=frozenset(ancestors),
        roots=tuple(roots),
    )


def changed_since(plan: WatchPlan, catalog: Catalog, since: float) -> list[str]:
    """What may have changed between a scan and its watches being in place: the watched
    directories and ``SKILL.md`` files modified at or after ``since`` (seconds since the epoch),
    and the folders on the way to a missing root that exist now. A ``stat`` each, nothing kept (a
    rescan would hold a second catalog at its peak)."""
    stale = []
    for path in (*plan.directories, *catalog.by_real_path, *catalog.errors_by_real_path):
        if path in plan.anchors:
            # Anything made in an anchor (a home folder) touches its mtime, and a stale path no
            # skill owns means a full rescan: only the way to a missing root counts, as for its
            # events (below).
            continue
        try:
            if os.stat(path).st_mtime >= since:
                stale.append(path)
        except OSError:
            stale.append(path)  # gone (or unreadable) since: the refresh finds out what
    stale.extend(path for path in plan.ancestors_of_missing if os.path.isdir(path))
    # A root that appeared after the scan yet before the plan: it exists, but nothing in it is
    # watched (no anchor watches the way to it either).
    for root in plan.roots:
        real = os.path.realpath(root)
        if real not in plan.directories and _modified_since(real, since):
            stale.append(real)
    return stale


def _modified_since(path: str, since: float) -> bool:
    try:
        return os.stat(path).st_mtime >= since
    except OSError:
        return False
