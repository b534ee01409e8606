"""Property-based fuzzing of the JSON-RPC decoder and dispatcher (docs/protocol.md).

In-process, a `Connection` wired to every real handler (over a small skill tree) is fed
generated lines, cut at random points; an independent oracle written from the protocol says which
reply each line must get: none for a notification, ``-32700``/``-32600`` with ``id: null``
for garbage, one array for a batch, ``-32601`` for an unknown method, and for a known method a
result of the method's result type or an error it is documented to give. ``-32603`` (a crash
in a handler) is never acceptable. A second property replays garbage through a real
``skillsd serve`` process and checks that every line is answered, in order, and the daemon
lives on.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillsd.core.policy.fs_state import StateStore
from skillsd.daemon import handlers, lifecycle
from skillsd.jsonrpc.endpoint import Connection, Router
from skillsd.runtime.catalog_cache import CatalogCache
from skillsd.runtime.services import Services
from skillsd_protocol import KIND_CODES, METHODS
from tests.hardening.fuzzing import fuzz_settings
from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.fake_channel import FakeChannel
from tests.support.json_equality import same
from tests.support.skill_tree import make_project

pytestmark = pytest.mark.slow  # hundreds of generated cases per test: seconds each

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR, CANCELLED = -32603, -32800
CANCEL = "$/cancelRequest"
#: ``exit`` closes the connection and ``shutdown`` makes it refuse every later request (both
#: proven in tests/daemon); everything else is fair game.
FUZZED_METHODS = sorted(m for m in METHODS if m not in ("exit", "shutdown"))


# -- the system under test -----------------------------------------------------------------------


@dataclass
class Rig:
    """One event loop, the real router over a small tree, reused by every example."""

    loop: asyncio.AbstractEventLoop
    router: Router
    tree: dict[str, Path]

    def exchange(self, chunks: list[bytes]) -> list[Any]:
        """Feed ``chunks`` to a fresh connection; return every reply once all work is done."""
        return self.loop.run_until_complete(asyncio.wait_for(self._exchange(chunks), 30))

    async def _exchange(self, chunks: list[bytes]) -> list[Any]:
        channel = FakeChannel()
        conn = Connection(self.router, channel, label="fuzz")
        conn.feed(b'{"jsonrpc":"2.0","method":"initialized"}\n')  # decide: line framing
        for chunk in chunks:
            conn.feed(chunk)
        while conn.inflight:
            await asyncio.sleep(0.001)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not conn.closed, "a message closed the connection"
        conn.abort()
        await asyncio.sleep(0)  # let the cancelled writer task finish
        # Server notifications ($/progress for a progressToken) are not replies.
        return [m for m in channel.messages() if not (isinstance(m, dict) and "method" in m)]


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("fuzz-rpc")
    (tmp / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n', encoding="utf-8")
    tree = make_project(tmp)
    env = daemon_env(tree)
    state = StateStore(os.fspath(tmp / "state.json"))
    services = Services(
        cwd=os.fspath(tree["project"]),
        catalogs=CatalogCache(
            env=env, home=os.fspath(tree["home"]), watch=False, disabled=state.disabled
        ),
        state=state,
        home=os.fspath(tree["home"]),
        env=env,
    )
    router = Router()
    lifecycle.register(router)
    handlers.register(router, services)
    loop = asyncio.new_event_loop()
    try:
        yield Rig(loop, router, tree)
    finally:
        services.catalogs.close()
        loop.close()


# -- the oracle (docs/protocol.md, written independently of the endpoint)
# ----------------------------------


@dataclass(frozen=True)
class Expect:
    """One reply the spec requires: its id and what it must be."""

    id: Any
    kind: str  # "parse" | "invalid" | "not_found" | "cancel" | method name (dispatched)


def _usable_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | float | str) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


def decode(line: bytes) -> tuple[bool, Any]:
    """(parsed, value): JSON in UTF-8 only: no NaN/Infinity (spelled out or as ``1e999``), and
    no ``\\ud800`` escapes of lone surrogates, which no UTF-8 text can hold."""
    try:
        value = json.loads(
            line.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite
        )
    except (ValueError, RecursionError):
        return False, None
    return (False, None) if _has_lone_surrogate(value) else (True, value)


def expect_member(obj: Any, router: Router) -> Expect | None:
    """The reply one request object needs, or None (a notification)."""
    if not isinstance(obj, dict):
        return Expect(None, "invalid")
    has_id, raw_id = "id" in obj, obj.get("id")
    echo = raw_id if _usable_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0" or not isinstance(obj.get("method"), str):
        return Expect(echo, "invalid")
    if has_id and not _usable_id(raw_id):
        return Expect(None, "invalid")
    if not has_id:
        return None  # a notification never gets a reply, whatever is wrong with it
    method, params = obj["method"], obj.get("params", {})
    if not isinstance(params, dict | list) and (method == CANCEL or router.get(method)):
        return Expect(raw_id, "invalid")  # present, so it must be structured (null is not)
    if method == CANCEL:
        return Expect(raw_id, "cancel")
    if router.get(method) is None:
        return Expect(raw_id, "not_found")
    return Expect(raw_id, method)


def expect_line(line: bytes, router: Router) -> list[Expect] | Expect | None:
    """A batch's replies (a list), one reply, or None for no reply at all."""
    parsed, value = decode(line)
    if not parsed:
        return Expect(None, "parse")
    if isinstance(value, list):
        if not value:
            return Expect(None, "invalid")
        replies = [e for e in (expect_member(m, router) for m in value) if e is not None]
        return replies or None
    return expect_member(value, router)


