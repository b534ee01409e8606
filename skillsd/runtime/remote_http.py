"""Talking to one skills server over streamable HTTP with the standard library (``http.client``,
``ssl``): blocking calls, meant for a thread (the daemon's loop never waits on a remote).

Every conversation has one deadline: each request may use what is left of it, so a server that
is down or drips its answer costs at most that one timeout, never more. Answers are read up to a
bound; a longer one is refused. The wire itself (requests, answers, version fallback) is
:mod:`skillsd.core.remote.remote_wire`.
"""

from __future__ import annotations

import contextlib
import http.client
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from skillsd.core.remote.remote_wire import (
    HANDSHAKE,
    MODERN,
    HttpRequest,
    RemoteCallFailed,
    RemoteEntry,
    RemoteError,
    Reply,
    Wire,
    check_url,
    file_bytes,
    parse_reply,
    parse_skills_page,
    refuses_version,
)

__all__ = ["DEFAULT_TIMEOUT", "Listing", "RemoteClient"]

#: The one timeout of a conversation (a refresh, a probe's listing), in seconds.
DEFAULT_TIMEOUT = 5.0
#: The longest answer read (a 16 MiB file travels as about 22 MiB of base64).
MAX_REPLY_BYTES = 32 * 1024 * 1024
#: ``skills/list`` pages followed at most, and skills kept at most, per remote.
MAX_PAGES = 1000
MAX_SKILLS = 10_000
_CHUNK = 64 * 1024


@dataclass
class Listing:
    """Every skill a remote lists, with what its pages said about caching."""

    entries: list[RemoteEntry] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    ttl_ms: int = 0
    cache_scope: str = "private"
    version: str = ""


