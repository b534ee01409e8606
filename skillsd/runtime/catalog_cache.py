"""Where catalogs are cached: one live catalog per (real cwd, extra roots, effective config).

A cached catalog is served without touching the disk while nothing changed. The directories its
scan visited are watched (:mod:`skillsd.runtime.watcher`,
:mod:`skillsd.core.discovery.fs_watch_plan`); events are debounced
(``limits.WATCH_DEBOUNCE_SECONDS`` of quiet), then applied with
:func:`skillsd.core.catalog.skill_catalog.refresh_catalog`, which re-parses only files whose stat
key changed, and every connection that listed the cwd gets ``skills.changed``. Events that arrive
while a build runs are applied once it ends, and every build announces what changed since the
catalog the listeners last heard of (also a forced or config-changed one that starts over).

Watches are set up in the background, never before a reply: once a build's new directories are
watched, one more rescan (with every parse reused) catches what changed in between. When
watching is impossible, or the watcher's thread died, the catalog falls back to stat-validation
on every request; a dead watcher is restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import queue
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, Protocol

from skillsd.core import limits
from skillsd.core.catalog.catalog_delta import ChangeHistory, DeltaIds
from skillsd.core.catalog.fs_catalog_build import build_catalog, refresh_catalog
from skillsd.core.catalog.search import SearchIndex
from skillsd.core.catalog.skill_catalog import Catalog, diff_catalogs
from skillsd.core.catalog.suggest import SuggestIndex
from skillsd.core.discovery.fs_roots import RootPlan, compute_roots
from skillsd.core.discovery.fs_watch_plan import WatchPlan, changed_since, watch_plan
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.real_path import real_path
from skillsd.core.policy.config import Config
from skillsd.core.policy.fs_effective_config import ConfigSource
from skillsd.core.policy.trust import TrustState, resolve_trust
from skillsd.runtime.file_ops import Threads
from skillsd.runtime.watcher import Subscription, WatchService
from skillsd_protocol import Diagnostic
from skillsd_protocol.messages import SkillsChangedParams, WatchInfo

log = logging.getLogger(__name__)

WatchMode = Literal["watching", "stat"]
CacheKey = tuple[str, tuple[str, ...], Config]


#: Reports long work to a request that asked for ``$/progress`` (message, percentage).
Progress = Callable[[str, float | None], None]


class Listener(Protocol):
    """A connection that wants ``skills.changed`` for the catalogs it listed."""

    def notify(self, method: str, params: SkillsChangedParams) -> None: ...


@dataclass(eq=False)
class CachedCatalog:
    """One live catalog and its watch state."""

    key: CacheKey
    plan: RootPlan
    catalog: Catalog | None = None
    mode: WatchMode = "watching"
    reason: str | None = None
    sub: Subscription | None = None
    watch_roots: list[str] = field(default_factory=list)
    #: Paths reported by events not yet applied (None: rescan everything).
    pending: set[str] | None = field(default_factory=set)
    dirty: bool = False
    timer: asyncio.TimerHandle | None = None
    #: The background task setting the watches up, and whether a newer catalog needs it again.
    rewatching: asyncio.Task[None] | None = None
    rewatch_again: bool = False
    #: Rescan once things are quiet, without making requests wait for it.
    verify: bool = False
    #: Replaced by a newer entry (a config edit): its watches must go.
    retired: bool = False
    #: When the scan behind ``catalog`` began (seconds since the epoch).
    scanned_at: float = 0.0
    #: The change sets behind ``skills.list {sinceGeneration}`` (from the first catalog on).
    history: ChangeHistory | None = None
    #: This entry replaced another (a config edit): generations it did not number are unknown.
    replaced_other: bool = False

    def delta_since(self, generation: int) -> DeltaIds | None:
        """What changed since ``generation`` of this entry's catalog, when still known."""
        catalog, history = self.catalog, self.history
        if catalog is None or history is None:
            return None
        return history.since(generation, catalog.generation, catalog.by_id)

    building: asyncio.Future[Catalog] | None = None
    listeners: set[Listener] = field(default_factory=set)
    #: The catalog the listeners last heard of: ``skills.changed`` says what changed since it.
    #: Usually ``catalog`` itself; it differs while a forced or config-changed rebuild starts
    #: over, so what that rebuild finds changed is still announced.
    announced: Catalog | None = None
    #: The search index of ``catalog`` (built on first search, off the event loop).
    search_index: tuple[Catalog, SearchIndex] | None = None
    suggest_index: tuple[Catalog, SuggestIndex] | None = None
    #: The semantic stage's vectors of the same catalog.
    semantic_index: tuple[Catalog, Any] | None = None
    #: What is watched, and which event paths concern the catalog.
    watched: WatchPlan | None = None
    #: The workspace trust of the plan's repository root at the last request.
    trusted: bool = False
    #: The same, with where it comes from (what that request's view reports).
    trust: TrustState | None = None
    #: What the last request's lookup found wrong with the state file.
    state_problem: Diagnostic | None = None
    #: When (in the cache's ticks) the latest build began.
    built_at: int = 0

    def watch_info(self) -> WatchInfo:
        return WatchInfo(mode=self.mode, roots=list(self.watch_roots), reason=self.reason)

    async def settled_watch_info(self) -> WatchInfo:
        """:meth:`watch_info` once the watches being set up in the background are in place
        (for ``context.inspect``: say whether watching works, not that it is being tried)."""
        task = self.rewatching
        if task is not None and not task.done():
            await asyncio.wait({task})  # neither cancels it nor raises its outcome
        return self.watch_info()


