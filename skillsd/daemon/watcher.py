"""File watching for live catalogs: one watch per directory the scan visited -> "this catalog may
be stale" callbacks.

This adapter only translates events; deciding what changed is the catalog's job (it re-stats and
re-parses what differs). Each directory is watched alone (:mod:`skillsd.core.watch_plan`): a
recursive watch would walk whatever is below a root, symlink loops and all of ``/usr`` included,
while the scan's walk is bounded and loop-free.

On Linux one inotify instance and one reader thread serve every catalog of the daemon (watchdog's
``InotifyFD``, used directly: its observer would start a thread per watched directory). Other
systems use watchdog's observer, one non-recursive watch per directory.

The reader thread can die (an error reading the kernel queue); :meth:`WatchService.alive` says
so and :meth:`WatchService.restart` sets every subscription's watches up again on a new one.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# watchdog's inotify backend warns whenever a directory re-created at a watched path gets its
# watch again (routine under churn). The situation is handled; drop the noise.
warnings.filterwarnings(
    "ignore",
    message="Callback with id",
    category=RuntimeWarning,
    module=r"watchdog\.observers\.inotify",
)

try:  # Linux
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, InotifyFD
except ImportError:  # pragma: no cover - other systems
    InotifyFD = None  # type: ignore[assignment,misc]


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


if InotifyFD is not None:
    _MASK = (
        InotifyConstants.IN_CREATE
        | InotifyConstants.IN_DELETE
        | InotifyConstants.IN_MODIFY
        | InotifyConstants.IN_CLOSE_WRITE
        | InotifyConstants.IN_MOVED_FROM
        | InotifyConstants.IN_MOVED_TO
        | InotifyConstants.IN_ATTRIB
        | InotifyConstants.IN_DELETE_SELF
        | InotifyConstants.IN_MOVE_SELF
        | InotifyConstants.IN_ONLYDIR
    )


class _Callback:
    """inotify events of one subscription's watches -> its callbacks. Never raises: an error
    here would end the one reader thread every catalog depends on."""

    def __init__(self, sub: Subscription, on_overflow: Callable[[], None] | None) -> None:
        self._sub = sub
        self._on_overflow = on_overflow

    def on_event(self, event: InotifyEvent) -> None:
        try:
            directory = self._sub._dir_of.get(event.wd)
            if directory is None:
                return
            path = os.path.join(directory, os.fsdecode(event.name)) if event.name else directory
            self._sub.on_event([path])
            if event.is_attrib and event.is_directory and self._sub.on_access_change:
                self._sub.on_access_change()
        except Exception:
            log.exception("a watch event could not be handled")

    def on_watch_deleted(self, wd: int) -> None:
        try:
            directory = self._sub._dir_of.pop(wd, None)
            if directory is not None:
                self._sub.watches.pop(directory, None)
                self._sub.on_event([directory])  # the directory itself is gone
        except Exception:
            log.exception("a removed watch could not be handled")

    def on_queue_overflow(self) -> None:
        if self._on_overflow is not None:
            try:
                self._on_overflow()
            except Exception:
                log.exception("an inotify overflow could not be handled")


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
        self._fd: Any = None  # InotifyFD, or watchdog's observer elsewhere
        self._start_error: str | None = None
        self._subs: set[Subscription] = set()
        #: Why the watcher's thread stopped, once it did.
        self.death: str | None = None

    def _ensure_started(self) -> Any:
        if self._fd is None and self._start_error is None:
            try:
                fd: Any
                if InotifyFD is not None:
                    fd = InotifyFD()
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

    def update(self, sub: Subscription, directories: Iterable[str]) -> None:
        """Make ``sub`` watch exactly ``directories``; on failure set ``sub.failure``."""
        wanted = set(directories)
        sub.wanted = frozenset(wanted)
        with self._lock:
            fd = self._ensure_started()
            if fd is None:
                sub.failure = self._start_error
                return
            self._subs.add(sub)
            for directory in set(sub.watches) - wanted:
                self._remove(fd, sub, directory)
            failure = None
            missing = []
            for directory in sorted(wanted - set(sub.watches)):
                try:
                    self._add(fd, sub, directory)
                except FileNotFoundError:
                    missing.append(directory)
                except NotADirectoryError:
                    missing.append(directory)
                except OSError as exc:
                    if failure is None:
                        failure = f"cannot watch {directory}: {exc.strerror or exc}"
            sub.failure = failure
        if missing:
            # Vanished between the scan and now: the next rebuild recomputes the directories.
            sub.on_event(missing)

    def _add(self, fd: Any, sub: Subscription, directory: str) -> None:
        if InotifyFD is not None:
            callback = _Callback(sub, self._on_overflow)
            wd = fd.add_callback(os.fsencode(directory), _MASK, callback, sub._id)
            sub.watches[directory] = wd
            sub._dir_of[wd] = directory
        else:  # pragma: no cover - other systems
            sub.watches[directory] = fd.schedule(
                _ObserverHandler(sub), directory, recursive=False, follow_symlink=False
            )

    def _remove(self, fd: Any, sub: Subscription, directory: str) -> None:
        watch = sub.watches.pop(directory)
        try:
            if InotifyFD is not None:
                if sub._dir_of.get(watch) == directory:
                    del sub._dir_of[watch]
                fd.remove_callbacks([(watch, sub._id)])
            else:  # pragma: no cover - other systems
                fd.unschedule(watch)
        except (KeyError, OSError):
            log.debug("watch on %s already gone", directory)

    def renew(self, sub: Subscription) -> None:
        """Set ``sub``'s watches up again (a directory whose access changed)."""
        directories = sub.wanted
        self.cancel(sub)
        self.update(sub, directories)

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
        if old is not None:
            self.death = self.death or "the file watcher's thread stopped"
            _stop(old)
        for sub in subs:
            sub.watches.clear()
            sub._dir_of.clear()
            self.update(sub, sub.wanted)
        return self._fd is not None and self._fd.is_alive()

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
            self._subs.clear()
        if fd is not None:
            _stop(fd)


def _stop(fd: Any) -> None:
    try:
        fd.stop()
        if InotifyFD is None:  # pragma: no cover - other systems
            fd.join(timeout=2)
    except Exception:
        log.debug("stopping the watcher failed", exc_info=True)
