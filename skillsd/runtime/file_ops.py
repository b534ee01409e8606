"""Running file reads off the event loop, with a time limit and a cap on how many at once.

A read stuck on a stalled filesystem (a dead NFS mount, a FIFO that slipped past a check) must
never hold a worker other requests need: at most ``limits.MAX_CONCURRENT_FILE_OPS`` operations
run at once, and past its time limit, or when the request is cancelled, an operation's slot is
freed and its thread is left to finish alone. So a thread is never waited for: an operation
goes to a thread that is idle, else to a new one (starting a thread costs milliseconds on a busy
machine, so idle ones are kept for a while), and a stuck thread is simply not idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from skillsd.core import limits

__all__ = ["FILE_OP_SECONDS_ENV", "FileOps", "Job", "RequestCancelled", "Threads"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

log = logging.getLogger(__name__)

#: ``SKILLSD_FILE_OP_SECONDS=N`` replaces `limits.FILE_OP_SECONDS` (tests use a short one).
FILE_OP_SECONDS_ENV = "SKILLSD_FILE_OP_SECONDS"


class RequestCancelled(Exception):
    """A request given up: cancelled by its client, or past its time limit. Every face answers
    it with the JSON-RPC code ``-32800``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _seconds(text: str | None, default: float) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        log.warning(
            "%s=%r is not a number of seconds; using %g", FILE_OP_SECONDS_ENV, text, default
        )
        return default
    return value if value > 0 else default


class FileOps:
    """The file-operation slots of one process."""

    def __init__(
        self,
        *,
        seconds: float = limits.FILE_OP_SECONDS,
        slots: int = limits.MAX_CONCURRENT_FILE_OPS,
        what: str = "reading files",
    ) -> None:
        #: The time limit of one file operation.
        self.seconds = seconds
        self._slots = asyncio.Semaphore(slots)
        self._what = what
        #: File operations past their time limit whose threads have not finished yet.
        self._stuck = 0
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._threads = Threads(self._jobs, name="skillsd-file-op")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FileOps:
        return cls(seconds=_seconds(env.get(FILE_OP_SECONDS_ENV), limits.FILE_OP_SECONDS))

    @classmethod
    def for_installs(cls) -> FileOps:
        """The install pool: few slots, and a whole install's deadline (a clone and a
        download each have their own, shorter ones)."""
        return cls(seconds=limits.INSTALL_SECONDS, slots=limits.INSTALL_WORKERS, what="the install")

    async def run(self, fn: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """``fn(*args, **kwargs)`` in a thread of its own within a slot; `RequestCancelled` past
        the time limit (the thread finishes alone, its slot freed)."""
        if self._stuck >= limits.MAX_STUCK_FILE_OPS:
            raise RequestCancelled(
                f"{self._stuck} file reads are still stuck (a filesystem that does not answer); "
                "try again later"
            )
        async with self._slots:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[_R] = loop.create_future()
            # Both flags change on the loop only: an operation is stuck when the request stops
            # waiting before its outcome came back, and unstuck when that outcome comes.
            settled = stuck = False

            def settle(outcome: Callable[[Any], None], value: Any) -> None:
                nonlocal settled
                settled = True
                if stuck:
                    self._stuck -= 1
                if not done.done():
                    outcome(value)

            def work() -> Callable[[], None]:
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    report: tuple[Any, ...] = (settle, done.set_exception, exc)
                else:
                    report = (settle, done.set_result, result)

                def tell() -> None:
                    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (exit)
                        loop.call_soon_threadsafe(*report)

                return tell

            self._threads.submit(work)
            # One timer on the future itself: cheaper than ``wait_for`` around a ``shield``.
            timer = loop.call_later(self.seconds, _expire, done)
            try:
                return await done
            except _Expired:
                raise RequestCancelled(
                    f"{self._what} took longer than {self.seconds:g} s "
                    "(a filesystem or server that does not answer?)"
                ) from None
            finally:
                timer.cancel()
                if not settled:
                    stuck = True
                    self._stuck += 1
                    if not done.done():
                        done.cancel()


class _Expired(Exception):
    """An operation's time limit passed."""


def _expire(done: asyncio.Future[Any]) -> None:
    if not done.done():
        done.set_exception(_Expired())


#: How long a thread with nothing to do waits for the next operation before it ends.
_IDLE_SECONDS = 60.0


#: An operation: it runs, and returns how to report its outcome.
Job = Callable[[], Callable[[], None]]


class Threads:
    """Threads that run jobs handed to them: a job is taken by an idle thread, else by a new
    one (up to ``max_threads``; past it, jobs wait for a thread). ``waiting`` threads wait for
    ``unclaimed`` jobs; a new thread is started whenever jobs would outnumber the threads
    waiting for them. A thread counts itself waiting again before it reports an outcome, so
    the next job, sent when that report arrives, finds it idle. Cheaper than an executor's
    ``submit`` (no future, no lock per job but one): what hands work off the event loop on
    every request."""

    def __init__(self, jobs: queue.SimpleQueue[Job], *, name: str, max_threads: int = 0) -> None:
        self._jobs = jobs
        self._name = name
        self._max = max_threads
        self._lock = threading.Lock()
        self._waiting = 0
        self._unclaimed = 0
        self._threads = 0

    def submit(self, job: Job) -> None:
        with self._lock:
            self._unclaimed += 1
            start = self._unclaimed > self._waiting and (not self._max or self._threads < self._max)
            if start:
                self._waiting += 1  # counted before it runs, so the next one is not short
                self._threads += 1
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._run, name=self._name, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._unclaimed <= self._waiting - 1:
                        self._waiting -= 1
                        self._threads -= 1
                        return  # idle long enough, and not counted on
                continue
            with self._lock:
                self._unclaimed -= 1
                self._waiting -= 1
            try:
                tell = job()
            except Exception:  # a job catches its own; this would be a bug in it
                log.exception("a job off the event loop failed")
                tell = None
            with self._lock:
                self._waiting += 1
            if tell is not None:
                tell()