def _decodes_as(result: Any, spec_result: Any) -> bool:
    if spec_result is None:
        return result is None
    msgspec.json.decode(json.dumps(result).encode(), type=spec_result)
    return True


def fits(want: Expect, reply: Any) -> bool:
    """Does ``reply`` satisfy ``want``?"""
    if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0" or "id" not in reply:
        return False
    if not same(want.id, reply["id"]) or ("result" in reply) == ("error" in reply):
        return False
    error = reply.get("error")
    if error is not None and not (
        isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
    ):
        return False
    code = error["code"] if error is not None else None
    if want.kind == "parse":
        return code == PARSE_ERROR
    if want.kind == "invalid":
        return code == INVALID_REQUEST
    if want.kind == "not_found":
        return code == METHOD_NOT_FOUND
    if want.kind == "cancel":
        return code == INVALID_PARAMS or (code is None and reply["result"] is None)
    spec = METHODS[want.kind]
    if code is None:
        return _decodes_as(reply["result"], spec.result)
    if code in (INVALID_PARAMS, CANCELLED):
        return True
    # An application error: a known kind sent with its code, and one the method documents.
    kind = (error.get("data") or {}).get("kind")
    documented = getattr(spec, "errors", None)
    return KIND_CODES.get(kind) == code and (not documented or kind in documented)


def messages_in(stream: bytes) -> list[bytes]:
    """The protocol's line framing: one message per newline-terminated line, a CR before the newline
    dropped, empty lines skipped (a whitespace-only line is a message: -32700)."""
    found = []
    for line in stream.split(b"\n")[:-1]:
        body = line[:-1] if line.endswith(b"\r") else line
        if body:
            found.append(body)
    return found


def check_replies(stream: bytes, replies: list[Any], router: Router) -> None:
    wanted: list[Expect | list[Expect]] = []
    for line in messages_in(stream):
        expected = expect_line(line, router)
        if expected is not None:
            wanted.append(expected)
    assert len(replies) == len(wanted), f"{len(wanted)} replies expected, got {replies}"
    remaining = list(replies)
    for want in wanted:
        if isinstance(want, list):
            hit = next(
                (
                    r
                    for r in remaining
                    if isinstance(r, list) and len(r) == len(want) and _batch_fits(want, r)
                ),
                None,
            )
        else:
            hit = next((r for r in remaining if fits(want, r)), None)
        assert hit is not None, f"no reply fits {want}; replies: {remaining}"
        remaining.remove(hit)
    for reply in replies:
        for single in reply if isinstance(reply, list) else [reply]:
            assert single.get("error", {}).get("code") != INTERNAL_ERROR, single


def _batch_fits(want: list[Expect], got: list[Any]) -> bool:
    pool = list(got)
    for expected in want:
        hit = next((r for r in pool if fits(expected, r)), None)
        if hit is None:
            return False
        pool.remove(hit)
    return True


