"""Faults, through real daemon processes: clients that vanish or stop reading, SIGTERM under
load, SIGKILL then restart, exhausted inotify limits, unreadable folders, and state writes the
disk refuses.

Permissions and per-user kernel limits only bite an unprivileged process. Run as root (CI
containers, this repository's own runs), these tests start the daemon as a uid nothing else
uses, so filling that uid's inotify limits or hiding files from it disturbs no other process;
run as an ordinary user they use that user (the inotify test is then skipped: exhausting your
own inotify limits would starve your editor). See ``docs/security.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from skillsd.core.policy.fs_state import STATE_FILE, StateData
from tests.hardening.processes import (
    ConfinedDaemon,
    RssSampler,
    chown_tree,
    daemon_log,
    exhausted_inotify,
    find_free_uid,
    rss_bytes,
    short_tempdir,
    socket_daemon,
)
from tests.support import daemons as h
from tests.support.client import Client
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_skill

pytestmark = [pytest.mark.slow, pytest.mark.process, pytest.mark.xdist_group("serial")]

ROOT = os.geteuid() == 0
ALLOW_LOADS = '[permissions]\nallow = ["skill_load"]\n'


@pytest.fixture
def base() -> Iterator[Path]:
    with short_tempdir() as path:
        yield path


def project(base: Path) -> dict[str, Path]:
    tmp = base / "t"
    tmp.mkdir()
    (tmp / "config.toml").write_text(ALLOW_LOADS, encoding="utf-8")
    return make_project(tmp)


def assert_clean_log(sock: Path) -> None:
    log = daemon_log(sock)
    assert "Traceback" not in log and "Internal error" not in log, log


# -- clients that misbehave ----------------------------------------------------------------------


def test_a_client_vanishing_mid_request_disturbs_no_one(base: Path) -> None:
    tree = project(base)
    sock = base / "d.sock"
    with socket_daemon(sock, daemon_env(tree)) as daemon:
        steady = h.SocketClient(sock)
        cwd = os.fspath(tree["project"])
        for round_ in range(5):
            rude = h.SocketClient(sock)
            rude.send(h.request(1, "_test.sleep", {"seconds": 0.2}))
            rude.send(h.request(2, "skills.list", {"cwd": cwd}))
            rude.send(b'{"jsonrpc":"2.0","id":3,"method":"skills.sea')  # half a message
            if round_ % 2:  # a reset (RST) rather than an orderly close
                rude.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            rude.close()
            assert steady.call(round_, "skills.list", {"cwd": cwd})["result"]["skills"]
        # Part of the scenario: the abandoned 0.2 s sleeps finish and find nobody to answer
        # (nothing signals a reply dropped for a closed connection; it must simply not harm).
        time.sleep(0.4)
        assert steady.call("after", "ping") == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert daemon.poll() is None
        steady.close()
    assert_clean_log(sock)


def test_a_client_that_never_reads_is_dropped_with_memory_bounded(base: Path) -> None:
    """Each ``readFile`` of an 8 MiB window answers ~8 MiB for ~150 bytes asked: 100 of them
    unread would queue 800 MiB. The per-connection output bound (64 MiB) drops the client
    instead, and other clients are served all along."""
    tree = project(base)
    (tree["pdf"] / "assets" / "big.txt").write_bytes(b"a" * (8 * 1024 * 1024))
    sock = base / "d.sock"
    with socket_daemon(sock, daemon_env(tree)) as daemon:
        steady = h.SocketClient(sock)
        cwd = os.fspath(tree["project"])
        steady.call(0, "skills.list", {"cwd": cwd})
        baseline = rss_bytes(daemon.pid)
        sampler = RssSampler(daemon.pid, interval=0.02)
        sampler.start()
        hog = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.connect(os.fspath(sock))
        asked = 100
        params = {"cwd": cwd, "name": "pdf-forms", "file": "assets/big.txt", "length": 2**23}
        hog.sendall(b"".join(h.request(i, "skills.readFile", params) for i in range(asked)))
        for i in range(20):  # served while the hog's replies pile up
            assert steady.call(f"p{i}", "ping")["result"] == {}
        # The daemon gives up on the hog: reading now drains what was in flight, then EOF.
        hog.settimeout(h.TIMEOUT)
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := hog.recv(1 << 20):
                received += len(chunk)
        hog.close()
        samples = sampler.stop()
        assert received < asked * 2**23 // 4, received  # far from all it asked for
        assert max(samples) - baseline < 400 * 1024 * 1024, (baseline, max(samples))
        assert steady.call("after", "ping")["result"] == {}
        steady.close()
    assert "peer is not reading" in daemon_log(sock)


# -- SIGTERM and SIGKILL -------------------------------------------------------------------------


class LoadClient(threading.Thread):
    """Keeps up to 8 requests (some slow) in flight until the daemon closes the connection,
    reading replies on a thread of its own as a real client does."""

    def __init__(self, index: int, sock: Path, cwd: str) -> None:
        super().__init__(daemon=True)
        self.index = index
        self.conn = h.SocketClient(sock)
        self.cwd = cwd
        self.sent: dict[str, str] = {}
        self.replies: list[dict[str, Any]] = []
        self.started: set[str] = set()  # slow requests the daemon reported working on
        self.tail = b""
        self.ended_by = ""
        self.error: BaseException | None = None
        self.room = threading.Semaphore(8)
        self.done = threading.Event()

    def run(self) -> None:
        reader = threading.Thread(target=self._read_until_eof, daemon=True)
        reader.start()
        methods = [
            ("skills.list", {"cwd": self.cwd}),
            ("skills.search", {"cwd": self.cwd, "query": "pdf"}),
            ("_test.sleep", {"seconds": 0.3, "steps": 3}),
            ("_test.spin", {"seconds": 0.3, "steps": 3}),
        ]
        n = 0
        with contextlib.suppress(OSError):  # the daemon closed: sending is over
            while not self.done.is_set():
                if not self.room.acquire(timeout=0.05):
                    continue
                method, params = methods[n % len(methods)]
                id_ = f"{self.index}-{n}"
                self.sent[id_] = method
                meta = {"_meta": {"progressToken": id_}} if method.startswith("_test") else {}
                self.conn.send(h.request(id_, method, {**params, **meta}))
                n += 1
        reader.join(h.TIMEOUT * 2)

    def _read_until_eof(self) -> None:
        try:
            while True:
                try:
                    message = self.conn.reader.message(timeout=h.TIMEOUT * 2)
                except (EOFError, ConnectionResetError) as exc:
                    # A close with requests still unread in the daemon's socket is a reset
                    # (the requests it never read are simply not answered).
                    self.ended_by = type(exc).__name__
                    self.tail = self.conn.reader._buf
                    return
                if message.get("method") == "$/progress":
                    self.started.add(message["params"]["token"])
                elif "id" in message:
                    self.replies.append(message)
                    self.room.release()
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()


def test_sigterm_under_load_answers_or_cancels_then_removes_the_socket(base: Path) -> None:
    tree = project(base)
    sock = base / "d.sock"
    with socket_daemon(sock, daemon_env(tree)) as daemon:
        clients = [LoadClient(i, sock, os.fspath(tree["project"])) for i in range(6)]
        for client in clients:
            client.start()
        time.sleep(1.0)  # the load itself: a second of six clients' requests before SIGTERM
        daemon.send_signal(signal.SIGTERM)
        for client in clients:
            client.join(h.TIMEOUT * 2)
        assert daemon.wait(h.TIMEOUT) == 0
    assert not sock.exists()
    for client in clients:
        assert client.error is None, repr(client.error)
        assert client.tail == b"", "the stream ended inside a message"
        ids = [r["id"] for r in client.replies]
        assert len(ids) == len(set(ids)), "a request was answered twice"
        assert set(ids) <= set(client.sent)
        for reply in client.replies:
            error = reply.get("error")
            assert error is None or error["code"] == -32800, reply  # a result, or cancelled
        assert client.started <= set(ids), "a request the daemon had started went unanswered"
        assert len(ids) >= 4
    assert_clean_log(sock)
    with socket_daemon(sock, daemon_env(tree)):  # the lock and the path are free again
        assert h.SocketClient(sock).call(1, "ping")["result"] == {}


def test_sigkill_then_restart_recovers_the_socket_and_keeps_the_state(base: Path) -> None:
    tree = project(base)
    sock = base / "d.sock"
    environ = daemon_env(tree)
    state = tree["tmp"] / "state" / "skillsd" / STATE_FILE
    names = ["pdf-forms", "commit-message"]
    for round_ in range(3):
        with socket_daemon(sock, environ) as daemon:
            client = h.SocketClient(sock)
            cwd = os.fspath(tree["project"])
            if round_:  # what the last daemon wrote before it died is what this one sees
                on_disk = msgspec.json.decode(state.read_bytes(), type=StateData)
                listed = client.call("l", "skills.list", {"cwd": cwd})["result"]
                disabled = {s["path"] for s in listed["skills"] if not s["enabled"]}
                assert disabled == set(on_disk.disabled)
                assert not [d for d in listed["diagnostics"] if d["code"] == "state.unreadable"]
            stop = threading.Event()
            wrote = threading.Event()

            def toggle(
                client: h.SocketClient = client,
                cwd: str = cwd,
                stop: threading.Event = stop,
                wrote: threading.Event = wrote,
            ) -> None:
                n = 0
                with contextlib.suppress(OSError, EOFError, TimeoutError):
                    while not stop.is_set():
                        params = {"cwd": cwd, "name": names[n % 2], "enabled": n % 3 == 0}
                        client.call(n, "skills.setEnabled", params)
                        wrote.set()
                        n += 1

            writer = threading.Thread(target=toggle, daemon=True)
            writer.start()
            # Killed while writes go on, after at least one landed (start-up time varies).
            assert wrote.wait(h.TIMEOUT)
            time.sleep(0.1 + 0.2 * round_)
            daemon.send_signal(signal.SIGKILL)  # no cleanup at all
            daemon.wait(h.TIMEOUT)
            stop.set()
            writer.join(h.TIMEOUT)
            client.close()
        assert sock.exists()  # left behind: the next daemon must recover it
        # Never torn: the file parses completely, whatever instant the kill hit.
        msgspec.json.decode(state.read_bytes(), type=StateData)
    with socket_daemon(sock, environ):
        client = h.SocketClient(sock)
        cwd = os.fspath(tree["project"])
        reply = client.call(
            "x", "skills.setEnabled", {"cwd": cwd, "name": "pdf-forms", "enabled": True}
        )
        assert reply["result"]["skill"]["enabled"] is True
        # A temp file a kill left behind is swept by the next write.
        assert [p.name for p in state.parent.iterdir() if p.name.endswith(".tmp")] == []


# -- the file system refuses ---------------------------------------------------------------------


def inspect_watch(client: Client) -> dict[str, Any]:
    watch: dict[str, Any] = client.ok("context.inspect", includeSkills=True)["skills"]["watch"]
    return watch


@pytest.mark.skipif(not ROOT, reason="needs root to exhaust the limits of a dedicated uid")
@pytest.mark.parametrize("kind", ["instances", "watches"])
def test_exhausted_inotify_falls_back_to_stat_validation_and_stays_correct(
    base: Path, kind: str
) -> None:
    tree = project(base)
    uid = find_free_uid()
    chown_tree(base, uid)
    with exhausted_inotify(uid, kind, base / "scratch"):
        daemon = ConfinedDaemon(daemon_env(tree), uid=uid)
        try:
            client = Client(daemon, tree["project"])
            before = {s["name"] for s in client.ok("skills.list")["skills"]}
            watch = inspect_watch(client)
            assert watch["mode"] == "stat", watch
            expected = "inotify instance limit" if kind == "instances" else "watch limit"
            assert expected in watch["reason"], watch
            # Without events the daemon checks the disk on every request: still exact.
            added = write_skill(tree["skills"], "added-now", "Appeared without an event.")
            os.lchown(added, uid, uid)
            after = {s["name"] for s in client.ok("skills.list")["skills"]}
            assert after == before | {"added-now"}
            skill_md = tree["pdf"] / "SKILL.md"
            skill_md.write_text(skill_md.read_text().replace("Fill and", "Refill and"))
            pdf = next(s for s in client.ok("skills.list")["skills"] if s["name"] == "pdf-forms")
            assert pdf["description"].startswith("Refill and")
            shutil.rmtree(added)
            assert "added-now" not in {s["name"] for s in client.ok("skills.list")["skills"]}
            assert client.ok("skills.load", name="pdf-forms")["body"]
        finally:
            daemon.kill()


def test_unreadable_folders_and_files_are_diagnosed_not_fatal(base: Path) -> None:
    tree = project(base)
    locked_dir = tree["skills"] / "locked"
    write_skill(locked_dir, "hidden", "Inside a folder nobody may list.")
    locked_md = write_skill(tree["skills"], "sealed", "Its SKILL.md is unreadable.") / "SKILL.md"
    secret_ref = tree["pdf"] / "references" / "private.md"
    secret_ref.write_text("private\n")
    private_sub = tree["pdf"] / "private"
    private_sub.mkdir()
    (private_sub / "x.md").write_text("x\n")
    for path in (locked_dir, locked_md, secret_ref, private_sub):
        path.chmod(0)
    daemon = ConfinedDaemon(daemon_env(tree), file_modes=True)
    try:
        client = Client(daemon, tree["project"])
        listed = client.ok("skills.list")
        assert "hidden" not in {s["name"] for s in listed["skills"]}
        assert "pdf-forms" in {s["name"] for s in listed["skills"]}
        assert "sealed" not in {s["name"] for s in listed["skills"]}
        # Both are scan warnings (the folder cannot be listed, the SKILL.md cannot be opened),
        # each naming the path and the OS's reason.
        unreadable = {
            d["path"]: d["message"]
            for d in listed["diagnostics"]
            if d["code"] == "discovery.unreadable"
        }
        assert set(unreadable) == {os.fspath(locked_dir), os.fspath(locked_md)}
        assert all("Permission denied" in m for m in unreadable.values())
        refused = client.err("skills.readFile", name="pdf-forms", file="references/private.md")
        assert refused["data"]["kind"] == "path_not_allowed"
        assert "Permission denied" in refused["message"]
        files = client.ok("skills.load", name="pdf-forms")["files"]
        assert "references/private.md" in files and not any(f.startswith("private/") for f in files)
        # Access restored (a chmod: no file is created or written): the skills show up without
        # a restart, and later edits inside the folder are seen too.
        locked_dir.chmod(0o755)
        locked_md.chmod(0o644)
        wait_for(client, lambda names: {"hidden", "sealed"} <= names, "the chmod went unseen")
        hidden_md = locked_dir / "hidden" / "SKILL.md"
        hidden_md.write_text(hidden_md.read_text().replace("name: hidden", "name: renamed"))
        os.rename(locked_dir / "hidden", locked_dir / "renamed")
        wait_for(client, lambda names: "renamed" in names, "an edit in the unlocked folder")
        assert client.ok("ping") == {}
    finally:
        daemon.kill()


def wait_for(client: Client, done: Callable[[set[str]], bool], what: str) -> None:
    """Poll ``skills.list`` until the set of skill names satisfies ``done`` (5 s at most: the
    watcher's debounce is 0.1 s)."""
    deadline = time.monotonic() + 5
    while not done({s["name"] for s in client.ok("skills.list")["skills"]}):
        assert time.monotonic() < deadline, f"never reflected: {what}"
        time.sleep(0.05)


@contextlib.contextmanager
def full_tmpfs(mount_point: Path) -> Iterator[None]:
    """A 64 KiB tmpfs at ``mount_point`` (root only), unmounted afterwards."""
    mount_point.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", os.fspath(mount_point)],
        capture_output=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", os.fspath(mount_point)], check=False)


@pytest.mark.parametrize("fault", ["file-size-limit", "disk-full", "read-only-directory"])
def test_a_refused_state_write_keeps_the_old_state_and_says_why(base: Path, fault: str) -> None:
    tree = project(base)
    environ = daemon_env(tree)
    state_root = tree["tmp"] / "state"
    with contextlib.ExitStack() as stack:
        if fault == "disk-full":
            if not ROOT:
                pytest.skip("mounting a tmpfs needs root")
            stack.enter_context(full_tmpfs(state_root))
        state_dir = state_root / "skillsd"
        state_dir.mkdir(parents=True)
        state = state_dir / STATE_FILE
        old = json.dumps({"version": 1, "disabled": ["/elsewhere/SKILL.md"], "permissions": {}})
        state.write_text(old + "\n")
        if fault == "disk-full":  # leave less room than the new state needs
            # Unbuffered, so closing has nothing left to flush into the full disk.
            with open(state_root / "filler", "wb", buffering=0) as fh, contextlib.suppress(OSError):
                while fh.write(b"\0" * 512):
                    pass
        if fault == "read-only-directory":
            (state_dir / (STATE_FILE + ".lock")).touch()
            state_dir.chmod(0o555)
        limit = 64 if fault == "file-size-limit" else -1
        daemon = ConfinedDaemon(environ, file_modes=True, max_file_bytes=limit)
        stack.callback(daemon.kill)
        client = Client(daemon, tree["project"])
        before = state.read_bytes()
        failed = client.err("skills.setEnabled", name="pdf-forms", enabled=False)
        assert failed["code"] == 1014 and failed["data"]["kind"] == "state_write_failed"
        reason = {
            "file-size-limit": "File too large",
            "disk-full": "No space left on device",
            "read-only-directory": "Permission denied",
        }[fault]
        assert os.fspath(state) in failed["message"] and reason in failed["message"], failed
        assert "previous state is unchanged" in failed["message"]
        assert state.read_bytes() == before
        assert [p.name for p in state_dir.iterdir() if p.name.endswith(".tmp")] == []
        client.ok("session.open", sessionId="s")
        remembered = client.err(
            "permissions.remember", sessionId="s", rule="Read", decision="allow", persist="always"
        )
        assert remembered["data"]["kind"] == "state_write_failed"
        # Nothing half-applied: the skill is still enabled, the answer not remembered.
        pdf = next(s for s in client.ok("skills.list")["skills"] if s["name"] == "pdf-forms")
        assert pdf["enabled"] is True
        assert client.ok("permissions.check", tool="Read", input="x")["decision"] == "ask"
        if fault == "read-only-directory":
            state_dir.chmod(0o755)
            assert client.ok("skills.setEnabled", name="pdf-forms", enabled=False)
            assert json.loads(state.read_text())["disabled"][-1].endswith("pdf-forms/SKILL.md")
