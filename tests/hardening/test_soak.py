"""Soak: concurrent socket clients over a tree a writer process keeps changing.

At least 8 clients pipeline a mix of ``skills.list``/``search``/``load``/``readFile``,
``permissions.check``, ``agents.list`` and long one-word searches for a bounded time while a
separate process creates, edits, renames and deletes skills underneath, and keeps making and
removing hostile files (docs/security.md): a FIFO where a ``SKILL.md`` or an agent file goes,
symlink loops, folders whose names are not UTF-8. Afterwards: no error reply but the kinds a
vanishing skill explains, every reply matched to exactly one request, the daemon's cached catalog
equal to a fresh scan done here in the test process, every subscriber told about the final
generation through ``skills.changed``, and the daemon's RSS bounded.

Short by default (8 clients x 4 s). ``SKILLSD_LONG=1`` (``make soak``) runs
``SKILLSD_SOAK_SECONDS`` (default 120) with ``SKILLSD_SOAK_CLIENTS`` (default 16) clients and
also checks that RSS stops growing. Requests/s and p50/p99 latency are printed, and written as
JSON to ``$SKILLSD_SOAK_REPORT`` when set.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.skill_catalog import list_result
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.policy.fs_effective_config import ConfigSource
from tests.hardening.fuzzing import LONG
from tests.hardening.processes import (
    RssSampler,
    daemon_log,
    daemon_log_size,
    short_tempdir,
    socket_daemon,
)
from tests.support import daemons as h
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_skill

SECONDS = float(os.environ.get("SKILLSD_SOAK_SECONDS", "120")) if LONG else 4.0
CLIENTS = int(os.environ.get("SKILLSD_SOAK_CLIENTS", "16")) if LONG else 8
PIPELINE = 4  # requests each client keeps in flight
STABLE_SKILLS = 30
#: What a skill vanishing or being rewritten under a request can explain; nothing else may fail.
EXPECTED_KINDS = {"skill_not_found", "resource_not_found", "invalid_skill"}
#: Far above the daemon's working set over these trees (about 60 MB); a leak crosses it.
RSS_BOUND = 250 * 1024 * 1024
#: stderr of a healthy daemon under churn: a few warning lines at most.
LOG_BOUND = 16 * 1024


# -- the writer process --------------------------------------------------------------------------


def _skill_text(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nSteps for {name}.\n"


def writer_main(root: str, seconds: float, seed: int, counts: Any) -> None:
    """Create, edit (in place and by atomic rename), rename and delete skills under ``root``
    until ``seconds`` have passed. Runs in its own process, like an editor or a git checkout."""
    rng = random.Random(seed)
    live: list[str] = []
    serial = 0
    done: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        action = rng.choice(
            ["create", "create", "edit", "atomic", "rename", "delete", "hostile", "unhostile"]
        )
        if action in ("edit", "atomic", "rename", "delete") and not live:
            action = "create"
        if action == "hostile":
            serial += 1
            _make_hostile(root, rng.choice(["fifo", "loop", "badname", "agent"]), serial)
        elif action == "unhostile":
            _remove_hostile(root, rng)
        elif action == "create":
            serial += 1
            name = f"churn-{serial}"
            os.makedirs(os.path.join(root, name, "references"), exist_ok=True)
            with open(os.path.join(root, name, "references", "r.md"), "w") as fh:
                fh.write("reference\n")
            with open(os.path.join(root, name, "SKILL.md"), "w") as fh:
                fh.write(_skill_text(name, f"Churn skill {serial} for testing."))
            live.append(name)
        elif action == "edit":
            name = rng.choice(live)
            with open(os.path.join(root, name, "SKILL.md"), "w") as fh:
                fh.write(_skill_text(name, f"Edited in place {rng.random()}."))
        elif action == "atomic":
            name = rng.choice(live)
            temp = os.path.join(root, name, ".SKILL.md.tmp")
            with open(temp, "w") as fh:
                fh.write(_skill_text(name, f"Saved atomically {rng.random()}."))
            os.replace(temp, os.path.join(root, name, "SKILL.md"))
        elif action == "rename":
            name = rng.choice(live)
            serial += 1
            new = f"churn-{serial}"
            os.rename(os.path.join(root, name), os.path.join(root, new))
            with open(os.path.join(root, new, "SKILL.md"), "w") as fh:
                fh.write(_skill_text(new, f"Renamed from {name}."))
            live[live.index(name)] = new
        else:
            name = rng.choice(live)
            shutil.rmtree(os.path.join(root, name))
            live.remove(name)
        done[action] += 1
        time.sleep(rng.uniform(0.002, 0.02))
    counts.update(done)


def _make_hostile(root: str, kind: str, serial: int) -> None:
    """One hostile thing under ``root`` (or the project's agent folder beside it)."""
    base = os.path.join(root, f"hostile-{serial}")
    if kind == "fifo":  # a FIFO where SKILL.md goes: reading it would block
        os.mkdir(base)
        os.mkfifo(os.path.join(base, "SKILL.md"))
    elif kind == "loop":  # a folder holding links back to itself and to the root
        os.mkdir(base)
        os.symlink(base, os.path.join(base, "self"))
        os.symlink(root, os.path.join(base, "back"))
    elif kind == "badname":  # a skill in a folder whose name is not UTF-8
        folder = os.fsencode(base) + b"-\xff"
        os.mkdir(folder)
        with open(os.path.join(folder, b"SKILL.md"), "wb") as fh:
            fh.write(_skill_text(f"hostile-{serial}", "Latin-1 folder.").encode())
    else:  # a FIFO agent file: agents.list must not hang on it
        agents = os.path.join(os.path.dirname(os.path.dirname(root)), "agents")
        os.makedirs(agents, exist_ok=True)
        os.mkfifo(os.path.join(agents, f"fifo-{serial}.md"))


def _remove_hostile(root: str, rng: random.Random) -> None:
    broot = os.fsencode(root)
    found = [n for n in os.listdir(broot) if n.startswith(b"hostile-")]
    if found:
        shutil.rmtree(os.path.join(broot, rng.choice(found)))


# -- the clients ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one client saw."""

    sent: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    unexpected: list[Any] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)  # generations announced to this client


