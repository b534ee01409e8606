"""`Client`: the blocking client, safe to share between threads.

It runs an `AsyncClient` on a private event loop in a background thread; each call submits a
coroutine there and waits for it. Many threads may call at once: their requests overlap on
the one connection. Notification callbacks run on the client's loop thread (keep them
short); `notifications` gives a blocking iterator instead.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from skillsd_client import _connect
from skillsd_client._async_client import (
    AsyncClient,
    Notification,
    NotificationCallback,
    ProgressCallback,
)
from skillsd_client._errors import ConnectionClosed
from skillsd_client._methods import SyncMethods

__all__ = ["Client", "SyncNotificationStream"]

T = TypeVar("T")
_END = object()


class _LoopThread:
    """An event loop running for ever in a daemon thread, until `stop`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="skillsd-client", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            tasks = asyncio.all_tasks(self.loop)
            for task in tasks:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it; an interrupted wait cancels it."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError(
                "a blocking skillsd call from the client's own loop thread would deadlock "
                "(e.g. inside a notification callback)"
            )
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            # KeyboardInterrupt in the waiting thread: cancel the request at the daemon too.
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join()


class SyncNotificationStream:
    """A blocking iterator over notifications; it buffers from the moment it is created and
    ends when the connection closes or `close` is called."""

    def __init__(self, client: Client, method: str | None) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unsubscribe = client._async.on_notification(self._queue.put, method)
        client._streams.add(self)
        self._client = client
        if client.closed:
            self.close()

    def get(self, timeout: float | None = None) -> Notification:
        """The next notification; `TimeoutError` after ``timeout`` seconds, `StopIteration`
        once the stream ended."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no notification within {timeout}s") from None
        if item is _END:
            self._queue.put(_END)
            raise StopIteration
        note: Notification = item
        return note

    def close(self) -> None:
        """Stop receiving; buffered notifications are still returned, then iteration ends."""
        self._unsubscribe()
        self._client._streams.discard(self)
        self._queue.put(_END)

    def __iter__(self) -> Iterator[Notification]:
        return self

    def __next__(self) -> Notification:
        return self.get()

    def __enter__(self) -> SyncNotificationStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Client(SyncMethods):
    """A blocking connection to one skillsd daemon. Build it with `spawn`, `connect` or
    `connect_shared`; use it as ``with`` (or call `close`).

    Every protocol method has a typed method (``list_skills``, ``search``, ``load``, ...)
    taking the params as keyword arguments and returning the result Struct; `request` calls
    any method by name. Errors are the same as `AsyncClient`'s."""

    def __init__(self, async_client: AsyncClient, runner: _LoopThread) -> None:
        self._async = async_client
        self._runner = runner
        self._streams: set[SyncNotificationStream] = set()
        self._lock = threading.Lock()
        self._closed = False
        async_client.on_close(self._end_streams)

    def _end_streams(self) -> None:
        for stream in list(self._streams):
            stream.close()

    @classmethod
    def _open(cls, opener: Callable[[], Coroutine[Any, Any, AsyncClient]]) -> Client:
        runner = _LoopThread()
        try:
            return cls(runner.run(opener()), runner)
        except BaseException:
            runner.stop()
            raise

    @classmethod
    def spawn(
        cls,
        command: Sequence[str] | None = None,
        *,
        args: Sequence[str] = (),
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Client:
        """Start a private ``skillsd serve`` on stdio (see `AsyncClient.spawn`)."""
        return cls._open(
            lambda: AsyncClient.spawn(command, args=args, cwd=cwd, env=env, timeout=timeout)
        )

    @classmethod
    def connect(
        cls, socket_path: str | os.PathLike[str], *, timeout: float | None = None
    ) -> Client:
        """Connect to a daemon already listening on ``socket_path``."""
        return cls._open(lambda: AsyncClient.connect(socket_path, timeout=timeout))

    @classmethod
    def connect_shared(
        cls,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        idle_timeout: float | None = _connect.DEFAULT_IDLE_TIMEOUT,
        start_timeout: float = _connect.DEFAULT_START_TIMEOUT,
        timeout: float | None = None,
    ) -> Client:
        """Connect to the shared per-user daemon, starting it if needed (see
        `AsyncClient.connect_shared`)."""
        return cls._open(
            lambda: AsyncClient.connect_shared(
                socket_path,
                command=command,
                env=env,
                idle_timeout=idle_timeout,
                start_timeout=start_timeout,
                timeout=timeout,
            )
        )

    def request(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None = None,
        *,
        result_type: Any = Any,
        timeout: float | UnsetType | None = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Call ``method`` and return its result (see `AsyncClient.request`). ``on_progress``
        runs on the client's loop thread."""
        if self._closed:
            raise ConnectionClosed("the client is closed")
        return self._runner.run(
            self._async.request(
                method, params, result_type=result_type, timeout=timeout, on_progress=on_progress
            )
        )

    def notify(self, method: str, params: msgspec.Struct | Mapping[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        if self._closed:
            raise ConnectionClosed("the client is closed")
        self._runner.run(self._async.notify(method, params))

    def on_notification(
        self, callback: NotificationCallback, method: str | None = None
    ) -> Callable[[], None]:
        """Call ``callback`` (on the client's loop thread) with every notification, or those
        of ``method``; returns a function that unsubscribes."""
        return self._async.on_notification(callback, method)

    def notifications(self, method: str | None = None) -> SyncNotificationStream:
        """A blocking iterator over notifications (of ``method`` only, if given)."""
        return SyncNotificationStream(self, method)

    @property
    def timeout(self) -> float | None:
        """The default timeout of every request (seconds; None waits for ever)."""
        return self._async.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._async.timeout = value

    @property
    def closed(self) -> bool:
        return self._closed or self._async.closed

    @property
    def pid(self) -> int | None:
        """A spawned daemon's process id."""
        return self._async.pid

    @property
    def returncode(self) -> int | None:
        """A spawned daemon's exit status, once it has exited."""
        return self._async.returncode

    def stderr_tail(self) -> str:
        """The last lines a spawned daemon wrote to stderr."""
        return self._runner.run(self._async.stderr_tail())

    def close(self) -> None:
        """Close the connection (a spawned daemon exits) and stop the loop thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._runner.run(self._async.close())
        finally:
            self._end_streams()
            self._runner.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
