"""The daemon-wide state every handler shares: catalogs, sessions, search indexes.

Handlers reach the core only through here, so "which catalog does this request see" (cwd,
session, extra roots, per-session enable flags) is decided in exactly one place.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from skillsd.core.catalog import Catalog
from skillsd.core.search import SearchIndex
from skillsd.core.sessions import Session, SessionStore
from skillsd.daemon.catalog_cache import CachedCatalog, CatalogCache, Listener


@dataclass(frozen=True, slots=True)
class View:
    """The catalog one request sees, with the cache entry and session it came from."""

    catalog: Catalog
    entry: CachedCatalog
    session: Session | None

    @property
    def cwd(self) -> str:
        return self.catalog.cwd


@dataclass
class Services:
    """Everything the handlers share. Built once per daemon process."""

    cwd: str
    catalogs: CatalogCache
    sessions: SessionStore = field(default_factory=SessionStore)
    #: The search index of each cache entry's current base catalog.
    _indexes: dict[int, tuple[Catalog, SearchIndex]] = field(default_factory=dict)

    @classmethod
    def create(
        cls, *, cwd: str | None = None, env: Mapping[str, str] | None = None, watch: bool = True
    ) -> Services:
        catalogs = CatalogCache(
            env=os.environ if env is None else env, home=os.path.expanduser("~"), watch=watch
        )
        return cls(cwd=os.getcwd() if cwd is None else cwd, catalogs=catalogs)

    def session(self, session_id: str | None) -> Session | None:
        """The open session named, or None; an unknown id is ``session_not_found``."""
        return None if session_id is None else self.sessions.get(session_id)

    async def view(
        self,
        *,
        cwd: str | None,
        session_id: str | None,
        connection_roots: Iterable[str] = (),
        extra_roots: Iterable[str] = (),
        force: bool = False,
        listener: Listener | None = None,
    ) -> View:
        """The catalog for a request: cwd (param > session > daemon), all extra roots, and the
        session's enable overrides applied."""
        session = self.session(session_id)
        base = session.cwd if session is not None and cwd is None else self.cwd
        real_cwd = os.path.join(self.cwd, cwd) if cwd is not None else base
        roots = [*connection_roots, *(session.extra_roots if session else ()), *extra_roots]
        catalog, entry = await self.catalogs.get(
            real_cwd, tuple(dict.fromkeys(roots)), force=force, listener=listener
        )
        if session is not None and session.enabled_overrides:
            catalog = catalog.with_overrides(session.enabled_overrides)
        return View(catalog, entry, session)

    def search_index(self, view: View) -> tuple[SearchIndex, frozenset[str]]:
        """A search index for the view and the ids it must treat as disabled.

        The index of the entry's base catalog is cached while that catalog is current; a
        session's disables are passed at query time. Only a session that re-enables a skill the
        user disabled needs an index of its own (rare, so it is not cached).
        """
        base = view.entry.catalog
        overrides = view.session.enabled_overrides if view.session is not None else {}
        if base is None or any(
            on and (s := base.by_id.get(sid)) is not None and not s.enabled
            for sid, on in overrides.items()
        ):
            return SearchIndex(view.catalog.skills), frozenset()
        key = id(view.entry)
        cached = self._indexes.get(key)
        if cached is None or cached[0] is not base:
            cached = (base, SearchIndex(base.skills))
            self._indexes[key] = cached
        return cached[1], frozenset(sid for sid, on in overrides.items() if not on)
