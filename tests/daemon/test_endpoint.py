"""The JSON-RPC endpoint in-process: bytes in, bytes out, no daemon process."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import subprocess
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from skillsd.core.errors import SkillsdError, UnknownToolData
from skillsd.daemon import lifecycle
from skillsd.daemon.app import build_router
from skillsd.jsonrpc.endpoint import Connection, InvalidParams, RequestContext, Router
from skillsd_protocol import METHODS, ErrorCode
from skillsd_protocol.errors import SkillNotFoundData
from skillsd_protocol.messages import Empty, InitializeResult, Params, SearchParams
from tests.support.fake_channel import FakeChannel


class Slow(Params, kw_only=True):
    key: str = "a"


class Value(msgspec.Struct):
    value: str


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 10))


def rpc(id_: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not ...:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


async def until(chan: FakeChannel, count: int) -> list[Any]:
    """Wait until ``count`` messages were written."""
    while len(chan.messages()) < count:
        await asyncio.sleep(0.001)
    return chan.messages()


async def quiet(chan: FakeChannel) -> list[Any]:
    """Let every ready task run, then return what was written."""
    for _ in range(20):
        await asyncio.sleep(0)
    return chan.messages()


class Gates:
    """Per-key events that slow handlers wait on, so tests decide completion order."""

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.started: list[str] = []
        self.contexts: dict[str, RequestContext] = {}

    def __getitem__(self, key: str) -> asyncio.Event:
        return self.events.setdefault(key, asyncio.Event())


def make_router(gates: Gates) -> Router:
    router = build_router()

    async def slow(params: Slow, ctx: RequestContext) -> Value:
        gates.started.append(params.key)
        gates.contexts[params.key] = ctx
        ctx.progress(f"waiting for {params.key}", 10)
        await gates[params.key].wait()
        return Value(params.key)

    def threaded(params: Slow, ctx: RequestContext) -> Value:
        ctx.progress("in a thread")
        ctx.connection.notify("test.fromThread", Value(threading.current_thread().name))
        return Value(params.key)

    def wrong(params: Params, ctx: RequestContext) -> Any:
        return {"a": 1}

    def fail(params: Slow, ctx: RequestContext) -> Value:
        if params.key == "skill":
            raise SkillsdError("no skill named x", SkillNotFoundData(suggestions=["xx"]))
        if params.key == "odd":
            raise SkillsdError("strange", UnknownToolData())
        if params.key == "params":
            raise InvalidParams("limit too big")
        raise ValueError("kaput")

    router.add("t.slow", slow, params_type=Slow, result_type=Value)
    router.add("t.thread", threaded, mode="thread", params_type=Slow, result_type=Value)
    router.add("t.wrong", wrong, mode="inline", params_type=Params, result_type=Empty)
    router.add("t.fail", fail, mode="inline", params_type=Slow, result_type=Value)
    router.add("t.search", lambda p, ctx: Empty(), mode="inline", params_type=SearchParams)
    return router


async def connect(direct: bool = True, **kwargs: Any) -> tuple[Connection, FakeChannel, Gates]:
    gates = Gates()
    chan = FakeChannel()
    chan.direct = direct
    conn = Connection(make_router(gates), chan, **kwargs)
    return conn, chan, gates


# -- basics ----------------------------------------------------------------------------------


def test_ping_and_ids_of_every_kind() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(rpc(1, "ping") + rpc("abc", "ping") + rpc(None, "ping") + rpc(2.5, "ping"))
        replies = await until(chan, 4)
        assert [r["id"] for r in replies] == [1, "abc", None, 2.5]
        assert all(r == {"jsonrpc": "2.0", "id": r["id"], "result": {}} for r in replies)

    run(scenario)


def test_responses_come_back_out_of_order() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc(1, "t.slow", {"key": "a"}) + rpc(2, "t.slow", {"key": "b"}))
        await quiet(chan)
        assert gates.started == ["a", "b"]  # both running at once
        gates["b"].set()
        assert [m["id"] for m in await until(chan, 1)] == [2]
        conn.feed(rpc(3, "ping"))
        assert [m["id"] for m in await until(chan, 2)] == [2, 3]
        gates["a"].set()
        replies = await until(chan, 3)
        assert replies[2] == {"jsonrpc": "2.0", "id": 1, "result": {"value": "a"}}

    run(scenario)


def test_replies_to_one_chunk_leave_in_one_write() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(b"".join(rpc(i, "ping") for i in range(50)))
        assert chan.direct_writes == 1  # written before feed() even returned
        assert [m["id"] for m in chan.messages()] == list(range(50))

    run(scenario)


@pytest.mark.parametrize("direct", [True, False])
def test_writer_task_keeps_order_when_the_channel_is_busy(direct: bool) -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect(direct=direct)
        chan.gate.clear()  # the peer is slow to read: replies queue up
        conn.feed(rpc(1, "ping") + rpc(2, "t.slow", {"key": "w"}))
        conn.feed(rpc(3, "ping"))
        gates["w"].set()
        await quiet(chan)
        conn.feed(rpc(4, "ping"))
        assert chan.messages() == []
        chan.gate.set()
        assert [m["id"] for m in await until(chan, 4)] == [1, 3, 2, 4]
        conn.feed(rpc(5, "ping"))
        assert [m["id"] for m in await until(chan, 5)][-1] == 5

    run(scenario)


def test_batch_is_answered_as_one_array_once_every_member_is_done() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "t.slow", "params": {"key": "x"}},
            {"jsonrpc": "2.0", "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "nope"},
            5,
        ]
        conn.feed(json.dumps(batch).encode() + b"\n")
        assert await quiet(chan) == []
        gates["x"].set()
        (reply,) = await until(chan, 1)
        assert isinstance(reply, list)
        by_id = {json.dumps(m["id"]): m for m in reply}
        assert len(reply) == 4
        assert by_id["1"]["result"] == {"value": "x"}
        assert by_id["2"]["result"] == {}
        assert by_id["3"]["error"]["code"] == ErrorCode.METHOD_NOT_FOUND
        assert by_id["null"]["error"]["code"] == ErrorCode.INVALID_REQUEST

    run(scenario)


def test_notification_only_batch_and_notifications_get_nothing() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(
            b'[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"unknown"}]\n'
            + rpc(..., "t.fail", {"key": "boom"})  # raises: still no reply
            + rpc(..., "t.search", {"query": 5})  # bad params: still no reply
            + rpc(..., "nope")
            + rpc(9, "ping")
        )
        assert [m["id"] for m in await until(chan, 1)] == [9]
        assert len(await quiet(chan)) == 1

    run(scenario)


# -- errors ----------------------------------------------------------------------------------


def test_parse_error_then_keeps_serving() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(
            b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]\n' + rpc(1, "ping")
        )
        parse, pong = await until(chan, 2)
        assert parse["id"] is None
        assert parse["error"]["code"] == ErrorCode.PARSE_ERROR
        assert pong["result"] == {}

    run(scenario)


@pytest.mark.parametrize(
    ("message", "expected_id", "fragment"),
    [
        (b'{"jsonrpc":"2.0","method":1,"params":"bar"}', None, '"method" must be a string'),
        (b'{"method":"ping","id":4}', 4, '"jsonrpc" must be "2.0"'),
        (b'{"jsonrpc":"1.0","method":"ping","id":"s"}', "s", '"jsonrpc" must be "2.0"'),
        (b'{"jsonrpc":"2.0","id":5,"result":{}}', 5, 'missing "method"'),
        (b'{"jsonrpc":"2.0","method":"ping","id":true}', None, '"id" must be'),
        (b'{"jsonrpc":"2.0","method":"ping","id":[1]}', None, '"id" must be'),
        (b'{"jsonrpc":"2.0","method":"ping","id":6,"params":"x"}', 6, '"params" must be'),
        (b'{"jsonrpc":"2.0","method":"ping","id":7,"params":null}', 7, '"params" must be'),
        (b'"just a string"', None, "expected a request object"),
        (b"[]", None, "empty batch"),
    ],
)
def test_invalid_requests(message: bytes, expected_id: Any, fragment: str) -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(message + b"\n")
        (reply,) = await until(chan, 1)
        assert reply["id"] == expected_id
        assert reply["error"]["code"] == ErrorCode.INVALID_REQUEST
        assert fragment in reply["error"]["message"]

    run(scenario)


def test_invalid_params_name_the_field_path() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(
            rpc(1, "t.search", {"query": 5})
            + rpc(2, "t.search", {})
            + rpc(3, "t.search", {"query": "x", "_meta": {"progressToken": [1]}})
            + rpc(4, "ping", [1, 2])
            + rpc(5, "ping", [])
            + rpc(6, "t.search", [])
        )
        replies = {m["id"]: m for m in await until(chan, 6)}
        assert replies[1]["error"]["code"] == ErrorCode.INVALID_PARAMS
        assert "`$.query`" in replies[1]["error"]["message"]
        assert "missing required field `query`" in replies[2]["error"]["message"]
        assert "`$._meta.progressToken`" in replies[3]["error"]["message"]
        assert "not an array" in replies[4]["error"]["message"]
        assert replies[5]["result"] == {}  # [] is the same as no params
        assert "`query`" in replies[6]["error"]["message"]

    run(scenario)


def test_errors_raised_by_handlers(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        for i, key in enumerate(["skill", "odd", "params", "boom"]):
            conn.feed(rpc(i, "t.fail", {"key": key}))
        conn.feed(rpc(9, "t.wrong"))
        replies = {m["id"]: m["error"] for m in await until(chan, 5)}
        assert replies[0] == {
            "code": 1001,
            "message": "no skill named x",
            "data": {"kind": "skill_not_found", "suggestions": ["xx"]},
        }
        assert replies[1]["code"] == ErrorCode.INTERNAL_ERROR
        assert replies[1]["data"] == {"kind": "unknown_tool"}
        assert replies[2] == {"code": ErrorCode.INVALID_PARAMS, "message": "limit too big"}
        assert replies[3]["code"] == ErrorCode.INTERNAL_ERROR
        assert "ValueError: kaput" in replies[3]["message"]
        assert replies[9]["code"] == ErrorCode.INTERNAL_ERROR
        assert "must return Empty" in replies[9]["message"]

    with caplog.at_level(logging.ERROR, logger="skillsd.daemon"):
        run(scenario)
    crash = [r for r in caplog.records if "internal error in t.fail" in r.getMessage()]
    assert crash and crash[0].exc_info is not None  # logged with its traceback


def test_oversized_message_is_answered_and_the_next_one_served() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect(max_message_bytes=200)
        conn.feed(rpc(1, "t.slow", {"key": "k" * 300}) + rpc(2, "ping"))
        too_big, pong = await until(chan, 2)
        assert too_big["id"] is None
        assert too_big["error"]["code"] == ErrorCode.INVALID_REQUEST
        assert "exceeds the limit of 200 bytes" in too_big["error"]["message"]
        assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}

    run(scenario)


def test_content_length_peer_gets_content_length_replies() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        body = rpc(1, "ping").strip()
        conn.feed(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        while not chan.data:
            await asyncio.sleep(0.001)
        expected = b'{"jsonrpc":"2.0","id":1,"result":{}}'
        assert bytes(chan.data) == b"Content-Length: %d\r\n\r\n%b" % (len(expected), expected)

    run(scenario)


def test_bad_lsp_header_is_a_parse_error_and_closes() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        conn.feed(b"Content-Length: nope\r\n\r\n{}")
        await conn.wait_closed()
        text = bytes(chan.data)
        assert text.startswith(b"Content-Length: ")
        assert b'"code":-32700' in text
        assert chan.closed

    run(scenario)


# -- cancellation and progress ---------------------------------------------------------------


def test_cancel_request_answers_minus_32800() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc("r1", "t.slow", {"key": "c"}) + rpc(2, "t.slow", {"key": "d"}))
        await quiet(chan)
        conn.feed(rpc(..., "$/cancelRequest", {"id": "r1"}))
        (cancelled,) = await until(chan, 1)
        assert cancelled == {
            "jsonrpc": "2.0",
            "id": "r1",
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        assert gates.contexts["c"].cancelled
        assert not gates.contexts["d"].cancelled
        # Unknown or finished ids are ignored; as a request, the cancel is acknowledged.
        conn.feed(rpc(..., "$/cancelRequest", {"id": "r1"}) + rpc(7, "$/cancelRequest", {"id": 99}))
        conn.feed(rpc(8, "$/cancelRequest", {"nope": 1}))
        gates["d"].set()
        replies = {m["id"]: m for m in await until(chan, 4)}
        assert replies[7]["result"] is None
        assert replies[8]["error"]["code"] == ErrorCode.INVALID_PARAMS
        assert replies[2]["result"] == {"value": "d"}

    run(scenario)


def test_cancel_before_the_handler_even_started() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        batch = json.dumps(
            [
                {"jsonrpc": "2.0", "id": 2, "method": "t.slow", "params": {"key": "b"}},
                {"jsonrpc": "2.0", "id": 3, "method": "ping"},
            ]
        )
        conn.feed(
            rpc(1, "t.slow", {"key": "a"})
            + batch.encode()
            + b"\n"
            + rpc(..., "$/cancelRequest", {"id": 1})
            + rpc(..., "$/cancelRequest", {"id": 2})
        )
        single, array = await until(chan, 2)
        assert single == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        assert sorted(m["id"] for m in array) == [2, 3]
        assert next(m for m in array if m["id"] == 2)["error"]["code"] == -32800
        assert gates.started == []
        assert len(await quiet(chan)) == 2

    run(scenario)


def test_cancel_does_not_confuse_string_and_number_ids() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc(1, "t.slow", {"key": "n"}) + rpc("1", "t.slow", {"key": "s"}))
        await quiet(chan)
        conn.feed(rpc(..., "$/cancelRequest", {"id": "1"}))
        (reply,) = await until(chan, 1)
        assert reply["id"] == "1"
        assert reply["error"]["code"] == -32800
        gates["n"].set()
        assert (await until(chan, 2))[1] == {"jsonrpc": "2.0", "id": 1, "result": {"value": "n"}}

    run(scenario)


def test_progress_only_with_a_token_and_from_threads() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc(1, "t.slow", {"key": "p", "_meta": {"progressToken": "tok"}}))
        conn.feed(rpc(2, "t.slow", {"key": "q"}))
        (progress,) = await until(chan, 1)
        assert progress == {
            "jsonrpc": "2.0",
            "method": "$/progress",
            "params": {"token": "tok", "value": {"message": "waiting for p", "percentage": 10}},
        }
        gates["p"].set()
        gates["q"].set()
        await until(chan, 3)
        conn.feed(rpc(3, "t.thread", {"key": "z", "_meta": {"progressToken": 42}}))
        messages = (await until(chan, 6))[3:]
        assert messages[0]["params"] == {"token": 42, "value": {"message": "in a thread"}}
        assert messages[1]["method"] == "test.fromThread"
        assert messages[1]["params"]["value"] != threading.current_thread().name
        assert messages[2] == {"jsonrpc": "2.0", "id": 3, "result": {"value": "z"}}

    run(scenario)


# -- lifecycle of the connection -------------------------------------------------------------


def test_close_answers_in_flight_then_closes() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc(1, "t.slow", {"key": "e"}))
        await quiet(chan)
        conn.feed_eof()
        conn.feed(rpc(2, "ping"))  # after EOF: ignored
        await quiet(chan)
        assert not conn.closed and chan.paused
        gates["e"].set()
        await conn.wait_closed()
        assert chan.closed
        assert [m["id"] for m in chan.messages()] == [1]

    run(scenario)


def test_close_cancels_what_outlives_the_grace() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect(shutdown_grace=0.05)
        conn.feed(rpc(1, "t.slow", {"key": "never"}))
        await quiet(chan)
        conn.close()
        await conn.wait_closed()
        assert chan.messages() == [
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}}
        ]

    run(scenario)


def test_exit_notification_closes_after_in_flight_requests() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect()
        conn.feed(rpc(1, "t.slow", {"key": "f"}) + rpc(..., "exit") + rpc(2, "ping"))
        await quiet(chan)
        gates["f"].set()
        await conn.wait_closed()
        assert [m["id"] for m in chan.messages()] == [1]

    run(scenario)


def test_a_peer_that_never_reads_is_dropped() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect(max_pending_output_bytes=10_000)
        chan.gate.clear()  # the peer reads nothing
        closed: list[bool] = []
        conn.add_close_callback(lambda: closed.append(True))
        fed = 0
        while not conn.closed and fed < 1000:
            conn.feed(rpc(fed, "ping"))
            fed += 1
        assert conn.closed and chan.closed and closed == [True]
        assert 10_000 // 40 < fed < 1000  # dropped once ~10 kB of replies were queued

    run(scenario)


class _Held:
    """Stands for the reply a channel holds while it waits for the peer to read."""


class HoldingChannel(FakeChannel):
    """A channel whose pending write keeps ``held`` in its frame, as a real one keeps the
    reply it is sending."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[weakref.ref[_Held]] = []

    async def write(self, data: bytes) -> None:
        reply = _Held()
        self.held.append(weakref.ref(reply))
        await self.gate.wait()
        self.data += data
        del reply


