"""Sans-IO message framing: bytes in -> complete message bodies out, and bodies -> bytes.

Two framings (docs/protocol.md), chosen per connection by the first bytes the peer sends:

* newline-delimited JSON (the default): one message per line, ``\\n`` or ``\\r\\n``;
* LSP base protocol, when the first bytes are ``Content-Length:``: header lines, a blank line,
  then exactly ``Content-Length`` bytes of body. Replies use the same framing.

A message longer than the limit is never buffered whole: the decoder reports `Oversized` as
soon as it knows, then throws bytes away (keeping none) until the message ends, and carries on
with the next one. No sockets, no asyncio: the transports feed bytes in and write bytes out.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from skillsd.core import limits

#: The pieces of one message written in order without joining them: a pre-encoded reply (the
#: megabytes of ``skills.commands`` on 10 000 skills) is sent from its cached encoding, never
#: copied into a fresh buffer per request.
Pieces = tuple[bytes | bytearray | memoryview, ...]
#: An encoded message: replies are encoded into a bytearray so framing can extend it in place.
Payload = bytes | bytearray | Pieces


def payload_size(payload: Payload) -> int:
    """How many bytes ``payload`` writes."""
    if isinstance(payload, tuple):
        return sum(len(piece) for piece in payload)
    return len(payload)


def flat(payload: Payload) -> bytes | bytearray:
    """``payload`` as one buffer (a batch reply, a framing that needs one)."""
    return b"".join(payload) if isinstance(payload, tuple) else payload


__all__ = ["Framer", "Framing", "FramingError", "Oversized"]

_LSP_PREFIX = b"content-length:"
_WHITESPACE = b" \t\r\n"
_CR = 13


class Framing(enum.Enum):
    """How a connection delimits messages; `UNDECIDED` until its first non-blank bytes."""

    UNDECIDED = "undecided"
    LINES = "lines"
    LSP = "lsp"


@dataclass(frozen=True, slots=True)
class Oversized:
    """A message longer than the limit was dropped; the stream goes on after it."""

    size: int
    """Bytes seen when the decoder gave up, or the declared ``Content-Length``."""
    limit: int


@dataclass(frozen=True, slots=True)
class FramingError:
    """The LSP header block is unusable; nothing after it can be trusted (the decoder stops)."""

    reason: str


Event = bytes | Oversized | FramingError


class _Lsp(enum.Enum):
    HEADERS = 0
    BODY = 1
    DISCARD = 2
    FAILED = 3


class Framer:
    """Per-connection frame decoder and encoder.

    `feed` returns the events completed by ``data``: message bodies (``bytes``), `Oversized`
    or `FramingError`. Empty lines between newline-delimited messages are skipped.
    `frame` wraps an outgoing body in the connection's framing (lines until decided).
    """

    __slots__ = (
        "_buf",
        "_discarded",
        "_discarding",
        "_framing",
        "_lsp_remaining",
        "_lsp_state",
        "_max",
        "_max_header",
        "_scan",
    )

    def __init__(
        self,
        max_message_bytes: int = limits.DEFAULT_MAX_MESSAGE_BYTES,
        *,
        max_header_bytes: int = limits.MAX_HEADER_BYTES,
    ) -> None:
        if max_message_bytes < 1:
            raise ValueError(f"max_message_bytes must be positive, got {max_message_bytes}")
        self._max = max_message_bytes
        self._max_header = max_header_bytes
        self._framing = Framing.UNDECIDED
        self._buf = bytearray()
        # Lines: bytes of _buf already searched for b"\n" (so a slow trickle is not rescanned).
        self._scan = 0
        self._discarding = False
        self._discarded = 0
        self._lsp_state = _Lsp.HEADERS
        self._lsp_remaining = 0

    @property
    def framing(self) -> Framing:
        return self._framing

    @property
    def max_message_bytes(self) -> int:
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes held back waiting for the rest of a message (bounded by the limit)."""
        return len(self._buf)

    def clear(self) -> None:
        """Forget a partial message (its connection is closing): the bytes are freed now."""
        self._buf = bytearray()
        self._scan = 0

    def frame(self, body: Payload) -> Payload:
        """``body`` (one JSON text, which never contains a raw newline; or its pieces, in
        order) ready to write.

        A ``bytearray`` body is extended in place for newline framing, so a large reply is not
        copied once more just to add its terminator; pieces get one more piece."""
        if isinstance(body, tuple):
            if self._framing is Framing.LSP:
                size = sum(len(piece) for piece in body)
                return (b"Content-Length: %d\r\n\r\n" % size, *body)
            return (*body, b"\n")
        if self._framing is Framing.LSP:
            return b"Content-Length: %d\r\n\r\n%b" % (len(body), bytes(body))
        if isinstance(body, bytearray):
            body += b"\n"
            return body
        return body + b"\n"

    def feed(self, data: bytes) -> list[Event]:
        """Consume ``data``; return every event it completes, in order."""
        if self._framing is Framing.LINES:
            return self._feed_lines(data)
        if self._framing is Framing.LSP:
            return self._feed_lsp(data)
        return self._decide(data)

    # -- framing choice -------------------------------------------------------------------

    def _decide(self, data: bytes) -> list[Event]:
        # Leading blank bytes carry nothing in either framing: drop them rather than buffer.
        head = bytes(self._buf) + data if self._buf else data
        head = head.lstrip(_WHITESPACE)
        probe = head[: len(_LSP_PREFIX)].lower()
        if len(probe) < len(_LSP_PREFIX) and _LSP_PREFIX.startswith(probe):
            self._buf = bytearray(head)  # at most 14 bytes: still ambiguous
            return []
        self._buf = bytearray()
        if probe == _LSP_PREFIX:
            self._framing = Framing.LSP
            return self._feed_lsp(head)
        self._framing = Framing.LINES
        return self._feed_lines(head)

    # -- newline-delimited ----------------------------------------------------------------

    def _feed_lines(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        if self._discarding:
            nl = data.find(b"\n")
            if nl < 0:
                self._discarded += len(data)
                return out
            self._discarding = False
            data = data[nl + 1 :]
        buf = self._buf
        view: bytes | bytearray
        if buf:
            buf += data
            view, scan = buf, self._scan
        else:
            view, scan = data, 0  # common case: no copy until a partial line remains
        limit = self._max
        pos = 0
        while True:
            nl = view.find(b"\n", scan if scan > pos else pos)
            if nl < 0:
                break
            end = nl - 1 if nl > pos and view[nl - 1] == _CR else nl
            size = end - pos
            if size > limit:
                out.append(Oversized(size, limit))
            elif size:
                out.append(bytes(view[pos:end]))
            pos = nl + 1
        rest = len(view) - pos
        # A pending line may still end in "\r\n", so it is hopeless only past limit + 1.
        if rest > limit + 1:
            out.append(Oversized(rest, limit))
            self._discarding = True
            self._discarded = rest
            self._buf = bytearray()
            self._scan = 0
        elif view is buf:
            del buf[:pos]
            self._scan = len(buf)
        else:
            self._buf = bytearray(view[pos:])
            self._scan = rest
        return out

    # -- LSP base protocol ----------------------------------------------------------------

    def _feed_lsp(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        state = self._lsp_state
        if state is _Lsp.FAILED:
            return out
        buf = self._buf
        if state is _Lsp.DISCARD:
            # Drop straight from the input so a huge declared body is never buffered.
            take = min(self._lsp_remaining, len(data))
            self._lsp_remaining -= take
            data = data[take:]
            if self._lsp_remaining:
                return out
            state = _Lsp.HEADERS
        buf += data
        while True:
            if state is _Lsp.HEADERS:
                end = buf.find(b"\r\n\r\n", self._scan)
                if end < 0:
                    if len(buf) > self._max_header:
                        state = self._fail(
                            out, f"header block longer than {self._max_header} bytes"
                        )
                        break
                    self._scan = max(0, len(buf) - 3)
                    break
                length = self._content_length(bytes(buf[:end]))
                del buf[: end + 4]
                self._scan = 0
                if isinstance(length, str):
                    state = self._fail(out, length)
                    break
                if length > self._max:
                    out.append(Oversized(length, self._max))
                    take = min(length, len(buf))
                    del buf[:take]
                    if take < length:
                        self._lsp_remaining = length - take
                        state = _Lsp.DISCARD
                        break
                    continue
                self._lsp_remaining = length
                state = _Lsp.BODY
            if state is _Lsp.BODY:
                n = self._lsp_remaining
                if len(buf) < n:
                    break
                out.append(bytes(buf[:n]))
                del buf[:n]
                state = _Lsp.HEADERS
            elif state is not _Lsp.HEADERS:
                break
        self._lsp_state = state
        return out

    def _fail(self, out: list[Event], reason: str) -> _Lsp:
        out.append(FramingError(reason))
        self._buf = bytearray()
        self._scan = 0
        return _Lsp.FAILED

    @staticmethod
    def _content_length(block: bytes) -> int | str:
        """The declared body length, or a reason the header block is unusable."""
        length: int | None = None
        for line in block.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep:
                return f"malformed header line {line[:80]!r}"
            if name.strip().lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    return f"Content-Length is not a number: {text[:40]!r}"
                length = int(text)
        if length is None:
            return "header block has no Content-Length"
        return length
