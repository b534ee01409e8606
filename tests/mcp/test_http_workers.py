"""``skillsd mcp --http --workers N``: several processes serve one address, each holding its own
sessions (``skillsd/mcp_bridge/http_workers.py``). Whichever worker the kernel gives a
connection to, a request for a session is answered by the worker holding it (relayed there):
over fresh connections, over one kept-alive connection that carries both workers' sessions,
and for a session's GET stream, which hears a change on disk through the relay. The session cap
counts every worker's sessions; a worker that dies ends the server with status 1; SIGINT ends
them all cleanly."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import httpx2
import pytest

from skillsd.mcp_bridge.http_workers import Relays, SessionCounts, Worker, _Relay
from tests.support.cli import run_cli
from tests.support.mcp_http import (
    INIT,
    TOKEN,
    KeepAlive,
    http_env,
    json_reply,
    open_session,
    post,
    server,
)
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
READ = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "resources/read",
    "params": {"uri": "skill://fix-issue/SKILL.md"},
}


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _worker_of(session: str) -> str:
    return session.split("-", 1)[0]


def _connection_of_other_worker(port: int, than: str) -> tuple[KeepAlive, str]:
    """A connection the kernel gave to a worker other than ``than``, and the session it opened
    (its id names the worker that took the connection)."""
    for _ in range(200):
        conn = KeepAlive(port)
        status, headers, _ = conn.call(INIT)
        assert status == 200
        session = headers["mcp-session-id"]
        if _worker_of(session) != than:
            return conn, session
        conn.close()
    raise AssertionError("every connection went to one worker")


@contextmanager
def _across_workers(
    tree: dict[str, Path],
) -> Iterator[tuple[subprocess.Popen[bytes], str, KeepAlive, str]]:
    """A two-worker server, a session held by one worker, a connection the kernel gave the
    other worker, and the session opened on that connection (held by that other worker)."""
    with server(tree, "--workers", "2") as (proc, url):
        first = KeepAlive(_port(url))
        _, headers, _ = first.call(INIT)
        session = headers["mcp-session-id"]
        first.call({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        conn, there = _connection_of_other_worker(_port(url), _worker_of(session))
        try:
            yield proc, session, conn, there
        finally:
            conn.close()
            first.close()


def _workers(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children]


def test_each_session_is_answered_whichever_worker_takes_its_connections(
    tree: dict[str, Path],
) -> None:
    with server(tree, "--workers", "2") as (proc, url):
        assert len(_workers(proc.pid)) == 2
        sessions = [open_session(url) for _ in range(12)]  # each on a fresh connection
        assert {_worker_of(s) for s in sessions} == {"0", "1"}, sessions
        for session in sessions:
            for body in (LIST, READ):
                answer = post(url, body, **{"Mcp-Session-Id": session})
                assert answer.status_code == 200, answer.text
                result = json_reply(answer)["result"]
                assert "tools" in result or "fix-issue" in result["contents"][0]["text"]
        gone = sessions[0]
        deleted = httpx2.delete(
            url, headers={"Authorization": f"Bearer {TOKEN}", "Mcp-Session-Id": gone}
        )
        assert deleted.status_code == 200
        assert post(url, LIST, **{"Mcp-Session-Id": gone}).status_code == 404


def test_one_kept_alive_connection_carries_both_workers_sessions(tree: dict[str, Path]) -> None:
    with _across_workers(tree) as (proc, here, conn, there):
        # ``conn`` was taken by the worker holding ``there``: ``here`` is the other's.
        fds: list[list[int]] = []
        for rounds in (1, 20):
            for n, session in enumerate([here, there, here, here, there, here] * rounds):
                status, headers, message = conn.call(dict(LIST, id=100 + n), session)
                assert status == 200 and headers["mcp-session-id"] == session
                assert message["id"] == 100 + n and "tools" in message["result"]
            fds.append([len(os.listdir(f"/proc/{pid}/fd")) for pid in _workers(proc.pid)])
        assert fds[0] == fds[1], fds  # one relay connection, whatever the switches
        status, _, message = conn.call(READ, "0-" + "f" * 32)  # no such session
        assert status == 404
        # Sent together: the second, for the other worker's session, waits for the first's
        # reply, then goes on through the relay.
        conn.send("POST", dict(LIST, id=7), there)
        conn.send("POST", dict(READ, id=8), here)
        assert conn.reply()[2]["id"] == 7
        assert "fix-issue" in conn.reply()[2]["result"]["contents"][0]["text"]


def test_a_chunked_request_for_another_workers_session_is_answered_404(
    tree: dict[str, Path],
) -> None:
    """Where a chunked body ends is not plain from its head, so it is not relayed: the worker
    that took it answers, and the session is not one of its own."""
    with _across_workers(tree) as (_, here, conn, there):
        body = json.dumps(LIST).encode()
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{conn.port}",
            f"Authorization: Bearer {TOKEN}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
            "Transfer-Encoding: chunked",
            f"Mcp-Session-Id: {here}",
        ]
        chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        conn.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + chunked)
        assert conn.reply()[0] == 404
        status, _, message = conn.call(LIST, there)  # its own sessions are answered as ever
        assert status == 200 and "tools" in message["result"]


def test_a_session_stream_hears_a_change_through_the_relay(tree: dict[str, Path]) -> None:
    with _across_workers(tree) as (_, session, stream, _):
        stream.call(dict(LIST, method="resources/list"), session)
        stream.send("GET", session=session)
        status, headers = stream.head()
        assert status == 200 and headers["content-type"] == "text/event-stream"
        skill = tree["project"] / ".claude" / "skills" / "fix-issue" / "SKILL.md"
        skill.write_text(skill.read_text().replace("description:", "description: Edited.", 1))
        changed = stream.next_event()
        assert changed["method"].endswith("/list_changed"), changed


@pytest.mark.slow
@pytest.mark.xdist_group("serial")
def test_the_session_cap_counts_every_workers_sessions(tree: dict[str, Path]) -> None:
    with server(tree, "--workers", "2") as (_proc, url):
        opened = [post(url, INIT) for _ in range(256)]
        assert all(r.status_code == 200 for r in opened)
        assert {_worker_of(r.headers["mcp-session-id"]) for r in opened} == {"0", "1"}
        over = post(url, INIT)
        assert over.status_code == 503 and "256" in over.json()["error"]["message"]


def test_a_worker_that_dies_ends_the_server_with_status_1(tree: dict[str, Path]) -> None:
    with server(tree, "--workers", "2") as (proc, url):
        open_session(url)
        first, second = _workers(proc.pid)
        os.kill(first, signal.SIGKILL)
        assert proc.wait(15) == 1
        deadline = time.monotonic() + 10
        while Path(f"/proc/{second}").exists() and _state(second) != "Z":
            assert time.monotonic() < deadline, "the other worker is still running"
            time.sleep(0.05)
        said = proc.stderr.read().decode() if proc.stderr else ""
        assert f"(pid {first}) ended on its own" in said, said


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_every_worker_cleanly(tree: dict[str, Path], how: int) -> None:
    with server(tree, "--workers", "2") as (proc, url):
        open_session(url)
        workers = _workers(proc.pid)
        proc.send_signal(how)
        assert proc.wait(10) == 0
        said = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in said, said
        for pid in workers:
            assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--http", "127.0.0.1:0", "--workers", "0"], "--workers 0: expected 1 to 64"),
        (["--workers", "2"], "--workers is for --http"),
    ],
)
def test_a_bad_worker_count_is_refused(tree: dict[str, Path], args: list[str], said: str) -> None:
    done = _mcp(tree, *args)
    assert done.returncode == 2 and said in done.stderr, done.stderr


def _mcp(tree: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    """``skillsd mcp ARGS`` run to its end."""
    return run_cli("mcp", *args, cwd=tree["project"], env=http_env(tree))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_address_in_use_is_said_and_ends_with_status_1(
    tree: dict[str, Path], workers: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _mcp(tree, "--http", f"127.0.0.1:{port}", "--workers", workers)
    assert done.returncode == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr


def test_what_a_client_sends_during_a_relayed_reply_is_bounded(tree: dict[str, Path]) -> None:
    """While another worker answers (here a session's stream, which does not end), what the
    client sends next is held, up to 1 MiB; past it the connection is cut."""
    with _across_workers(tree) as (_, session, conn, _):
        conn.send("GET", session=session)
        assert conn.head()[0] == 200
        try:
            for _ in range(64):  # 2 MiB, in 32 KiB pieces
                conn.sock.sendall(b"x" * 32768)
            conn.sock.settimeout(10)
            while conn.sock.recv(65536):  # what the stream said, then its end
                pass
            cut = True
        except TimeoutError:
            cut = False  # still open: nothing bounded what was held
        except OSError:
            cut = True  # reset
        assert cut


def test_a_large_relayed_reply_to_a_slow_reader_then_the_next_request(
    tree: dict[str, Path],
) -> None:
    """A reply larger than the buffers, relayed to a client that waits before reading: the
    relay stops reading while the client's buffer is full, the reply arrives whole, and the
    connection answers the next request through the same relay."""
    big = write_skill(tree["project"] / ".agents" / "skills", "big-ref", "Has a big reference.")
    (big / "references").mkdir()
    text = "".join(f"line {n} of a long reference\n" for n in range(200_000))  # ~5.5 MiB
    (big / "references" / "large.md").write_text(text)
    read = dict(READ, params={"uri": "skill://big-ref/references/large.md"})
    with _across_workers(tree) as (_, session, conn, _):
        for n in range(3):
            conn.send("POST", dict(read, id=50 + n), session)
            time.sleep(0.5)  # the relay fills the buffers meanwhile
            status, _, message = conn.reply()
            assert status == 200 and message["result"]["contents"][0]["text"] == text
            status, _, message = conn.call(dict(LIST, id=60 + n), session)
            assert status == 200 and "tools" in message["result"]


class _Stream:
    """A transport that records what a relay does to it."""

    def __init__(self) -> None:
        self.paused = False
        self.closed = False
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def close(self) -> None:
        self.closed = True


def test_a_reply_that_ends_while_the_client_reads_slowly_leaves_no_relay_paused() -> None:
    """The last piece of a relayed reply fills the client's buffer (the relay is paused) and
    ends the reply: the relay connection, idle until its next request, must not stay paused,
    or that next request's reply would never be read."""

    async def run() -> None:
        back, ended = _Stream(), []
        worker = Worker(0, 2, [], "/nonexistent", SessionCounts(2))
        relays = Relays(worker, cast(asyncio.Transport, back), ended.append)
        conn = _Relay(relays)
        conn.connection_made(cast(asyncio.Transport, _Stream()))
        relays._conns[1] = conn  # as if a request had gone to worker 1 before
        relays.start(1, b"GET /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: 1-x\r\n\r\n", 0)
        relays.pause()  # the client's buffer is full
        conn.data_received(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        assert ended == [True]
        assert back.written == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
        assert conn.transport is not None and not cast(_Stream, conn.transport).paused

    asyncio.run(run())


def test_a_relay_connection_idle_too_long_is_replaced() -> None:
    """The worker at the other end closes a kept-alive connection idle for 75 s; a request sent
    just then would be lost, so a relay connection idle past 30 s is not used again."""

    async def run() -> None:
        ended: list[bool] = []
        worker = Worker(0, 2, [], "/nonexistent", SessionCounts(2))
        relays = Relays(worker, cast(asyncio.Transport, _Stream()), ended.append)
        old = _Relay(relays)
        old.connection_made(cast(asyncio.Transport, _Stream()))
        relays._conns[1] = old
        old.idle_since -= 31
        relays.start(1, b"GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", 0)
        assert old.closed and cast(_Stream, old.transport).closed
        assert relays._conns[1] is not old
        await asyncio.sleep(0.1)  # the new one cannot connect here: the request ends unanswered
        assert ended == [False]

    asyncio.run(run())


def test_a_worker_that_does_not_end_when_asked_is_killed(tree: dict[str, Path]) -> None:
    """A stopped worker cannot act on SIGTERM: the supervisor kills it after its grace period
    and exits, saying so with its status, instead of waiting for ever."""
    with server(tree, "--workers", "2") as (proc, url):
        open_session(url)
        stuck, other = _workers(proc.pid)
        os.kill(stuck, signal.SIGSTOP)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 1
        for pid in (stuck, other):
            assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"
