"""`AsyncClient`: JSON-RPC 2.0 to a skillsd daemon on an asyncio event loop.

One reader task owns the incoming stream: replies resolve the pending request's future by id,
notifications go to callbacks and to `NotificationStream` iterators. Requests may overlap
freely. A request that outlives its timeout, or whose awaiting task is cancelled, is cancelled
at the daemon with ``$/cancelRequest``. When the connection ends, every pending and later
request fails with `ConnectionClosed`, which carries a spawned daemon's exit status and the
tail of its stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from skillsd_client import _connect, _transport
from skillsd_client._errors import (
    ConnectError,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    RpcError,
)
from skillsd_client._methods import AsyncMethods
from skillsd_protocol import NOTIFICATIONS, ErrorCode, ErrorObject
from skillsd_protocol.messages import Meta, ProgressParams, ProgressValue

__all__ = [
    "AsyncClient",
    "Notification",
    "NotificationCallback",
    "NotificationStream",
    "ProgressCallback",
]

log = logging.getLogger("skillsd_client")

CANCEL_METHOD = "$/cancelRequest"
PROGRESS_METHOD = "$/progress"


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification from the daemon. ``params`` is decoded into the type the protocol's
    ``NOTIFICATIONS`` table names (e.g. `SkillsChangedParams`), or left as plain JSON data for
    a notification this client does not know."""

    method: str
    params: Any


#: Called with each notification; may return an awaitable, which is run as a task.
NotificationCallback = Callable[[Notification], object]
#: Called with each ``$/progress`` value of one request.
ProgressCallback = Callable[[ProgressValue], object]


class _Incoming(msgspec.Struct, gc=False):
    """Any message from the daemon: a reply (``result`` or ``error``) or a notification."""

    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw = msgspec.Raw()
    result: msgspec.Raw = msgspec.Raw()
    error: ErrorObject | UnsetType = UNSET


class _Request(msgspec.Struct, omit_defaults=True, gc=False):
    jsonrpc: str
    method: str
    id: int | UnsetType = UNSET
    params: Any = UNSET


_ENCODER = msgspec.json.Encoder()
_INCOMING = msgspec.json.Decoder(_Incoming)
_BATCH = msgspec.json.Decoder(list[msgspec.Raw])
_ANY = msgspec.json.Decoder()
_NOTIFICATION_DECODERS = {name: msgspec.json.Decoder(t) for name, t in NOTIFICATIONS.items()}
#: One decoder per result type for every client in the process, made under a lock: msgspec
#: works a type's decoding information out when its first decoder is made, and two threads
#: doing that at once for one type crash the process (clients on several threads).
_RESULT_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
_RESULT_DECODERS_LOCK = threading.Lock()


def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    with _RESULT_DECODERS_LOCK:
        decoder = _RESULT_DECODERS.get(result_type)
        if decoder is None:
            decoder = _RESULT_DECODERS[result_type] = msgspec.json.Decoder(result_type)
        return decoder


_END = object()


