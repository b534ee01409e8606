"""`MemoryBudget`: the bytes a daemon holds for all its peers together, bounded."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from skillsd.core import limits

log = logging.getLogger("skillsd.daemon")


class Holder(Protocol):
    """What holds memory for a peer (a connection): dropped by aborting it."""

    label: str

    def abort(self) -> None: ...


#: ``SKILLSD_MEMORY_BUDGET_BYTES=N`` replaces `limits.MEMORY_BUDGET_BYTES`, read once at start
#: (tests use a small budget to reach it quickly).
MEMORY_BUDGET_ENV = "SKILLSD_MEMORY_BUDGET_BYTES"


class MemoryBudget:
    """The bytes a daemon holds for its peers, across connections: replies queued for a peer
    and unfinished input messages. Each connection reports what it holds; while the total is
    over ``limit`` the connection holding the most (the slowest reader, the largest partial
    message) is dropped, so one budget protects the whole process whatever the client count."""

    __slots__ = ("_held", "limit", "total")

    def __init__(self, limit: int = limits.MEMORY_BUDGET_BYTES) -> None:
        if limit < 1:
            raise ValueError(f"the memory budget must be positive, got {limit}")
        self.limit = limit
        self.total = 0
        self._held: dict[Holder, int] = {}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> MemoryBudget:
        """The budget `MEMORY_BUDGET_ENV` sets, else the default (a bad value is logged)."""
        text = environ.get(MEMORY_BUDGET_ENV)
        if text is None:
            return cls()
        try:
            return cls(int(text))
        except ValueError:
            log.warning("ignoring %s=%r: not a positive integer", MEMORY_BUDGET_ENV, text)
            return cls()

    def update(self, conn: Holder, nbytes: int) -> None:
        """Record that ``conn`` now holds ``nbytes``; drop connections while over the limit."""
        old = self._held.get(conn, 0)
        if nbytes == old:
            return
        self.total += nbytes - old
        if nbytes:
            self._held[conn] = nbytes
        else:
            del self._held[conn]
        while self.total > self.limit and self._held:
            victim = max(self._held, key=self._held.__getitem__)
            # Forget it first: its abort reports 0 and must not find it over budget again.
            held = self._held.pop(victim)
            self.total -= held
            log.warning(
                "%s: the daemon holds %d bytes for its clients, over its memory budget of %d: "
                "dropping this connection, which holds the most (%d bytes)",
                victim.label,
                self.total + held,
                self.limit,
                held,
            )
            victim.abort()
