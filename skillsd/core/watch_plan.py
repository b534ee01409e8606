"""What to watch so that every change to a catalog's skills is noticed: the one derivation the
daemon's watcher and ``skillsd doctor`` share."""

from __future__ import annotations

import os
from dataclasses import dataclass

from skillsd.core.catalog import Catalog
from skillsd.core.discovery import nearest_existing_ancestor

__all__ = ["WatchPlan", "watch_plan"]


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """The directories to watch for one catalog and how to tell which events concern it."""

    #: ``(directory, recursive)``: existing roots, command folders and skill directories
    #: reached through symlinks recursively; for a root that does not exist yet, its nearest
    #: existing ancestor alone (so the root appearing is noticed).
    targets: frozenset[tuple[str, bool]]
    #: Directories whose contents are the catalog's (events below them are relevant).
    prefixes: tuple[str, ...]
    #: The directories between a missing root and its watched ancestor, the root included.
    ancestors_of_missing: frozenset[str]

    @property
    def directories(self) -> list[str]:
        """The watched directories, sorted."""
        return sorted(path for path, _ in self.targets)


def watch_plan(catalog: Catalog) -> WatchPlan:
    """What to watch for ``catalog`` (checks which roots exist now)."""
    targets: set[tuple[str, bool]] = set()
    prefixes: list[str] = []
    ancestors: set[str] = set()
    # Skill roots, then the legacy command folders (SPEC 14: watched like skills).
    folders = [r.path for r in catalog.roots] + list(catalog.plan.command_dirs)
    for path in folders:
        if os.path.isdir(path):
            targets.add((path, True))
            prefixes.append(path)
        elif os.path.isfile(path):  # a root given as a SKILL.md path
            targets.add((os.path.dirname(path), True))
            prefixes.append(os.path.dirname(path))
        else:
            anchor = nearest_existing_ancestor(path)
            targets.add((anchor, False))
            walk = path
            while walk != anchor and walk != os.path.dirname(walk):
                ancestors.add(walk)
                walk = os.path.dirname(walk)
    for real in catalog.by_real_path:
        skill_dir = os.path.dirname(real)
        if not skill_dir.startswith(tuple(p + os.sep for p in prefixes)):
            targets.add((skill_dir, True))  # reached through a symlink
            prefixes.append(skill_dir)
    return WatchPlan(
        targets=frozenset(targets),
        prefixes=tuple(prefixes),
        ancestors_of_missing=frozenset(ancestors),
    )