class NotificationStream:
    """An async iterator over the daemon's notifications (optionally of one method).

    It buffers from the moment it is created, so create it *before* causing what it should
    see; iteration ends when the connection closes or `close` is called."""

    def __init__(self, client: AsyncClient, method: str | None) -> None:
        self._client = client
        self._method = method
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._closed = False
        client._streams.add(self)
        if client.closed:
            self._end()

    def _offer(self, note: Notification) -> None:
        if self._method is None or note.method == self._method:
            self._queue.put_nowait(note)

    def _end(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_END)

    def close(self) -> None:
        """Stop receiving; buffered notifications are still yielded, then iteration ends."""
        self._client._streams.discard(self)
        self._end()

    def __aiter__(self) -> NotificationStream:
        return self

    async def __anext__(self) -> Notification:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # later calls end too
            raise StopAsyncIteration
        note: Notification = item
        return note

    async def next(self, timeout: float | None = None) -> Notification:
        """The next notification; `TimeoutError` after ``timeout`` seconds, `StopAsyncIteration`
        once the stream ended."""
        return await asyncio.wait_for(self.__anext__(), timeout)

    async def __aenter__(self) -> NotificationStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(AsyncMethods):
    """A connection to one skillsd daemon. Build it with `spawn`, `connect` or
    `connect_shared`; use it as ``async with`` (or call `close`).

    Every protocol method has a typed coroutine method (``list_skills``, ``search``, ``load``,
    ...) taking the params as keyword arguments and returning the result Struct; `request`
    calls any method by name. ``timeout`` (seconds, None = wait for ever) is the default for
    every request; each method also takes its own ``timeout=``.
    """

    def __init__(self, transport: _transport.Transport, *, timeout: float | None = None) -> None:
        self.timeout = timeout
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.Future[msgspec.Raw], str]] = {}
        self._progress: dict[int, ProgressCallback] = {}
        self._callbacks: tuple[tuple[str | None, NotificationCallback], ...] = ()
        self._streams: set[NotificationStream] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._closed: ConnectionClosed | None = None
        self._close_callbacks: list[Callable[[], object]] = []
        self._reader = self._loop.create_task(self._read_loop(), name=f"{transport.label} reader")

    # -- connecting ------------------------------------------------------------------------

    @classmethod
    async def spawn(
        cls,
        command: Sequence[str] | None = None,
        *,
        args: Sequence[str] = (),
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> AsyncClient:
        """Start a private ``skillsd serve`` on stdio (``command`` runs skillsd: default
        ``python -m skillsd``, see `default_command`; ``args`` are added after ``serve``).
        The daemon exits when the client closes."""
        base = list(command) if command is not None else _connect.default_command()
        transport = await _transport.open_process([*base, "serve", *args], cwd=cwd, env=env)
        return cls(transport, timeout=timeout)

    @classmethod
    async def connect(
        cls, socket_path: str | os.PathLike[str], *, timeout: float | None = None
    ) -> AsyncClient:
        """Connect to a daemon already listening on ``socket_path``."""
        try:
            transport = await _transport.open_socket(socket_path)
        except ConnectError:
            raise  # already says what is wrong with this daemon
        except OSError as exc:
            raise ConnectError(
                f"cannot connect to {os.fspath(socket_path)}: {exc.strerror or exc}"
            ) from None
        return cls(transport, timeout=timeout)

    @classmethod
    async def connect_shared(
        cls,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        idle_timeout: float | None = _connect.DEFAULT_IDLE_TIMEOUT,
        start_timeout: float = _connect.DEFAULT_START_TIMEOUT,
        timeout: float | None = None,
    ) -> AsyncClient:
        """Connect to the shared per-user daemon, starting it (detached, exiting after
        ``idle_timeout`` seconds without clients) if none is listening."""
        transport = await _connect.open_shared(
            socket_path,
            command=command,
            env=env,
            idle_timeout=idle_timeout,
            start_timeout=start_timeout,
        )
        return cls(transport, timeout=timeout)

    # -- requests --------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: msgspec.Struct | Mapping[str, Any] | None = None,
        *,
        result_type: Any = Any,
        timeout: float | UnsetType | None = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Call ``method`` and return its result decoded as ``result_type`` (plain JSON data by
        default). Raises `RpcError` for an error reply, `RequestTimeout` (after cancelling the
        request) when ``timeout`` passes, `ConnectionClosed` when the daemon goes away.
        ``on_progress`` receives the ``$/progress`` values the daemon sends for this request."""
        self._check_open()
        limit = self.timeout if isinstance(timeout, UnsetType) else timeout
        id_ = next(self._ids)
        params = _with_absolute_cwd(params)
        if on_progress is not None:
            params = _with_progress_token(params, id_)
            self._progress[id_] = on_progress
        payload = _ENCODER.encode(_Request("2.0", method, id_, UNSET if params is None else params))
        future: asyncio.Future[msgspec.Raw] = self._loop.create_future()
        self._pending[id_] = (future, method)
        try:
            # The deadline covers sending too: a daemon that stops reading blocks the write.
            raw = await asyncio.wait_for(self._round_trip(payload, future), limit)
        except TimeoutError:
            if future.done() and not future.cancelled():
                raw = future.result()  # the reply won the race against the deadline
            else:
                self._abandon(id_)
                raise RequestTimeout(method, limit or 0.0) from None
        except asyncio.CancelledError:
            self._abandon(id_)
            raise
        finally:
            self._progress.pop(id_, None)
        return self._decode(method, raw, result_type)

    async def _round_trip(self, payload: bytes, future: asyncio.Future[msgspec.Raw]) -> msgspec.Raw:
        # On a write failure the reader sees the end of the stream and fails the future with
        # the reason (and the daemon's stderr).
        with contextlib.suppress(ConnectionError, OSError):
            await self._transport.write_message(payload)
        # Shielded: a timeout abandons the wait, while the future stays for the reader to drop.
        return await asyncio.shield(future)

    async def notify(
        self, method: str, params: msgspec.Struct | Mapping[str, Any] | None = None
    ) -> None:
        """Send a notification (no reply)."""
        self._check_open()
        body = UNSET if params is None else params
        payload = _ENCODER.encode(_Request("2.0", method, UNSET, body))
        with contextlib.suppress(ConnectionError, OSError):
            await self._transport.write_message(payload)

    def _abandon(self, id_: int) -> bool:
        """Stop waiting for request ``id_`` and ask the daemon to cancel it; False if it was
        already answered."""
        entry = self._pending.pop(id_, None)
        if entry is None:
            return False
        entry[0].cancel()
        if self._closed is None:
            payload = _ENCODER.encode(_Request("2.0", CANCEL_METHOD, UNSET, {"id": id_}))
            # Not awaited: this may run while our caller is being cancelled.
            self._spawn(self._send_quietly(payload))
        return True

    async def _send_quietly(self, payload: bytes) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await self._transport.write_message(payload)

    def _decode(self, method: str, raw: msgspec.Raw, result_type: Any) -> Any:
        decoder = _RESULT_DECODERS.get(result_type)
        if decoder is None:
            decoder = _result_decoder(result_type)
        try:
            return decoder.decode(raw)
        except msgspec.ValidationError as exc:
            raise ProtocolError(
                f"{method}: the daemon's result does not match the protocol: {exc}"
            ) from None

    def _check_open(self) -> None:
        if self._closed is not None:
            raise _copy(self._closed)
        if self._closing:
            raise ConnectionClosed("the client is closed")

    # -- notifications ---------------------------------------------------------------------

    def on_notification(
        self, callback: NotificationCallback, method: str | None = None
    ) -> Callable[[], None]:
        """Call ``callback`` with every notification (of ``method`` only, if given), on the
        event loop; returns a function that unsubscribes. Safe to call from any thread."""
        entry = (method, callback)
        self._callbacks = (*self._callbacks, entry)

        def unsubscribe() -> None:
            self._callbacks = tuple(e for e in self._callbacks if e is not entry)

        return unsubscribe

    def notifications(self, method: str | None = None) -> NotificationStream:
        """An async iterator over notifications (of ``method`` only, if given), buffering
        from now on."""
        return NotificationStream(self, method)

    def _dispatch_notification(self, method: str, raw: msgspec.Raw) -> None:
        decoder = _NOTIFICATION_DECODERS.get(method)
        params: Any
        try:
            if decoder is not None:
                params = decoder.decode(raw or b"{}")
            else:
                params = _ANY.decode(raw) if raw else None
        except msgspec.DecodeError as exc:
            log.warning("%s: malformed %s notification: %s", self._transport.label, method, exc)
            params = _ANY.decode(raw) if raw else None
        if method == PROGRESS_METHOD and isinstance(params, ProgressParams):
            token = params.token
            on_progress = self._progress.get(token) if isinstance(token, int) else None
            if on_progress is not None:
                self._run_callback(on_progress, params.value)
        note = Notification(method, params)
        for wanted, callback in self._callbacks:
            if wanted is None or wanted == method:
                self._run_callback(callback, note)
        for stream in list(self._streams):
            stream._offer(note)

    def _run_callback(self, callback: Callable[[Any], object], arg: Any) -> None:
        try:
            outcome = callback(arg)
            if inspect.isawaitable(outcome):
                self._spawn(_await(outcome))
        except Exception:
            log.exception("%s: notification callback failed", self._transport.label)

    # -- the reader ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "the daemon closed the connection"
        try:
            while (message := await self._transport.read_message()) is not None:
                if message.lstrip()[:1] == b"[":
                    for member in _BATCH.decode(message):
                        self._handle(member)
                else:
                    self._handle(message)
        except (ConnectionError, msgspec.DecodeError) as exc:
            reason = f"connection to the daemon failed: {exc}"
        except asyncio.CancelledError:
            reason = "the client is closed"
            raise
        finally:
            await self._connection_lost(reason)

    def _handle(self, message: bytes | msgspec.Raw) -> None:
        try:
            incoming = _INCOMING.decode(message)
        except msgspec.DecodeError as exc:
            self._malformed(message, exc)
            return
        if not isinstance(incoming.method, UnsetType):
            if isinstance(incoming.id, UnsetType):
                self._dispatch_notification(incoming.method, incoming.params)
            else:  # the daemon asked us something: we serve no methods
                error = ErrorObject(
                    code=ErrorCode.METHOD_NOT_FOUND, message=f"Method not found: {incoming.method}"
                )
                reply = {"jsonrpc": "2.0", "id": incoming.id, "error": error}
                self._spawn(self._send_quietly(_ENCODER.encode(reply)))
            return
        entry = self._pending.pop(incoming.id, None) if isinstance(incoming.id, int) else None
        if entry is None:
            # A reply to a request we stopped waiting for (timed out, cancelled): expected.
            code = None if isinstance(incoming.error, UnsetType) else incoming.error.code
            log.debug(
                "%s: dropping reply for id %r (error code %s)",
                self._transport.label,
                incoming.id,
                code,
            )
            return
        future, method = entry
        if future.done():
            return
        if not isinstance(incoming.error, UnsetType):
            err = incoming.error
            future.set_exception(RpcError(err.code, err.message, err.data, method=method))
        elif incoming.result:
            future.set_result(incoming.result)
        else:
            future.set_exception(ProtocolError(f"{method}: reply has neither result nor error"))

    def _malformed(self, message: bytes | msgspec.Raw, exc: Exception) -> None:
        try:
            obj = _ANY.decode(message)
        except msgspec.DecodeError:
            obj = None
        id_ = obj.get("id") if isinstance(obj, dict) else None
        entry = self._pending.pop(id_, None) if isinstance(id_, int) else None
        if entry is not None and not entry[0].done():
            entry[0].set_exception(ProtocolError(f"{entry[1]}: malformed reply: {exc}"))
        else:
            log.warning("%s: ignoring a malformed message: %s", self._transport.label, exc)

    async def _connection_lost(self, reason: str) -> None:
        transport = self._transport
        returncode: int | None = None
        stderr = ""
        if transport.process is not None:
            returncode = await transport.wait_exit(1.0)
            stderr = await transport.stderr_tail()
        if self._closing:
            reason = "the client is closed"
        error = ConnectionClosed(reason, returncode=returncode, stderr=stderr)
        self._closed = error
        pending, self._pending = self._pending, {}
        for future, method in pending.values():
            if not future.done():
                future.set_exception(_copy(error, method))
        for stream in list(self._streams):
            stream._end()
        for callback in self._close_callbacks:
            try:
                callback()
            except Exception:
                log.exception("%s: close callback failed", transport.label)

    def on_close(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once, on the event loop, when the connection ends."""
        if self._closed is not None:
            callback()
        else:
            self._close_callbacks.append(callback)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection has ended (either side closed it)."""
        return self._closed is not None

    @property
    def returncode(self) -> int | None:
        """A spawned daemon's exit status, once it has exited."""
        return self._transport.returncode

    @property
    def pid(self) -> int | None:
        """A spawned daemon's process id."""
        process = self._transport.process
        return None if process is None else process.pid

    async def stderr_tail(self) -> str:
        """The last lines a spawned daemon wrote to stderr ("" for socket connections)."""
        return await self._transport.stderr_tail(wait=0)

    async def close(self) -> None:
        """Close the connection: the daemon answers what is in flight (for up to
        `EXIT_GRACE_SECONDS`), then the connection ends; a spawned daemon exits. Requests still
        pending after that fail with `ConnectionClosed`."""
        if not self._closing:
            self._closing = True
            self._transport.half_close()
            # Replies already on the way are still delivered: the reader runs until EOF.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader), _transport.EXIT_GRACE_SECONDS)
            await self._transport.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._reader)
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = self._loop.create_task(_await(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _copy(error: ConnectionClosed, method: str = "") -> ConnectionClosed:
    """A fresh exception per failed call (one instance raised twice would pile tracebacks)."""
    reason = f"{method}: {error.reason}" if method else error.reason
    return ConnectionClosed(reason, returncode=error.returncode, stderr=error.stderr)


def _with_absolute_cwd(params: msgspec.Struct | Mapping[str, Any] | None) -> Any:
    """``params`` with a relative ``cwd`` made absolute from this process's working directory.

    A shared daemon runs in a directory of its own, so ``cwd="."`` must mean the caller's
    directory, resolved here before it is sent.
    """
    if isinstance(params, msgspec.Struct):
        cwd = getattr(params, "cwd", None)
        if isinstance(cwd, str) and not os.path.isabs(cwd):
            return msgspec.structs.replace(params, cwd=_absolute(cwd))
    elif isinstance(params, Mapping):
        cwd = params.get("cwd")
        if isinstance(cwd, str) and not os.path.isabs(cwd):
            return {**params, "cwd": _absolute(cwd)}
    return params


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def _with_progress_token(params: msgspec.Struct | Mapping[str, Any] | None, token: int) -> Any:
    """``params`` with ``_meta.progressToken`` set, as a Struct or a plain mapping."""
    if params is None:
        return {"_meta": {"progressToken": token}}
    if isinstance(params, msgspec.Struct):
        if hasattr(params, "meta"):
            return msgspec.structs.replace(params, meta=Meta(progress_token=token))
        data: dict[str, Any] = msgspec.to_builtins(params)
    else:
        data = dict(params)
    data["_meta"] = {**dict(data.get("_meta") or {}), "progressToken": token}
    return data
