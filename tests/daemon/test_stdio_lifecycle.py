"""``skillsd serve`` over real pipes: exit paths, stdout purity, framing, cancel and progress."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import daemons as h

pytestmark = pytest.mark.process


@pytest.fixture
def daemon() -> Iterator[h.StdioDaemon]:
    proc = h.StdioDaemon()
    yield proc
    proc.kill()


def test_eof_answers_in_flight_requests_and_exits_zero(daemon: h.StdioDaemon) -> None:
    daemon.send(h.request(1, "_test.sleep", {"seconds": 0.3}))
    daemon.send(h.request(2, "ping"))
    daemon.close_stdin()
    first = daemon.reader.message()
    second = daemon.reader.message()
    assert first == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert second == {"jsonrpc": "2.0", "id": 1, "result": {"slept": 0.3, "steps": 1}}
    assert daemon.wait() == 0
    assert daemon.reader.until_eof() == b""


def test_large_replies_reach_a_slow_reader_before_exit(daemon: h.StdioDaemon) -> None:
    text = "0123456789abcdef" * 128 * 1024  # 2 MiB, far more than a pipe buffers
    daemon.send(h.request(1, "_test.echo", {"text": text}) + h.request(2, "_test.echo"))
    daemon.close_stdin()
    # Not a synchronisation: the time a daemon that wrongly exited at EOF would take to go (no
    # event marks "blocked on a full pipe"); the assertion is that it is still there.
    time.sleep(0.3)
    assert daemon.proc.poll() is None
    output = daemon.reader.until_eof()
    by_id = {m["id"]: m for m in map(json.loads, output.splitlines())}
    assert by_id[1]["result"]["text"] == text
    assert by_id[2]["result"]["text"] == "stray output"
    assert daemon.wait() == 0


def test_exit_notification_ends_the_process_with_status_zero(daemon: h.StdioDaemon) -> None:
    daemon.send(h.request(2, "_test.sleep", {"seconds": 0.2}))
    assert daemon.call(1, "shutdown") == {"jsonrpc": "2.0", "id": 1, "result": None}
    daemon.send(h.notification("exit"))
    slept = daemon.reader.message()  # in flight at exit: still answered
    assert slept == {"jsonrpc": "2.0", "id": 2, "result": {"slept": 0.2, "steps": 1}}
    assert daemon.wait() == 0  # stdin is still open


def test_sigterm_answers_the_request_in_flight(daemon: h.StdioDaemon) -> None:
    daemon.send(h.request("slow", "_test.sleep", {"seconds": 0.5, "steps": 5}))
    assert daemon.call(1, "ping")["result"] == {}  # the slow one is surely running now
    daemon.proc.send_signal(signal.SIGTERM)
    reply = daemon.reader.message()
    assert reply == {"jsonrpc": "2.0", "id": "slow", "result": {"slept": 0.5, "steps": 5}}
    assert daemon.wait() == 0


def test_stdout_carries_protocol_messages_only(daemon: h.StdioDaemon) -> None:
    daemon.send(h.request(1, "_test.print", {"text": "STRAY-TEXT"}))
    daemon.send(h.request(2, "_test.crash"))
    daemon.send(h.request(3, "ping"))
    daemon.close_stdin()
    assert daemon.wait() == 0
    lines = daemon.reader.until_eof().splitlines()
    messages = [json.loads(line) for line in lines]  # every line is JSON-RPC
    assert sorted(m["id"] for m in messages) == [1, 2, 3]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    crash = next(m for m in messages if m["id"] == 2)
    assert crash["error"]["code"] == -32603
    err = daemon.stderr()
    assert err.count("STRAY-TEXT") == 2  # Python's print and a raw write to fd 1
    assert "Traceback" in err and "crashed on purpose" in err
    assert b"Traceback" not in b"".join(lines)


def test_content_length_framing(daemon: h.StdioDaemon) -> None:
    def frame(obj: object) -> bytes:
        body = json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)

    daemon.send(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    daemon.send(frame({"jsonrpc": "2.0", "method": "initialized"}))
    daemon.send(frame({"jsonrpc": "2.0", "id": 2, "method": "ping"})[:20])
    daemon.send(frame({"jsonrpc": "2.0", "id": 2, "method": "ping"})[20:])
    bodies = []
    for _ in range(2):
        header = daemon.reader.read_until(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: ")
        bodies.append(json.loads(daemon.reader.raw(int(header[16:-4]))))
    assert bodies[0]["result"]["serverInfo"]["name"] == "skillsd"
    assert bodies[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    daemon.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert daemon.wait() == 0


def test_oversized_line_is_answered_then_the_stream_resynchronises() -> None:
    daemon = h.StdioDaemon("--max-message-bytes", "256")
    try:
        huge = h.request(1, "ping", {"pad": "x" * 5000})
        daemon.send(huge[:3000])
        daemon.send(huge[3000:] + h.request(2, "ping"))
        too_big = daemon.reader.message()
        assert too_big["id"] is None
        assert too_big["error"]["code"] == -32600
        assert "256" in too_big["error"]["message"]
        assert daemon.reader.message() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        daemon.kill()


@pytest.mark.parametrize("method", ["_test.sleep", "_test.spin"])
def test_cancel_and_progress(daemon: h.StdioDaemon, method: str) -> None:
    params = {"seconds": 5, "steps": 50, "_meta": {"progressToken": "p1"}}
    daemon.send(h.request(7, method, params))
    progress = daemon.reader.message()
    assert progress == {
        "jsonrpc": "2.0",
        "method": "$/progress",
        "params": {"token": "p1", "value": {"message": "step 1/50", "percentage": 0.0}},
    }
    daemon.send(h.notification("$/cancelRequest", {"id": 7}))
    while (reply := daemon.reader.message()).get("method") == "$/progress":
        pass
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32800, "message": "Request cancelled"},
    }
    assert daemon.call(8, "ping")["result"] == {}


def test_process_id_death_ends_the_daemon(daemon: h.StdioDaemon) -> None:
    client = subprocess.Popen(["sleep", "30"])
    try:
        reply = daemon.call(1, "initialize", {"processId": client.pid})
        assert reply["result"]["protocolVersion"]
        client.kill()
        client.wait()
        assert daemon.wait() == 0
    finally:
        client.kill()
        client.wait()


def test_files_and_terminal_like_stdio_are_served_too(tmp_path: Path) -> None:
    # A regular file is not a pipe: the daemon reads and writes it through threads.
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(
        h.request(1, "ping") + h.request(2, "_test.sleep", {"seconds": 0.1}) + h.request(3, "nope")
    )
    replies = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        status = subprocess.run(
            h.skillsd("serve"), stdin=stdin, stdout=stdout, env=h.env(), timeout=h.TIMEOUT
        ).returncode
    assert status == 0
    by_id = {m["id"]: m for m in map(json.loads, replies.read_bytes().splitlines())}
    assert by_id[1]["result"] == {}
    assert by_id[2]["result"] == {"slept": 0.1, "steps": 1}
    assert by_id[3]["error"]["code"] == -32601


def test_idle_timeout_needs_a_socket() -> None:
    result = subprocess.run(
        h.skillsd("serve", "--idle-timeout", "5"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=h.env(),
        timeout=h.TIMEOUT,
    )
    assert result.returncode == 2
    assert b"--idle-timeout needs --socket" in result.stderr
    assert result.stdout == b""