@dataclass(frozen=True, slots=True)
class Lookup:
    """What a request's catalog depends on beyond its skill folders, read off the loop by
    :meth:`CatalogCache.look`."""

    real_cwd: str
    config: Config
    repo_root: str
    #: The user's enable flags with the repository's own over them.
    disabled: frozenset[str]
    trust: TrustState
    #: The roots to scan, worked out only when no entry held the key yet.
    plan: RootPlan | None
    #: Why the state file cannot be used (None when it is fine or absent).
    state_problem: Diagnostic | None = None


class _QueuedLookup:
    """A lookup handed to a thread, shared by the requests that arrive before it begins."""

    __slots__ = ("future", "started")

    def __init__(self, future: asyncio.Future[Lookup]) -> None:
        self.future = future
        self.started = False


def _settle(
    future: asyncio.Future[Lookup], result: Lookup | None, exc: BaseException | None
) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        assert result is not None
        future.set_result(result)


class CatalogCache:
    """All live catalogs of the daemon."""

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        home: str,
        watch: bool = True,
        revalidate: bool = True,
        disabled: Callable[[str], frozenset[str]] = lambda _root: frozenset(),
        trust_decisions: Callable[[], Mapping[str, bool]] = dict,
        state_problem: Callable[[], Diagnostic | None] = lambda: None,
    ) -> None:
        self._env = env
        #: Without watching, re-check a catalog's files at every request (a long-lived
        #: process); False: a catalog once built stands (one command of a short-lived one).
        self._revalidate = revalidate
        self._home = home
        self._watch = WatchService(on_overflow=self.on_overflow) if watch else None
        self._disabled = disabled
        self._trust_decisions = trust_decisions
        self._state_problem = state_problem
        self._lookups: dict[tuple[str, tuple[str, ...]], _QueuedLookup] = {}
        #: Where lookups run (one lookup a request: a light hand-off, not an executor's).
        self._threads = Threads(
            queue.SimpleQueue(), name="skillsd-lookup", max_threads=limits.LOOKUP_THREADS
        )
        #: Counts requests and builds: a build begun after a request arrived read the files
        #: after it, so that request may take its catalog instead of checking again.
        self._ticks = 0
        self._max_catalogs = limits.MAX_CATALOGS
        #: Least recently used first.
        self._entries: OrderedDict[CacheKey, CachedCatalog] = OrderedDict()
        self.configs = ConfigSource(env)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._restarting: asyncio.Task[None] | None = None
        self._restart_delay = limits.WATCH_RESTART_SECONDS

    # -- requests ----------------------------------------------------------------------------

    def look(self, cwd: str, extra_roots: tuple[str, ...] = ()) -> Lookup:
        """What the catalog of ``cwd`` depends on beyond its skill folders, read from files (the
        real cwd, the config files, the repository markers, the state file): run it off the
        loop. The root plan is worked out too when no entry holds this key yet."""
        real_cwd = real_path(cwd)
        config, _sources, repo_root = self.configs.for_cwd(real_cwd)
        plan = None
        if (real_cwd, extra_roots, config) not in self._entries:
            plan = compute_roots(
                real_cwd,
                config,
                home=self._home,
                env=self._env,
                client_extra_roots=extra_roots,
                repo_root=repo_root,
            )
        # The merged config's [trust] is the user's own: layering drops a project's.
        trust = resolve_trust(repo_root, self._trust_decisions(), config.trust, home=self._home)
        with contextlib.suppress(SkillsdError):  # a broken user config is for_cwd's to report
            self._max_catalogs = self.configs.user().limits.max_catalogs
        return Lookup(
            real_cwd,
            config,
            repo_root,
            self._disabled(repo_root),
            trust,
            plan,
            self._state_problem(),
        )

    async def _look_off_loop(self, cwd: str, extra_roots: tuple[str, ...]) -> Lookup:
        """:meth:`look` in a thread. Requests for one cwd that arrive before a queued lookup has
        begun share it: it reads the files after each of them arrived, so each still sees
        every change made before it (one thread hop for a burst instead of one per request)."""
        key = (cwd, extra_roots)
        queued = self._lookups.get(key)
        if queued is None or queued.started:
            loop = asyncio.get_running_loop()
            queued = _QueuedLookup(loop.create_future())
            self._lookups[key] = queued

            def forget(future: asyncio.Future[Lookup], queued: _QueuedLookup = queued) -> None:
                if self._lookups.get(key) is queued:
                    del self._lookups[key]
                if not future.cancelled():
                    future.exception()  # retrieved here too: every waiter may have gone

            queued.future.add_done_callback(forget)
            self._threads.submit(partial(self._run_lookup, loop, queued, cwd, extra_roots))
        return await asyncio.shield(queued.future)

    def _run_lookup(
        self,
        loop: asyncio.AbstractEventLoop,
        queued: _QueuedLookup,
        cwd: str,
        extra_roots: tuple[str, ...],
    ) -> Callable[[], None]:
        # Marked before any file is read: a request arriving from now on queues its own.
        queued.started = True
        looked: Lookup | None = None
        failed: BaseException | None = None
        try:
            looked = self.look(cwd, extra_roots)
        except BaseException as exc:  # handed to every request waiting on it
            failed = exc

        def tell() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(_settle, queued.future, looked, failed)

        return tell

    def entry_for(self, looked: Lookup, extra_roots: tuple[str, ...] = ()) -> CachedCatalog | None:
        """The cache entry for a looked-up cwd (created empty on first use), or None when it
        needs a root plan the lookup did not work out (the entry was dropped since)."""
        key: CacheKey = (looked.real_cwd, extra_roots, looked.config)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        else:
            if looked.plan is None:
                return None
            entry = CachedCatalog(key=key, plan=looked.plan)
            # A config edit makes a new entry for the same cwd: retire the old one (its watches,
            # timer and catalog) and keep notifying the connections that listed it.
            for old_key in [k for k in self._entries if k[:2] == key[:2]]:
                old = self._entries.pop(old_key)
                entry.listeners |= old.listeners
                entry.announced = old.announced
                entry.replaced_other = True
                self._retire(old)
            self._entries[key] = entry
            self._bound(keep=key)
        return entry

    def _bound(self, keep: CacheKey | None = None) -> None:
        """Keep at most ``limits.maxCatalogs`` entries: drop the least recently used ones that
        no connection listens to and no build is using, with their watches (a client visiting
        10 000 directories must not leave 10 000 catalogs and their inotify watches behind)."""
        most = self._max_catalogs  # the user's, as the last lookup read it
        if len(self._entries) <= most:
            return
        idle = [
            k
            for k, e in self._entries.items()
            if k != keep and not e.listeners and e.building is None
        ]
        for key in idle[: len(self._entries) - most]:
            self._retire(self._entries.pop(key))

    def _retire(self, entry: CachedCatalog) -> None:
        entry.retired = True
        if entry.timer is not None:
            entry.timer.cancel()
        if entry.rewatching is not None:
            entry.rewatching.cancel()
        if entry.sub is not None and self._watch is not None:
            self._watch.cancel(entry.sub)

    async def get(
        self,
        cwd: str,
        extra_roots: tuple[str, ...] = (),
        *,
        force: bool = False,
        listener: Listener | None = None,
        progress: Progress | None = None,
    ) -> tuple[Catalog, CachedCatalog]:
        """The current catalog for ``cwd``; builds, refreshes or stat-validates as needed."""
        self._loop = asyncio.get_running_loop()
        self._ticks += 1
        arrived = self._ticks
        if self._watch is not None and not self._watch.alive:
            self._watcher_died()
        # Files are statted and read in a thread: the loop never waits on one.
        looked = await self._look_off_loop(cwd, extra_roots)
        while (entry := self.entry_for(looked, extra_roots)) is None:
            looked = await self._look_off_loop(cwd, extra_roots)
        if listener is not None:
            entry.listeners.add(listener)
        if force:
            entry.catalog = None  # rescan from scratch, no reuse
            entry.pending = None
        if entry.catalog is not None and entry.catalog.disabled != looked.disabled:
            # The user's enable flags changed (this daemon, another one, or a hand edit of the
            # state file): re-derive them; refresh_catalog with no paths rescans nothing.
            entry.dirty = True
        entry.trust = looked.trust
        entry.state_problem = looked.state_problem
        trusted = entry.trust.trusted
        if entry.catalog is not None and entry.catalog.plan.trusted != trusted:
            # The repository's trust changed: the plugins only its settings enable come or go.
            entry.pending, entry.dirty = None, True
        entry.trusted = trusted
        fresh = entry.built_at > arrived and entry.building is None
        current = entry.mode == "watching" or not self._revalidate or fresh
        if entry.catalog is not None and current and not entry.dirty:
            return entry.catalog, entry
        return await self._update(entry, progress), entry

    def forget_listener(self, listener: Listener) -> None:
        """``listener`` is gone (a connection closed): it hears nothing more, and the catalogs
        only it kept may now be dropped."""
        for entry in self._entries.values():
            entry.listeners.discard(listener)
        self._bound()

    def entries(self) -> list[CachedCatalog]:
        return list(self._entries.values())

    def close(self) -> None:
        for entry in self._entries.values():
            self._retire(entry)
        if self._watch is not None:
            self._watch.close()

    # -- building ----------------------------------------------------------------------------

    async def _update(self, entry: CachedCatalog, progress: Progress | None = None) -> Catalog:
        if entry.building is not None:
            # Concurrent requests for the same cwd share one scan.
            return await asyncio.shield(entry.building)
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        previous, pending = entry.catalog, entry.pending
        # This build applies every pending path, the post-watch rescan's ones included.
        entry.pending, entry.dirty, entry.verify = set(), False, False
        loop = asyncio.get_running_loop()
        entry.building = loop.create_future()
        self._ticks += 1
        entry.built_at = self._ticks
        if progress is not None:
            progress(f"Scanning {len(entry.plan.roots)} skill roots", 0.0)
        scanned_at = time.time()
        try:
            catalog = await asyncio.to_thread(self._build, entry, previous, pending)
            entry.scanned_at = scanned_at
            entry.catalog = catalog
            entry.building.set_result(catalog)
        except BaseException as exc:
            entry.building.set_exception(exc)
            entry.building.exception()  # mark retrieved: the caller re-raises it
            # What this build was to apply is left for the next one (a request or an event).
            entry.dirty = True
            if pending is None or entry.pending is None:
                entry.pending = None
            else:
                entry.pending |= pending
            raise
        finally:
            entry.building = None
        if (entry.dirty or entry.verify) and entry.timer is None and not entry.retired:
            # Events that came during this build found it busy (their settle returned): apply
            # them now, or they would wait for the next request and never be announced.
            self._settle_later(entry)
        if self._watch is None:
            entry.mode, entry.reason = "stat", "file watching disabled"
        elif (
            previous is None
            or entry.watched is None
            or entry.mode != "watching"
            or not catalog.watches_like(previous)
        ):
            self._rewatch_soon(entry)
        if progress is not None:
            progress(f"{len(catalog.skills)} skills, {len(catalog.errors)} invalid", 100.0)
        if previous is None or entry.history is None:
            # A catalog built from scratch numbers generations from 1 again: a client's
            # generation from before (this entry's, or the one it replaced) means nothing now.
            renumbered = entry.history is not None or entry.replaced_other
            entry.history = ChangeHistory(catalog.generation + (1 if renumbered else 0))
        known, entry.announced = entry.announced, catalog
        if known is None:
            return catalog  # nobody has heard of an older catalog
        diff = diff_catalogs(known, catalog)
        if known is previous:
            moved = catalog.generation > known.generation
            if moved:
                entry.history.record(catalog.generation, diff.added, diff.changed, diff.removed)
        else:
            # Scanned from scratch (forceReload, a config edit): generations started over, so
            # only the content tells whether an edit landed since the last announcement.
            moved = not _same_content(known, catalog)
        # Also when only errors[] or diagnostics[] changed (a new broken SKILL.md): the
        # protocol.
        if diff or moved:
            self._announce(entry, catalog, diff.added, diff.removed, diff.changed)
        return catalog

    def _build(
        self, entry: CachedCatalog, previous: Catalog | None, pending: set[str] | None
    ) -> Catalog:
        disabled = self._disabled_in(entry)
        if previous is not None and previous.disabled != disabled:
            previous = previous.with_disabled(disabled)
        if previous is not None and entry.mode == "watching" and pending is not None:
            return refresh_catalog(previous, pending)
        built = build_catalog(
            entry.plan, entry.key[2], disabled=disabled, previous=previous, trusted=entry.trusted
        )
        # A check that found nothing changed keeps the catalog object, and so what was derived
        # from it (search answers, indexes).
        return previous if previous is not None and _unchanged(previous, built) else built

    def _disabled_in(self, entry: CachedCatalog) -> frozenset[str]:
        # The user's flags with the entry's repository's own flags over them.
        return self._disabled(entry.plan.repo_root)

    def _rewatch_soon(self, entry: CachedCatalog) -> None:
        """Set the watches of the entry's current catalog up in the background."""
        if entry.rewatching is not None and not entry.rewatching.done():
            entry.rewatch_again = True
            return
        entry.rewatching = asyncio.get_running_loop().create_task(self._rewatch_task(entry))

    async def _rewatch_task(self, entry: CachedCatalog) -> None:
        try:
            while True:
                entry.rewatch_again = False
                catalog = entry.catalog
                if catalog is None:
                    return
                added = await asyncio.to_thread(self._rewatch, entry, catalog)
                if added and entry.mode == "watching" and entry.watched is not None:
                    # Changes made between the scan and these watches went unseen: what was
                    # modified since the scan began is refreshed once things are quiet.
                    # Requests meanwhile get the catalog as it is.
                    since = entry.scanned_at - limits.MTIME_SLACK_SECONDS
                    stale = await asyncio.to_thread(changed_since, entry.watched, catalog, since)
                    if stale:
                        if entry.pending is not None:
                            entry.pending.update(stale)
                        entry.verify = True
                        self._settle_later(entry)
                if not entry.rewatch_again:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("watching the catalog of %s failed", entry.key[0])

    def _rewatch(self, entry: CachedCatalog, catalog: Catalog) -> bool:
        """Watch what ``catalog``'s scan visited; True when directories were added."""
        plan = watch_plan(catalog)
        before = entry.watched.directories if entry.watched is not None else frozenset()
        entry.watched = plan
        entry.watch_roots = list(plan.roots)
        assert self._watch is not None
        if entry.sub is None:
            entry.sub = Subscription(
                on_event=functools.partial(self._on_event, entry),
                on_access_change=functools.partial(self._on_access_change, entry),
            )
        self._watch.update(entry.sub, plan.directories)
        if entry.retired:  # retired while this ran in its thread
            self._watch.cancel(entry.sub)
            return False
        if entry.sub.failure is not None:
            entry.mode, entry.reason = "stat", entry.sub.failure
            log.warning("falling back to stat-validation for %s: %s", entry.key[0], entry.reason)
            return False
        entry.mode, entry.reason = "watching", None
        return bool(plan.directories - before)

    def _watcher_died(self) -> None:
        """The watcher's thread stopped: stat-validate every catalog and restart it (once)."""
        watch = self._watch
        assert watch is not None
        if self._restarting is not None:
            return
        reason = "the file watcher stopped; catalogs are stat-validated until it restarts"
        log.warning("%s", reason)
        for entry in self._entries.values():
            entry.mode, entry.reason = "stat", reason
            entry.pending, entry.dirty = None, True
        self._restarting = asyncio.get_running_loop().create_task(self._restart_watcher(watch))

    async def _restart_watcher(self, watch: WatchService) -> None:
        await asyncio.sleep(self._restart_delay)
        try:
            ok = await asyncio.to_thread(watch.restart)
        except Exception:
            log.exception("restarting the file watcher failed")
            ok = False
        for entry in self._entries.values():
            if ok and entry.sub is not None and entry.sub.failure is None:
                entry.mode, entry.reason = "watching", None
            elif not ok:
                entry.reason = "the file watcher stopped and could not be restarted"
            if entry.catalog is not None and not entry.retired:
                # Events during the outage were lost: rescan (dirty) and announce what changed.
                self._settle_later(entry)
        self._restart_delay = (
            limits.WATCH_RESTART_SECONDS if ok else min(60.0, self._restart_delay * 2)
        )
        self._restarting = None

    # -- events (observer thread -> loop) ----------------------------------------------------

    def _on_event(self, entry: CachedCatalog, paths: list[str]) -> None:
        relevant = [p for p in paths if self._relevant(entry, p)]
        if relevant and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._note_event, entry, relevant)

    def _on_access_change(self, entry: CachedCatalog) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._note_access_change, entry)

    def _note_access_change(self, entry: CachedCatalog) -> None:
        # A folder that became readable may hold any number of skills (and folders to watch).
        entry.pending = None
        self._note_event(entry, [])

    @staticmethod
    def _relevant(entry: CachedCatalog, path: str) -> bool:
        return entry.watched is not None and entry.watched.relevant(path)

    def _note_event(self, entry: CachedCatalog, paths: list[str]) -> None:
        if entry.pending is not None:
            entry.pending.update(paths)
        entry.dirty = True
        self._settle_later(entry)

    def _settle_later(self, entry: CachedCatalog) -> None:
        """Update the entry after ``limits.WATCH_DEBOUNCE_SECONDS`` without events."""
        if entry.timer is not None:
            entry.timer.cancel()
        loop = asyncio.get_running_loop()
        entry.timer = loop.call_later(
            limits.WATCH_DEBOUNCE_SECONDS, lambda: loop.create_task(self._settle(entry))
        )

    async def _settle(self, entry: CachedCatalog) -> None:
        entry.timer = None
        if entry.building is not None:
            return  # the build under way settles again when it ends (see _update)
        if (not entry.dirty and not entry.verify) or entry.catalog is None or entry.retired:
            return
        try:
            await self._update(entry)
        except Exception:
            log.exception("refreshing the catalog of %s failed", entry.key[0])

    def on_overflow(self) -> None:
        """The kernel dropped events: nothing can be trusted, so stat-validate from now on."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def degrade() -> None:
            for entry in self._entries.values():
                entry.mode, entry.reason = "stat", "inotify event queue overflowed"
                entry.pending, entry.dirty = None, True
                if entry.catalog is not None and not entry.retired:
                    # The dropped events may have been edits: rescan now and announce them.
                    self._settle_later(entry)

        loop.call_soon_threadsafe(degrade)

    def _announce(
        self,
        entry: CachedCatalog,
        catalog: Catalog,
        added: list[str],
        removed: list[str],
        changed: list[str],
    ) -> None:
        params = SkillsChangedParams(
            cwd=entry.key[0],
            generation=catalog.generation,
            added=added,
            removed=removed,
            changed=changed,
        )
        for listener in list(entry.listeners):
            try:
                listener.notify("skills.changed", params)
            except Exception:
                log.exception("could not notify a listener of skills.changed")
                entry.listeners.discard(listener)


def _unchanged(previous: Catalog, new: Catalog) -> bool:
    """Whether a refresh of ``previous`` found nothing to change."""
    return (
        new.generation == previous.generation
        and new.disabled == previous.disabled
        and new.plan.trusted == previous.plan.trusted
        and _same_content(previous, new)
    )


def _same_content(a: Catalog, b: Catalog) -> bool:
    """Whether two catalogs list the same skills, errors, diagnostics and command files."""
    return (
        a.skills == b.skills
        and a.errors == b.errors
        and a.diagnostics == b.diagnostics
        and a.commands.files == b.commands.files
    )
