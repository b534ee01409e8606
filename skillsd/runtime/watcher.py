"""File watching for live catalogs: one watch per directory the scan visited -> "this catalog may
be stale" callbacks.

This adapter only translates events; deciding what changed is the catalog's job (it re-stats and
re-parses what differs). Each directory is watched alone
(:mod:`skillsd.core.discovery.fs_watch_plan`): a recursive watch would walk whatever is below a
root, symlink loops and all of ``/usr`` included, while the scan's walk is bounded and loop-free.

On Linux one inotify instance and one reader thread serve every catalog of the daemon: watchdog's
inotify bindings (``inotify_c``) are used directly, because its observers start a thread per watched
directory and keep ~1 KB of bookkeeping per watch (a 10 000-skill catalog watches ~19 000
folders). Other systems use watchdog's observer, one non-recursive watch per directory.

The reader thread can die (an error reading the kernel queue); :meth:`WatchService.alive` says
so and :meth:`WatchService.restart` sets every subscription's watches up again on a new one.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import select
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


try:  # Linux
    from watchdog.observers import inotify_c
except (ImportError, OSError):  # pragma: no cover - other systems
    inotify_c = None  # type: ignore[assignment]


@dataclass(eq=False)
class Subscription:
    """One catalog's watches. ``failure`` says why watching is impossible (then stat mode)."""

    #: Called on the watcher's thread with the paths an event touched.
    on_event: Callable[[list[str]], None]
    #: Called on the watcher's thread when a directory's mode or owner changed: one the scan
    #: could not read may have become readable (the catalog rescans).
    on_access_change: Callable[[], None] | None = None
    #: Watched directory -> its watch (a watch descriptor, or watchdog's watch object).
    watches: dict[str, Any] = field(default_factory=dict)
    #: The directories last asked for (a restart sets them all up again).
    wanted: frozenset[str] = frozenset()
    failure: str | None = None
    #: Watch descriptor -> directory (inotify reports events by descriptor).
    _dir_of: dict[int, str] = field(default_factory=dict, repr=False)
    _id: int = field(default_factory=itertools.count(1).__next__, repr=False)


class _Inotify(threading.Thread):
    """One inotify instance and the thread that reads it: events go to ``dispatch(wd, mask,
    name)``. Stopped with :meth:`stop` (a pipe wakes the blocked read)."""

    def __init__(self, dispatch: Callable[[int, int, bytes], None]) -> None:
        super().__init__(name=WATCHER_THREAD, daemon=True)
        assert inotify_c is not None
        fd = inotify_c.inotify_init()
        if fd == -1:
            _raise_inotify_error()
        self.fd = fd
        self._dispatch = dispatch
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False

    def add(self, path: str) -> int:
        assert inotify_c is not None
        wd = inotify_c.inotify_add_watch(self.fd, os.fsencode(path), _MASK)
        if wd == -1:
            _raise_inotify_error()
        return int(wd)

    def remove(self, wd: int) -> None:
        assert inotify_c is not None
        inotify_c.inotify_rm_watch(self.fd, inotify_c.WatchDescriptor(wd))  # gone: no matter

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_w, b"!")

    def run(self) -> None:
        assert inotify_c is not None
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            while not self._stopping:
                ready = {fd for fd, _ in poller.poll()}
                if self._wake_r in ready or self._stopping:
                    break
                try:
                    buffer = os.read(self.fd, 64 * 1024)
                except InterruptedError:
                    continue
                for wd, mask, _cookie, name in inotify_c.InotifyFD._parse_event_buffer(buffer):
                    try:
                        self._dispatch(wd, mask, name)
                    except Exception:  # never let one event end the thread every catalog needs
                        log.exception("a watch event could not be handled")
        finally:
            for fd in (self.fd, self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _raise_inotify_error() -> None:
    assert inotify_c is not None
    inotify_c.InotifyFD._raise_error()
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))  # the one it leaves out


if inotify_c is not None:
    _C = inotify_c.InotifyConstants
    _MASK = (
        _C.IN_CREATE
        | _C.IN_DELETE
        | _C.IN_MODIFY
        | _C.IN_CLOSE_WRITE
        | _C.IN_MOVED_FROM
        | _C.IN_MOVED_TO
        | _C.IN_ATTRIB
        | _C.IN_DELETE_SELF
        | _C.IN_MOVE_SELF
        | _C.IN_ONLYDIR
    )

#: The name of the watcher's reader thread.
WATCHER_THREAD = "skillsd-watcher"


class _ObserverHandler:
    """watchdog observer events (non-Linux) -> a subscription's callback."""

    def __init__(self, sub: Subscription) -> None:
        self._sub = sub

    def dispatch(self, event: Any) -> None:
        paths = [os.fsdecode(event.src_path)]
        if getattr(event, "dest_path", ""):
            paths.append(os.fsdecode(event.dest_path))
        self._sub.on_event(paths)


