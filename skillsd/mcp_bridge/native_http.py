"""``skillsd mcp --http``: MCP's streamable HTTP transport, served by skillsd itself.

HTTP/1.1 is parsed by httptools and framed by hand (:mod:`~skillsd.mcp_bridge.http_framing`)
on an asyncio protocol; every JSON-RPC message then goes to the same connection and methods
that serve stdio (:class:`~skillsd.mcp_bridge.mcp_connection.McpConnection`,
:class:`~skillsd.mcp_bridge.native_skills.NativeSkills`). The MCP SDK's HTTP
app spent about 3.6 ms of CPU on every request, ``ping`` included (``docs/mcp.md``).

* The handshake era: ``initialize`` without ``Mcp-Session-Id`` opens a session, whose id the
  reply's header carries; every later request of it carries that id. A session is one skillsd
  session. ``DELETE`` ends it, and an idle one expires. ``GET`` opens the session's one stream
  for what the server says unasked (list changes, resource updates).
* 2026-07-28 (an ``MCP-Protocol-Version`` header naming it): each POST stands alone, with no
  session; its routing headers must agree with its body, and an error's HTTP status is the one
  the protocol gives its code. ``subscriptions/listen`` is answered with a stream.

A reply is JSON, unless something must go out before the answer (the server's ``roots/list``
question, a listen stream's events): then it is an event stream that ends with the answer.
Which request an outgoing message belongs to is known from where it was sent: a request's task
runs in the context of the POST that brought it (:data:`_REPLY`).

Every request passes :class:`~skillsd.mcp_bridge.http_guard.HttpRules` (token, ``Host``,
``Origin``) before its body is read and keeps the bounds of
:class:`~skillsd.mcp_bridge.http_guard.HttpLimits`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import contextvars
import logging
import re
import secrets
import signal
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, cast

import msgspec
from msgspec import UNSET

from skillsd.jsonrpc.framing import Payload, flat
from skillsd.jsonrpc.router import Router
from skillsd.mcp_bridge.exchange import HANDSHAKE_VERSIONS, MODERN_VERSIONS, Era
from skillsd.mcp_bridge.http_framing import (
    CLOSED,
    END,
    LAST_CHUNK,
    BadRequest,
    RequestHead,
    RequestReader,
    chunk,
    response_head,
)
from skillsd.mcp_bridge.http_guard import HttpLimits, HttpRules
from skillsd.mcp_bridge.http_workers import Relays, Worker, serve_in_workers, worker_count
from skillsd.mcp_bridge.mcp_connection import (
    CAPABILITIES_KEY,
    MAX_STREAM_BACKLOG,
    UNSUPPORTED_PROTOCOL_VERSION,
    VERSION_KEY,
    Listeners,
    McpConnection,
    McpFace,
    envelope_refusal,
)
from skillsd.mcp_bridge.native_skills import NativeSkills
from skillsd.runtime.services import Services
from skillsd_protocol import ErrorCode

__all__ = ["serve"]

log = logging.getLogger(__name__)

PATH = "/mcp"
#: The longest request head (request line and headers).
MAX_HEAD_BYTES = 64 * 1024
#: Bodies up to this are read before a request slot is taken (they are in hand already).
_SMALL_BODY = 64 * 1024
#: A stream with nothing to say sends a comment this often (a dead client is noticed).
PING_SECONDS = 15.0
#: A reply is written in pieces of this size, each to be taken within the write deadline.
_WRITE_PIECE = 256 * 1024
#: What a client may send while it is being answered on a stream.
_MAX_UNREAD_BYTES = 1024 * 1024
HEADER_MISMATCH = -32020
#: The HTTP status of a 2026-07-28 error reply, by its JSON-RPC code (others: 200).
_MODERN_STATUS = {
    ErrorCode.PARSE_ERROR: 400,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    -32021: 400,  # a required client capability is missing
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    ErrorCode.METHOD_NOT_FOUND: 404,
}
#: Methods whose target is mirrored in the ``Mcp-Name`` header, and the param it mirrors.
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_ROUTING_HEADERS = frozenset({"mcp-protocol-version", "mcp-method", "mcp-name"})
_BASE64_VALUE = re.compile(r"=\?base64\?(.*)\?=")
_SESSION_HEADER = re.compile(rb"\r\nmcp-session-id:[ \t]*([^\r\n]*)", re.IGNORECASE)
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*([^\r\n]*)", re.IGNORECASE)
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding:", re.IGNORECASE)

_JSON = [(b"content-type", b"application/json")]
_SSE = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_PING = b": ping\r\n\r\n"

#: The POST whose request is being answered, in that request's task (``None``: no request,
#: e.g. a change noticed on disk).
_REPLY: contextvars.ContextVar[_Reply | None] = contextvars.ContextVar("mcp_reply", default=None)


class _Error(msgspec.Struct):
    code: Any = UNSET


class _Outgoing(msgspec.Struct):
    """Enough of an answer to give its HTTP status."""

    error: _Error | msgspec.UnsetType | None = UNSET


_OUTGOING = msgspec.json.Decoder(_Outgoing)
_ANY = msgspec.json.Decoder()


# -- what a POST sends back -------------------------------------------------------------------


class _Reply:
    """What one request sends back: events (notifications, the server's own requests), then
    its answer. ``close`` ends it unanswered (the session ended, the client left)."""

    __slots__ = ("_answer", "_closed", "_events", "_wake", "overflowed")

    def __init__(self) -> None:
        self._events: deque[bytes] = deque()
        self._answer: bytes | None = None
        self._closed = False
        self._wake = asyncio.Event()
        self.overflowed = False

    def event(self, data: bytes) -> None:
        if len(self._events) >= MAX_STREAM_BACKLOG:
            self.overflowed = True  # a client that stopped reading: its stream ends
            self.close()
            return
        self._events.append(data)
        self._wake.set()

    def answer(self, data: bytes) -> None:
        if self._answer is None:
            self._answer = data
            self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    async def next(self, timeout: float | None = None) -> tuple[bytes, bool] | None:
        """The next message and whether it is the answer; None once closed; ``b""`` (not the
        answer) when ``timeout`` passed with nothing to send."""
        while True:
            if self._closed:
                return None
            if self._events:
                return self._events.popleft(), False
            if self._answer is not None:
                return self._answer, True
            self._wake.clear()
            if timeout is None:
                await self._wake.wait()
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return b"", False


class _NoChannel:
    """The endpoint's channel, unused: every message leaves through :data:`_REPLY`."""

    def try_write(self, data: Payload) -> bool:
        return True

    async def write(self, data: Payload) -> None:
        return None

    def pause_reading(self) -> None:
        return None

    def resume_reading(self) -> None:
        return None

    def close(self) -> None:
        return None


class HttpMcpConnection(McpConnection):
    """An MCP connection whose messages go to the POST they belong to: an answer to its
    request's reply, anything else to its request's stream, or (sent by no request) to
    ``unasked``, the session's GET stream."""

    def __init__(
        self, router: Router, *, unasked: Callable[[bytes], None] | None, label: str
    ) -> None:
        super().__init__(router, _NoChannel(), shutdown_grace=0.0, label=label)
        self._unasked = unasked

    def _send(self, payload: Payload) -> None:
        reply = _REPLY.get()
        if reply is not None:
            reply.answer(bytes(flat(payload)))
        else:
            log.debug("%s: an answer outside any request was dropped", self.label)

    def _send_event(self, payload: bytes) -> None:
        reply = _REPLY.get()
        if reply is not None:
            reply.event(payload)
        elif self._unasked is not None:
            self._unasked(payload)

    def handle(self, body: bytes, reply: _Reply | None) -> None:
        """Hand one message over; what it sends goes to ``reply``."""
        token = _REPLY.set(reply)
        try:
            self._handle_message(body)
        finally:
            _REPLY.reset(token)


class _Ready:
    """The tool list and skill methods of a connection, ready from the start."""

    def __init__(self, tools: dict[str, Any], methods: NativeSkills) -> None:
        loop = asyncio.get_running_loop()
        self.tools: asyncio.Future[dict[str, Any]] = loop.create_future()
        self.tools.set_result(tools)
        self.methods: asyncio.Future[Any] = loop.create_future()
        self.methods.set_result(methods)


class _Session:
    """One handshake-era session: its connection, its skill methods and its GET stream."""

    def __init__(self, server: HttpServer, session_id: str) -> None:
        self.id = session_id
        self.header = (b"mcp-session-id", session_id.encode())
        self.conn = HttpMcpConnection(server.router, unasked=self._unasked, label="mcp-http")
        self.skills = NativeSkills(
            server.services, server.cwd, cwd_given=server.cwd_given, peer=self.conn
        )
        self.conn.runtime = _Ready(server.tools, self.skills)
        self.stream: _Reply | None = None
        self.pending: set[_Reply] = set()
        self.last_used = time.monotonic()

    def _unasked(self, data: bytes) -> None:
        if self.stream is not None:
            self.stream.event(data)

    @property
    def idle(self) -> bool:
        return self.stream is None and not self.pending and not self.conn.inflight

    def end(self) -> None:
        self.conn.abort()
        for reply in [*self.pending, *([self.stream] if self.stream else [])]:
            reply.close()
        self.skills.end()


class _ModernPeer:
    """The peer of the 2026-07-28 skill methods: the listen streams of every request, and no
    one to notify or ask otherwise (each request stands alone)."""

    era: Era = "modern"
    #: Each request stands alone: no handshake named the client.
    client_name: str | None = None

    def __init__(self) -> None:
        self.listeners = Listeners()

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        return None

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        raise RuntimeError("a 2026-07-28 server asks its client nothing")


class HttpServer:
    """The sessions, the 2026-07-28 methods and the bounds of one ``skillsd mcp --http``."""

    def __init__(
        self,
        services: Services,
        cwd: str,
        *,
        cwd_given: bool,
        rules: HttpRules,
        limits: HttpLimits,
        worker: Worker | None = None,
    ) -> None:
        from skillsd.core.catalog.model_tools import tool_definitions
        from skillsd.mcp_bridge.mcp_results import tool_list

        self.services = services
        self.cwd = cwd
        self.cwd_given = cwd_given
        self.rules = rules
        self.limits = limits
        self.router = Router()
        McpFace().register(self.router)
        self.tools = tool_list(tool_definitions("default"))
        self.sessions: dict[str, _Session] = {}
        self.slots = asyncio.Semaphore(limits.max_concurrent)
        self.modern = _ModernPeer()
        self._modern = _Ready(
            self.tools,
            NativeSkills(services, cwd, cwd_given=cwd_given, peer=self.modern, stateless=True),
        )
        self.wires: set[_Wire] = set()
        #: This process among several serving the address (None: it serves alone).
        self.worker = worker

    @property
    def session_count(self) -> int:
        """Live sessions on the address (every worker's)."""
        return len(self.sessions) if self.worker is None else self.worker.sessions.total()

    def open_session(self) -> _Session:
        token = secrets.token_hex(16)
        session = _Session(self, token if self.worker is None else self.worker.session_id(token))
        self.sessions[session.id] = session
        self._count_sessions()
        return session

    def end_session(self, session: _Session) -> None:
        if self.sessions.pop(session.id, None) is not None:
            session.end()
            self._count_sessions()

    def _count_sessions(self) -> None:
        if self.worker is not None:
            self.worker.sessions.set(self.worker.index, len(self.sessions))

    def modern_connection(self) -> HttpMcpConnection:
        """A connection for one 2026-07-28 request: its listen stream, if it opens one, is
        among every request's (changes reach it), and ends with it alone."""
        conn = HttpMcpConnection(self.router, unasked=None, label="mcp-http-2026")
        conn.era = "modern"
        conn.listeners = self.modern.listeners
        conn.owns_listeners = False
        conn.runtime = self._modern
        return conn

    async def expire_sessions(self) -> None:
        every = min(60.0, self.limits.session_idle_seconds / 4)
        while True:
            await asyncio.sleep(every)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if session.idle and now - session.last_used > self.limits.session_idle_seconds:
                    log.info("MCP session %s idle: ended", session.id)
                    self.end_session(session)

    def close(self) -> None:
        for session in list(self.sessions.values()):
            self.end_session(session)
        for wire in list(self.wires):
            wire.abort()
        self.modern.listeners.end()


# -- one TCP connection -----------------------------------------------------------------------


class _Cut(Exception):
    """The connection is gone, or was cut: nothing more can be written."""


class _Wire(asyncio.Protocol):
    """One TCP connection: its HTTP/1.1 requests, answered one at a time."""

    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.limits = server.limits
        self.reader = RequestReader(max_head_bytes=MAX_HEAD_BYTES)
        self.transport: asyncio.Transport | None = None
        #: Set while the request task waits for bytes (see :meth:`_next`).
        self._waiter: asyncio.Future[None] | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self._eof = False
        self.lost = False
        #: Called if the connection goes while a request is answered.
        self._on_lost: Callable[[], None] | None = None
        self._streaming = 0
        #: The request being answered is a HEAD: its reply has headers and no body.
        self._head_only = False
        #: The request being answered came from an HTTP/1.1 client (streams are chunked).
        self._chunked = True
        #: A reply to the request being answered began (nothing else can be said to it).
        self._replied = False
        #: The connection ends after the reply being sent.
        self._closing = False
        #: The request being answered was read whole.
        self._request_read = False
        self._task: asyncio.Task[None] | None = None
        #: The next request's bytes, held until its head is whole to see which worker holds
        #: its session (None: bytes go to the reader).
        self._routing: bytearray | None = None
        #: Requests relayed to the workers holding their sessions (None: none yet).
        self._relays: Relays | None = None
        #: What the client sent after a relayed request, held until its reply is whole.
        self._after_relayed = b""
        #: A request is being answered here (from its head to the end of its reply).
        self._busy = False
        #: A request for another worker's session that waits for the reply being sent here
        #: (the worker, the bytes).
        self._deferred: tuple[int, bytes] | None = None

    # -- asyncio's side -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's is not a subclass of asyncio's).
        self.transport = cast(asyncio.Transport, transport)
        self.server.wires.add(self)
        self._task = asyncio.get_running_loop().create_task(self._serve())

    def data_received(self, data: bytes) -> None:
        relays = self._relays
        if relays is not None and relays.active:
            self._after_relayed += relays.feed(data)
            if len(self._after_relayed) > _MAX_UNREAD_BYTES:
                size = len(self._after_relayed)
                log.warning("a client sent %d bytes while being answered: cut", size)
                self.abort()
            return
        if self._deferred is not None:  # until the reply being sent is out
            holder, held = self._deferred
            self._deferred = (holder, held + data)
            return
        if self._eof:
            return
        if self._routing is not None:
            self._routing += data
            data, self._routing = bytes(self._routing), None
        if self.server.worker is not None and self.reader.between_requests:
            # The next request: which worker answers it is known from its head.
            end = data.find(b"\r\n\r\n")
            if end < 0 and len(data) <= MAX_HEAD_BYTES:
                self._routing = bytearray(data)
                return
            owner = self._owner(data, end) if end >= 0 else None
            if owner is not None:
                if self._busy:  # after the reply being sent here, never interleaved with it
                    self._deferred = (owner, data)
                    if self.transport is not None:
                        self.transport.pause_reading()
                else:
                    self._relay(owner, data)
                return
        if self._streaming:
            self._streaming += len(data)
            if self._streaming > _MAX_UNREAD_BYTES:
                log.warning("a client sent %d bytes while being answered: cut", self._streaming)
                self.abort()
                return
        self.reader.feed(data)
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        if (self._relays is not None and self._relays.active) or self._deferred is not None:
            return True  # the connection ends once the relayed request's reply is out
        if self._routing:
            self.reader.feed(bytes(self._routing))
        self._routing = None
        self.reader.feed_eof()
        self._wake()
        return True  # a reply may still be on its way out

    # -- several workers ----------------------------------------------------------------------

    def _owner(self, data: bytes, end: int) -> int | None:
        """The other worker holding the session named by the head of the request ``data``
        begins (``end``: where the head ends), if it can be relayed there: sized (a
        ``Content-Length``, or no body) and not a ``HEAD``."""
        worker = self.server.worker
        found = _SESSION_HEADER.search(data, 0, end)
        if worker is None or found is None or data.startswith(b"HEAD "):
            return None
        owner = worker.owner(found.group(1))
        if owner is None or _request_size(data[:end]) is None:
            return None  # one of this worker's sessions, or (unsized) answered here: 404
        return owner

    def _relay(self, owner: int, data: bytes) -> None:
        """Relay the request ``data`` begins to worker ``owner``, which holds its session; the
        client's next request is read once the reply is whole (see `_relayed`)."""
        assert self.server.worker is not None and self.transport is not None
        end = data.index(b"\r\n\r\n") + 4
        size = end + (_request_size(data[:end]) or 0)
        if self._relays is None:
            self._relays = Relays(self.server.worker, self.transport, self._relayed)
        self._relays.start(owner, data[:size], max(0, size - len(data)))
        self._after_relayed += data[size:]
        self.transport.resume_reading()

    def _relayed(self, keep: bool) -> None:
        """A relayed request's reply is whole: read what the client sent next, or close."""
        if not keep or self.lost:
            if self.transport is not None:
                self.transport.close()
            return
        after, self._after_relayed = self._after_relayed, b""
        ended, self._eof = self._eof, False
        if after:
            self.data_received(after)
        if ended:
            self.eof_received()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self._relays is not None:
            self._relays.close()
        self.server.wires.discard(self)
        self._wake()
        self._writable.set()
        gone, self._on_lost = self._on_lost, None
        if gone is not None:
            gone()

    def pause_writing(self) -> None:
        self._writable.clear()
        if self._relays is not None:
            self._relays.pause()

    def resume_writing(self) -> None:
        self._writable.set()
        if self._relays is not None:
            self._relays.resume()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    # -- reading ------------------------------------------------------------------------------

    async def _next(self, deadline: float) -> Any:
        """The next request event, waiting for bytes until ``deadline`` (``TimeoutError`` past
        it); :data:`CLOSED` once the connection is gone."""
        reader = self.reader
        while True:
            event = reader.next_event()
            if event is not None:
                return event
            if self.lost:
                return CLOSED
            loop = asyncio.get_running_loop()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError
            # One future and one timer per wait: cheaper than ``wait_for`` (a task per call).
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(remaining, _expire, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None

    async def _serve(self) -> None:
        try:
            while not self.lost:
                try:
                    head = await self._next(_now() + self.limits.keep_alive_seconds)
                except TimeoutError:
                    if self._relays is not None and self._relays.active:
                        continue  # a relayed request is being answered: not idle
                    break  # an idle kept-alive connection, or a head that never came whole
                if isinstance(head, BadRequest):
                    await self._plain(head.status, head.message, close=True)
                    break
                if not isinstance(head, RequestHead):
                    break  # closed
                self._replied = False
                self._closing = not head.keep_alive  # HTTP/1.0, or ``Connection: close``
                self._head_only = head.method == "HEAD"
                self._chunked = head.http_11
                self._request_read = False
                self._busy = True
                try:
                    if not await self._request(head):
                        break
                finally:
                    self._busy = False
                if self._deferred is not None and not self._closing:
                    owner, data = self._deferred
                    self._deferred = None
                    self._relay(owner, data)
                if self._closing or not (self._request_read or self.reader.take_end()):
                    break  # the client asked to close, or its request was not read whole
        except _BadBody as exc:
            with contextlib.suppress(_Cut):
                await self._plain(exc.status, exc.message, close=True)
        except _Cut:
            pass
        except Exception:
            log.exception("an HTTP connection failed")
        finally:
            if self.transport is not None and not self.lost:
                self.transport.close()

    async def _body(self, length: int | None) -> bytes | None:
        """The request's body, or None after answering 413 or 408 (the connection then ends)."""
        limit = self.limits.max_body_bytes
        if length is not None and length > limit:
            await self._plain(413, f"the request body is over {limit} bytes", close=True)
            return None
        parts: list[bytes] = []
        size = 0
        deadline = _now() + self.limits.write_seconds
        while True:
            try:
                event = await self._next(deadline)
            except TimeoutError:
                seconds = self.limits.write_seconds
                log.warning("a request body did not arrive within %gs: dropped", seconds)
                why = f"the request body did not arrive within {seconds:g}s: send it whole"
                await self._plain(408, why, close=True)
                return None
            if isinstance(event, bytes):
                size += len(event)
                if size > limit:
                    await self._plain(413, f"the request body is over {limit} bytes", close=True)
                    return None
                parts.append(event)
            elif event is END:
                self._request_read = True
                return parts[0] if len(parts) == 1 else b"".join(parts)
            elif isinstance(event, BadRequest):
                raise _BadBody(event.status, event.message)
            else:
                raise _Cut

    # -- one request --------------------------------------------------------------------------

    async def _request(self, head: RequestHead) -> bool:
        """Answer one request; whether the connection may carry another."""
        raw = head.headers
        headers = dict(raw)
        refusal = self.server.rules.refusal(headers)
        if refusal is not None:
            status, message, extra = refusal
            code = -32001 if status in (401, 403, 421) else -32000
            await self._rpc_error(status, None, code, message, extra=extra, close=True)
            return False
        target = head.target.split("?", 1)[0]
        if target != PATH:
            await self._rpc_error(404, None, -32000, "Not Found", close=True)
            return False
        method = head.method
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            return await self._modern(method, headers, raw, version)
        if method == "POST":
            return await self._post(headers)
        if method == "GET":
            return await self._get(headers)
        if method == "DELETE":
            return await self._delete(headers)
        await self._rpc_error(
            405, None, ErrorCode.INVALID_REQUEST, "Method Not Allowed",
            extra={"allow": "GET, POST, DELETE"}, close=True,
        )  # fmt: skip
        return False

    def _length(self, headers: dict[str, str]) -> int | None:
        text = headers.get("content-length")
        return int(text) if text is not None and text.isdigit() else None

    async def _read(self, headers: dict[str, str]) -> tuple[bytes | None, bool]:
        """The body, and whether a request slot was taken to read it (large bodies)."""
        length = self._length(headers)
        large = length is None or length > _SMALL_BODY
        if large:
            await self.server.slots.acquire()
        try:
            body = await self._body(length)
        except BaseException:
            if large:
                self.server.slots.release()
            raise
        if body is None and large:
            self.server.slots.release()
        return body, large

    async def _post(self, headers: dict[str, str]) -> bool:
        has_json, has_sse = _accepts(headers.get("accept", ""))
        if not (has_json and has_sse):
            why = "Not Acceptable: Client must accept both application/json and text/event-stream"
            await self._rpc_error(406, None, ErrorCode.INVALID_REQUEST, why, close=True)
            return False
        if not _is_json(headers.get("content-type", "")):
            why = "Unsupported Media Type: Content-Type must be application/json"
            await self._rpc_error(415, None, ErrorCode.INVALID_REQUEST, why, close=True)
            return False
        body, slotted = await self._read(headers)
        if body is None:
            return False
        try:
            return await self._post_body(headers, body, slotted)
        finally:
            if slotted:
                self.server.slots.release()

    async def _post_body(self, headers: dict[str, str], body: bytes, slotted: bool) -> bool:
        server = self.server
        try:
            message = _ANY.decode(body)
        except (msgspec.DecodeError, RecursionError) as exc:
            await self._rpc_error(400, None, ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
            return True
        if not isinstance(message, dict):
            why = "Invalid Request: one JSON-RPC message per request, never a batch"
            await self._rpc_error(400, None, ErrorCode.INVALID_REQUEST, why)
            return True
        session_id = headers.get("mcp-session-id")
        if session_id is not None:
            session = server.sessions.get(session_id)
            if session is None:
                why = "Not Found: Invalid or expired session ID"
                await self._rpc_error(404, None, ErrorCode.INVALID_REQUEST, why)
                return True
        elif message.get("method") == "initialize" and "id" in message:
            if server.session_count >= self.limits.max_sessions:
                limit = self.limits.max_sessions
                why = (
                    f"{limit} MCP sessions are open, the limit: close one (HTTP DELETE) or wait "
                    "for an idle one to expire; open sessions keep working"
                )
                await self._rpc_error(503, None, -32000, why)
                return True
            session = server.open_session()
        else:
            why = "Bad Request: Missing session ID"
            await self._rpc_error(400, None, ErrorCode.INVALID_REQUEST, why)
            return True
        session.last_used = time.monotonic()
        if "id" not in message or "method" not in message:  # a notification or an answer
            session.conn.handle(body, None)
            await self._respond(202, b"", [session.header])
            return True
        reply = _Reply()
        session.pending.add(reply)
        request_id = message["id"]

        def gone() -> None:
            reply.close()
            session.conn.give_up(request_id)

        try:
            return await self._send_reply(
                lambda: session.conn.handle(body, reply),
                reply,
                [session.header],
                gone,
                slotted=slotted,
            )
        finally:
            session.pending.discard(reply)
            session.last_used = time.monotonic()

    async def _modern(
        self, method: str, headers: dict[str, str], raw: list[tuple[str, str]], version: str
    ) -> bool:
        """A 2026-07-28 request: it stands alone, on a connection of its own."""
        if method != "POST":
            await self._respond(405, b"", [(b"allow", b"POST")], close=True)
            return False
        has_json, has_sse = _accepts(headers.get("accept", ""))
        if not (has_json and has_sse):
            await self._respond(406, b"", [], close=True)
            return False
        body, slotted = await self._read(headers)
        if body is None:
            return False
        try:
            return await self._modern_body(headers, raw, version, body, slotted)
        finally:
            if slotted:
                self.server.slots.release()

    async def _modern_body(
        self,
        headers: dict[str, str],
        raw: list[tuple[str, str]],
        version: str,
        body: bytes,
        slotted: bool,
    ) -> bool:
        try:
            message = _ANY.decode(body)
        except (msgspec.DecodeError, RecursionError):
            await self._rpc_error(400, None, ErrorCode.PARSE_ERROR, "Parse error")
            return True
        if isinstance(message, dict) and "id" not in message:
            if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
                await self._rpc_error(400, None, ErrorCode.INVALID_REQUEST, _INVALID_BODY)
            elif version not in MODERN_VERSIONS:
                await self._unsupported(None, version)
            else:
                await self._respond(202, b"", [])  # nothing to act on: each request stands alone
            return True
        request_id = message.get("id") if isinstance(message, dict) else None
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
            or not isinstance(request_id, str | int)
            or isinstance(request_id, bool)
            or "result" in message
            or "error" in message
        ):
            await self._rpc_error(400, None, ErrorCode.INVALID_REQUEST, _INVALID_BODY)
            return True
        seen: set[str] = set()
        for name, _value in raw:
            key = name.lower()
            if key in _ROUTING_HEADERS:
                if key in seen:
                    why = f"{key} header appears more than once"
                    await self._rpc_error(400, request_id, HEADER_MISMATCH, why)
                    return True
                seen.add(key)
        refusal = _ladder(message, headers)
        if refusal is not None:
            code, why, data = refusal
            await self._rpc_error(_MODERN_STATUS.get(code, 200), request_id, code, why, data)
            return True
        if message["method"] == "initialize":
            # Each request stands alone: there is no handshake to refuse, only no such method.
            method = message["method"]
            await self._rpc_error(404, request_id, ErrorCode.METHOD_NOT_FOUND, _NOT_FOUND, method)
            return True
        conn = self.server.modern_connection()
        reply = _Reply()
        try:
            return await self._send_reply(
                lambda: conn.handle(body, reply),
                reply,
                [],
                conn.abort,
                modern=True,
                slotted=slotted,
            )
        finally:
            conn.abort()

    async def _get(self, headers: dict[str, str]) -> bool:
        if not _accepts(headers.get("accept", ""))[1]:
            why = "Not Acceptable: Client must accept text/event-stream"
            await self._rpc_error(406, None, ErrorCode.INVALID_REQUEST, why, close=True)
            return False
        session = await self._session(headers)
        if session is None:
            return False
        if session.stream is not None:
            why = "Conflict: Only one SSE stream is allowed per session"
            await self._rpc_error(409, None, ErrorCode.INVALID_REQUEST, why, close=True)
            return False
        stream = session.stream = _Reply()
        try:
            await self._stream(stream, None, [session.header], stream.close)
        finally:
            if session.stream is stream:
                session.stream = None
            session.last_used = time.monotonic()
        return False

    async def _delete(self, headers: dict[str, str]) -> bool:
        session = await self._session(headers)
        if session is None:
            return False
        self.server.end_session(session)
        await self._respond(200, b"", [session.header])
        return True

    async def _session(self, headers: dict[str, str]) -> _Session | None:
        """The session a GET or DELETE names, or None after saying why there is none."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            why = "Bad Request: Missing session ID"
            await self._rpc_error(400, None, ErrorCode.INVALID_REQUEST, why, close=True)
            return None
        session = self.server.sessions.get(session_id)
        if session is None:
            why = "Not Found: Invalid or expired session ID"
            await self._rpc_error(404, None, ErrorCode.INVALID_REQUEST, why, close=True)
        return session

    async def _unsupported(self, request_id: Any, version: str) -> None:
        data = {"supported": list(MODERN_VERSIONS), "requested": version}
        why = "Unsupported protocol version"
        await self._rpc_error(400, request_id, UNSUPPORTED_PROTOCOL_VERSION, why, data)

    # -- writing ------------------------------------------------------------------------------

    async def _send_reply(
        self,
        start: Callable[[], None],
        reply: _Reply,
        headers: list[tuple[bytes, bytes]],
        gone: Callable[[], None],
        *,
        modern: bool = False,
        slotted: bool,
    ) -> bool:
        """Hand the request over (``start``) within a request slot, then send what it sends
        back: its answer as JSON, or a stream when something comes before it."""
        self._on_lost = gone
        try:
            slot = contextlib.nullcontext() if slotted else self.server.slots
            async with slot:
                if self.lost:
                    return False
                start()
                first = await reply.next()
                if first is None:
                    why = "Session terminated before the request completed"
                    await self._rpc_error(500, None, ErrorCode.INTERNAL_ERROR, why)
                    return True
                data, answered = first
                if answered:
                    status = _modern_status(data) if modern else 200
                    await self._respond(status, data, [*_JSON, *headers])
                    return True
            # A stream: its events are small, and it may last; it holds no slot.
            return await self._stream(reply, data, headers, gone)
        finally:
            self._on_lost = None

    async def _stream(
        self,
        reply: _Reply,
        first: bytes | None,
        headers: list[tuple[bytes, bytes]],
        gone: Callable[[], None],
    ) -> bool:
        """An event stream: ``first``, then each message of ``reply`` until its answer (or,
        with none to come, until it closes or the client leaves)."""
        self._on_lost = gone
        self._streaming = 1
        try:
            if self._replied:
                raise _Cut
            self._replied = True
            if not self._chunked:
                self._closing = True  # an HTTP/1.0 client: the stream ends with the connection
            piece = chunk if self._chunked else bytes
            head = response_head(
                200, [*_SSE, *headers], length=None, chunked=self._chunked, close=self._closing
            )
            await self._write(head + piece(_sse(first)) if first is not None else head)
            while True:
                item = await reply.next(PING_SECONDS)
                if item is None:
                    break
                data, answered = item
                await self._write(piece(_sse(data) if data else _PING))
                if answered:
                    break
            if reply.overflowed:
                raise _Cut  # the client stopped reading: the stream is cut, not ended
            if self._chunked:
                await self._write(LAST_CHUNK)
            return not self._closing
        finally:
            self._streaming = 0
            self._on_lost = None

    async def _rpc_error(
        self,
        status: int,
        request_id: Any,
        code: int,
        message: str,
        data: Any = UNSET,
        *,
        extra: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        error: dict[str, Any] = {"code": int(code), "message": message}
        if data is not UNSET:
            error["data"] = data
        body = msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})
        headers = [*_JSON, *((k.encode(), v.encode()) for k, v in (extra or {}).items())]
        await self._respond(status, body, headers, close=close)

    async def _plain(self, status: int, message: str, *, close: bool) -> None:
        await self._rpc_error(status, None, -32000, message, close=close)

    async def _respond(
        self, status: int, body: bytes, headers: list[tuple[bytes, bytes]], *, close: bool = False
    ) -> None:
        """A whole reply, in one write. ``close``: the connection ends after it (its request's
        body was not read)."""
        if self._replied:
            raise _Cut  # a reply already began: nothing more can be said on this one
        self._replied = True
        if close:
            self._closing = True
        head = response_head(status, headers, length=len(body), close=self._closing)
        if self._head_only:
            body = b""  # what a GET would get, said in the headers alone
        if len(body) <= _WRITE_PIECE:
            await self._write(head + body)
            return
        await self._write(head)
        await self._write(body)  # a large body is not copied whole again

    async def _write(self, data: bytes | None) -> None:
        """Write ``data`` a piece at a time; the client must take each piece within the write
        deadline, else the request is dropped and the connection cut (`_Cut`)."""
        if self.lost or self.transport is None:
            raise _Cut
        if not data:
            return
        view = memoryview(data)
        for start in range(0, len(view), _WRITE_PIECE):
            self.transport.write(view[start : start + _WRITE_PIECE])
            if not self._writable.is_set():
                await self._taken()

    async def _taken(self) -> None:
        """Wait until the client takes what was written, within the write deadline."""
        seconds = self.limits.write_seconds
        try:
            await asyncio.wait_for(self._writable.wait(), seconds)
        except TimeoutError:
            log.warning("the client took no reply for %gs; request dropped", seconds)
            gone, self._on_lost = self._on_lost, None
            if gone is not None:
                gone()
            self.abort()
            raise _Cut from None
        if self.lost:
            raise _Cut


# -- the protocol's rules ---------------------------------------------------------------------

_INVALID_BODY = "Body must be a single JSON-RPC request or notification object"
_NOT_FOUND = "Method not found"


def _now() -> float:
    return asyncio.get_running_loop().time()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class _BadBody(Exception):
    """A request body that is not HTTP/1.1 (a broken chunk): answered, then the connection
    ends."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _request_size(head: bytes) -> int | None:
    """The body size a raw request ``head`` gives (0: none), or None when it is not one plain
    ``Content-Length`` (chunked, or several: where the request ends is then not plain)."""
    if _TRANSFER_ENCODING.search(head):
        return None
    lengths = _CONTENT_LENGTH.findall(head)
    if not lengths:
        return 0
    if len(lengths) > 1 or not lengths[0].strip().isdigit() or len(lengths[0].strip()) > 12:
        return None
    return int(lengths[0].strip())


def _sse(data: bytes) -> bytes:
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


def _accepts(accept: str) -> tuple[bool, bool]:
    """Whether ``accept`` takes JSON, and event streams (wildcards count)."""
    types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    anything = "*/*" in types
    json = anything or "application/json" in types or "application/*" in types
    sse = anything or "text/event-stream" in types or "text/*" in types
    return json, sse


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def _header_value(value: str | None) -> str | None:
    """A header's value, decoded when it is sent as ``=?base64?…?=`` (non-ASCII text)."""
    if value is None:
        return None
    found = _BASE64_VALUE.fullmatch(value)
    if found is None:
        return value
    try:
        decoded = base64.b64decode(found.group(1), validate=True)
        if base64.b64encode(decoded).decode("ascii") != found.group(1):
            return None
        return decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _ladder(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, str, Any] | None:
    """Why a 2026-07-28 request is refused before it runs: its envelope, then whether its
    routing headers agree with its body, then its version."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or VERSION_KEY not in meta or CAPABILITIES_KEY not in meta:
        return envelope_refusal(params if isinstance(params, dict) else None)
    assert isinstance(params, dict)
    if headers.get("mcp-protocol-version") != meta[VERSION_KEY]:
        why = "mcp-protocol-version header does not match the request envelope's protocol version"
        return HEADER_MISMATCH, why, UNSET
    method = message["method"]
    if headers.get("mcp-method") != method:
        return HEADER_MISMATCH, "mcp-method header does not match the request body's method", UNSET
    named = _NAMED.get(method)
    if named is not None:
        value = params.get(named)
        if value is not None and _header_value(headers.get("mcp-name")) != value:
            why = f"mcp-name header does not match the request body's {named!r} parameter"
            return HEADER_MISMATCH, why, UNSET
    return envelope_refusal(params)


def _modern_status(answer: bytes) -> int:
    """The HTTP status of a 2026-07-28 answer: its error code's, else 200."""
    try:
        error = _OUTGOING.decode(answer).error
    except msgspec.DecodeError:
        return 200
    if isinstance(error, _Error) and isinstance(error.code, int):
        return _MODERN_STATUS.get(error.code, 200)
    return 200


# -- running ----------------------------------------------------------------------------------


async def _serve(server: HttpServer, host: str, port: int) -> int:
    loop = asyncio.get_running_loop()
    worker = server.worker
    listening: list[asyncio.AbstractServer] = []
    try:
        if worker is None:
            listening.append(await loop.create_server(lambda: _Wire(server), host, port))
        else:
            for sock in worker.sockets:
                listening.append(await loop.create_server(lambda: _Wire(server), sock=sock))
            relayed = await loop.create_unix_server(
                lambda: _Wire(server), worker.relay_path(worker.index)
            )
            listening.append(relayed)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc.strerror or exc)
        for each in listening:
            each.close()
        return 1
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    expiry = loop.create_task(server.expire_sessions())
    try:
        await stop.wait()
    finally:
        expiry.cancel()
        for each in listening:
            each.close()
        server.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(each.wait_closed() for each in listening)), 1.0)
    return 0


def serve(
    cwd: str,
    host: str,
    port: int,
    *,
    cwd_given: bool,
    rules: HttpRules,
    limits: HttpLimits,
    workers: int | None = None,
) -> int:
    """Serve MCP clients on ``host:port`` until SIGINT or SIGTERM; the exit status. ``workers``
    processes serve (default: two per core, up to four; see
    :mod:`~skillsd.mcp_bridge.http_workers`)."""

    def serve_in(worker: Worker | None) -> int:
        """One process's serving: the whole address, or (``worker``) its share of it."""
        services = Services.create(cwd=cwd)

        async def main() -> int:
            server = HttpServer(
                services, cwd, cwd_given=cwd_given, rules=rules, limits=limits, worker=worker
            )
            return await _serve(server, host, port)

        try:
            return _run(main())
        finally:
            services.catalogs.close()

    count = worker_count(workers)
    return serve_in(None) if count == 1 else serve_in_workers(host, port, count, serve_in)


def _run(main: Coroutine[Any, Any, int]) -> int:
    """``main`` on uvloop's event loop when it is installed (the ``mcp`` extra brings it where
    it builds; ``docs/benchmarks.md`` measures what it saves per request), else on asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)
