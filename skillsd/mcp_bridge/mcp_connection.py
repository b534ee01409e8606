"""MCP's rules on skillsd's own JSON-RPC endpoint (:mod:`skillsd.jsonrpc.endpoint`), for every
transport (:mod:`skillsd.mcp_bridge.native_stdio`, :mod:`skillsd.mcp_bridge.native_http`): the
era, the handshake, the per-request envelope, answers to the server's own requests, MCP's
cancellation, ``subscriptions/listen`` streams and the methods' registration. Neither the MCP
SDK nor pydantic is imported.

The wire is JSON-RPC 2.0 as the SDK's server speaks it, in both eras; a connection's first
request picks its era, once:

* the handshake era (``initialize``; 2024-11-05 to 2025-11-25): the version is negotiated, the
  methods other than ``ping`` wait for it (``-32602`` before), changes are notifications, and
  the server may ask the client for its roots;
* 2026-07-28, opened by a request carrying the per-request envelope in ``params._meta``: every
  request names its version and capabilities, results carry ``resultType`` and the server's
  identity, changes come only on ``subscriptions/listen`` streams, and the server asks the
  client nothing.

A request of the other era is refused, as the SDK refuses it. ``notifications/cancelled`` stops a
request, which is then never answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from skillsd import __version__
from skillsd.jsonrpc.endpoint import Channel, Connection, RequestContext, RpcError
from skillsd.jsonrpc.envelopes import ENCODER, error_payload
from skillsd.jsonrpc.router import AnyResult, Router
from skillsd.mcp_bridge.exchange import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    ClientRefused,
    Era,
    Exchange,
)
from skillsd.mcp_bridge.mcp_results import (
    INSTRUCTIONS,
    SKILLS_EXTENSION,
    SKILLS_SETTINGS,
    McpFailure,
)
from skillsd_protocol import ErrorCode

__all__ = [
    "CAPABILITIES_KEY",
    "CONNECTION_CLOSED",
    "MAX_STREAM_BACKLOG",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "VERSION_KEY",
    "Listeners",
    "Loaded",
    "McpConnection",
    "McpFace",
    "envelope_refusal",
    "rpc_error",
]

log = logging.getLogger(__name__)

LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
MODERN_VERSION = MODERN_VERSIONS[-1]

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

SERVER_INFO = {"name": "skillsd", "version": __version__}

#: The requests each era defines (the others of these are "Method not found" in that era).
_HANDSHAKE_METHODS = frozenset(
    {
        "completion/complete",
        "initialize",
        "logging/setLevel",
        "ping",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/templates/list",
        "resources/unsubscribe",
        "tools/call",
        "tools/list",
    }
)
_MODERN_METHODS = frozenset(
    {
        "completion/complete",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "subscriptions/listen",
        "tools/call",
        "tools/list",
    }
)
_PROTOCOL_METHODS = _HANDSHAKE_METHODS | _MODERN_METHODS
#: Results a 2026-07-28 client may cache: they say for how long (here: not at all) and for whom.
_CACHEABLE = frozenset(
    {
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "tools/list",
    }
)

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: The protocol's methods this server does not serve, with what their params must be.
_UNSERVED: dict[str, Callable[[dict[str, Any]], bool]] = {
    "completion/complete": lambda p: (
        isinstance(p.get("ref"), dict)
        and p["ref"].get("type") in ("ref/prompt", "ref/resource")
        and isinstance(p.get("argument"), dict)
        and isinstance(p["argument"].get("name"), str)
        and isinstance(p["argument"].get("value"), str)
    ),
    "logging/setLevel": lambda p: p.get("level") in _LOG_LEVELS,
}

UNSUPPORTED_PROTOCOL_VERSION = -32022
#: A request still running when the connection closed.
CONNECTION_CLOSED = -32000
#: Concurrent ``subscriptions/listen`` streams, and events one may hold unsent.
MAX_STREAMS = 1024
MAX_STREAM_BACKLOG = 1024
_INVALID_PARAMS_SDK = "Invalid request parameters"

_error_classes: dict[int, type[RpcError]] = {}


def rpc_error(code: int, message: str, data: Any = UNSET) -> RpcError:
    """An error reply with any code (the endpoint's classes each carry one)."""
    cls = _error_classes.get(code)
    if cls is None:
        cls = _error_classes[code] = type(f"McpError{-code}", (RpcError,), {"code": code})
    return cls(message, data)


def _key(request_id: Any) -> Any:
    """The id requests and answers correlate by: ``"7"`` and ``7`` are one id (as the SDKs
    count), and 1 and True are not."""
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return (type(request_id), request_id) if isinstance(request_id, bool) else request_id


class _Peek(msgspec.Struct):
    """Enough of one message to route it before the endpoint decodes it."""

    jsonrpc: Any = UNSET
    method: Any = UNSET
    id: Any = UNSET
    params: Any = UNSET
    result: Any = UNSET
    error: Any = UNSET


_PEEK = msgspec.json.Decoder(_Peek)


# -- the connection -------------------------------------------------------------------------


class McpConnection(Connection):
    """The one MCP client on stdin/stdout: skillsd's JSON-RPC connection with MCP's rules in
    front (the era, the handshake, the envelope), answers to the server's own requests
    (``roots/list``) and MCP's cancellation."""

    def __init__(self, router: Router, channel: Channel, **kw: Any) -> None:
        super().__init__(router, channel, **kw)
        self.router = router
        self.era: Era | None = None
        #: The handshake era's version: the latest until ``initialize`` negotiates one.
        self.version = LATEST_HANDSHAKE
        #: ``initialize``'s params once it was answered.
        self.client: dict[str, Any] | None = None
        #: ``notifications/initialized`` arrived (that alone also opens the gate).
        self.handshake_done = False
        self.listeners = Listeners()
        #: Whether closing this connection ends its listen streams (a connection of one HTTP
        #: request shares the server's streams and leaves the others open).
        self.owns_listeners = True
        #: Where the skill methods come from (:class:`Runtime`, or an HTTP server's session).
        self.runtime: Loaded | None = None
        #: Called once the replies to the first message have been written.
        self.after_first: Callable[[], None] | None = None
        self._next_id = 0
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        #: Requests handed to a method whose task has not run yet, those running, and those
        #: cancelled before their task ran, by id.
        self._queued: set[Any] = set()
        self._running: dict[Any, asyncio.Task[Any]] = {}
        self._doomed: set[Any] = set()

    @property
    def accepted(self) -> bool:
        """The handshake era's gate is open: ``initialize`` was answered, or the client said
        ``notifications/initialized``."""
        return self.client is not None or self.handshake_done

    def client_capabilities(self) -> dict[str, Any] | None:
        caps = self.client.get("capabilities") if self.client is not None else None
        return caps if isinstance(caps, dict) else None

    # -- incoming ---------------------------------------------------------------------------

    def _handle_message(self, body: bytes) -> None:
        # Everything MCP adds to JSON-RPC is decided here, in arrival order (a request's
        # task runs later): the era, the envelope and handshake checks, answers to the
        # server's requests and cancellation. What passes goes to the endpoint as it came.
        if self.after_first is not None:  # the replies leave at the end of this chunk
            asyncio.get_running_loop().call_soon(self.after_first)
            self.after_first = None
        if body.lstrip()[:1] == b"[":
            reason = "Invalid Request: MCP sends one message per line, never a batch"
            self._send(error_payload(None, ErrorCode.INVALID_REQUEST, reason))
            return
        try:
            peek = _PEEK.decode(body)
        except (msgspec.DecodeError, RecursionError):
            super()._handle_message(body)  # the endpoint says what is wrong with it
            return
        if peek.jsonrpc != "2.0" or not isinstance(peek.method, str | UnsetType):
            super()._handle_message(body)
            return
        if peek.method is UNSET:
            if peek.id is not UNSET and (peek.result is not UNSET or peek.error is not UNSET):
                self._answered(peek.id, peek.result, peek.error)
            else:
                super()._handle_message(body)
            return
        if peek.id is UNSET:
            self._notified(peek.method, peek.params)
            return
        method: str = peek.method
        params = peek.params if isinstance(peek.params, dict) else None
        if self.era is None:
            modern = method != "initialize" and _has_envelope(params)
            self.era = "modern" if modern else "handshake"
        refusal = self._refusal(method, params)
        if refusal is not None:
            self._send(error_payload(peek.id, *refusal))
            return
        handler = self.router.get(method)
        if handler is not None and handler.mode == "async" and peek.params is not None:
            self._queued.add(_key(peek.id))  # it may be cancelled before its task runs
        super()._handle_message(body)

    def _refusal(self, method: str, params: dict[str, Any] | None) -> tuple[int, str, Any] | None:
        """Why a request is refused before its method runs, as ``(code, message, data)``."""
        if self.era == "modern":
            if method == "initialize":
                requested = (params or {}).get("protocolVersion")
                data: dict[str, Any] = {"supported": list(MODERN_VERSIONS)}
                if isinstance(requested, str):
                    data["requested"] = requested
                return (
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "connection is serving the 2026-07-28 protocol; the initialize handshake "
                    "is not accepted",
                    data,
                )
            envelope = envelope_refusal(params)
            if envelope is not None:
                return envelope
            defined = _MODERN_METHODS
        else:
            if method != "initialize" and _has_envelope(params):
                return (
                    ErrorCode.INVALID_REQUEST,
                    "this connection serves the handshake protocol era; requests carrying "
                    "the 2026-07-28 envelope are not accepted on it",
                    UNSET,
                )
            defined = _HANDSHAKE_METHODS
        if method in _PROTOCOL_METHODS and method not in defined:
            return ErrorCode.METHOD_NOT_FOUND, "Method not found", method
        if method in _UNSERVED and not _UNSERVED[method](params or {}):
            # A method of the protocol is checked before it is found missing, as the SDK does.
            return ErrorCode.INVALID_PARAMS, _INVALID_PARAMS_SDK, ""
        if self.router.get(method) is None:
            return ErrorCode.METHOD_NOT_FOUND, "Method not found", method
        if self.era == "handshake" and not self.accepted and method not in ("initialize", "ping"):
            return ErrorCode.INVALID_PARAMS, _INVALID_PARAMS_SDK, ""
        return None

    def _notified(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                self._give_up(_key(request_id))
        elif method == "notifications/initialized":
            # Not a notification of the 2026-07-28 era; before the first request the
            # era is still open, and it is the handshake's if one comes.
            if self.era != "modern":
                self.handshake_done = True
        else:
            log.debug("%s: ignoring notification %s", self.label, method)

    def give_up(self, request_id: Any) -> None:
        """The client gave up on ``request_id`` (it left): stop it, unanswered."""
        self._give_up(_key(request_id))

    def _give_up(self, key: Any) -> None:
        """Stop a request the client gave up on. It is never answered: its task is cancelled
        without the endpoint's cancellation mark, which would answer ``-32800``."""
        task = self._running.get(key)
        if task is not None:
            task.cancel()
        elif key in self._queued:
            self._doomed.add(key)

    def started(self, ctx: RequestContext) -> Any:
        """A method's task runs: register it for cancellation (None: it was cancelled
        already and must not run)."""
        key = _key(ctx.id)
        self._queued.discard(key)
        if key in self._doomed:
            self._doomed.discard(key)
            return None
        task = asyncio.current_task()
        assert task is not None
        self._running[key] = task
        return key

    def finished(self, key: Any) -> None:
        self._running.pop(key, None)

    def _answered(self, request_id: Any, result: Any, error: Any) -> None:
        waiter = self._waiting.get(_key(request_id))
        if waiter is None or waiter.done():
            log.debug("%s: dropping an answer to unknown request %r", self.label, request_id)
            return
        if error is not UNSET:
            message = error.get("message") if isinstance(error, dict) else None
            waiter.set_exception(ClientRefused(str(message or error)))
        else:
            waiter.set_result(result)

    # -- outgoing ---------------------------------------------------------------------------

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send_event(ENCODER.encode(message))

    def _send_event(self, payload: bytes) -> None:
        """Send a message that is not the answer to a request (a notification, or the
        server's own request); on stdio it goes out like any other."""
        self._send(payload)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Ask the client (the handshake era only) and wait for its answer's result;
        `ClientRefused` if it answers with an error or leaves first."""
        if self.closing:
            raise ClientRefused("the connection is closing")
        self._next_id += 1
        request_id = self._next_id
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params:
            message["params"] = params
        try:
            self._send_event(ENCODER.encode(message))
            return await waiter
        finally:
            self._waiting.pop(request_id, None)

    def close(self, *, grace: float | None = None) -> None:
        # A listen stream never ends on its own, and the answers to the server's own
        # questions will not come now: neither may hold the exit up.
        if self.owns_listeners:
            self.listeners.end()
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(ClientRefused("the connection closed"))
        super().close(grace=grace)

    def abort(self) -> None:
        if self.owns_listeners:
            self.listeners.end()
        super().abort()


def _has_envelope(params: dict[str, Any] | None) -> bool:
    """The request carries the 2026-07-28 envelope (its version key is the sign)."""
    meta = (params or {}).get("_meta")
    return isinstance(meta, dict) and VERSION_KEY in meta


def envelope_refusal(params: dict[str, Any] | None) -> tuple[int, str, Any] | None:
    """Why a 2026-07-28 request's envelope is unusable, or None."""
    meta = (params or {}).get("_meta")
    if not isinstance(meta, dict):
        return (
            ErrorCode.INVALID_PARAMS,
            f"params._meta must be an object carrying the required {VERSION_KEY!r} and "
            f"{CAPABILITIES_KEY!r} envelope keys",
            UNSET,
        )
    missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if key not in meta]
    if missing:
        return (
            ErrorCode.INVALID_PARAMS,
            f"params._meta is missing the required envelope key(s): {', '.join(missing)}",
            UNSET,
        )
    version = meta[VERSION_KEY]
    if not isinstance(version, str):
        return (
            ErrorCode.INVALID_PARAMS,
            "the protocol-version envelope value must be a string",
            UNSET,
        )
    if version not in MODERN_VERSIONS:
        data = {"supported": list(MODERN_VERSIONS), "requested": version}
        return UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data
    return None


# -- subscriptions/listen (2026-07-28) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _End:
    """A stream's last event: the connection closed, or the client stopped reading."""

    closed: bool


class _Stream:
    """One ``subscriptions/listen`` stream: what it asked for and what is still unsent."""

    def __init__(self, honored: dict[str, Any]) -> None:
        self.honored = honored
        self.uris = frozenset(honored.get("resourceSubscriptions") or ())
        self.events: asyncio.Queue[tuple[str, str | None] | _End] = asyncio.Queue(
            MAX_STREAM_BACKLOG
        )


#: Each list's flag in a listen filter, and the notification a change of it is.
_LIST_CHANGED = {
    "prompts": ("promptsListChanged", "notifications/prompts/list_changed"),
    "resources": ("resourcesListChanged", "notifications/resources/list_changed"),
}


class Listeners:
    """The open listen streams; changes are published to every stream that asked for them."""

    def __init__(self) -> None:
        self.streams: set[_Stream] = set()

    def publish(self, kind: Literal["prompts", "resources", "updated"], uri: str = "") -> None:
        """A list changed (``kind``), or the resource ``uri`` was updated (``"updated"``)."""
        for stream in list(self.streams):
            if kind == "updated":
                wanted = uri in stream.uris
            else:
                wanted = stream.honored.get(_LIST_CHANGED[kind][0]) is True
            if not wanted:
                continue
            try:
                stream.events.put_nowait((kind, uri or None))
            except asyncio.QueueFull:
                # A client that stopped reading: the stream ends (it re-listens and refetches).
                log.warning("a listen stream's backlog is full; ending the stream")
                self.streams.discard(stream)
                _end(stream, closed=False)

    def wants_updates(self) -> bool:
        return any(stream.uris for stream in self.streams)

    def end(self) -> None:
        """The connection closes: every stream ends."""
        for stream in list(self.streams):
            _end(stream, closed=True)
        self.streams.clear()


def _end(stream: _Stream, *, closed: bool) -> None:
    while True:  # make room for the end mark: what is left would never be sent anyway
        try:
            stream.events.put_nowait(_End(closed))
            return
        except asyncio.QueueFull:
            stream.events.get_nowait()


def _honored(requested: Any) -> dict[str, Any]:
    """The part of a listen filter this server delivers (all of the kinds it knows)."""
    honored: dict[str, Any] = {}
    for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
        if requested.get(key):
            honored[key] = True
    uris = requested.get("resourceSubscriptions")
    if uris:
        honored["resourceSubscriptions"] = list(uris)
    return honored


def _listen_filter(params: dict[str, Any]) -> dict[str, Any]:
    requested = params.get("notifications")
    ok = isinstance(requested, dict) and all(
        requested.get(key) is None or isinstance(requested.get(key), bool)
        for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
    )
    uris = requested.get("resourceSubscriptions") if isinstance(requested, dict) else None
    if not ok or not (
        uris is None or (isinstance(uris, list) and all(isinstance(u, str) for u in uris))
    ):
        raise rpc_error(
            ErrorCode.INVALID_PARAMS,
            "Invalid params for subscriptions/listen: `notifications` must be a subscription "
            "filter object",
        )
    assert isinstance(requested, dict)
    return requested


# -- the methods ----------------------------------------------------------------------------

#: The methods :class:`~skillsd.mcp_bridge.native_skills.NativeSkills` serves.
SKILL_METHODS = (
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "skills/list",
    "skills/get",
    "resources/directory/read",
)

_Wire = dict[str, Any]
_AsyncHandler = Callable[[_Wire, RequestContext], Coroutine[Any, Any, _Wire]]


class Loaded(Protocol):
    """What a connection's skill requests wait for: the tool list, and the skill methods."""

    tools: asyncio.Future[dict[str, Any]]
    methods: asyncio.Future[Any]


def _conn(ctx: RequestContext) -> McpConnection:
    conn = ctx.connection
    assert isinstance(conn, McpConnection)
    return conn


def _runtime(ctx: RequestContext) -> Loaded:
    runtime = _conn(ctx).runtime
    assert runtime is not None, "a connection serves skills only once given a runtime"
    return runtime


class McpFace:
    """The server's methods, registered on the endpoint's router: the protocol's own answered
    at once, the skills' run by the connection's runtime once loaded; each result shaped by
    its era. One router may serve many connections (HTTP): each request names its own."""

    def register(self, router: Router) -> None:
        def add(method: str, fn: Any, mode: Literal["async", "inline"] = "async") -> None:
            router.add(method, fn, mode=mode, params_type=_Wire, result_type=AnyResult)

        add("initialize", self._initialize, "inline")
        add("ping", self._inline(lambda ex: {}), "inline")
        add("server/discover", self._inline(self._discover), "inline")
        add("tools/list", self._async(self._tools))
        add("subscriptions/listen", self._async(self._listen))
        for method in SKILL_METHODS:
            add(method, self._async(self._skills))

    # -- wrapping ---------------------------------------------------------------------------

    def _exchange(self, params: _Wire, ctx: RequestContext) -> Exchange:
        conn = _conn(ctx)
        if conn.era == "modern":
            caps = params["_meta"].get(CAPABILITIES_KEY)  # the envelope was checked
            caps = caps if isinstance(caps, dict) else None
            return Exchange(ctx.method, params, MODERN_VERSION, caps, ctx.id)
        return Exchange(ctx.method, params, conn.version, conn.client_capabilities(), ctx.id)

    def _inline(self, fn: Callable[[Exchange], _Wire]) -> Callable[[_Wire, RequestContext], _Wire]:
        def run(params: _Wire, ctx: RequestContext) -> _Wire:
            ex = self._exchange(params, ctx)
            return _shaped(ex, fn(ex))

        return run

    def _async(self, fn: Callable[[Exchange, RequestContext], Awaitable[_Wire]]) -> _AsyncHandler:
        async def run(params: _Wire, ctx: RequestContext) -> _Wire:
            conn = _conn(ctx)
            key = conn.started(ctx)
            if key is None:  # cancelled before it ran: never answered
                raise asyncio.CancelledError
            try:
                ex = self._exchange(params, ctx)
                try:
                    result = await fn(ex, ctx)
                except RpcError:
                    raise
                except asyncio.CancelledError:
                    if ctx.cancelled and conn.closing:
                        # Still running when the client left: told so, as the SDK tells it.
                        raise rpc_error(CONNECTION_CLOSED, "Connection closed") from None
                    raise
                except Exception as exc:
                    # A bug: one line with a JSON-RPC code on the wire, the traceback in the log.
                    log.exception("%s failed", ctx.method)
                    raise rpc_error(
                        ErrorCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"
                    ) from None
                return _shaped(ex, result)
            finally:
                conn.finished(key)

        return run

    # -- the protocol's own -----------------------------------------------------------------

    def _initialize(self, params: _Wire, ctx: RequestContext) -> _Wire:
        """The handshake: the client's version if this server speaks it, else the latest."""
        why = _bad_initialize(params)
        if why is not None:
            raise rpc_error(ErrorCode.INVALID_PARAMS, f"Invalid params for initialize: {why}")
        requested = params["protocolVersion"]
        version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
        result = {
            "protocolVersion": version,
            "capabilities": _capabilities(modern=False),
            "serverInfo": dict(SERVER_INFO),
            "instructions": INSTRUCTIONS,
        }
        conn = _conn(ctx)
        conn.client, conn.version = params, version
        info = params.get("clientInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            conn.client_name = info["name"]  # checked above: the use ledger names it
        return result

    def _discover(self, ex: Exchange) -> _Wire:
        """``server/discover``: what a 2026-07-28 client learns instead of a handshake."""
        return {
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": _capabilities(modern=True),
            "instructions": INSTRUCTIONS,
        }

    async def _tools(self, ex: Exchange, ctx: RequestContext) -> _Wire:
        tools = await asyncio.shield(_runtime(ctx).tools)
        return dict(tools)

    async def _skills(self, ex: Exchange, ctx: RequestContext) -> _Wire:
        skills = await asyncio.shield(_runtime(ctx).methods)
        try:
            result: _Wire = await skills.call(ex)
        except McpFailure as exc:
            raise rpc_error(
                exc.code, exc.message, UNSET if exc.data is None else exc.data
            ) from None
        return result

    async def _listen(self, ex: Exchange, ctx: RequestContext) -> _Wire:
        """One ``subscriptions/listen`` stream: the acknowledgement (what will be delivered),
        then the changes asked for, each tagged with the stream's id, until the client
        cancels it or leaves."""
        conn = _conn(ctx)
        listeners = conn.listeners
        requested = _listen_filter(ex.params)
        if len(listeners.streams) >= MAX_STREAMS:
            raise rpc_error(ErrorCode.INTERNAL_ERROR, "Subscription limit reached")
        # The project is watched from here on, even when this is the client's first request.
        skills = await asyncio.shield(_runtime(ctx).methods)
        await skills.watch(ex)
        honored = _honored(requested)
        meta = {SUBSCRIPTION_ID_KEY: ex.request_id}
        stream = _Stream(honored)
        listeners.streams.add(stream)
        try:
            conn.send_notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": honored, "_meta": meta},
            )
            while not isinstance(event := await stream.events.get(), _End):
                kind, uri = event
                if kind == "updated":
                    params = {"uri": uri, "_meta": meta}
                    conn.send_notification("notifications/resources/updated", params)
                else:
                    conn.send_notification(_LIST_CHANGED[kind][1], {"_meta": meta})
        finally:
            listeners.streams.discard(stream)
        if event.closed:
            raise rpc_error(CONNECTION_CLOSED, "Connection closed")
        return {"_meta": dict(meta)}  # ended by the server: the stream's last frame


def _capabilities(*, modern: bool) -> _Wire:
    """What this server offers. On 2026-07-28 changes come on listen streams, for the tool
    list too (it never changes, so nothing is ever sent); in the handshake era the tool list
    is said not to change."""
    return {
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": modern},
        "extensions": {SKILLS_EXTENSION: dict(SKILLS_SETTINGS)},
    }


def _shaped(ex: Exchange, result: _Wire) -> _Wire:
    """A result as its era has it: from 2026-07-28 on every result says its type and who
    answered, and the cacheable ones for how long they keep (here: not at all)."""
    if not ex.modern:
        return result
    if ex.method in _CACHEABLE:
        result = {"ttlMs": 0, "cacheScope": "private", **result}
    if result.get("resultType") is None:
        result["resultType"] = "complete"
    meta = result.get("_meta")
    if meta is None:
        result["_meta"] = {SERVER_INFO_KEY: dict(SERVER_INFO)}
    elif isinstance(meta, dict) and meta.get(SERVER_INFO_KEY) is None:
        result["_meta"] = {**meta, SERVER_INFO_KEY: dict(SERVER_INFO)}
    return result


def _bad_initialize(params: _Wire) -> str | None:
    """What is wrong with ``initialize``'s params, or None."""
    if not isinstance(params.get("protocolVersion"), str):
        return "`protocolVersion` must be a string"
    if not isinstance(params.get("capabilities"), dict):
        return "`capabilities` must be an object"
    info = params.get("clientInfo")
    if not isinstance(info, dict):
        return "`clientInfo` must be an object"
    for key in ("name", "version"):
        if not isinstance(info.get(key), str):
            return f"`clientInfo.{key}` must be a string"
    roots = params["capabilities"].get("roots")
    if roots is not None and not isinstance(roots, dict):
        return "`capabilities.roots` must be an object"
    return None
