"""Transports and connections under SPEC 18, through real daemon processes: nothing but
``exit`` after ``shutdown``, stdio exiting on Pythons whose pipe transports lack
``is_reading()``, one memory budget across connections, and clients that check who serves the
socket they reach."""

from __future__ import annotations

import json
import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon import daemon_harness as h


@pytest.fixture
def daemon() -> Iterator[h.StdioDaemon]:
    daemon = h.StdioDaemon()
    yield daemon
    daemon.kill()


# -- after shutdown ------------------------------------------------------------------------------


def test_after_shutdown_only_exit_is_accepted(daemon: h.StdioDaemon) -> None:
    daemon.send(h.notification("_test.print", {"text": "BEFORE-SHUTDOWN"}))
    daemon.send(h.request("slow", "_test.sleep", {"seconds": 0.3}))
    assert daemon.call(1, "shutdown") == {"jsonrpc": "2.0", "id": 1, "result": None}
    # Requests, known or not, single or batched, are refused; the slow one still runs.
    daemon.send(h.request(2, "ping"))
    daemon.send(h.request(3, "skills.list"))
    daemon.send(h.request(4, "no.such.method"))
    daemon.send(h.request(5, "shutdown"))
    batch = [json.loads(h.request(6, "ping")), json.loads(h.notification("initialized"))]
    daemon.send(json.dumps(batch).encode() + b"\n")
    # Notifications are ignored: this one would print to stderr if it ran.
    daemon.send(h.notification("_test.print", {"text": "AFTER-SHUTDOWN"}))
    replies = [daemon.reader.message() for _ in range(6)]
    by_id: dict[object, dict[str, object]] = {}
    for reply in replies:
        for member in reply if isinstance(reply, list) else [reply]:
            by_id[member["id"]] = member
    assert by_id.pop("slow") == {
        "jsonrpc": "2.0",
        "id": "slow",
        "result": {"slept": 0.3, "steps": 1},
    }
    assert sorted(by_id) == [2, 3, 4, 5, 6]
    for reply in by_id.values():
        assert reply["error"]["code"] == -32600, reply
        assert "shutting down" in reply["error"]["message"]
    assert [r for r in replies if isinstance(r, list)] == [[by_id[6]]]
    daemon.send(h.notification("exit"))
    assert daemon.wait() == 0  # stdin still open: exit alone ended it
    assert daemon.reader.until_eof() == b""
    stderr = daemon.stderr()
    assert "BEFORE-SHUTDOWN" in stderr and "AFTER-SHUTDOWN" not in stderr


def test_cancel_still_reaches_a_request_running_at_shutdown(daemon: h.StdioDaemon) -> None:
    daemon.send(h.request("slow", "_test.sleep", {"seconds": 30, "steps": 30}))
    assert daemon.call(1, "shutdown")["result"] is None
    daemon.send(h.notification("$/cancelRequest", {"id": "slow"}))
    assert daemon.reader.message()["error"]["code"] == -32800
    daemon.send(h.notification("exit"))
    assert daemon.wait() == 0


# -- stdio on Pythons without a pipe transport's is_reading() ------------------------------------

#: Loaded by the daemon through SKILLSD_TEST_HOOKS: makes asyncio's read pipe transport what
#: Python 3.11.2 (Debian 12) ships, where ``is_reading()`` is ReadTransport's abstract one and
#: ``pause_reading``/``_add_reader`` do not call it; then adds the usual ``_test.*`` methods.
OLD_PIPE_TRANSPORT_HOOK = textwrap.dedent(
    """
    import importlib.util
    import sys
    from asyncio import transports, unix_events

    pipe = unix_events._UnixReadPipeTransport
    pipe.is_reading = transports.ReadTransport.is_reading  # raises NotImplementedError


    def _add_reader(self, fd, callback):
        self._loop._add_reader(fd, callback)


    def pause_reading(self):
        if self._closing or self._paused:
            return
        self._paused = True
        self._loop._remove_reader(self._fileno)


    def resume_reading(self):
        if self._closing or not self._paused:
            return
        self._paused = False
        self._loop._add_reader(self._fileno, self._read_ready)


    pipe._add_reader = _add_reader
    pipe.pause_reading = pause_reading
    pipe.resume_reading = resume_reading

    spec = importlib.util.spec_from_file_location("skillsd_hook_methods", HOOK_METHODS)
    methods = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = methods
    spec.loader.exec_module(methods)


    def register(router):
        methods.register(router)
    """
)


@pytest.fixture
def old_pipe_daemon(tmp_path: Path) -> Iterator[h.StdioDaemon]:
    hook = tmp_path / "old_pipe_transport.py"
    hook.write_text(f"HOOK_METHODS = {h.HOOK_METHODS!r}\n{OLD_PIPE_TRANSPORT_HOOK}")
    daemon = h.StdioDaemon(environ=h.env(SKILLSD_TEST_HOOKS=str(hook)))
    yield daemon
    daemon.kill()


def test_stdio_exits_on_eof_without_is_reading(old_pipe_daemon: h.StdioDaemon) -> None:
    daemon = old_pipe_daemon
    assert daemon.call(1, "ping")["result"] == {}
    # More requests than run at once: input is paused, then resumed, without is_reading.
    burst = 300
    daemon.send(b"".join(h.request(i, "_test.sleep", {"seconds": 0.05}) for i in range(burst)))
    daemon.close_stdin()
    ids = {daemon.reader.message()["id"] for _ in range(burst)}
    assert ids == set(range(burst))
    assert daemon.wait() == 0
    assert "NotImplementedError" not in daemon.stderr()


def test_stdio_exits_on_sigterm_without_is_reading(old_pipe_daemon: h.StdioDaemon) -> None:
    daemon = old_pipe_daemon
    daemon.send(h.request("slow", "_test.sleep", {"seconds": 0.3, "steps": 3}))
    assert daemon.call(1, "ping")["result"] == {}
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.reader.message()["id"] == "slow"
    assert daemon.wait() == 0
    assert "NotImplementedError" not in daemon.stderr()
