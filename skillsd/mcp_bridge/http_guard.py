"""What keeps ``skillsd mcp --http`` to its one user: a bearer token on every request, the
``Host`` and ``Origin`` of the bound address only, bounded sessions and bounded work at once.

The guard is plain ASGI around the SDK's streamable-HTTP app (which itself refuses request
bodies over its size limit with 413 and caps and expires sessions). Decisions here are made from
the request line and headers alone, before a body is read. A request whose body does not arrive,
or whose reply the client does not take, within the write deadline is dropped and its slot
freed. The token's life cycle is in ``docs/security.md``.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

__all__ = [
    "TOKEN_ENV",
    "WRITE_SECONDS_ENV",
    "HttpGuard",
    "HttpLimits",
    "is_loopback",
    "new_token",
    "write_token_file",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)

#: The token a client must send, when not given with ``--token-file``.
TOKEN_ENV = "SKILLSD_MCP_TOKEN"
#: ``SKILLSD_HTTP_WRITE_SECONDS=N`` replaces the write deadline (tests use a short one).
WRITE_SECONDS_ENV = "SKILLSD_HTTP_WRITE_SECONDS"
#: Names that mean this machine, whatever address the server is bound to.
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The HTTP face's bounds (see ``docs/security.md``)."""

    #: Live MCP sessions; beyond it, 503 naming the limit (existing sessions keep working).
    max_sessions: int = 256
    #: An idle session's skillsd session and memory are freed after this.
    session_idle_seconds: float = 30 * 60
    #: Request bodies over this are refused with 413 before they are read.
    max_body_bytes: int = 16 * 1024 * 1024
    #: Requests being answered at once (a reply is built whole in memory by the SDK: a few
    #: at a time keep the peak at a few replies, not one per client).
    max_concurrent: int = 4
    #: A request's body must arrive, and each write of its reply be taken by the client,
    #: within this; else the request is dropped (connection cut, slot freed), so a client
    #: that stops reading or sending holds no slot.
    write_seconds: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> HttpLimits:
        """The defaults, with the write deadline of ``$SKILLSD_HTTP_WRITE_SECONDS`` if set."""
        text = env.get(WRITE_SECONDS_ENV)
        if text is None:
            return cls()
        try:
            seconds = float(text)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            log.warning("%s=%r is not a number of seconds; using 30", WRITE_SECONDS_ENV, text)
            return cls()
        return cls(write_seconds=seconds)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) stays on this machine."""
    bare = host.strip("[]")
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """32 random bytes, URL-safe base64."""
    return secrets.token_urlsafe(32)


def write_token_file(directory: Path, port: int, token: str) -> Path:
    """``directory/mcp-<port>.token`` holding ``token``, readable by the user only (written
    whole before it is renamed into place, so no reader ever sees half a token)."""
    path = directory / f"mcp-{port}.token"
    staged = directory / f".mcp-{port}.token.{os.getpid()}"
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, token.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(staged, path)
    return path


class HttpGuard:
    """ASGI middleware: refuse what is not the user's, and bound what the user may do at once.

    ``token`` None means ``--no-auth`` (loopback only). ``hosts`` are the names a request's
    ``Host`` may carry (with any port); ``Origin``, when sent, must be ``http://`` one of them.
    ``live_sessions`` counts the SDK's open sessions."""

    def __init__(
        self,
        app: App,
        *,
        token: str | None,
        hosts: tuple[str, ...],
        limits: HttpLimits,
        live_sessions: Callable[[], int],
    ) -> None:
        self.app = app
        self._token = token.encode() if token is not None else None
        self._hosts = tuple(h.lower() for h in hosts)
        self._limits = limits
        self._live_sessions = live_sessions
        self._slots = anyio.Semaphore(limits.max_concurrent)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _reply(send, *refusal)
            return
        if scope["method"] == "GET":
            await self._answer(scope, receive, send)  # a notification stream: held, not work
            return
        async with self._slots:
            await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app within the request's deadlines (:class:`_InTime`)."""
        timed = _InTime(scope, receive, send, self._limits.write_seconds)
        with timed.request:
            await self.app(scope, timed.receive, timed.send)
        if timed.ended is None:
            await timed.sent_whole()
        elif not timed.started:
            await _reply(send, 408, f"{timed.ended}: send it whole", {"connection": "close"})

    def _refusal(
        self, scope: Scope, headers: dict[str, str]
    ) -> tuple[int, str, dict[str, str]] | None:
        if not self._host_allowed(headers.get("host", "")):
            return 421, "the Host header does not name this server", {}
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, "requests from this Origin are not accepted", {}
        if self._token is not None:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self._token
            ):
                return (
                    401,
                    "missing or wrong bearer token: send `Authorization: Bearer <token>` (the "
                    "token file's path is printed when skillsd mcp --http starts)",
                    {"www-authenticate": "Bearer"},
                )
        live = self._live_sessions() if scope["method"] in ("POST", "DELETE") else 0
        if (
            scope["method"] == "POST"
            and "mcp-session-id" not in headers
            and live >= self._limits.max_sessions
        ):
            return (
                503,
                f"{self._limits.max_sessions} MCP sessions are open, the limit: close one (HTTP "
                "DELETE) or wait for an idle one to expire; open sessions keep working",
                {},
            )
        return None

    def _host_allowed(self, host: str) -> bool:
        name = host.lower()
        if name.startswith("["):
            name = name.split("]")[0] + "]"
        else:
            name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
        return name in self._hosts

    def _origin_allowed(self, origin: str) -> bool:
        scheme, _, rest = origin.lower().partition("://")
        return scheme in ("http", "https") and self._host_allowed(rest.split("/")[0])