def test_a_connection_closed_mid_write_frees_the_reply_at_once() -> None:
    """Aborted while its writer waits on a peer that does not read, the connection lets go of
    what the writer held when the writer stops, not at some later full garbage collection (a
    cancellation kept by the writer task would hold its frames in a reference cycle)."""

    async def scenario() -> None:
        chan = HoldingChannel()
        chan.direct = False
        chan.gate.clear()  # the peer reads nothing
        conn = Connection(make_router(Gates()), chan)
        conn.feed(rpc(1, "ping"))
        await quiet(chan)
        assert len(chan.held) == 1 and chan.held[0]() is not None
        conn.abort()
        await quiet(chan)
        assert chan.held[0]() is None

    gc.disable()
    try:
        run(scenario)
    finally:
        gc.enable()


def test_too_many_requests_in_flight_pauses_reading() -> None:
    async def scenario() -> None:
        conn, chan, gates = await connect(max_inflight=4)
        for i in range(4):
            conn.feed(rpc(i, "t.slow", {"key": "g"}))
        assert chan.paused and conn.inflight == 4
        gates["g"].set()
        await until(chan, 4)
        assert not chan.paused

    run(scenario)


def test_initialize_records_the_client_and_lists_methods() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        params = {
            "protocolVersion": "1.0",
            "clientInfo": {"name": "editor", "version": "9"},
            "capabilities": {"x": 1},
            "extraRoots": ["/a", "/b"],
        }
        conn.feed(rpc(1, "initialize", params) + rpc(..., "initialized") + rpc(2, "shutdown"))
        init, shut = await until(chan, 2)
        result = msgspec.convert(init["result"], InitializeResult)
        assert result.server_info.name == "skillsd"
        assert {"initialize", "ping", "shutdown", "t.slow"} <= set(result.capabilities.methods)
        assert "exit" not in result.capabilities.methods
        assert {"$/cancelRequest", "$/progress", "exit", "initialized"} <= set(
            result.capabilities.notifications
        )
        assert shut == {"jsonrpc": "2.0", "id": 2, "result": None}
        assert conn.extra_roots == ["/a", "/b"]
        assert (conn.client_name, conn.client_version) == ("editor", "9")
        assert conn.initialized and conn.shutdown_requested
        conn.feed(rpc(3, "ping"))  # refused after shutdown (docs/security.md)
        assert (await until(chan, 3))[2]["error"]["code"] == -32600

    run(scenario)