class WatchService:
    """Owns the watcher's thread; catalogs subscribe with the directories they need watched."""

    def __init__(self, on_overflow: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._on_overflow = on_overflow
        self._fd: Any = None  # _Inotify, or watchdog's observer elsewhere
        self._start_error: str | None = None
        self._subs: set[Subscription] = set()
        #: Watch descriptor -> the subscription watching it, or a tuple of them when several
        #: catalogs watch the same folder (one watch; the common single owner costs no tuple).
        self._owners: dict[int, Subscription | tuple[Subscription, ...]] = {}

    def _ensure_started(self) -> Any:
        if self._fd is None and self._start_error is None:
            try:
                fd: Any
                if inotify_c is not None:
                    fd = _Inotify(self._dispatch)
                else:  # pragma: no cover - other systems
                    from watchdog.observers import Observer

                    fd = Observer()
                    fd.daemon = True
                fd.start()
                self._fd = fd
            except OSError as exc:
                self._start_error = f"file watching unavailable: {exc.strerror or exc}"
        return self._fd

    @property
    def alive(self) -> bool:
        """False once the watcher's thread has stopped (never started counts as alive: there is
        nothing to restart)."""
        fd = self._fd
        return fd is None or fd.is_alive()

    def _dispatch(self, wd: int, mask: int, name: bytes) -> None:
        """One inotify event, on the reader thread."""
        if mask & _C.IN_Q_OVERFLOW:
            if self._on_overflow is not None:
                self._on_overflow()
            return
        with self._lock:
            owners = _as_tuple(self._owners.get(wd))
            if mask & _C.IN_IGNORED:  # the folder is gone (or was unwatched)
                self._owners.pop(wd, None)
                gone = [(sub, sub._dir_of.pop(wd, None)) for sub in owners]
                for sub, directory in gone:
                    if directory is not None:
                        sub.watches.pop(directory, None)
        if mask & _C.IN_IGNORED:
            for sub, directory in gone:
                if directory is not None:
                    sub.on_event([directory])
            return
        for sub in owners:
            directory = sub._dir_of.get(wd)
            if directory is None:
                continue
            sub.on_event([os.path.join(directory, os.fsdecode(name)) if name else directory])
            if mask & _C.IN_ATTRIB and mask & _C.IN_ISDIR and sub.on_access_change:
                sub.on_access_change()

    def update(self, sub: Subscription, directories: Iterable[str]) -> None:
        """Make ``sub`` watch exactly ``directories``; on failure set ``sub.failure``."""
        # The plan's own set when given one (a 10 000-skill catalog watches ~19 000 folders).
        sub.wanted = directories if isinstance(directories, frozenset) else frozenset(directories)
        wanted = sub.wanted
        missing = []
        with self._lock:
            fd = self._ensure_started()
            if fd is None:
                sub.failure = self._start_error
                return
            self._subs.add(sub)
            if not fd.is_alive():  # kept for restart(): the directories are remembered
                sub.failure = "the file watcher stopped"
                return
            for directory in [d for d in sub.watches if d not in wanted]:
                self._remove(fd, sub, directory)
            failure = None
            for directory in sorted(d for d in wanted if d not in sub.watches):
                try:
                    self._add(fd, sub, directory)
                except (FileNotFoundError, NotADirectoryError):
                    missing.append(directory)
                except OSError as exc:
                    # Out of watches or not allowed: the rest would fail alike (and cost a
                    # system call each); the catalog is stat-validated instead.
                    failure = f"cannot watch {directory}: {exc.strerror or exc}"
                    break
            sub.failure = failure
        if missing:
            # Vanished between the scan and now: the next rebuild recomputes the directories.
            sub.on_event(missing)

    def _add(self, fd: Any, sub: Subscription, directory: str) -> None:
        if inotify_c is not None:
            wd = fd.add(directory)
            sub.watches[directory] = wd
            sub._dir_of[wd] = directory
            owners = _as_tuple(self._owners.get(wd))
            if sub not in owners:
                self._owners[wd] = (*owners, sub) if owners else sub
        else:  # pragma: no cover - other systems
            sub.watches[directory] = fd.schedule(
                _ObserverHandler(sub), directory, recursive=False, follow_symlink=False
            )

    def _remove(self, fd: Any, sub: Subscription, directory: str) -> None:
        watch = sub.watches.pop(directory)
        if inotify_c is None:  # pragma: no cover - other systems
            with contextlib.suppress(KeyError, OSError):
                fd.unschedule(watch)
            return
        if sub._dir_of.get(watch) == directory:
            del sub._dir_of[watch]
        owners = tuple(o for o in _as_tuple(self._owners.get(watch)) if o is not sub)
        if owners:  # another catalog still needs this folder
            self._owners[watch] = owners if len(owners) > 1 else owners[0]
        else:
            self._owners.pop(watch, None)
            fd.remove(watch)

    def cancel(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.discard(sub)
            if self._fd is not None:
                for directory in list(sub.watches):
                    self._remove(self._fd, sub, directory)
            sub.watches.clear()
            sub._dir_of.clear()

    def restart(self) -> bool:
        """A new watcher thread with every subscription's watches set up again (after the old
        one died). True when watching works again."""
        with self._lock:
            old, self._fd = self._fd, None
            subs = list(self._subs)
            self._owners.clear()
            for sub in subs:
                sub.watches.clear()
                sub._dir_of.clear()
        if old is not None:
            _stop(old)
        for sub in subs:
            self.update(sub, sub.wanted)
        return self._fd is not None and self._fd.is_alive()

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
            self._subs.clear()
            self._owners.clear()
        if fd is not None:
            _stop(fd)


def _as_tuple(owners: Subscription | tuple[Subscription, ...] | None) -> tuple[Subscription, ...]:
    if owners is None:
        return ()
    return owners if isinstance(owners, tuple) else (owners,)


def _stop(fd: Any) -> None:
    try:
        fd.stop()
        fd.join(timeout=2)
    except Exception:
        log.debug("stopping the watcher failed", exc_info=True)