class RemoteClient:
    """One conversation with the skills server at ``url``, within ``timeout`` seconds overall."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        version: str | None = None,
    ) -> None:
        """``version``: the one the server spoke last time (skips finding it out again)."""
        self.url = check_url(url)
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._deadline = time.monotonic() + timeout
        self._timeout = timeout
        self._max = max_reply_bytes
        self._conn: http.client.HTTPConnection | None = None
        self.wire = Wire(url, token)
        if version == MODERN:
            self.wire.version = MODERN
        self._handshake_first = version == HANDSHAKE

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the skills extension ----------------------------------------------------------------

    def list_skills(self) -> Listing:
        """Every page of ``skills/list``."""
        listing = Listing()
        cursor: str | None = None
        seen: set[str] = set()
        for _page in range(MAX_PAGES):
            params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            page = parse_skills_page(self.call("skills/list", params), self.url)
            listing.entries.extend(page.entries)
            listing.refused.extend(page.refused)
            listing.ttl_ms = page.ttl_ms if _page == 0 else min(listing.ttl_ms, page.ttl_ms)
            listing.cache_scope = page.cache_scope
            if len(listing.entries) > MAX_SKILLS:
                raise RemoteError(f"{self.url}: lists over {MAX_SKILLS} skills")
            cursor = page.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                raise RemoteError(f"{self.url}: skills/list repeats the cursor {cursor!r}")
            seen.add(cursor)
        else:
            raise RemoteError(f"{self.url}: skills/list goes on past {MAX_PAGES} pages")
        listing.version = self.wire.version or ""
        return listing

    def read(self, uri: str) -> bytes:
        """The bytes of one file (``resources/read``), unverified: see
        :mod:`skillsd.core.remote.remote_verify`."""
        return file_bytes(self.call("resources/read", {"uri": uri}), uri)

    # -- JSON-RPC over HTTP --------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of ``method``, in the version the server speaks (2026-07-28 tried first)."""
        wire = self.wire
        if self._handshake_first:
            self._handshake_first = False
            self._handshake()
        if wire.version is None:
            reply = self._send(wire.request(method, params, MODERN), wire.last_id)
            if not refuses_version(reply):
                wire.version = MODERN
            else:
                self._handshake()
                reply = self._send(wire.request(method, params, HANDSHAKE), wire.last_id)
        else:
            reply = self._send(wire.request(method, params, wire.version), wire.last_id)
            if wire.version == HANDSHAKE and reply.status == 404 and wire.session_id:
                self._handshake()  # the session expired: one new one
                reply = self._send(wire.request(method, params, HANDSHAKE), wire.last_id)
        if reply.result is None:
            said = f"{reply.code} {reply.message}".strip()
            raise RemoteCallFailed(f"{self.url}: {method} failed: {said}")
        return reply.result

    def close(self) -> None:
        """End the session (2025-11-25) and the connection; nothing waits beyond the deadline."""
        goodbye = self.wire.end_session()
        if goodbye is not None and self._left() > 0:
            # A server that is gone has ended the session anyway.
            with contextlib.suppress(RemoteError, OSError, http.client.HTTPException):
                self._exchange(goodbye)
        self.wire.session_id = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _handshake(self) -> None:
        self.wire.session_id = None
        request = self.wire.initialize()
        status, content_type, body, headers = self._exchange(request)
        reply = parse_reply(status, content_type, body, self.wire.last_id, self.url)
        self.wire.initialized_by(reply, headers.get("mcp-session-id"))
        self._exchange(self.wire.initialized())

    def _send(self, request: HttpRequest, request_id: int) -> Reply:
        status, content_type, body, _headers = self._exchange(request)
        return parse_reply(status, content_type, body, request_id, self.url)

    def _left(self) -> float:
        return self._deadline - time.monotonic()

    def _exchange(self, request: HttpRequest) -> tuple[int, str, bytes, dict[str, str]]:
        """Send one request and read its answer, within what is left of the deadline; one new
        connection is tried when a kept-alive one turns out closed."""
        for attempt in (0, 1):
            fresh = self._conn is None
            try:
                return self._once(request)
            except (ConnectionError, http.client.RemoteDisconnected, BrokenPipeError) as exc:
                self._drop()
                if fresh or attempt:
                    raise RemoteError(f"{self.url}: cannot reach the server ({exc})") from None
            except TimeoutError:
                self._drop()
                raise RemoteError(
                    f"{self.url}: no answer within {self._timeout:g} s (the server is down or slow)"
                ) from None
            except ssl.SSLError as exc:
                self._drop()
                raise RemoteError(f"{self.url}: TLS failed: {exc}") from None
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                raise RemoteError(f"{self.url}: cannot reach the server ({exc})") from None
        raise AssertionError("unreachable")

    def _once(self, request: HttpRequest) -> tuple[int, str, bytes, dict[str, str]]:
        left = self._left()
        if left <= 0:
            raise TimeoutError
        if self._conn is None:
            if self._https:
                context = ssl.create_default_context()
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=left, context=context
                )
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=left)
        conn = self._conn
        conn.timeout = left
        if conn.sock is not None:
            conn.sock.settimeout(left)
        conn.request(request.method, self._target, body=request.body, headers=request.headers)
        response = conn.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        stream = headers.get("content-type", "").startswith("text/event-stream")
        body = self._body(response, conn, stream)
        if response.will_close or stream:
            self._drop()
        return response.status, headers.get("content-type", ""), body, headers

    def _body(
        self, response: http.client.HTTPResponse, conn: http.client.HTTPConnection, stream: bool
    ) -> bytes:
        """The answer's body up to the bound; the deadline holds between pieces too. An event
        stream is read until the event answering the request (a server may keep it open)."""
        pieces: list[bytes] = []
        total = 0
        while True:
            left = self._left()
            if left <= 0:
                raise TimeoutError
            if conn.sock is not None:
                conn.sock.settimeout(left)
            piece = response.read1(_CHUNK)
            if not piece:
                response.close()  # read to its end: the connection can carry the next request
                return b"".join(pieces)
            total += len(piece)
            if total > self._max:
                self._drop()
                raise RemoteError(f"{self.url}: an answer over {self._max} bytes was refused")
            pieces.append(piece)
            if stream and b"\n\n" in piece.replace(b"\r\n", b"\n") and self._answered(pieces):
                return b"".join(pieces)

    def _answered(self, pieces: list[bytes]) -> bool:
        body = b"".join(pieces)
        reply = parse_reply(200, "text/event-stream", body, self.wire.last_id, self.url)
        return reply.result is not None or reply.code != 0

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