def allowed_hosts(bound: str) -> tuple[str, ...]:
    """The names a request may use: the bound address, and this machine's loopback names."""
    names = {*_LOOPBACK_NAMES, bound.lower()}
    if ":" in bound and not bound.startswith("["):
        names.add(f"[{bound.lower()}]")
    return tuple(sorted(names))


class _InTime:
    """One request's deadlines: its body must arrive, and each write of its reply be taken by
    the client, within ``seconds``. Past either the app is cancelled (``request``) and the
    connection cut, so a client that stops reading or sending holds no request slot."""

    def __init__(self, scope: Scope, receive: Receive, send: Send, seconds: float) -> None:
        self._scope = scope
        self._receive = receive
        self._send = send
        self._seconds = seconds
        self._transport = _transport_of(send)
        self._body_due = anyio.current_time() + seconds
        self._body_read = False
        self.request = anyio.CancelScope()
        #: Whether the reply has begun (a 408 can be answered only before).
        self.started = False
        #: Why the request was ended, if it was.
        self.ended: str | None = None

    async def receive(self) -> MutableMapping[str, Any]:
        if self.ended is not None:
            return {"type": "http.disconnect"}
        if self._body_read:
            return await self._receive()  # a watch for the client leaving: no deadline
        message: MutableMapping[str, Any] = {"type": "http.disconnect"}
        with anyio.move_on_at(self._body_due) as waiting:
            message = await self._receive()
        if waiting.cancelled_caught:
            await self._end(f"the request body did not arrive within {self._seconds:g}s")
        else:
            self._body_read = message["type"] != "http.request" or not message.get("more_body")
        return message

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if self.ended is not None:
            return
        self.started = True
        # uvicorn's send waits while the earlier writes are still buffered.
        with anyio.move_on_after(self._seconds) as waiting:
            await self._send(message)
        if waiting.cancelled_caught:
            await self._end(f"the client took no reply for {self._seconds:g}s")

    async def sent_whole(self) -> None:
        """Wait until the reply's last write has been handed to the kernel (uvicorn never waits
        after a write, and a reply sent in one piece is only that write)."""
        if self._transport is None:
            return
        with anyio.move_on_after(self._seconds) as waiting:
            while self._transport.get_write_buffer_size():
                await anyio.sleep(0.02)  # asyncio tells only of its high and low marks
        if waiting.cancelled_caught:
            self._cut(f"the client took no reply for {self._seconds:g}s")

    async def _end(self, why: str) -> None:
        self._cut(why)
        self.request.cancel()
        await anyio.lowlevel.checkpoint()  # the cancellation, unless a shield holds it

    def _cut(self, why: str) -> None:
        self.ended = why
        log.warning("%s %s: %s; request dropped", self._scope["method"], self._scope["path"], why)
        if self.started and self._transport is not None:
            self._transport.abort()  # what the client did not take goes too


def _transport_of(send: Send) -> asyncio.WriteTransport | None:
    """The connection a reply goes out on, when the server lets it be found (uvicorn's ``send``
    is a method of its request cycle, which holds the transport)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    return transport if isinstance(transport, asyncio.WriteTransport) else None


async def _reply(send: Send, status: int, message: str, headers: dict[str, str]) -> None:
    """A JSON-RPC error (no id) with this HTTP status."""
    code = -32001 if status in (401, 403, 421) else -32000
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in headers.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})
