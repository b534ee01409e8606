"""Background static scans (``skills.scan``) of the skills the picker lists, cached per skill id.

The picker shows what the scan sees wherever it shows a skill, so it scans the listed skills
behind the user's back: a few at a time (the daemon runs scans in its small install pool,
shared with installs), the highlighted skill and the rows after it first, and at most
``SCAN_CAP`` waiting at once, so a catalog of thousands of skills costs the scans of what the
user looks at rather than a scan of everything. A result stays until `ScanQueue.forget` (the
daemon said the skill changed) or `ScanQueue.clear` (reload, reconnect).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from skillsd_client import ClientError
from skillsd_protocol.install import ScanFinding, ScanResult

__all__ = ["SCAN_CAP", "SCAN_WORKERS", "ScanQueue", "ScanState"]

#: Scans in flight at once: the daemon's install pool has four slots, and installs need some.
SCAN_WORKERS = 2
#: The most skills waiting to be scanned; the rest are asked for when they are highlighted.
SCAN_CAP = 100


@dataclass(frozen=True, slots=True)
class ScanState:
    """One skill's scan: its findings, or why it could not be scanned."""

    findings: tuple[ScanFinding, ...] = ()
    error: str | None = None

    @property
    def notable(self) -> tuple[ScanFinding, ...]:
        """The warnings and dangers (info findings are not worth a mark)."""
        return tuple(f for f in self.findings if f.severity != "info")

    @property
    def worst(self) -> str | None:
        """``"danger"``, ``"warning"`` or None: what the list marks."""
        severities = {f.severity for f in self.findings}
        for severity in ("danger", "warning"):
            if severity in severities:
                return severity
        return None


class ScanQueue:
    """Scans skills by id with ``scan`` on ``workers`` tasks (`run`), calling ``done(id)``
    after each result is stored in `results`."""

    def __init__(
        self,
        scan: Callable[[str], Awaitable[ScanResult]],
        done: Callable[[str], None],
        *,
        workers: int = SCAN_WORKERS,
        cap: int = SCAN_CAP,
    ) -> None:
        self._scan = scan
        self._done = done
        self._workers = workers
        self._cap = cap
        self.results: dict[str, ScanState] = {}
        self._queue: deque[str] = deque()
        #: id -> a token of the scan in flight; a forgotten id's late answer is dropped.
        self._running: dict[str, object] = {}
        self._wake = asyncio.Event()

    def want(self, ids: Iterable[str]) -> None:
        """Scan ``ids`` (those not known or in flight), in this order, before what was asked
        earlier; what falls beyond the cap waits until it is asked for again."""
        fresh = [i for i in dict.fromkeys(ids) if i not in self.results and i not in self._running]
        first = set(fresh)
        self._queue = deque((fresh + [i for i in self._queue if i not in first])[: self._cap])
        if self._queue:
            self._wake.set()

    def forget(self, ids: Iterable[str]) -> None:
        """Drop what is known about ``ids`` (they changed), including scans in flight."""
        for skill_id in ids:
            self.results.pop(skill_id, None)
            self._running.pop(skill_id, None)

    def clear(self) -> None:
        """Forget every result and everything waiting."""
        self.results.clear()
        self._running.clear()
        self._queue.clear()

    def scanned(self, ids: Sequence[str]) -> int:
        """How many of ``ids`` have a result."""
        return sum(i in self.results for i in ids)

    @property
    def busy(self) -> bool:
        """Whether a scan is waiting or in flight."""
        return bool(self._queue or self._running)

    async def run(self) -> None:
        """Scan what is asked for, until cancelled."""
        await asyncio.gather(*(self._worker() for _ in range(self._workers)))

    async def _worker(self) -> None:
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            skill_id = self._queue.popleft()
            token = object()
            self._running[skill_id] = token
            try:
                state = ScanState(findings=tuple((await self._scan(skill_id)).findings))
            except ClientError as exc:
                state = ScanState(error=str(exc))
            finally:
                # Cancelled or forgotten meanwhile: the id is asked for again when listed.
                forgotten = self._running.get(skill_id) is not token
                if not forgotten:
                    del self._running[skill_id]
            if not forgotten:
                self.results[skill_id] = state
                self._done(skill_id)
