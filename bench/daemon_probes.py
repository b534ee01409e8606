"""The real ``skillsd serve`` on stdio, measured over the protocol as an editor would use it: cold
and warm ``skills.list``, a list after one edit, edit-to-``skills.changed`` latency,
``skills.search`` round trips, the daemon's peak RSS, and ``ping`` throughput beside the MCP SDK.

Every daemon is spawned by ``stdio_peer.spawn_isolated`` (it sees only the corpus) and initialised
before anything is timed. Times are round trips: from writing the request to the last byte of
its answer (the client's decoding of a large answer is not timed).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from bench.baselines import MCP_INITIALIZE, start_echo_floor, start_mcp_ping_server
from bench.contender import BenchUnavailable, Outcome, Prepare, Prepared, latencies
from bench.corpus import Corpus, OneEdit, search_queries
from bench.stdio_peer import CLIENT_INFO, WIRE_TIMEOUT, StdioPeer, spawn_isolated

#: How long to wait for ``skills.changed`` after an edit before calling it missed (the target
#: is 300 ms; a daemon that fell back to stat-validation never sends one on its own).
CHANGED_TIMEOUT = 2.0
#: Edits per run of the edit-to-``skills.changed`` latency contender.
EDITS_PER_RUN = 5
#: How long ``d_changed_fresh`` waits before calling an edit lost (a miss, not a slow answer).
LOST_TIMEOUT = 5.0
#: ``ping`` requests per run: one at a time, and written in one burst.
PINGS_SEQUENTIAL = 1000
PINGS_BURST = 2000


def start_skillsd(corpus: Corpus, opts: argparse.Namespace, *, ping: bool = False) -> StdioPeer:
    """A fresh ``skillsd serve``, initialised (the ``initialize`` handshake done, untimed)."""
    peer = spawn_isolated(opts.serve_command, corpus, opts)
    return peer.handshake({"clientInfo": CLIENT_INFO}, "initialized", ping=ping)


#: Per corpus root, the daemon that warm contenders share (one cold catalog per N, not per case).
_SHARED: dict[str, tuple[StdioPeer, dict[str, Any]]] = {}
#: Per corpus root, the shared daemon's RSS (MB) after ``initialize``, before any catalog.
_BASE_RSS: dict[str, float] = {}


def shared_skillsd(corpus: Corpus, opts: argparse.Namespace) -> tuple[StdioPeer, dict[str, Any]]:
    """The shared daemon for this corpus and its first (cold) ``skills.list`` result."""
    if corpus.root not in _SHARED:
        peer = start_skillsd(corpus, opts)
        try:
            if sys.platform == "linux":
                _BASE_RSS[corpus.root] = peer.memory_mb()[1]
            listing = peer.call("skills.list")
        except BaseException:
            peer.close()
            raise
        _SHARED[corpus.root] = (peer, listing)
    return _SHARED[corpus.root]


def close_shared_daemons() -> None:
    while _SHARED:
        _root, (peer, _listing) = _SHARED.popitem()
        peer.close()
    close_bridges()


def _watch_mode(peer: StdioPeer) -> str:
    watch = peer.call("context.inspect")["skills"]["watch"]
    return str(watch["mode"]) + (f" ({watch['reason']})" if watch.get("reason") else "")


def _list_outcome(seconds: float, line: bytes, detail: str | None = None) -> Outcome:
    result = msgspec.json.decode(line)["result"]
    return Outcome.counted(
        len(result["skills"]), len(result["errors"]), seconds=seconds, detail=detail
    )


def prepare_d_cold(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """The first ``skills.list`` of a fresh daemon, over the wire (to the answer's last byte).

    A new daemon is started and initialised before each run (untimed); the run is the request.
    It includes the scan, the parses, watching every root, and encoding the answer.
    """
    state: dict[str, StdioPeer | None] = {"peer": None}

    def fresh() -> None:
        stop()
        state["peer"] = start_skillsd(corpus, opts)

    def run() -> Outcome:
        peer = state["peer"]
        assert peer is not None
        seconds, line = peer.request("skills.list")
        return _list_outcome(seconds, line, f"answer {len(line) / 1e6:.1f} MB")

    def stop() -> None:
        if state["peer"] is not None:
            state["peer"].close()
            state["peer"] = None

    return Prepared(run, before_each=fresh, cleanup=stop)


def prepare_d_warm(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.list`` served from the daemon's cache (nothing changed since the last one)."""
    peer, _ = shared_skillsd(corpus, opts)
    mode = _watch_mode(peer)

    def run() -> Outcome:
        seconds, line = peer.request("skills.list")
        decode_start = time.perf_counter()
        outcome = _list_outcome(seconds, line)
        decode = time.perf_counter() - decode_start
        outcome.detail = (
            f"answer {len(line) / 1e6:.1f} MB (the client's decode, {decode * 1e3:.0f} ms, "
            f"not timed); watch mode: {mode}"
        )
        return outcome

    return Prepared(run)


def prepare_d_warm_scope(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A cached ``skills.list`` filtered to ``scope: "user"`` (none: the corpus is an extra
    root): the same request path without encoding 10 000 skills, for comparison."""
    peer, _ = shared_skillsd(corpus, opts)

    def run() -> Outcome:
        seconds, line = peer.request("skills.list", {"scope": "user"})
        return _list_outcome(seconds, line, f"answer {len(line) / 1e3:.0f} kB (load errors only)")

    return Prepared(run)


def _valid_skill(listing: dict[str, Any], fraction: float) -> dict[str, Any]:
    skills: list[dict[str, Any]] = listing["skills"]
    if not skills:
        raise BenchUnavailable("the corpus has no valid skill to edit")
    return skills[int(len(skills) * fraction)]


def prepare_d_relist(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.list`` after one SKILL.md was saved (atomically) and ``skills.changed`` came.

    The edit and the wait for the notification are untimed; the run is the next list. The
    notification must name exactly the edited skill in ``changed`` (and nothing else).
    """
    peer, listing = shared_skillsd(corpus, opts)
    skill = _valid_skill(listing, 0.4)
    editor = OneEdit(skill["path"])
    state: dict[str, Any] = {"params": None}

    def edit() -> None:
        peer.notifications.clear()
        editor.edit()
        try:
            _, state["params"] = peer.wait_notification("skills.changed", CHANGED_TIMEOUT)
        except TimeoutError:
            state["params"] = None

    def run() -> Outcome:
        seconds, line = peer.request("skills.list")
        outcome = _list_outcome(seconds, line)
        params = state["params"]
        if params is None:
            outcome.problem = f"no skills.changed within {CHANGED_TIMEOUT:g} s of the edit"
        elif params["changed"] != [skill["id"]] or params["added"] or params["removed"]:
            outcome.problem = f"skills.changed did not name exactly the edited skill: {params}"
        else:
            outcome.parsed = 1  # the one edited file, and nothing else, changed
        return outcome

    return Prepared(run, before_each=edit, cleanup=editor.restore)


def prepare_d_delta(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.list {sinceGeneration}`` after one SKILL.md was saved and ``skills.changed``
    came (docs/embedding.md): the answer must be a delta naming exactly the edited skill."""
    peer, listing = shared_skillsd(corpus, opts)
    skill = _valid_skill(listing, 0.45)
    editor = OneEdit(skill["path"])
    state: dict[str, Any] = {"since": None}

    def edit() -> None:
        peer.notifications.clear()
        editor.edit()
        try:
            _, params = peer.wait_notification("skills.changed", CHANGED_TIMEOUT)
        except TimeoutError:
            state["since"] = None
            return
        # The generation just before this one edit (asking with a full list would measure,
        # and hold in memory, an 8.6 MB answer the delta exists to avoid).
        state["since"] = params["generation"] - 1

    def run() -> Outcome:
        if state["since"] is None:
            return Outcome.counted(0, 1, problem="no skills.changed after the edit")
        seconds, line = peer.request("skills.list", {"sinceGeneration": state["since"]})
        delta = msgspec.json.decode(line)["result"].get("delta")
        if delta is None or [s["id"] for s in delta["changed"]] != [skill["id"]]:
            return Outcome.counted(0, 1, seconds=seconds, problem=f"not the one edit: {delta}")
        return Outcome.counted(1, seconds=seconds, detail=f"answer {len(line) / 1e3:.0f} kB")

    return Prepared(run, before_each=edit, cleanup=editor.restore)


#: The prompt budget of the relevance cases: 2 % of a 200 000-token context (as Codex sizes it).
PROMPT_BUDGET = {"contextWindow": 200_000, "percent": 2}
#: (query, expected skill) pairs of the quality figure.
QUALITY_PAIRS = 20
#: ``skills.listing`` round trips per run.
LISTING_ROUNDS = 50


def _quality_pairs(listing: dict[str, Any], seed: int) -> list[tuple[str, str]]:
    """``QUALITY_PAIRS`` (query, expected skill name) pairs: a skill whose name is unique, and
    four words of its description, as a user would put the task."""
    rng = random.Random(seed)
    counts = Counter(s["name"] for s in listing["skills"])
    unique = sorted(
        (s for s in listing["skills"] if counts[s["name"]] == 1 and len(s["description"]) > 40),
        key=lambda s: s["id"],
    )
    pairs = []
    for skill in rng.sample(unique, QUALITY_PAIRS):
        words = [w.strip(".,;:") for w in skill["description"].split() if len(w) > 3]
        pairs.append((" ".join(rng.sample(words, min(4, len(words)))), skill["name"]))
    return pairs


def _described(text: str, name: str) -> bool:
    marker = f"<name>{name}</name>"
    at = text.find(marker)
    return at >= 0 and text.find("<description>", at) == at + len(marker) + len("\n    ")


def prepare_d_prompt_query(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.prompt`` with a ``query`` and a 2 % budget of a 200k context, round trips over
    the quality pairs' queries."""
    peer, listing = shared_skillsd(corpus, opts)
    queries = [q for q, _ in _quality_pairs(listing, corpus.seed)]
    peer.request("skills.prompt", {"budget": PROMPT_BUDGET, "query": queries[0]})  # warm index

    def prompt(query: str) -> tuple[float, bool]:
        seconds, line = peer.request("skills.prompt", {"budget": PROMPT_BUDGET, "query": query})
        return seconds, b'"omitted"' in line

    return Prepared(lambda: latencies(queries, prompt))


def prepare_d_listing(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.listing {agent: claude-code}`` round trips, the corpus being the user's Claude
    Code skills (``~/.claude/skills`` links to it): every skill in Claude Code's listing."""
    peer = start_skillsd(corpus, opts)
    home = Path(opts.temp_dirs[-1]) / "home"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "skills").symlink_to(corpus.root, target_is_directory=True)
    first = peer.call("skills.listing", {"agent": "claude-code"})  # the cold catalog, untimed
    seen = sum(1 for e in first["entries"] if not e.get("bundled"))
    # Nearly all: the corpus's same-named skills are one entry (the one listed first).
    if seen < 0.95 * corpus.expected_valid:
        peer.close()
        raise RuntimeError(f"skills.listing saw {seen} of {corpus.expected_valid} skills")

    def listing(_: int) -> tuple[float, bool]:
        seconds, line = peer.request("skills.listing", {"agent": "claude-code"})
        return seconds, b'"modelled":true' in line

    return Prepared(lambda: latencies(range(LISTING_ROUNDS), listing), cleanup=peer.close)


def prepare_quality(with_query: bool) -> Prepare:
    """How often the expected skill keeps its description under the budget (percent of the
    pairs), with the request as ``query`` or without."""

    def prepare(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
        peer, listing = shared_skillsd(corpus, opts)
        pairs = _quality_pairs(listing, corpus.seed)

        def run() -> Outcome:
            kept = 0
            for query, name in pairs:
                params: dict[str, Any] = {"budget": PROMPT_BUDGET}
                if with_query:
                    params["query"] = query
                result = msgspec.json.decode(peer.request("skills.prompt", params)[1])["result"]
                kept += _described(result["text"], name)
            return Outcome.counted(
                kept, len(pairs) - kept, value=100.0 * kept / len(pairs), operations=len(pairs)
            )

        return Prepared(run)

    return prepare


# -- the MCP bridge (`skillsd mcp`) beside skillsd's own protocol -------------------------------

#: Per corpus root, one `skillsd mcp` that the MCP contenders share (its catalog built once).
_BRIDGES: dict[str, StdioPeer] = {}


def shared_bridge(corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    """`skillsd mcp` on the corpus, after the MCP handshake and one warm-up tool call."""
    if corpus.root not in _BRIDGES:
        try:
            import mcp  # noqa: F401  (the optional extra)
        except ImportError:
            raise BenchUnavailable("skipped: pip install 'skillsd[mcp]'") from None
        argv = [*opts.serve_command[:-1], "mcp"]
        peer = spawn_isolated(argv, corpus, opts).handshake(
            MCP_INITIALIZE, "notifications/initialized"
        )
        peer.call("tools/call", {"name": "skill_search", "arguments": {"query": "warm up"}})
        _BRIDGES[corpus.root] = peer
    return _BRIDGES[corpus.root]


def close_bridges() -> None:
    while _BRIDGES:
        _BRIDGES.popitem()[1].close()


def _search_calls(
    corpus: Corpus, opts: argparse.Namespace, method: str, peer: StdioPeer
) -> Prepared:
    _daemon, listing = shared_skillsd(corpus, opts)
    skills = listing["skills"]
    queries = search_queries(
        [s["name"] for s in skills], [s["description"] for s in skills], corpus.seed
    )

    def call(query: str) -> tuple[float, bool]:
        params = {"name": "skill_search", "arguments": {"query": query}}
        seconds, line = peer.request(method, params)
        return seconds, b"match" in line

    return Prepared(lambda: latencies(queries, call))


def prepare_d_tool_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``tools.call skill_search`` on skillsd's own protocol (the same 200 queries)."""
    peer, _listing = shared_skillsd(corpus, opts)
    return _search_calls(corpus, opts, "tools.call", peer)


def prepare_mcp_tool_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """MCP ``tools/call skill_search`` through `skillsd mcp` (the same 200 queries)."""
    return _search_calls(corpus, opts, "tools/call", shared_bridge(corpus, opts))


def prepare_mcp_changed(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Edit-to-``notifications/resources/list_changed`` through `skillsd mcp`."""
    peer = shared_bridge(corpus, opts)
    _daemon, listing = shared_skillsd(corpus, opts)
    editor = OneEdit(_valid_skill(listing, 0.7)["path"])
    time.sleep(1.0)  # the bridge sets its watches up after its first answer

    def run() -> Outcome:
        samples: list[float] = []
        for _ in range(EDITS_PER_RUN):
            _drain(peer)  # the previous edit's notifications are not this one's
            start = time.perf_counter()
            editor.edit()
            try:
                arrived, _params = peer.wait_notification(
                    "notifications/resources/list_changed", CHANGED_TIMEOUT
                )
            except TimeoutError:
                return Outcome.counted(len(samples), 1, samples=samples, problem="no list_changed")
            samples.append(arrived - start)
            time.sleep(0.05)
        return Outcome.counted(EDITS_PER_RUN, samples=samples)

    return Prepared(run, cleanup=editor.restore)


def _drain(peer: StdioPeer, quiet: float = 0.3) -> None:
    """Read what the server still sends until ``quiet`` seconds pass without a message."""
    while True:
        try:
            peer.line(time.monotonic() + quiet)
        except TimeoutError:
            break
    peer.notifications.clear()


def prepare_d_changed(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Edit-to-``skills.changed`` latency: from the atomic save (the rename) to the
    notification's arrival, ``EDITS_PER_RUN`` edits per run, one at a time."""
    peer, listing = shared_skillsd(corpus, opts)
    editor = OneEdit(_valid_skill(listing, 0.6)["path"])

    def run() -> Outcome:
        samples: list[float] = []
        for _ in range(EDITS_PER_RUN):
            peer.notifications.clear()
            start = time.perf_counter()
            editor.edit()
            try:
                arrived, _ = peer.wait_notification("skills.changed", CHANGED_TIMEOUT)
            except TimeoutError:
                # Counted as the timeout; the next edits would miss too, so they are not tried.
                samples.append(CHANGED_TIMEOUT)
                return Outcome.counted(
                    len(samples) - 1,
                    1,
                    samples=samples,
                    problem=f"an edit got no skills.changed within {CHANGED_TIMEOUT:g} s",
                )
            samples.append(arrived - start)
            time.sleep(0.05)  # let the daemon settle, as between two saves by a person
        return Outcome.counted(EDITS_PER_RUN, samples=samples)

    return Prepared(run, cleanup=editor.restore)


def prepare_d_changed_fresh(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """An edit right after a fresh daemon's first two ``skills.list``: from the atomic save to
    ``skills.changed``, while the daemon may still be setting its watches up and rescanning what
    changed meanwhile. A new daemon per run (started, initialised and listed twice, untimed);
    each run edits another skill. No notification within ``LOST_TIMEOUT`` is a lost edit."""
    state: dict[str, Any] = {"peer": None, "editor": None}
    runs = 0

    def fresh() -> None:
        nonlocal runs
        stop()
        peer = start_skillsd(corpus, opts)
        state["peer"] = peer
        listing = peer.call("skills.list")
        peer.call("skills.list")
        runs += 1
        state["editor"] = OneEdit(_valid_skill(listing, (0.15 + 0.17 * runs) % 1.0)["path"])

    def run() -> Outcome:
        peer, editor = state["peer"], state["editor"]
        start = time.perf_counter()
        editor.edit()
        try:
            arrived, _ = peer.wait_notification("skills.changed", LOST_TIMEOUT)
        except TimeoutError:
            return Outcome.counted(
                0,
                1,
                samples=[LOST_TIMEOUT],
                problem=f"the edit got no skills.changed within {LOST_TIMEOUT:g} s (lost)",
            )
        return Outcome.counted(1, samples=[arrived - start])

    def stop() -> None:
        if state["editor"] is not None:
            state["editor"].restore()
            state["editor"] = None
        if state["peer"] is not None:
            state["peer"].close()
            state["peer"] = None

    return Prepared(run, before_each=fresh, cleanup=stop)


def prepare_d_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.search`` round trips over the wire, the same 200 queries as ``search``."""
    peer, listing = shared_skillsd(corpus, opts)
    skills = listing["skills"]
    queries = search_queries(
        [s["name"] for s in skills], [s["description"] for s in skills], corpus.seed
    )
    peer.call("skills.search", {"query": queries[0]})  # the daemon builds its index once

    def search(query: str) -> tuple[float, bool]:
        seconds, line = peer.request("skills.search", {"query": query})
        return seconds, b'"count":0,' not in line

    return Prepared(lambda: latencies(queries, search))


#: ``skills.invoke`` calls per run (each a different skill, with two arguments).
INVOKES_PER_RUN = 200


def prepare_d_commands(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.commands`` round trips: every skill of the corpus is a slash command."""
    peer, _listing = shared_skillsd(corpus, opts)
    _seconds, first = peer.request("skills.commands")
    count = len(msgspec.json.decode(first)["result"]["commands"])
    detail = f"{count:,} commands, answer {len(first) / 1e6:.1f} MB"

    def commands(_n: int) -> tuple[float, bool]:
        seconds, line = peer.request("skills.commands")
        return seconds, b'"commands":[]' not in line

    def run() -> Outcome:
        outcome = latencies(range(20), commands)
        outcome.detail = detail
        return outcome

    return Prepared(run)


def prepare_d_invoke(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.invoke`` round trips: ``/name 42 "two words"`` on 200 different skills (each
    reads its SKILL.md, substitutes, lists dynamic context and checks the policy)."""
    peer, listing = shared_skillsd(corpus, opts)
    # Names one skill has (a shared name is an ambiguous_skill error, not an invocation).
    counts = Counter(s["name"] for s in listing["skills"])
    names = sorted(name for name, n in counts.items() if n == 1)
    step = max(1, len(names) // INVOKES_PER_RUN)
    picked = names[::step][:INVOKES_PER_RUN]

    def invoke(name: str) -> tuple[float, bool]:
        seconds, line = peer.request("skills.invoke", {"command": f'/{name} 42 "two words"'})
        return seconds, b'"result"' in line

    return Prepared(lambda: latencies(picked, invoke))


#: Spawns per run of the start-up contenders.
SPAWNS_PER_RUN = 10


def prepare_spawn(floor: bool) -> Prepare:
    """Spawn to the answer of the first ``ping`` (what an editor that starts the daemon on
    demand waits for), or, as the floor, spawn to exit of ``python -c pass``."""

    def prepare(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
        def once() -> tuple[float, bool]:
            if floor:
                started = time.perf_counter()
                ok = subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0
                return time.perf_counter() - started, ok
            started = time.perf_counter()
            peer = spawn_isolated(opts.serve_command, corpus, opts)
            try:
                _seconds, line = peer.request("ping")
                return time.perf_counter() - started, b'"result":{}' in line
            finally:
                peer.close()

        return Prepared(lambda: latencies(range(SPAWNS_PER_RUN), lambda _n: once()))

    return prepare


def prepare_d_rss(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Peak RSS (``VmHWM``) of the shared daemon holding the catalog, after every case before
    this one used it (lists, edits, searches: its search index is built)."""
    if sys.platform != "linux":
        raise BenchUnavailable("peak RSS is read from /proc/PID/status (Linux only)")
    peer, listing = shared_skillsd(corpus, opts)
    skills, errors = len(listing["skills"]), len(listing["errors"])
    base = _BASE_RSS.get(corpus.root, 0.0)
    mode = _watch_mode(peer)  # after all the edits: is the daemon still watching?

    def run() -> Outcome:
        peak, now = peer.memory_mb()
        return Outcome.counted(
            skills,
            errors,
            value=peak,
            detail=f"current RSS {now:.1f} MB; after initialize {base:.1f} MB; "
            f"watch mode now: {mode}",
        )

    return Prepared(run)


# -- ping: the same client loop against skillsd, the MCP SDK's server and the echo floor ---------

#: Each server, started and (except the floor) initialised, having answered one ``ping``.
PING_SERVERS: dict[str, Callable[[Corpus, argparse.Namespace], StdioPeer]] = {
    "skillsd": lambda corpus, opts: start_skillsd(corpus, opts, ping=True),
    "mcp": start_mcp_ping_server,
    "floor": start_echo_floor,
}


def _ping_lines(peer: StdioPeer, count: int) -> bytes:
    first = peer.reserve_ids(count)
    return b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (first + i) for i in range(count)
    )


def prepare_ping(server: str, burst: bool) -> Prepare:
    """``ping`` requests over stdio: one at a time (send, wait for the answer, repeat), or all
    written at once by a second thread while this one reads the answers (a pipelined burst)."""

    def prepare(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
        peer = PING_SERVERS[server](corpus, opts)
        count = PINGS_BURST if burst else PINGS_SEQUENTIAL

        def pong_outcome(lines: list[bytes]) -> Outcome:
            ok = sum(1 for line in lines if b'"result":{}' in line)
            return Outcome.counted(ok, count - ok, operations=count)

        def sequential() -> Outcome:
            lines = []
            deadline = time.monotonic() + WIRE_TIMEOUT * 6
            for request in _ping_lines(peer, count).splitlines(keepends=True):
                peer.write(request)
                lines.append(peer.line(deadline))
            return pong_outcome(lines)

        def pipelined() -> Outcome:
            data = _ping_lines(peer, count)
            writer = threading.Thread(target=peer.write, args=(data,))
            deadline = time.monotonic() + WIRE_TIMEOUT * 6
            writer.start()
            lines = [peer.line(deadline) for _ in range(count)]
            writer.join()
            return pong_outcome(lines)

        return Prepared(pipelined if burst else sequential, cleanup=peer.close)

    return prepare