class SoakClient(threading.Thread):
    """Keeps ``PIPELINE`` requests in flight with unique ids and matches every reply."""

    def __init__(self, index: int, sock: Path, cwd: str, stop: threading.Event) -> None:
        super().__init__(name=f"soak-{index}", daemon=True)
        self.index = index
        self.conn = h.SocketClient(sock)
        self.cwd = cwd
        self.stop_event = stop
        self.tally = Tally()
        self.rng = random.Random(index)
        self.pending: dict[str, tuple[float, str]] = {}
        self.failure: BaseException | None = None

    def params(self, method: str) -> dict[str, Any]:
        skill = f"stable-{self.rng.randrange(STABLE_SKILLS)}"
        if self.rng.random() < 0.3:
            skill = f"churn-{self.rng.randrange(1, 40)}"  # may not exist (any more)
        return {
            "skills.list": {"cwd": self.cwd},
            "skills.search": {"cwd": self.cwd, "query": self.rng.choice(["stable", skill, "x"])},
            "skills.load": {"cwd": self.cwd, "name": skill},
            "skills.readFile": {"cwd": self.cwd, "name": skill, "file": "references/r.md"},
            "permissions.check": {"cwd": self.cwd, "tool": "Bash", "input": "git status"},
            "agents.list": {"cwd": self.cwd},
            # One long word: its typo matching cost grew with the cube of its length once.
            "long search": {"cwd": self.cwd, "query": "stable" * 160},
        }[method]

    def send_one(self, first: bool) -> None:
        methods = ["skills.list", "skills.search", "skills.load", "skills.readFile"]
        extra = ["permissions.check", "agents.list", "long search"]
        method = "skills.list" if first else self.rng.choice([*methods, *extra])
        self.tally.sent += 1
        id_ = f"c{self.index}-{self.tally.sent}"
        self.pending[id_] = (time.perf_counter(), method)
        wire = "skills.search" if method == "long search" else method
        self.conn.send(h.request(id_, wire, self.params(method)))

    def receive(self, timeout: float = h.TIMEOUT) -> None:
        message = self.conn.reader.message(timeout)
        if "id" not in message:
            if message.get("method") == "skills.changed":
                self.tally.changed.append(message["params"]["generation"])
            return
        sent = self.pending.pop(message["id"], None)
        if sent is None:
            self.tally.unexpected.append(("unmatched or duplicate reply", message))
            return
        self.tally.latencies.append(time.perf_counter() - sent[0])
        error = message.get("error")
        if error is not None:
            kind = (error.get("data") or {}).get("kind", error.get("code"))
            self.tally.errors[str(kind)] += 1
            if kind not in EXPECTED_KINDS:
                self.tally.unexpected.append((sent[1], message))
        elif not isinstance(message.get("result"), dict):
            self.tally.unexpected.append((sent[1], message))

    def run(self) -> None:
        try:
            self.send_one(first=True)
            while not self.stop_event.is_set():
                while len(self.pending) < PIPELINE:
                    self.send_one(first=False)
                self.receive()
            while self.pending:
                self.receive()
        except BaseException as exc:  # reported by the test, with the thread's name
            self.failure = exc

    def drain(self, quiet: float = 0.3) -> None:
        """Read what is still queued (late ``skills.changed``) until ``quiet`` s of silence."""
        while True:
            try:
                self.receive(timeout=quiet)
            except TimeoutError:
                return


