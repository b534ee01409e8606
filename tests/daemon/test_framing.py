"""The sans-IO framer: every split of the input yields the same messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillsd.jsonrpc.framing import Framer, Framing, FramingError, Oversized


def _normalise(events: list[Any]) -> list[Any]:
    # When an oversized message is noticed depends on the split; that it is, does not.
    return ["OVERSIZED" if isinstance(e, Oversized) else e for e in events]


def feed_all(chunks: list[bytes], limit: int = 1024) -> list[Any]:
    framer = Framer(limit)
    events: list[Any] = []
    for chunk in chunks:
        events.extend(framer.feed(chunk))
    return _normalise(events)


def every_split(stream: bytes, limit: int = 1024) -> None:
    """Whole, cut in two at every position, in three around it, and byte by byte: all equal."""
    expected = feed_all([stream], limit)
    for i in range(len(stream) + 1):
        assert feed_all([stream[:i], stream[i:]], limit) == expected, f"split at {i}"
        j = min(len(stream), i + 3)
        assert feed_all([stream[:i], stream[i:j], stream[j:]], limit) == expected
    assert feed_all([bytes([b]) for b in stream], limit) == expected


def lsp(body: bytes, extra: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%b\r\n%b" % (len(body), extra, body)


# -- newline-delimited -----------------------------------------------------------------------


def test_lines_split_everywhere() -> None:
    stream = b'{"a":1}\n{"b":2}\r\n\n\r\n[1,2]\n{"tail":'
    assert feed_all([stream]) == [b'{"a":1}', b'{"b":2}', b"[1,2]"]
    every_split(stream)


def test_lines_mode_is_chosen_for_anything_but_content_length() -> None:
    framer = Framer()
    assert framer.framing is Framing.UNDECIDED
    assert framer.feed(b"Cont") == []  # still could be LSP
    assert framer.feed(b"inue\n") == [b"Continue"]
    assert framer.framing is Framing.LINES
    assert framer.frame(b"{}") == b"{}\n"


def test_leading_blank_bytes_do_not_decide_the_framing() -> None:
    framer = Framer()
    assert framer.feed(b"\r\n \n") == []
    assert framer.framing is Framing.UNDECIDED
    assert framer.feed(lsp(b"{}")) == [b"{}"]
    assert framer.framing is Framing.LSP


def test_line_at_the_limit_passes_and_one_more_byte_does_not() -> None:
    limit = 16
    ok = b"x" * limit
    assert feed_all([ok + b"\n"], limit) == [ok]
    assert feed_all([ok + b"\r\n"], limit) == [ok]
    for i in range(limit + 3):  # "\r" and "\n" arriving separately still count right
        whole = ok + b"\r\n"
        assert feed_all([whole[:i], whole[i:]], limit) == [ok]
    events = Framer(limit).feed(b"y" * (limit + 1) + b"\n")
    assert events == [Oversized(limit + 1, limit)]


def test_oversized_line_is_reported_once_then_resynchronised() -> None:
    limit = 32
    stream = b'{"first":1}\n' + b"z" * 500 + b'\n{"after":2}\n'
    assert feed_all([stream], limit) == [b'{"first":1}', "OVERSIZED", b'{"after":2}']
    every_split(stream, limit)


def test_discarding_never_buffers_the_oversized_line() -> None:
    limit = 64
    framer = Framer(limit)
    events: list[Any] = []
    for _ in range(1000):
        events += framer.feed(b"q" * 50)
        assert framer.buffered <= limit + 1
    events += framer.feed(b'\n{"ok":1}\n')
    assert _normalise(events) == ["OVERSIZED", b'{"ok":1}']
    assert framer.buffered == 0


def test_partial_line_stays_buffered_until_its_newline() -> None:
    framer = Framer()
    assert framer.feed(b'{"a":') == []
    assert framer.buffered == 5
    assert framer.feed(b"1}") == []
    assert framer.feed(b"\n") == [b'{"a":1}']
    assert framer.buffered == 0


# -- LSP base protocol -----------------------------------------------------------------------


def test_lsp_split_everywhere() -> None:
    stream = (
        lsp(b'{"id":1}')
        + lsp(
            b'{"id":2,"s":"a\\nb"}', b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        )
        + lsp(b"[]")
        + b'Content-Length: 9\r\n\r\n{"id"'
    )
    assert feed_all([stream]) == [b'{"id":1}', b'{"id":2,"s":"a\\nb"}', b"[]"]
    every_split(stream)


def test_lsp_header_name_is_case_insensitive_and_replies_are_framed_alike() -> None:
    framer = Framer()
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert framer.feed(b"content-length: %d\r\n\r\n%b" % (len(body), body)) == [body]
    assert framer.framing is Framing.LSP
    assert framer.frame(b'{"x":1}') == b'Content-Length: 7\r\n\r\n{"x":1}'


def test_lsp_body_may_contain_newlines() -> None:
    body = b'{\n"a": 1\n}'
    assert feed_all([lsp(body)]) == [body]


def test_lsp_oversized_body_is_skipped_without_buffering() -> None:
    limit = 100
    stream = lsp(b"a" * 5000) + lsp(b'{"next":1}')
    assert feed_all([stream], limit) == ["OVERSIZED", b'{"next":1}']
    every_split(lsp(b"b" * 300) + lsp(b"{}"), limit)
    framer = Framer(limit)
    assert framer.feed(b"Content-Length: 100000\r\n\r\n") == [Oversized(100000, limit)]
    for _ in range(99):
        assert framer.feed(b"c" * 1000) == []
        assert framer.buffered == 0
    assert framer.feed(b"c" * 1000 + lsp(b"[]")) == [b"[]"]


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (b"Content-Length: x\r\n\r\n", "not a number"),
        (b"Content-Length: 5\r\nbogus\r\n\r\n", "malformed header"),
        (b"Content-Length: -1\r\n\r\n", "not a number"),
    ],
)
def test_lsp_bad_header_is_an_error_and_stops_the_stream(head: bytes, reason: str) -> None:
    framer = Framer()
    events = framer.feed(head + lsp(b"{}"))
    assert len(events) == 1
    assert isinstance(events[0], FramingError)
    assert reason in events[0].reason
    assert framer.feed(lsp(b"{}")) == []


def test_lsp_header_without_length_and_endless_headers_are_errors() -> None:
    framer = Framer()
    framer.feed(b"Content-Length: 2\r\n\r\n{}")
    events = framer.feed(b"Content-Type: text/plain\r\n\r\n{}")
    assert isinstance(events[0], FramingError)
    assert "no Content-Length" in events[0].reason
    endless = Framer(max_header_bytes=64)
    events = endless.feed(b"Content-Length: 2\r\n" + b"X-Pad: " + b"p" * 100)
    assert isinstance(events[0], FramingError)
    assert endless.buffered == 0


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Framer(0)


# -- properties ------------------------------------------------------------------------------

_bodies = st.lists(
    st.binary(min_size=1, max_size=40).map(
        lambda b: b.replace(b"\n", b"_").replace(b"\r", b"_").strip(b" \t") or b"{}"
    ),
    max_size=8,
)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(data[last:point])
        last = point
    pieces.append(data[last:])
    return pieces


@settings(max_examples=150, deadline=None)
@given(_bodies, st.lists(st.integers(min_value=0), max_size=10), st.booleans())
def test_any_chunking_of_any_lines_round_trips(
    bodies: list[bytes], cuts: list[int], crlf: bool
) -> None:
    # A body starting with a prefix of "Content-Length:" would select LSP framing: keep JSON-ish.
    bodies = [b"[" + b for b in bodies]
    sep = b"\r\n" if crlf else b"\n"
    stream = b"".join(b + sep for b in bodies)
    assert feed_all(_chunks(stream, cuts), limit=64) == bodies


@settings(max_examples=150, deadline=None)
@given(_bodies, st.lists(st.integers(min_value=0), max_size=10))
def test_any_chunking_of_lsp_frames_round_trips(bodies: list[bytes], cuts: list[int]) -> None:
    framer = Framer()
    framer.feed(b"Content-Length: 0\r\n\r\n")  # decide LSP, then use frame() to build the rest
    stream = b"".join(framer.frame(b) for b in bodies)
    assert feed_all(_chunks(lsp(b"{}") + stream, cuts)) == [b"{}", *bodies]
