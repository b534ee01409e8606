"""File watching for live catalogs: watchdog events -> "this catalog may be stale" callbacks.

This adapter only translates events; deciding what changed is the catalog's job (it re-stats and
re-parses what differs). One watchdog observer serves every catalog of the daemon because inotify
instances are a scarce per-user resource.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from watchdog import events
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

log = logging.getLogger(__name__)

# watchdog's inotify backend warns whenever a directory re-created at a watched path gets its
# watch again (routine under churn: a checkout, an editor's save dance). The warning text holds
# the repr of every watch, so each one is unique, never deduplicated, and tens of KiB long:
# under churn the daemon's log grew by megabytes. The situation is handled; drop the noise.
warnings.filterwarnings(
    "ignore",
    message="Callback with id",
    category=RuntimeWarning,
    module=r"watchdog\.observers\.inotify",
)

#: (path, recursive) pairs one catalog needs watched.
WatchTarget = tuple[str, bool]


#: Only events that can change a catalog. Subscribing to open/close-without-write too floods the
#: kernel queue on large trees (every directory watch added is itself "opened"), and an overflow
#: makes watchdog rescan, which overflows again.
_CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    DirModifiedEvent,
    # A chmod can make a folder or a SKILL.md readable or unreadable: a catalog change.
    # watchdog >= 5 reports it as its own event types (before, as a modification).
    *(
        cls
        for cls in (
            getattr(events, "DirAttribEvent", None),
            getattr(events, "FileAttribEvent", None),
        )
        if cls is not None
    ),
]


class _Handler(FileSystemEventHandler):
    def __init__(self, sub: Subscription) -> None:
        self._on_event = sub.on_event
        self._on_access_change = sub.on_access_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [os.fsdecode(event.src_path)]
        if event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        self._on_event(paths)
        if event.event_type == "attrib" and event.is_directory and self._on_access_change:
            self._on_access_change()


@dataclass
class Subscription:
    """One catalog's watches. ``failure`` says why watching is impossible (then stat mode)."""

    #: Called on the observer thread with the paths an event touched.
    on_event: Callable[[list[str]], None]
    #: Called on the observer thread when a directory's mode or owner changed: one that could
    #: not be read when the watches were set up has no watch of its own yet (see `renew`).
    on_access_change: Callable[[], None] | None = None
    watches: dict[WatchTarget, ObservedWatch] = field(default_factory=dict)
    failure: str | None = None


class _OverflowSpy(logging.Handler):
    """watchdog reports a kernel queue overflow only in its log; catch that line."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(level=logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._on_overflow()


class WatchService:
    """Owns the observer thread; catalogs subscribe with the paths they need watched."""

    def __init__(self, on_overflow: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._start_error: str | None = None
        if on_overflow is not None:
            logging.getLogger("watchdog.observers").addHandler(_OverflowSpy(on_overflow))

    def _ensure_observer(self) -> BaseObserver | None:
        if self._observer is None and self._start_error is None:
            try:
                observer = Observer()
                observer.daemon = True
                observer.start()
                self._observer = observer
            except OSError as exc:
                self._start_error = f"file watching unavailable: {exc}"
        return self._observer

    def update(self, sub: Subscription, targets: Iterable[WatchTarget]) -> None:
        """Make ``sub`` watch exactly ``targets``; on failure set ``sub.failure`` (stat mode)."""
        wanted = set(targets)
        with self._lock:
            observer = self._ensure_observer()
            if observer is None:
                sub.failure = self._start_error
                return
            for target in set(sub.watches) - wanted:
                self._unschedule(observer, sub.watches.pop(target))
            handler = _Handler(sub)
            failure = None
            for target in sorted(wanted - set(sub.watches)):
                path, recursive = target
                try:
                    sub.watches[target] = observer.schedule(
                        handler,
                        path,
                        recursive=recursive,
                        follow_symlink=True,
                        event_filter=_CHANGES,
                    )
                except FileNotFoundError:
                    # Vanished between the scan and now: the next rebuild recomputes targets.
                    sub.on_event([path])
                except OSError as exc:
                    failure = f"cannot watch {path}: {exc.strerror or exc}"
            sub.failure = failure

    def renew(self, sub: Subscription) -> None:
        """Set ``sub``'s watches up again: recursive watches skip directories they cannot read
        and never revisit them, so one made readable later is only watched after this."""
        targets = list(sub.watches)
        self.cancel(sub)
        self.update(sub, targets)

    def cancel(self, sub: Subscription) -> None:
        with self._lock:
            if self._observer is not None:
                for watch in sub.watches.values():
                    self._unschedule(self._observer, watch)
            sub.watches.clear()

    def close(self) -> None:
        with self._lock:
            if self._observer is not None:
                self._observer.stop()
                self._observer.join(timeout=2)
                self._observer = None

    @staticmethod
    def _unschedule(observer: BaseObserver, watch: ObservedWatch) -> None:
        try:
            observer.unschedule(watch)
        except (KeyError, OSError):
            log.debug("watch on %s already gone", watch.path)
