"""A local copy of one cwd's catalog, kept current the way the context budget intends:
``skills.changed``
says the catalog moved on, and ``skills.list {sinceGeneration}`` sends only what changed (a
full list when the daemon no longer holds the changes since)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from skillsd_client._async_client import AsyncClient, Notification
from skillsd_protocol import Diagnostic, SkillLoadError, SkillMetadata
from skillsd_protocol.messages import ListResult, SkillsChangedParams

__all__ = ["CatalogMirror"]


class CatalogMirror:
    """The skills of ``cwd`` by id, with the catalog's errors and diagnostics, as of
    ``generation``. :meth:`start` lists once and follows ``skills.changed`` from then on;
    :meth:`refresh` catches up now. ``on_change`` is called after each update."""

    def __init__(
        self,
        client: AsyncClient,
        cwd: str,
        on_change: Callable[[CatalogMirror], None] | None = None,
    ) -> None:
        self.client = client
        self.cwd = cwd
        self.on_change = on_change
        self.generation = 0
        self.skills: dict[str, SkillMetadata] = {}
        self.errors: list[SkillLoadError] = []
        self.diagnostics: list[Diagnostic] = []
        #: How many updates came as a delta, and how many as a full list.
        self.deltas = 0
        self.full_lists = 0
        self._lock = asyncio.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> CatalogMirror:
        """List the catalog, then follow its ``skills.changed``."""
        self._unsubscribe = self.client.on_notification(self._changed, "skills.changed")
        await self.refresh()
        return self

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _changed(self, note: Notification) -> None:
        params = note.params
        if isinstance(params, SkillsChangedParams) and params.generation > self.generation:
            task = asyncio.get_running_loop().create_task(self.refresh())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def refresh(self) -> None:
        """Catch up with the daemon: a delta from ``generation``, or the full list."""
        async with self._lock:
            since = self.generation if self.generation else None
            listed = await self.client.list_skills(cwd=self.cwd, since_generation=since)
            self._apply(listed)
        if self.on_change is not None:
            self.on_change(self)

    def _apply(self, listed: ListResult) -> None:
        if listed.delta is None:
            self.full_lists += 1
            self.skills = {s.id: s for s in listed.skills}
        else:
            self.deltas += 1
            for sid in listed.delta.removed:
                self.skills.pop(sid, None)
            for skill in (*listed.delta.added, *listed.delta.changed):
                self.skills[skill.id] = skill
        self.errors = listed.errors
        self.diagnostics = listed.diagnostics
        self.generation = listed.generation