# -- strategies ----------------------------------------------------------------------------------

_IDS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.none(),
    st.booleans(),
    st.just([1]),
    st.just({"a": 1}),
)
_SAFE_TEXT = st.text(alphabet=st.characters(blacklist_characters="/"), max_size=10)
_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    _SAFE_TEXT,
)


def _param_values(tree: dict[str, Path]) -> st.SearchStrategy[Any]:
    """Values for the real params fields: plausible ones to get past decoding, hostile ones to
    reach the handlers' checks."""
    paths = [
        os.fspath(tree["project"]),
        os.fspath(tree["pdf"]),
        os.fspath(tree["pdf"] / "SKILL.md"),
        os.fspath(tree["sub"]),
        os.fspath(tree["tmp"] / "missing"),
    ]
    curated = st.sampled_from(
        [
            *paths,
            "pdf-forms",
            "release-notes",
            "commit-message",
            "references/fields.md",
            "../../etc/passwd",
            "a\x00b",
            "",
            ".",
            "..",
            "s1",
            "ghost",
            "skill_load",
            "Bash(git:*)",
            "Bash((",
            "xml",
            "codelia",
            "strict",
            "always",
            "session",
            "allow",
            "deny",
            "repo",
            -1,
            0,
            1,
            2**31,
            2**63,
            10**30,
            1.5,
            True,
            False,
            None,
        ]
    )
    return st.recursive(
        st.one_of(curated, curated, _JSON_SCALARS),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["progressToken", "query", "name", "x"]), inner)
        ),
        max_leaves=5,
    )


@st.composite
def envelopes(draw: st.DrawFn, tree: dict[str, Path]) -> Any:
    """A request-like JSON value: mostly well-formed, every part sometimes wrong."""
    values = _param_values(tree)
    method = draw(
        st.one_of(
            st.sampled_from(FUZZED_METHODS),
            st.sampled_from(FUZZED_METHODS),
            st.sampled_from([CANCEL, "rpc.discover", "skills.nope", "", "exit "]),
            _JSON_SCALARS,
        )
    )
    message: dict[str, Any] = {}
    jsonrpc = draw(st.sampled_from(["2.0"] * 6 + ["2", "1.0", 2.0, None, "absent"]))
    if jsonrpc != "absent":
        message["jsonrpc"] = jsonrpc
    if draw(st.integers(0, 8)):
        message["method"] = method
    if draw(st.integers(0, 5)):
        message["id"] = draw(_IDS)
    shape = draw(st.integers(0, 9))
    if shape <= 6 and isinstance(method, str) and method in METHODS:
        names = [f.encode_name for f in msgspec.structs.fields(METHODS[method].params)]
        chosen = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
        params = {name: draw(values) for name in chosen if name != "processId"}
        if "_meta" in params and draw(st.booleans()):
            params["_meta"] = {"progressToken": draw(st.text(max_size=4) | st.integers())}
        message["params"] = params
    elif shape == 7 and method == CANCEL:
        message["params"] = {"id": draw(_IDS)}
    elif shape == 8:
        message["params"] = draw(st.one_of(_JSON_SCALARS, st.lists(_JSON_SCALARS, max_size=2)))
    if draw(st.integers(0, 6)) == 0:
        message[draw(st.sampled_from(["result", "error", "extra", "ID"]))] = draw(_JSON_SCALARS)
    return message


@st.composite
def lines(draw: st.DrawFn, tree: dict[str, Path]) -> bytes:
    """One message line: an envelope, a batch, other JSON, or corrupt bytes."""
    kind = draw(st.integers(0, 9))
    if kind <= 4:
        value: Any = draw(envelopes(tree))
    elif kind <= 6:
        value = draw(st.lists(envelopes(tree) | _JSON_SCALARS, max_size=4))
    elif kind == 7:
        value = draw(
            st.recursive(_JSON_SCALARS, lambda i: st.lists(i) | st.dictionaries(_SAFE_TEXT, i))
        )
    else:
        return draw(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")))
    # surrogatepass: a lone surrogate drawn as text becomes bytes that are not UTF-8.
    text = json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 7)) == 0:  # corrupt a well-formed message
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"{", b'"', b"\x00"])) + text[at:]
        )
    return text


