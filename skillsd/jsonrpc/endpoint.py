"""The JSON-RPC 2.0 endpoint: messages <-> handler calls, for one connection (the protocol's
rules are in docs/protocol.md).

`Router` (`skillsd.jsonrpc.router`) maps method names to handlers; `Connection` speaks
JSON-RPC over a `Channel` (the transport's bytes: stdio pipes, a socket, or a list in a
test); the error replies are `skillsd.jsonrpc.rpc_errors`, the messages' encodings
`skillsd.jsonrpc.envelopes`, what a handler gets besides its params `RequestContext`. A
handler is

    def handler(params: ParamsStruct, ctx: RequestContext) -> ResultStruct        # inline/thread
    async def handler(params: ParamsStruct, ctx: RequestContext) -> ResultStruct  # async

with params decoded into the method's Struct from ``skillsd_protocol.METHODS`` and the returned
Struct encoded as the result. Three run modes:

* ``"async"`` (default): a coroutine run as its own task, so requests overlap and replies
  may come back out of order;
* ``"thread"``: a plain function run with `asyncio.to_thread`, for CPU-heavy or blocking work;
  it may poll ``ctx.cancelled`` and call ``ctx.progress`` from its thread;
* ``"inline"``: a plain function called straight from the reader, for tiny methods like
  ``ping``; it must never block.

Errors: raise `SkillsdError` (sent with ``KIND_CODES[kind]`` and ``data.kind``) or an
`RpcError` subclass; anything else is an internal error, logged with its traceback.

Output goes through one writer task per connection, fed by a queue. A peer that stops reading
while the daemon keeps answering would make that queue grow without bound, so once it holds more
than ``max_pending_output_bytes`` (default `limits.MAX_PENDING_OUTPUT_BYTES`) the connection is
dropped. Input is paused while ``limits.MAX_INFLIGHT_REQUESTS`` requests are running. Queued
output and unfinished input of all the connections sharing a `MemoryBudget` are bounded together
(`skillsd.jsonrpc.memory_budget`): over it, the connection holding the most is dropped first.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from skillsd.core import limits
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.jsonrpc.envelopes import (
    ANY_DECODER,
    BAD_PARAMS,
    CANCEL_DECODER,
    EMPTY_OBJECT,
    ENCODER,
    MEMBER_DECODER,
    MESSAGE_DECODER,
    RESULT_HEAD,
    RESULT_MID,
    TOO_DEEP,
    Notification,
    Request,
    RequestId,
    error_payload,
    explain_invalid,
    result_payload,
)
from skillsd.jsonrpc.framing import (
    Framer,
    FramingError,
    Oversized,
    Payload,
    flat,
    payload_size,
)
from skillsd.jsonrpc.memory_budget import MemoryBudget
from skillsd.jsonrpc.router import (
    CANCEL_METHOD,
    PROGRESS_METHOD,
    Handler,
    HandlerMode,
    Router,
)
from skillsd.jsonrpc.rpc_errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RpcError,
    code_of,
)
from skillsd.runtime.file_ops import RequestCancelled
from skillsd_protocol import ErrorCode
from skillsd_protocol.messages import ProgressParams, ProgressValue

__all__ = [
    "Channel",
    "Connection",
    "Handler",
    "HandlerMode",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MethodNotFound",
    "ParseError",
    "RequestContext",
    "Router",
    "RpcError",
]

log = logging.getLogger("skillsd.daemon")

#: What a connection still accepts after ``shutdown`` (docs/security.md): ``exit``, and cancelling
#: what
#: was already running (it starts no work and lets the client end a slow request early).
_AFTER_SHUTDOWN = frozenset({"exit", CANCEL_METHOD})
_SHUTTING_DOWN = "Invalid Request: the server is shutting down (only exit is accepted now)"


# -- handlers ------------------------------------------------------------------------------


# -- the connection ------------------------------------------------------------------------


# -- per-request context -------------------------------------------------------------------


class RequestContext:
    """What a handler gets besides its params: its connection, progress and cancellation."""

    __slots__ = ("_cancelled", "connection", "id", "method", "progress_token")

    def __init__(
        self,
        connection: Connection,
        id_: RequestId | UnsetType,
        method: str,
        progress_token: str | int | None,
    ) -> None:
        self.connection = connection
        self.id = id_
        self.method = method
        self.progress_token = progress_token
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """True once ``$/cancelRequest`` named this request (or the connection is closing)."""
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raise `RequestCancelled` if cancelled: a cheap poll for long thread handlers."""
        if self._cancelled:
            raise RequestCancelled("Request cancelled")

    def progress(self, message: str, percentage: float | None = None) -> None:
        """Send ``$/progress`` if the request asked for it (``_meta.progressToken``).

        Safe to call from a ``"thread"`` handler's thread."""
        token = self.progress_token
        if token is None or self._cancelled:
            return
        params = ProgressParams(
            token=token, value=ProgressValue(message=message, percentage=percentage)
        )
        self.connection.notify(PROGRESS_METHOD, params)


