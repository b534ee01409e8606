"""The daemon-wide state every handler shares: catalogs, sessions, search indexes.

Handlers reach the core only through here, so "which catalog does this request see" (cwd,
session, extra roots, per-session enable flags) is decided in exactly one place.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from skillsd.core.catalog import Catalog
from skillsd.core.config import Config, PermissionsConfig
from skillsd.core.permissions import Check, Policy, evaluate
from skillsd.core.search import SearchIndex
from skillsd.core.sessions import Session, SessionStore
from skillsd.core.state import StateStore, default_state_path
from skillsd.daemon.catalog_cache import CachedCatalog, CatalogCache, Listener, Progress
from skillsd_protocol.messages import SearchResult


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
    #: The user's persistent state: disabled skills, ``always`` permission decisions.
    state: StateStore
    home: str
    env: Mapping[str, str]
    sessions: SessionStore = field(default_factory=SessionStore)
    _policies: dict[PermissionsConfig, Policy] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        watch: bool = True,
        state_path: str | None = None,
    ) -> Services:
        env = os.environ if env is None else env
        home = os.path.expanduser("~")
        state = StateStore(state_path or default_state_path())
        catalogs = CatalogCache(env=env, home=home, watch=watch, disabled=state.disabled)
        return cls(
            cwd=os.getcwd() if cwd is None else cwd,
            catalogs=catalogs,
            state=state,
            home=home,
            env=env,
        )

    def session(self, session_id: str | None) -> Session | None:
        """The open session named, or None; an unknown id is ``session_not_found``."""
        return None if session_id is None else self.sessions.get(session_id)

    def request_cwd(self, cwd: str | None, session: Session | None) -> str:
        """A request's cwd: the param (relative to the daemon's), else the session's, else the
        daemon's."""
        if cwd is not None:
            return os.path.join(self.cwd, cwd)
        return session.cwd if session is not None else self.cwd

    def config_for(self, cwd: str | None, session: Session | None) -> Config:
        """The effective config of a request's cwd (re-read when a config file changed)."""
        real = os.path.realpath(self.request_cwd(cwd, session))
        return self.catalogs.configs.for_cwd(real)[0]

    def check(self, config: Config, session: Session | None, tool: str, input: str | None) -> Check:
        """The six-layer decision for one call, with the session's memory and grants."""
        policy = self._policies.get(config.permissions)
        if policy is None:
            policy = self._policies[config.permissions] = Policy.from_config(config.permissions)
        return evaluate(
            policy,
            tool,
            input,
            session_memory=session.remembered if session is not None else None,
            always=self.state.always(),
            grants=session.grants() if session is not None else None,
        )

    async def view(
        self,
        *,
        cwd: str | None,
        session_id: str | None,
        connection_roots: Iterable[str] = (),
        extra_roots: Iterable[str] = (),
        force: bool = False,
        listener: Listener | None = None,
        progress: Progress | None = None,
    ) -> View:
        """The catalog for a request: cwd (param > session > daemon), all extra roots, and the
        session's enable overrides applied. ``progress`` hears about a scan, if one is needed."""
        session = self.session(session_id)
        real_cwd = self.request_cwd(cwd, session)
        roots = [*connection_roots, *(session.extra_roots if session else ()), *extra_roots]
        catalog, entry = await self.catalogs.get(
            real_cwd,
            tuple(dict.fromkeys(roots)),
            force=force,
            listener=listener,
            progress=progress,
        )
        if session is not None and session.enabled_overrides:
            catalog = catalog.with_overrides(session.enabled_overrides)
        return View(catalog, entry, session)

    async def search(
        self,
        view: View,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        tags: list[str] | None = None,
        for_model: bool = False,
    ) -> SearchResult:
        """Run a query over the view with the config's search limits (``for_model`` leaves out
        the skills only the user may invoke, SPEC 13)."""
        index, disabled = await self.search_index(view)
        if for_model and view.catalog.model_hidden:
            disabled = disabled | view.catalog.model_hidden
        limits = view.catalog.config.search
        return index.search(
            query,
            limit=limit,
            scope=scope,
            tags=tags,
            cwd=view.cwd,
            disabled_ids=disabled,
            default_limit=limits.default_limit,
            max_limit=limits.max_limit,
        )

    async def search_index(self, view: View) -> tuple[SearchIndex, frozenset[str]]:
        """A search index for the view and the ids it must treat as disabled.

        The index of the entry's base catalog is kept on the cache entry while that catalog is
        current and built in a worker thread (a 10 000-skill index takes most of a second); a
        session's disables are passed at query time. Only a session that re-enables a skill the
        user disabled needs an index of its own (rare, so it is not cached).
        """
        base = view.entry.catalog
        overrides = view.session.enabled_overrides if view.session is not None else {}
        if base is None or any(
            on and (s := base.by_id.get(sid)) is not None and not s.enabled
            for sid, on in overrides.items()
        ):
            return await asyncio.to_thread(SearchIndex, view.catalog.skills), frozenset()
        cached = view.entry.search_index
        if cached is None or cached[0] is not base:
            cached = (base, await asyncio.to_thread(SearchIndex, base.skills))
            view.entry.search_index = cached
        return cached[1], frozenset(sid for sid, on in overrides.items() if not on)
