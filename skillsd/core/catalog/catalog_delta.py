"""Delta listing (docs/embedding.md): what changed in a catalog since a generation a client already
has.

A live catalog keeps the change sets of its last generations (:class:`ChangeHistory`); an
editor that heard ``skills.changed`` asks ``skills.list {sinceGeneration}`` and gets only what
changed, in O(change). Ids touched in several change sets are folded: a skill added and then
removed since is not in the answer at all, one removed and added again is ``changed``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from skillsd.core import limits

__all__ = ["ChangeHistory", "ChangeSet", "DeltaIds"]


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """The ids a catalog's step to ``generation`` added, changed and removed."""

    generation: int
    added: frozenset[str]
    changed: frozenset[str]
    removed: frozenset[str]


@dataclass(frozen=True, slots=True)
class DeltaIds:
    """What a client at some generation must apply: ids to add or replace, ids to drop."""

    added: list[str]
    changed: list[str]
    removed: list[str]


class ChangeHistory:
    """The change sets of a catalog's last ``keep`` generations."""

    def __init__(self, first_generation: int, keep: int = limits.DELTA_HISTORY) -> None:
        #: The oldest generation a delta can start from.
        self.oldest = first_generation
        self._sets: deque[ChangeSet] = deque(maxlen=keep)

    def record(
        self, generation: int, added: Iterable[str], changed: Iterable[str], removed: Iterable[str]
    ) -> None:
        """The catalog moved to ``generation`` with these changes."""
        if len(self._sets) == self._sets.maxlen:
            self.oldest = self._sets[0].generation  # the step into it is about to be dropped
        self._sets.append(
            ChangeSet(generation, frozenset(added), frozenset(changed), frozenset(removed))
        )

    def since(self, generation: int, current: int, present: Collection[str]) -> DeltaIds | None:
        """The delta from ``generation`` to ``current`` (``present``: the ids the current
        catalog holds), or None when this history does not reach back that far."""
        if generation > current or generation < self.oldest:
            return None
        steps = [s for s in self._sets if s.generation > generation]
        touched: set[str] = set()
        for step in steps:
            touched |= step.added | step.changed | step.removed
        added, changed, removed = [], [], []
        for sid in sorted(touched):
            was = _present_before(sid, steps, now=sid in present)
            now = sid in present
            if now and was:
                changed.append(sid)
            elif now:
                added.append(sid)
            elif was:
                removed.append(sid)
        return DeltaIds(added, changed, removed)


def _present_before(sid: str, steps: list[ChangeSet], *, now: bool) -> bool:
    """Whether ``sid`` was in the catalog before ``steps``, replaying them backwards from
    ``now``."""
    present = now
    for step in reversed(steps):
        if sid in step.added:
            present = False
        elif sid in step.removed:
            present = True
    return present