# -- properties ----------------------------------------------------------------------------------


@fuzz_settings(250)
@given(data=st.data())
def test_every_line_gets_exactly_the_reply_the_spec_requires(rig: Rig, data: st.DataObject) -> None:
    batch = data.draw(st.lists(lines(rig.tree), min_size=1, max_size=6))
    stream = b"".join(line + data.draw(st.sampled_from([b"\n", b"\r\n"])) for line in batch)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    replies = rig.exchange(chunks)
    check_replies(stream, replies, rig.router)


def test_the_oracle_is_not_a_pushover(rig: Rig) -> None:
    """The checker rejects wrong replies: wrong code, wrong id, a missing or an extra reply."""
    ping = b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n'
    good = [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    check_replies(ping, good, rig.router)
    for bad in (
        [{"jsonrpc": "2.0", "id": 7.0, "result": {}}],
        [{"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "x"}}],
        [{"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "x"}}],
        [],
        [*good, *good],
    ):
        with pytest.raises(AssertionError):
            check_replies(ping, bad, rig.router)
    with pytest.raises(AssertionError):  # a notification must not be answered
        check_replies(b'{"jsonrpc":"2.0","method":"ping"}\n', good, rig.router)
    load = b'{"jsonrpc":"2.0","id":1,"method":"skills.load","params":{"name":"x"}}\n'
    off_list = {"code": 1006, "message": "x", "data": {"kind": "path_not_allowed"}}
    with pytest.raises(AssertionError):  # an error kind skills.load never gives
        check_replies(load, [{"jsonrpc": "2.0", "id": 1, "error": off_list}], rig.router)


# -- a real process ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioDaemon]:
    tree = make_project(tmp_path_factory.mktemp("fuzz-stdio"))
    proc = StdioDaemon(environ=daemon_env(tree))
    try:
        # The first bytes decide the framing: settle it before any garbage arrives.
        assert proc.call(0, "ping") == {"jsonrpc": "2.0", "id": 0, "result": {}}
        yield proc
    finally:
        proc.kill()


_GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=60),
    st.sampled_from(
        [
            b"\xff\xfe{}",
            b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}',
            b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}',
            b"[" * 5000 + b"]" * 5000,
            b'{"a":' * 3000 + b"1" + b"}" * 3000,
            b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
            b'{"jsonrpc":"2.0","method":"ping","id":1,"id":2}',
            b"\x00\x00\x00",
            b'{"\xffjsonrpc":"2.0","method":"ping"}',
            b'{"jsonrpc":"2.0","id":2,"method":"ping","x":"\xff"}',
            b'[{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"a":"\xc3"}}}]',
            b"Content-Length: 5",
        ]
    ),
).map(lambda b: b.replace(b"\n", b" "))


@pytest.mark.process
@fuzz_settings(25)
@given(st.lists(_GARBAGE, min_size=1, max_size=8))
def test_a_real_daemon_answers_garbage_in_order_and_lives_on(
    daemon: StdioDaemon, garbage: list[bytes]
) -> None:
    """Over real pipes: each garbage line gets one error reply (or none for a notification),
    in order, then a ping still works. Inline replies keep their order, so the ping marks the
    end of the answers to the garbage."""
    stream = b"".join(g + b"\n" for g in garbage)
    daemon.send(stream + request("sentinel", "ping"))
    replies = []
    while (reply := daemon.reader.message()) != _SENTINEL_REPLY:
        replies.append(reply)
    expected = [e for e in (expect_line(m, _STDIO_ROUTER) for m in messages_in(stream)) if e]
    assert len(replies) == len(expected), (garbage, replies)
    for want, got in zip(expected, replies, strict=True):
        assert not isinstance(want, list) or isinstance(got, list)
        if isinstance(want, Expect):
            assert want.kind in ("parse", "invalid", "not_found", "ping"), want
            assert fits(want, got), (want, got)


def _router_of_a_bare_daemon() -> Router:
    router = Router()
    lifecycle.register(router)
    return router


_STDIO_ROUTER = _router_of_a_bare_daemon()
_SENTINEL_REPLY = {"jsonrpc": "2.0", "id": "sentinel", "result": {}}
