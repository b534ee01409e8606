"""HTTP/1.1 on the wire for ``skillsd mcp --http``: requests parsed by httptools (llhttp, in C)
into events, and replies framed by hand (a status line, headers, a sized or chunked body).

:class:`RequestReader` is sans-IO: bytes go in (:meth:`RequestReader.feed`), and what they
make comes out in order (:meth:`RequestReader.next_event`): a :class:`RequestHead`, pieces of
its body (``bytes``), :data:`END` when the request is whole, then the next request's head (a
client may send several before reading a reply). :data:`CLOSED` is the client's end of
sending; a :class:`BadRequest` ends what can be read (the connection is answered and closed).
A head (request line and headers) over ``max_head_bytes`` is a ``431``, counted as its bytes
arrive, so an endless head is refused before it is held whole.
"""

from __future__ import annotations

from collections import deque
from http import HTTPStatus

import httptools

__all__ = [
    "CLOSED",
    "END",
    "LAST_CHUNK",
    "BadRequest",
    "RequestHead",
    "RequestReader",
    "chunk",
    "response_head",
]


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: The request whose head came last is whole.
END = _Marker("END")
#: The client sends nothing more (its end of the connection is closed).
CLOSED = _Marker("CLOSED")
#: The end of a chunked body.
LAST_CHUNK = b"0\r\n\r\n"


class RequestHead:
    """A request's line and headers (names lower-cased, values trimmed, latin-1)."""

    __slots__ = ("headers", "http_11", "keep_alive", "method", "target")

    def __init__(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        *,
        http_11: bool,
        keep_alive: bool,
    ) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        #: An HTTP/1.1 client (an HTTP/1.0 one gets no chunked body: a stream ends by closing).
        self.http_11 = http_11
        #: HTTP/1.1 without ``Connection: close``: the connection may carry another request.
        self.keep_alive = keep_alive


class BadRequest:
    """Bytes that are not an HTTP/1.1 request: the status to answer and why."""

    __slots__ = ("message", "status")

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message


Event = RequestHead | bytes | _Marker | BadRequest


class _HeadTooLarge(Exception):
    pass


class RequestReader:
    """Parses what a client sends into events (see the module's docstring)."""

    def __init__(self, *, max_head_bytes: int) -> None:
        self._parser = httptools.HttpRequestParser(self)
        self._events: deque[Event] = deque()
        self._max_head = max_head_bytes
        #: Bytes of the head being read (``-1``: its body is being read).
        self._head_bytes = 0
        self._url: list[bytes] = []
        self._headers: list[tuple[str, str]] = []
        self._done = False
        #: A request began or ended during the bytes being fed.
        self._boundary = False
        self._head_too_large = False
        #: Part of a request was read (its head or body), not yet the whole of it.
        self._partial = False

    @property
    def pending(self) -> bool:
        """Whether an event is ready."""
        return bool(self._events)

    @property
    def between_requests(self) -> bool:
        """Whether every byte fed so far belongs to requests whose events were all taken: the
        next byte begins a new request."""
        return not self._events and not self._partial and not self._done

    def next_event(self) -> Event | None:
        """The next event, or None until more bytes arrive."""
        return self._events.popleft() if self._events else None

    def take_end(self) -> bool:
        """Take :data:`END` if it is next (a request with no body, whole): whether it was."""
        if self._events and self._events[0] is END:
            self._events.popleft()
            return True
        return False

    def feed(self, data: bytes) -> None:
        if self._done:
            return
        self._boundary = False
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # The request before the upgrade is whole; nothing after it is HTTP/1.1.
            self._done = True
            return
        except httptools.HttpParserError as exc:
            if self._head_too_large:  # raised by a callback (httptools wraps it)
                self._fail(431, f"the request head is over {self._max_head} bytes")
            else:
                self._fail(400, f"bad HTTP request: {exc}")
            return
        if self._head_bytes >= 0 and not self._boundary:
            # A head still coming, counted as it arrives (one that began in these bytes is
            # counted from the next ones, and checked whole when it is complete).
            self._head_bytes += len(data)
            if self._head_bytes > self._max_head:
                self._fail(431, f"the request head is over {self._max_head} bytes")

    def feed_eof(self) -> None:
        if not self._done:
            self._done = True
            self._events.append(CLOSED)

    def _fail(self, status: int, message: str) -> None:
        self._done = True
        self._events.append(BadRequest(status, message))

    # -- httptools' callbacks -----------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._head_bytes = 0
        self._boundary = True
        self._partial = True
        self._url = []
        self._headers = []

    def on_url(self, url: bytes) -> None:
        self._url.append(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        # A value's surrounding whitespace is not part of it.
        self._headers.append((name.decode("latin-1").lower(), value.decode("latin-1").strip(" \t")))

    def on_headers_complete(self) -> None:
        size = sum(len(part) for part in self._url)
        size += sum(len(name) + len(value) + 4 for name, value in self._headers)
        if size > self._max_head:
            self._head_too_large = True
            raise _HeadTooLarge
        parser = self._parser
        http_11 = parser.get_http_version() == "1.1"
        keep_alive = http_11 and parser.should_keep_alive()
        method = parser.get_method().decode("ascii", "replace")
        target = b"".join(self._url).decode("latin-1")
        head = RequestHead(method, target, self._headers, http_11=http_11, keep_alive=keep_alive)
        self._events.append(head)
        self._head_bytes = -1

    def on_body(self, body: bytes) -> None:
        self._events.append(bytes(body))

    def on_message_complete(self) -> None:
        self._events.append(END)
        self._head_bytes = 0
        self._boundary = True
        self._partial = False


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


_STATUS_LINES: dict[int, bytes] = {}


def response_head(
    status: int,
    headers: list[tuple[bytes, bytes]],
    *,
    length: int | None,
    chunked: bool = True,
    close: bool,
) -> bytes:
    """A reply's status line and headers: sized by ``length``; else chunked (so the connection
    may carry another request after it) or, not ``chunked``, ended by closing the connection.
    ``close``: the connection ends after it."""
    line = _STATUS_LINES.get(status)
    if line is None:
        line = _STATUS_LINES[status] = b"HTTP/1.1 %d %s\r\n" % (status, _reason(status))
    parts = [line]
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    if length is None:
        if chunked:
            parts.append(b"transfer-encoding: chunked\r\n")
    else:
        parts += (b"content-length: ", str(length).encode(), b"\r\n")
    if close:
        parts.append(b"connection: close\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def chunk(data: bytes) -> bytes:
    """``data`` as one piece of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)