# -- the connection ------------------------------------------------------------------------


class Stoppable(Protocol):
    """A per-connection watch that can be cancelled."""

    def stop(self) -> None: ...


class Channel(Protocol):
    """The bytes side of a connection, provided by a transport."""

    def try_write(self, data: Payload) -> bool:
        """Write ``data`` now if that cannot block; False (nothing written) otherwise."""
        ...

    async def write(self, data: Payload) -> None:
        """Write ``data`` and wait until the transport can take more (flow control)."""

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def close(self) -> None:
        """Close both directions (after the last `write` finished)."""


class _Batch:
    """Replies of one batch request, sent as one array when the last member is answered."""

    __slots__ = ("parts", "pending")

    def __init__(self, expected: int) -> None:
        self.parts: list[Payload] = []
        self.pending = expected


_connection_ids = itertools.count(1)
#: The connections this process serves now (``daemon.status``'s ``clients``).
_open_connections: set[int] = set()


def open_connections() -> int:
    """How many connections this process serves now."""
    return len(_open_connections)


class Connection:
    """One JSON-RPC peer. Transports call `feed` / `feed_eof` / `connection_lost`, then await
    `wait_closed`; handlers use `notify`, the lifecycle fields and `state`."""

    def __init__(
        self,
        router: Router,
        channel: Channel,
        *,
        max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES,
        max_pending_output_bytes: int = limits.MAX_PENDING_OUTPUT_BYTES,
        max_inflight: int = limits.MAX_INFLIGHT_REQUESTS,
        shutdown_grace: float = limits.SHUTDOWN_GRACE_SECONDS,
        budget: MemoryBudget | None = None,
        label: str = "connection",
    ) -> None:
        self.id = next(_connection_ids)
        self.label = f"{label}#{self.id}"
        _open_connections.add(self.id)
        self._router = router
        self._channel = channel
        self._framer = Framer(max_message_bytes)
        self._budget = MemoryBudget() if budget is None else budget
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._max_pending = max_pending_output_bytes
        self._max_inflight = max_inflight
        self._grace = shutdown_grace

        self._tasks: dict[asyncio.Task[None], tuple[RequestContext, _Batch | None]] = {}
        self._inflight: dict[Any, asyncio.Task[None]] = {}
        self._reading_paused = False

        self._out: deque[Payload] = deque()
        self._out_bytes = 0
        self._wakeup = asyncio.Event()
        self._writer_busy = False  # the writer task owns the queue until it drains it
        self._feeding = False
        self._flushed = asyncio.Event()  # set while nothing is queued or being written
        self._flushed.set()
        self._writer = self._loop.create_task(self._write_loop())

        self._closing = False
        self._closed = asyncio.Event()
        self._close_callbacks: list[Callable[[], None]] = []

        # Lifecycle facts, set by the lifecycle handlers; later handlers read them.
        self.initialized = False
        self.shutdown_requested = False
        self.client_name: str | None = None
        self.client_version: str | None = None
        self.protocol_version: str | None = None
        self.process_id: int | None = None
        self.extra_roots: list[str] = []
        #: The connection asked for a catalog, so it hears ``skills.changed`` (``skills.list``).
        self.listens_for_catalogs = False
        #: What closes the connection when the client's ``processId`` exits (``initialize``).
        self.parent_watch: Stoppable | None = None
        #: Sessions this connection opened or resumed (kept over others at the session cap).
        self.held_sessions: set[str] = set()

    # -- transport side --------------------------------------------------------------------

    @property
    def closing(self) -> bool:
        return self._closing

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def inflight(self) -> int:
        """Requests and notifications still running."""
        return len(self._tasks)

    def feed(self, data: bytes) -> None:
        """Handle bytes from the peer: every complete message is dispatched now."""
        if self._closing:
            return
        # Replies made while handling this chunk leave together, in one write, at the end.
        self._feeding = True
        try:
            events = self._framer.feed(data)
            self._account()  # an unfinished message counts as held (may drop this connection)
            for event in events:
                if self._closing:
                    break
                if type(event) is bytes:
                    self._handle_message(event)
                elif isinstance(event, Oversized):
                    self._send(
                        error_payload(
                            None,
                            ErrorCode.INVALID_REQUEST,
                            f"Invalid Request: message of {event.size} bytes exceeds the limit "
                            f"of {event.limit} bytes",
                        )
                    )
                elif isinstance(event, FramingError):
                    self._send(
                        error_payload(None, ErrorCode.PARSE_ERROR, f"Parse error: {event.reason}")
                    )
                    self.close()
        finally:
            self._feeding = False
        if self._out:
            self._flush()

    def feed_eof(self) -> None:
        """The peer will send nothing more: answer what is running, then close."""
        self.close()

    def connection_lost(self, exc: BaseException | None) -> None:
        """The transport is gone: nothing more can be written."""
        if exc is not None:
            log.debug("%s: connection lost: %s", self.label, exc)
        self.abort()

    def close(self, *, grace: float | None = None) -> None:
        """Stop reading, let in-flight requests finish (for ``shutdown_grace``, or ``grace``,
        at most; then cancel them), flush the replies and close. Idempotent."""
        if grace is not None:
            self._grace = grace
        if self._closing:
            return
        self._closing = True
        self._channel.pause_reading()
        self._loop.create_task(self._finish())

    def abort(self) -> None:
        """Close now: running requests are cancelled and nothing more is written."""
        if self._closed.is_set():
            return
        self._closing = True
        self._out.clear()
        self._out_bytes = 0
        self._framer.clear()
        self._budget.update(self, 0)
        for task in list(self._tasks):
            task.cancel()
        self._writer.cancel()
        self._channel.close()
        self._mark_closed()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def add_close_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the connection is closed (at once if it already is)."""
        if self._closed.is_set():
            callback()
        else:
            self._close_callbacks.append(callback)

    # -- handler side ----------------------------------------------------------------------

    def notify(self, method: str, params: msgspec.Struct) -> None:
        """Send a notification to the peer. Safe to call from any thread."""
        payload = ENCODER.encode(Notification("2.0", method, params))
        if threading.get_ident() == self._loop_thread:
            self._send(payload)
            return
        try:
            self._loop.call_soon_threadsafe(self._send, payload)
        except RuntimeError:  # the loop is gone: so is the peer
            log.debug("%s: %s dropped, event loop closed", self.label, method)

    # -- dispatch --------------------------------------------------------------------------

    def _handle_message(self, body: bytes) -> None:
        # msgspec checks UTF-8 only in the parts it decodes: bytes in a skipped field or a
        # Raw params would slip through (or raise UnicodeDecodeError later, killing the
        # connection). ASCII bodies, the common case, need no check at all.
        if not body.isascii():
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                reason = f"Parse error: invalid UTF-8 at byte {exc.start}"
                self._send(error_payload(None, ErrorCode.PARSE_ERROR, reason))
                return
        try:
            message = MESSAGE_DECODER.decode(body)
        except msgspec.ValidationError:
            self._send(self._invalid_payload(body))
            return
        except msgspec.DecodeError as exc:
            self._send(error_payload(None, ErrorCode.PARSE_ERROR, f"Parse error: {exc}"))
            return
        except RecursionError:  # a few KiB of '[' would otherwise kill the connection
            self._send(error_payload(None, ErrorCode.PARSE_ERROR, f"Parse error: {TOO_DEEP}"))
            return
        if type(message) is Request:
            self._dispatch(message, None)
        else:
            self._handle_batch(message)

    def _handle_batch(self, members: list[msgspec.Raw]) -> None:
        if not members:
            self._send(
                error_payload(None, ErrorCode.INVALID_REQUEST, "Invalid Request: empty batch")
            )
            return
        decoded: list[Request | bytes] = []
        expected = 0
        for raw in members:
            try:
                request = MEMBER_DECODER.decode(raw)
            except msgspec.DecodeError:
                decoded.append(self._invalid_payload(raw))
                expected += 1
                continue
            decoded.append(request)
            if request.id is not UNSET:
                expected += 1
        # A notification-only batch gets no reply at all.
        batch = _Batch(expected) if expected else None
        for item in decoded:
            if isinstance(item, bytes):
                assert batch is not None  # an invalid member always counts as a reply
                self._batch_reply(batch, item)
            else:
                self._dispatch(item, batch)

    @staticmethod
    def _invalid_payload(body: bytes | msgspec.Raw) -> bytes:
        try:
            obj = ANY_DECODER.decode(body)
        except msgspec.DecodeError as exc:  # pragma: no cover - the typed decoder parsed it
            return error_payload(None, ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
        except RecursionError:  # the typed decoder stopped before the deep part
            return error_payload(None, ErrorCode.PARSE_ERROR, f"Parse error: {TOO_DEEP}")
        id_, message = explain_invalid(obj)
        return error_payload(id_, ErrorCode.INVALID_REQUEST, message)

    def _dispatch(self, request: Request, batch: _Batch | None) -> None:
        id_ = request.id
        method = request.method
        if self.shutdown_requested and method not in _AFTER_SHUTDOWN:
            if id_ is not UNSET:
                self._reply(batch, error_payload(id_, ErrorCode.INVALID_REQUEST, _SHUTTING_DOWN))
            else:
                log.debug("%s: ignoring %s notification after shutdown", self.label, method)
            return
        handler = self._router.get(method)
        if handler is None:
            if method == CANCEL_METHOD:
                self._cancel(request, batch)
            elif id_ is not UNSET:
                self._reply(
                    batch,
                    error_payload(id_, ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}"),
                )
            else:
                log.debug("%s: ignoring unknown notification %s", self.label, method)
            return
        try:
            params = self._decode_params(handler, request.params)
        except RpcError as exc:
            if id_ is not UNSET:
                self._reply(batch, error_payload(id_, exc.code, exc.message, exc.data))
            else:
                log.warning("%s: bad %s notification: %s", self.label, method, exc.message)
            return
        meta = getattr(params, "meta", None)
        ctx = RequestContext(self, id_, method, meta.progress_token if meta else None)
        if handler.mode == "inline":
            payload: Payload
            try:
                result = handler.fn(params, ctx)
                if id_ is UNSET:
                    return
                payload = result_payload(id_, handler, result)
            except Exception as exc:
                payload = self._exception_payload(ctx, exc)
                if id_ is UNSET:
                    return
            self._reply(batch, payload)
            return
        task = self._loop.create_task(self._run(handler, params, ctx, batch))
        self._tasks[task] = (ctx, batch)
        if id_ is not UNSET:
            self._inflight[_id_key(id_)] = task
        task.add_done_callback(self._task_done)
        if len(self._tasks) >= self._max_inflight and not self._reading_paused:
            self._reading_paused = True
            self._channel.pause_reading()

    def _decode_params(self, handler: Handler, raw: msgspec.Raw) -> Any:
        if not raw:
            return self._decode_empty(handler)
        try:
            return handler.decoder.decode(raw)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {handler.method}: {TOO_DEEP}") from None
        except msgspec.ValidationError as exc:
            first = memoryview(raw)[0:1].tobytes()
            if first == b"[":
                if ANY_DECODER.decode(raw) == []:
                    return self._decode_empty(handler)
                raise InvalidParams(
                    f"Invalid params for {handler.method}: params must be an object "
                    "(named parameters), not an array"
                ) from None
            if first != b"{":
                raise InvalidRequest(BAD_PARAMS) from None
            raise InvalidParams(f"Invalid params for {handler.method}: {exc}") from None

    @staticmethod
    def _decode_empty(handler: Handler) -> Any:
        try:
            return handler.decoder.decode(EMPTY_OBJECT)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"Invalid params for {handler.method}: {exc}") from None

    def _cancel(self, request: Request, batch: _Batch | None) -> None:
        try:
            params = CANCEL_DECODER.decode(request.params or EMPTY_OBJECT)
        except msgspec.ValidationError as exc:
            if request.id is not UNSET:
                if memoryview(request.params)[0:1].tobytes() not in (b"", b"{", b"["):
                    # As for every method: a scalar `params` makes the request itself invalid.
                    payload = error_payload(request.id, ErrorCode.INVALID_REQUEST, BAD_PARAMS)
                else:
                    message = f"Invalid params for {CANCEL_METHOD}: {exc}"
                    payload = error_payload(request.id, ErrorCode.INVALID_PARAMS, message)
                self._reply(batch, payload)
            return
        task = self._inflight.get(_id_key(params.id))
        if task is not None and not task.done():
            self._tasks[task][0]._cancelled = True
            task.cancel()
        if request.id is not UNSET:  # sent as a request: acknowledge it
            self._reply(batch, RESULT_HEAD + ENCODER.encode(request.id) + RESULT_MID + b"null}")

    async def _run(
        self, handler: Handler, params: Any, ctx: RequestContext, batch: _Batch | None
    ) -> None:
        payload: Payload
        try:
            if handler.mode == "thread":
                result = await asyncio.to_thread(handler.fn, params, ctx)
            else:
                result = await handler.fn(params, ctx)
            if ctx.id is UNSET:
                return
            payload = result_payload(ctx.id, handler, result)
        except asyncio.CancelledError:
            if not ctx._cancelled:
                raise  # torn down from outside (abort, loop shutdown): nothing to answer
            if ctx.id is UNSET:
                return
            payload = error_payload(ctx.id, ErrorCode.REQUEST_CANCELLED, "Request cancelled")
        except Exception as exc:
            payload = self._exception_payload(ctx, exc)
            if ctx.id is UNSET:
                return
        self._reply(batch, payload)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        ctx, batch = self._tasks.pop(task)
        if ctx.id is not UNSET:
            key = _id_key(ctx.id)
            if self._inflight.get(key) is task:
                del self._inflight[key]
            if ctx._cancelled and task.cancelled():
                # Cancelled before its first step: _run never ran to answer for itself.
                message = "Request cancelled"
                self._reply(batch, error_payload(ctx.id, ErrorCode.REQUEST_CANCELLED, message))
        if self._reading_paused and len(self._tasks) <= self._max_inflight // 2:
            self._reading_paused = False
            if not self._closing:
                self._channel.resume_reading()

    def _exception_payload(self, ctx: RequestContext, exc: Exception) -> bytes:
        id_ = None if ctx.id is UNSET else ctx.id
        if isinstance(exc, RpcError):
            return error_payload(id_, exc.code, exc.message, exc.data)
        if isinstance(exc, RequestCancelled):
            return error_payload(id_, ErrorCode.REQUEST_CANCELLED, exc.message)
        if isinstance(exc, SkillsdError):
            if isinstance(exc.data, InvalidParamsData):
                # The core's own parameter checks (a bad limit, offset, format...).
                message = f"Invalid params for {ctx.method}: {exc.message}"
                field = exc.data.field
                data = {"field": field} if field is not None else UNSET
                return error_payload(id_, ErrorCode.INVALID_PARAMS, message, data)
            code = code_of(exc)
            if code == ErrorCode.INTERNAL_ERROR:
                log.error("%s: %s raised unknown error kind %r", self.label, ctx.method, exc.kind)
            return error_payload(id_, code, exc.message, exc.wire_data())
        log.error("%s: internal error in %s", self.label, ctx.method, exc_info=exc)
        return error_payload(
            id_, ErrorCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"
        )

    # -- output ----------------------------------------------------------------------------

    def _reply(self, batch: _Batch | None, payload: Payload) -> None:
        if batch is None:
            self._send(payload)
        else:
            self._batch_reply(batch, payload)

    def _batch_reply(self, batch: _Batch, payload: Payload) -> None:
        batch.parts.append(payload)
        batch.pending -= 1
        if batch.pending == 0:
            self._send(b"[" + b",".join(flat(part) for part in batch.parts) + b"]")

    def _send(self, payload: Payload) -> None:
        if self._closed.is_set():
            return
        frame = self._framer.frame(payload)
        self._out.append(frame)
        self._out_bytes += payload_size(frame)
        self._flushed.clear()
        if self._out_bytes > self._max_pending:
            log.warning(
                "%s: peer is not reading (%d bytes of replies queued): dropping it",
                self.label,
                self._out_bytes,
            )
            self.abort()
            return
        self._account()
        if not self._feeding and not self._closed.is_set():
            self._flush()

    def _account(self) -> None:
        """Tell the budget what this connection holds now: queued replies, unfinished input."""
        self._budget.update(self, self._out_bytes + self._framer.buffered)

    def _flush(self) -> None:
        """Write the queue now if the channel takes it without waiting; else wake the writer.

        Writing directly saves the writer task's wake-up on every reply (what ping latency is
        made of); the writer keeps sole ownership whenever it is busy, so order is kept."""
        if self._writer_busy:
            return
        out = self._out
        if any(isinstance(queued, tuple) for queued in out):
            self._writer_busy = True  # pieces are the writer's: they are written, not joined
            self._wakeup.set()
            return
        data = out.popleft() if len(out) == 1 else b"".join(out)  # type: ignore[arg-type]
        out.clear()
        if self._channel.try_write(data):
            self._out_bytes -= len(data)
            if not self._out_bytes:
                self._flushed.set()
            self._account()
            return
        out.append(data)
        self._writer_busy = True
        self._wakeup.set()

    async def _write_loop(self) -> None:
        out = self._out
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while out:
                if len(out) == 1 or any(isinstance(queued, tuple) for queued in out):
                    data = out.popleft()
                else:
                    data = b"".join(out)  # type: ignore[arg-type]
                    out.clear()
                try:
                    await self._channel.write(data)
                except (ConnectionError, OSError) as exc:
                    log.debug("%s: write failed: %s", self.label, exc)
                    self._loop.call_soon(self.abort)
                    return
                except asyncio.CancelledError:
                    # Closed mid-reply (`abort`, `_finish`): stop without re-raising. A task
                    # ended by a cancellation keeps it, whose traceback keeps the writing
                    # frames and the reply they hold (megabytes) in a reference cycle with
                    # this connection until a full garbage collection, which may not come.
                    return
                self._out_bytes -= payload_size(data)
                del data  # do not keep a sent multi-megabyte reply alive while idle
                self._account()
            self._writer_busy = False
            self._flushed.set()

    async def _finish(self) -> None:
        if self._tasks:
            _done, pending = await asyncio.wait(list(self._tasks), timeout=self._grace)
            if pending:
                log.warning(
                    "%s: cancelling %d request(s) still running after %.1fs",
                    self.label,
                    len(pending),
                    self._grace,
                )
                for task in pending:
                    entry = self._tasks.get(task)
                    if entry is not None:
                        entry[0]._cancelled = True
                    task.cancel()
                await asyncio.wait(pending)
        if self._closed.is_set():
            return
        if self._out_bytes:
            # A peer that stopped reading cannot hold the close up for ever.
            try:
                await asyncio.wait_for(self._flushed.wait(), self._grace)
            except TimeoutError:
                log.warning("%s: replies not read within %.1fs: dropping", self.label, self._grace)
                self.abort()
                return
        if self._closed.is_set():
            return
        self._writer.cancel()
        self._channel.close()
        self._mark_closed()

    def _mark_closed(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        _open_connections.discard(self.id)
        # Whatever is still buffered goes now, not when the last reference to us does.
        self._out.clear()
        self._out_bytes = 0
        self._framer.clear()
        self._budget.update(self, 0)
        callbacks, self._close_callbacks = self._close_callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("%s: close callback failed", self.label)


def _id_key(id_: Any) -> Any:
    # 1 and "1" are different ids; keep the type in the key so they never collide.
    return (type(id_), id_)