# -- the test ------------------------------------------------------------------------------------


def fresh_scan(tree: dict[str, Path], environ: dict[str, str]) -> list[tuple[Any, ...]]:
    """The catalog of the project as a from-scratch scan in this process sees it."""
    cwd = os.path.realpath(tree["project"])
    config = ConfigSource(environ).for_cwd(cwd)[0]
    plan = compute_roots(cwd, config, home=environ["HOME"], env=environ)
    return catalog_rows(msgspec.to_builtins(list_result(build_catalog(plan, config))))


def catalog_rows(listed: dict[str, Any]) -> list[tuple[Any, ...]]:
    skills = [
        ("skill", s["id"], s["name"], s["description"], s["path"], s["mtimeMs"], s["size"])
        for s in listed["skills"]
    ]
    errors = [
        ("error", e["path"], tuple(d["code"] for d in e["diagnostics"])) for e in listed["errors"]
    ]
    return skills + errors


def settle(sock: Path, cwd: str) -> dict[str, Any]:
    """The catalog once the watcher has applied everything (generation unchanged for 1 s)."""
    client = h.SocketClient(sock)

    def listed(id_: str) -> dict[str, Any]:
        client.send(h.request(id_, "skills.list", {"cwd": cwd}))
        while True:  # skills.changed may arrive before the reply: this client listed too
            message = client.reader.message()
            if message.get("id") == id_:
                assert "result" in message, message
                return dict(message["result"])

    try:
        last = listed("settle-0")
        for n in range(1, 30):
            time.sleep(0.5)
            now = listed(f"settle-{n}")
            if now["generation"] == last["generation"] and n > 1:
                return now
            last = now
        raise AssertionError("the catalog never stopped changing after the writer stopped")
    finally:
        client.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.xdist_group("serial")