@pytest.mark.process
def test_process_id_watch_closes_the_connection_when_the_client_dies() -> None:
    async def scenario() -> None:
        conn, chan, _ = await connect()
        child = subprocess.Popen(["sleep", "30"])
        try:
            conn.feed(rpc(1, "initialize", {"processId": child.pid}))
            await until(chan, 1)
            assert not conn.closing
            child.kill()
            await asyncio.wait_for(conn.wait_closed(), 5)
        finally:
            child.kill()
            child.wait()
        conn2, chan2, _ = await connect()
        conn2.feed(rpc(1, "initialize", {"processId": -3}))
        (reply,) = await until(chan2, 1)
        assert "`$.processId`" in reply["error"]["message"]

    run(scenario)


@pytest.mark.process
def test_process_alive() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    assert not lifecycle.process_alive(child.pid)
    assert lifecycle.process_alive(1)


# -- the registry ----------------------------------------------------------------------------


def test_router_rejects_bad_registrations() -> None:
    router = Router()

    async def coro(params: Params, ctx: RequestContext) -> Empty:
        return Empty()

    def plain(params: Params, ctx: RequestContext) -> Empty:
        return Empty()

    router.add("ping", plain, mode="inline")
    with pytest.raises(ValueError, match="already registered"):
        router.add("ping", plain, mode="inline")
    with pytest.raises(ValueError, match="already registered"):
        router.add("$/cancelRequest", coro)
    with pytest.raises(ValueError, match="params_type"):
        router.add("made.up", coro)
    with pytest.raises(ValueError, match="async def"):
        router.add("skills.list", plain)
    with pytest.raises(ValueError, match="plain"):
        router.add("skills.search", coro, mode="thread")
    with pytest.raises(ValueError, match="mode"):
        router.add("skills.load", plain, mode="eager")  # type: ignore[arg-type]

    @router.method("skills.validate", mode="thread")
    def validate(params: Any, ctx: RequestContext) -> Any:
        raise NotImplementedError

    handler = router.get("skills.validate")
    assert handler is not None
    assert handler.params_type is METHODS["skills.validate"].params
    assert handler.result_type is METHODS["skills.validate"].result
    assert router.methods == ["ping", "skills.validate"]
    router.emits("skills.changed")
    assert "skills.changed" in router.notifications
