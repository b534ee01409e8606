"""Remote skills in a running process: the background refresh of every configured remote's
listing, and the fetch-and-verify a remote skill goes through before it is loaded, read or
invoked. The network is only ever touched in threads, each conversation within one short
timeout (:mod:`skillsd.runtime.remote_http`); the event loop never waits on a remote.

A refresh writes the remote's folders (:mod:`skillsd.runtime.remote_store`), which the catalogs
watch like any other root: a remote's new or changed skills reach every client as a catalog
change.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import Config, RemoteConfig
from skillsd.core.remote.fs_remote_roots import remotes_in_effect
from skillsd.runtime.remote_store import Loaded, RemoteStore
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.errors import InvalidSkillData

__all__ = ["RemoteSkills", "refresh_due", "retry_delay"]

log = logging.getLogger(__name__)

#: How often the background loop looks for a listing past its ttl (a ttl of 0 means this).
CHECK_SECONDS = 2.0
#: A remote that did not answer is asked again after this long, then twice as long after each
#: further failure, up to :data:`MAX_RETRY_SECONDS` (until it answers: then its ttl rules).
FIRST_RETRY_SECONDS = 2.0
MAX_RETRY_SECONDS = 300.0


def retry_delay(failures: int) -> float:
    """How long the background refresh waits after ``failures`` (>= 1) failures in a row."""
    return min(FIRST_RETRY_SECONDS * 2.0 ** min(failures - 1, 32), MAX_RETRY_SECONDS)


class RemoteSkills:
    """The remotes of one process."""

    def __init__(self, store: RemoteStore | None = None) -> None:
        self.store = store or RemoteStore()
        self._busy: dict[str, asyncio.Lock] = {}
        self._loop_task: asyncio.Task[None] | None = None
        #: Remotes of catalogs in use (a trusted repository's among them), by name.
        self._followed: dict[str, RemoteConfig] = {}
        #: Remote name -> when (monotonic) its listing is past its ttl, or it may be asked
        #: again after a failure.
        self._due: dict[str, float] = {}
        #: Remote name -> how many background refreshes in a row it did not answer.
        self._failures: dict[str, int] = {}

    def start(self, user_config: Callable[[], Config], config: Config, trusted: bool) -> None:
        """Refresh in the background, from now on, the user's remotes and those of a catalog
        in use (``config``, its repository ``trusted`` or not)."""
        for remote in remotes_in_effect(config, trusted):
            self._followed.setdefault(remote.name, remote)
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(
                self._refresh_loop(user_config)
            )

    def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            self._loop_task = None

    def _lock(self, name: str) -> asyncio.Lock:
        return self._busy.setdefault(name, asyncio.Lock())

    async def _refresh_loop(self, user_config: Callable[[], Config]) -> None:
        while True:
            try:
                remotes = (await asyncio.to_thread(user_config)).remote
            except SkillsdError:
                remotes = ()  # a broken config says so elsewhere; the remotes wait for a fix
            mine = {r.name for r in remotes}
            for remote in [*remotes, *(r for r in self._followed.values() if r.name not in mine)]:
                await self.refresh(remote)
            await asyncio.sleep(CHECK_SECONDS)

    async def refresh(self, remote: RemoteConfig) -> None:
        """Ask ``remote`` for its listing once the cached one is past its ttl (in a thread).
        A remote that does not answer is asked again with exponential backoff
        (:func:`retry_delay`), not at every turn of the loop."""
        if time.monotonic() < self._due.get(remote.name, 0.0):
            return
        lock = self._lock(remote.name)
        if lock.locked():
            return  # a refresh or a load of it is under way
        async with lock:
            try:
                listing, error = await asyncio.to_thread(self.store.try_refresh, remote)
            except OSError:
                log.warning("cannot write the cache of the remote %r", remote.name, exc_info=True)
                listing, error = None, "cache"
        if error is not None:
            failures = self._failures[remote.name] = self._failures.get(remote.name, 0) + 1
            self._due[remote.name] = time.monotonic() + retry_delay(failures)
            return
        self._failures.pop(remote.name, None)
        if listing is not None and listing.url == remote.url:
            left = listing.fetched_at + listing.lifetime(remote.refresh_seconds) - time.time()
            self._due[remote.name] = time.monotonic() + max(left, 0.0)

    async def ready(self, skill: SkillMetadata, config: Config, trusted: bool) -> None:
        """Make ``skill``'s folder hold its verified files before it is read (nothing for a
        skill that is not a remote's). Raises ``invalid_skill`` naming the check that refused
        it, or saying the remote cannot be reached and nothing verified is kept."""
        if skill.remote is None:
            return
        remote = _remote_of(skill, config, trusted)
        async with self._lock(remote.name):
            loaded = await asyncio.to_thread(_load, self.store, remote, skill)
        _accept(skill, loaded)


def refresh_due(store: RemoteStore, config: Config, trusted: bool) -> list[tuple[str, str]]:
    """For a process no background refresh serves (one CLI command): each remote in effect asked
    now for its listing when the cached one is past its ttl, one short timeout per remote at
    most; a remote that does not answer keeps its last listing, marked stale, as in the daemon.
    Blocks. Returns each remote that failed, with why."""
    failed: list[tuple[str, str]] = []
    for remote in remotes_in_effect(config, trusted):
        try:
            _listing, error = store.try_refresh(remote)
        except OSError as exc:
            error = f"cannot write its cache: {exc}"
        if error is not None:
            failed.append((remote.name, error))
    return failed


def _remote_of(skill: SkillMetadata, config: Config, trusted: bool) -> RemoteConfig:
    assert skill.remote is not None
    name = skill.remote.name
    remote = next((r for r in remotes_in_effect(config, trusted) if r.name == name), None)
    if remote is None:
        raise _refused(skill, "remote.unknown", f"the remote {name!r} is not configured")
    return remote


def _load(store: RemoteStore, remote: RemoteConfig, skill: SkillMetadata) -> Loaded:
    try:
        return store.load(remote, skill.name)
    except OSError as exc:
        why = f"the cache of the remote {remote.name!r} cannot be written: {exc}"
        raise _refused(skill, "remote.cache", why) from None


def _accept(skill: SkillMetadata, loaded: Loaded) -> None:
    """Nothing when ``skill``'s folder now holds its verified files; else the refusal."""
    assert skill.remote is not None
    if loaded.refusal is not None:
        refusal = loaded.refusal
        raise _refused(
            skill,
            f"remote.{refusal.check}",
            f"refused: {refusal} (the server's copy does not match its listing)",
            refusal.file,
        )
    if loaded.folder is None:
        raise _refused(skill, "remote.unreachable", loaded.error or "cannot be fetched")
    if loaded.stale:
        log.info(
            "remote %r unreachable: serving the last verified %s", skill.remote.name, skill.name
        )


def _refused(skill: SkillMetadata, code: str, why: str, file: str | None = None) -> SkillsdError:
    label = skill.qualified_name or skill.name
    message = f"remote skill {label}: {why}"
    note = Diagnostic(severity="error", code=code, message=message, field=file)
    return SkillsdError(message, InvalidSkillData(path=skill.path, diagnostics=[note]))