def test_soak(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
    tree = make_project(tmp_path)
    churn_root = tree["skills"] / "churn"
    churn_root.mkdir()
    for i in range(STABLE_SKILLS):
        skill = write_skill(tree["skills"] / "stable", f"stable-{i}", f"Stable skill {i}.")
        (skill / "references").mkdir()
        (skill / "references" / "r.md").write_text("r\n")
    environ = daemon_env(tree)
    environ["PYTHONFAULTHANDLER"] = "1"  # a crash leaves every thread's stack in the log
    cwd = os.fspath(tree["project"])
    with short_tempdir() as run, socket_daemon(run / "d.sock", environ) as daemon:
        sampler = RssSampler(daemon.pid)
        sampler.start()
        stop = threading.Event()
        clients = [SoakClient(i, run / "d.sock", cwd, stop) for i in range(CLIENTS)]
        for client in clients:
            client.start()
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager:
            counts = manager.dict()
            writer = ctx.Process(
                target=writer_main, args=(os.fspath(churn_root), SECONDS, 1, counts)
            )
            started = time.perf_counter()
            writer.start()
            writer.join(SECONDS + 60)
            assert writer.exitcode == 0, "the writer process failed"
            writes = dict(counts)
        stop.set()
        for client in clients:
            client.join(h.TIMEOUT + 5)
        elapsed = time.perf_counter() - started
        for client in clients:
            assert client.failure is None, (
                f"{client.name}: {client.failure!r}; daemon exit status {daemon.poll()}; "
                f"daemon log: {daemon_log(run / 'd.sock')}"
            )
            assert not client.is_alive()

        final = settle(run / "d.sock", cwd)
        for client in clients:
            client.drain()
            client.conn.close()
        samples = sampler.stop()
        log, log_bytes = daemon_log(run / "d.sock"), daemon_log_size(run / "d.sock")

    tallies = [c.tally for c in clients]
    unexpected = [u for t in tallies for u in t.unexpected]
    assert not unexpected, unexpected[:5]
    cached, fresh = catalog_rows(final), fresh_scan(tree, environ)
    assert cached == fresh, (
        f"only in the daemon's catalog: {sorted(set(cached) - set(fresh))}\n"
        f"only in a fresh scan: {sorted(set(fresh) - set(cached))}\n"
        f"daemon log: {log}"
    )
    assert {s["name"] for s in final["skills"]} >= {f"stable-{i}" for i in range(STABLE_SKILLS)}
    for client in clients:
        assert client.tally.changed, f"{client.name} never got skills.changed"
        assert max(client.tally.changed) == final["generation"], client.name
    assert samples and max(samples) < RSS_BOUND, f"daemon RSS peaked at {max(samples)} bytes"
    # The log must not grow with the churn (watchdog's per-event warnings once added ~300 KB
    # in 4 s here, megabytes over a large tree).
    assert log_bytes < LOG_BOUND, log
    if LONG:  # a leak shows as growth after warm-up, well within the bound
        warm = samples[len(samples) // 4]
        assert samples[-1] - warm < 64 * 1024 * 1024, (warm, samples[-1])

    latencies = [x for t in tallies for x in t.latencies]
    errors: Counter[str] = sum((t.errors for t in tallies), Counter())
    report = {
        "clients": CLIENTS,
        "seconds": round(elapsed, 2),
        "requests": len(latencies),
        "requests_per_second": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "expected_errors": dict(errors),
        "writer_actions": writes,
        "final_generation": final["generation"],
        "rss_peak_mb": round(max(samples) / 2**20, 1),
        "daemon_log_bytes": log_bytes,
    }
    if path := os.environ.get("SKILLSD_SOAK_REPORT"):
        Path(path).write_text(json.dumps(report, indent=2) + "\n")
    with capsys.disabled():
        print(f"\nsoak: {json.dumps(report)}")
    assert sum(writes.values()) > 10 and len(latencies) > CLIENTS * 10


def test_soak_client_rejects_strays() -> None:
    """The matcher is strict: a reply to no pending request, or an unexpected error kind, is
    recorded as a failure (so the soak cannot pass by ignoring them)."""
    left, right = socket.socketpair()
    client = SoakClient.__new__(SoakClient)
    client.tally, client.pending = Tally(), {"a": (time.perf_counter(), "skills.load")}
    client.conn = h.SocketClient.__new__(h.SocketClient)
    client.conn.sock = left
    client.conn.reader = h.LineReader(lambda: left.recv(65536), left.fileno())
    right.sendall(
        b'{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"boom"}}\n'
        b'{"jsonrpc":"2.0","id":"a","result":{}}\n'
    )
    client.receive()
    client.receive()
    assert [u[0] for u in client.tally.unexpected] == [
        "skills.load",
        "unmatched or duplicate reply",
    ]
    left.close()
    right.close()
