"""skillsd benchmark: proves (or disproves) the performance targets of SPEC 12 and the issue.

    python bench/run.py [--sizes 1000,10000] [--repeat 5] [--json OUT] [--profile]

For each size N it generates (or reuses, under ``bench/out/``) a synthetic corpus with
``bench/gen_corpus.py`` and primes the OS page cache by reading every file once. Each contender
then gets one untimed warm-up run and ``--repeat`` timed runs, interleaved (a, b, c, skillsd, a,
b, ...) so drift on a shared machine hits them all alike; the median is reported.

The page cache is warm for every contender equally: nobody pays cold-disk cost. "Cold" for
skillsd means a catalog built from nothing (no previous catalog, no cache) in a process whose
imports are done, which is what the daemon does on the first ``skills.list`` for a cwd.

Everything is a table: ``CONTENDERS`` (what is timed, and how its number is summarised: median
wall time, p50 of per-operation latencies, or a measured value such as peak RSS) and ``CASES``
(which contenders run together and the targets they must meet, each naming its baseline and its
source). Adding a case means writing a ``prepare_*`` function and appending a Contender and a Case.

Core-level contenders call ``skillsd.core`` in this process. Daemon-level ones (``d_*``, ``ping_*``)
spawn the real ``skillsd serve`` on stdio (and, for ``ping``, the MCP Python SDK's stdio server from
``bench/mcp_ping_server.py``) and talk JSON-RPC to it over pipes, exactly as an editor would.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import re
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_corpus  # a sibling script, not a package

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "out"
FIRST_READ = 4096
MAX_FRONTMATTER = 64 * 1024
SKIPPED_DIRS = frozenset({".git", "node_modules"})


# -- the corpus --------------------------------------------------------------------------------


@dataclass
class Corpus:
    """A generated corpus on disk, with what its manifest promises."""

    root: str
    n: int
    seed: int
    expected_valid: int
    expected_invalid: int


def walk_skill_dirs(root: str) -> list[str]:
    """Every directory holding a SKILL.md, found with ``os.walk`` the way discovery does it.

    A skill directory is not descended into and ``.git``/``node_modules`` are skipped, so the
    baselines list the same directories the skillsd scan lists (except resource folders, which
    only skillsd opens, to count a skill's resources).
    """
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "SKILL.md" in filenames:
            found.append(dirpath)
            dirnames.clear()
        else:
            dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
    return found


def prime_page_cache(root: str) -> int:
    """Read every file under ``root`` once so no contender pays for a cold disk; returns bytes."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                while chunk := fh.read(1 << 20):
                    total += len(chunk)
    return total


# -- contenders --------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one run produced: counts to check that every contender saw the same corpus, plus the
    raw numbers of contenders that are not summarised by their wall time."""

    ok: int
    failed: int
    #: Skills actually processed; lower than N when a contender runs on a subset.
    processed: int
    #: Per-operation latencies in seconds (``p50`` contenders).
    samples: list[float] | None = None
    #: A measured value in the contender's unit (``value`` contenders, e.g. MB).
    value: float | None = None
    #: SKILL.md files parsed by the run (incremental rebuilds must parse exactly one).
    parsed: int | None = None
    #: Context for the report (e.g. the RSS of the interpreter before the catalog was built).
    detail: str | None = None
    #: The timed part, when the runner times itself: e.g. a request's round trip without the
    #: client decoding the answer to check it. None: the whole run is timed.
    seconds: float | None = None
    #: Operations in a timed run (e.g. pings), for a rate in the notes.
    operations: int | None = None
    #: Something wrong with this run (reported under the tables as a PROBLEM line).
    problem: str | None = None


Runner = Callable[[], Outcome]


@dataclass
class Prepared:
    """A contender ready to run: ``run`` is timed; the hooks around it are not.

    ``scale`` (when the runner covers only part of the corpus) extrapolates the time per skill;
    ``before_each`` runs before every run (e.g. editing a file); ``cleanup`` once at the end.
    """

    run: Runner
    scale: float | None = None
    before_each: Callable[[], None] | None = None
    cleanup: Callable[[], None] | None = None


Metric = Literal["time", "p50", "value"]


@dataclass(frozen=True)
class Contender:
    """Something measured. ``metric``: ``time`` = median wall time of a run; ``p50`` = median of
    the per-operation latencies of all runs; ``value`` = median of a value each run measures."""

    key: str
    label: str
    prepare: Callable[[Corpus, argparse.Namespace], Prepared]
    metric: Metric = "time"
    unit: str = "s"
    #: Whether a run sees the whole corpus (its counts are checked against the manifest).
    whole_corpus: bool = True


def prepare_walk(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    def run() -> Outcome:
        dirs = walk_skill_dirs(corpus.root)
        return Outcome(ok=len(dirs), failed=0, processed=len(dirs))

    return Prepared(run)


def prepare_a(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(a) walk + read the first 4 KiB of every SKILL.md, nothing else."""

    def run() -> Outcome:
        count = 0
        for directory in walk_skill_dirs(corpus.root):
            with open(os.path.join(directory, "SKILL.md"), "rb") as fh:
                fh.read(FIRST_READ)
            count += 1
        return Outcome(ok=count, failed=0, processed=count)

    return Prepared(run)


# A fence line: "---" plus optional trailing blanks, alone on its line.
_OPENING = re.compile(rb"---[ \t]*\r?\n")
_CLOSING = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)


def frontmatter_bytes(data: bytes) -> bytes | None:
    """The frontmatter of a SKILL.md prefix, or None when it is absent or not closed in ``data``."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    opening = _OPENING.match(data)
    if opening is None:
        return None
    closing = _CLOSING.search(data, opening.end())
    return None if closing is None else data[opening.end() : closing.start()]


def prepare_b(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(b) walk + read 4 KiB (more only when the frontmatter is longer) + CBaseLoader."""
    loader = yaml.CBaseLoader

    def run() -> Outcome:
        ok = failed = 0
        for directory in walk_skill_dirs(corpus.root):
            with open(os.path.join(directory, "SKILL.md"), "rb") as fh:
                data = fh.read(FIRST_READ)
                fm = frontmatter_bytes(data)
                if fm is None and len(data) == FIRST_READ:
                    fm = frontmatter_bytes(data + fh.read(MAX_FRONTMATTER - FIRST_READ))
            if fm is None:
                failed += 1
                continue
            try:
                value = yaml.load(fm, Loader=loader)  # CBaseLoader: every scalar a string
            except yaml.YAMLError:
                failed += 1
                continue
            if isinstance(value, dict):
                ok += 1
            else:
                failed += 1
        return Outcome(ok=ok, failed=failed, processed=ok + failed)

    return Prepared(run)


def prepare_c(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(c) ``skills_ref.read_properties`` on every skill dir (or every k-th, see --c-subset).

    Full run: walk + read_properties, timed together. Subset run: read_properties over every
    k-th skill directory (found outside the timing), and the report gives ``walk median +
    subset median * N / subset size``: the walk is paid once and the per-skill cost, which does
    not depend on the other skills, is extrapolated linearly.
    """
    from skills_ref import SkillError, read_properties  # type: ignore[import-untyped]

    def props(dirs: Sequence[str]) -> Outcome:
        ok = failed = 0
        for directory in dirs:
            try:
                read_properties(Path(directory))
                ok += 1
            except (SkillError, ValueError):  # ValueError covers UnicodeDecodeError
                failed += 1
        return Outcome(ok=ok, failed=failed, processed=ok + failed)

    limit = opts.c_subset
    if limit <= 0 or corpus.n <= limit:
        return Prepared(lambda: props(walk_skill_dirs(corpus.root)))
    dirs = walk_skill_dirs(corpus.root)
    step = -(-len(dirs) // limit)  # ceil: at most `limit` dirs, spread over the whole tree
    subset = dirs[::step]
    return Prepared(lambda: props(subset), scale=len(dirs) / len(subset))


def skillsd_plan(corpus: Corpus) -> tuple[Any, Any]:
    """The config and root plan of a catalog holding only the corpus (an extra root).

    ``discovery.auto`` is off, the environment is empty (so ``$AGENT_SKILLS_PATH`` cannot add
    roots) and, because one root holds the whole corpus, the per-root directory cap (2000 by
    default) is raised to let every skill directory and category folder be listed.
    """
    from skillsd.core.config import Config, DiscoveryConfig, RootsConfig
    from skillsd.core.discovery import compute_roots

    config = Config(
        discovery=DiscoveryConfig(auto=False, max_dirs=max(10 * corpus.n, 1000)),
        roots=RootsConfig(extra=(corpus.root,)),
    )
    plan = compute_roots(corpus.root, config, home=corpus.root, env={})
    return config, plan


def prepare_scan(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """skillsd's discovery scan alone (walk, resource counts), as a cold build runs it."""
    from skillsd.core.discovery import scan_plan

    config, plan = skillsd_plan(corpus)

    def run() -> Outcome:
        # A first build skips the per-file stat: it fstat's each SKILL.md when it opens it.
        found = scan_plan(plan, config, stat_files=False).skills
        return Outcome(ok=len(found), failed=0, processed=len(found))

    return Prepared(run)


def _cold_catalog(corpus: Corpus) -> Runner:
    from skillsd.core.catalog import build_catalog
    from skillsd.core.discovery import compute_roots

    config, _ = skillsd_plan(corpus)

    def run() -> Outcome:
        # Root planning is part of a cold skills.list, so it is inside the timing.
        plan = compute_roots(corpus.root, config, home=corpus.root, env={})
        catalog = build_catalog(plan, config)
        # A build pauses the cyclic GC; the young-generation pass it deferred is charged here.
        gc.collect(0)
        skills, errors = len(catalog.skills), len(catalog.errors)
        return Outcome(
            ok=skills, failed=errors, processed=skills + errors, parsed=catalog.stats.parsed
        )

    return run


def prepare_skillsd(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A cold skillsd catalog with the core API: plan, scan, read + validate each SKILL.md."""
    return Prepared(_cold_catalog(corpus))


class _OneEdit:
    """Edits one SKILL.md the way an editor saves it: write a temporary file, rename it over.

    Each edit alternates between the original bytes plus one line and the original bytes, so
    the size, mtime and inode change every time. ``restore`` puts back the original bytes and
    mtime, so the corpus (and its manifest) stays valid for the next run.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.original = Path(path).read_bytes()
        st = os.stat(path)
        self._times = (st.st_atime_ns, st.st_mtime_ns)
        self.edits = 0

    def edit(self) -> None:
        self.edits += 1
        data = self.original
        if self.edits % 2:
            data += f"\nEdited by the benchmark ({self.edits}).\n".encode()
        # A hidden name: the temporary file never shows up in the skill's resource counts.
        tmp = os.path.join(os.path.dirname(self.path), ".SKILL.md.bench-save")
        Path(tmp).write_bytes(data)
        os.replace(tmp, self.path)

    def restore(self) -> None:
        Path(self.path).write_bytes(self.original)
        os.utime(self.path, ns=self._times)


#: Per corpus root, the file the core-level edit contenders edit (all the same one, so that each
#: of them sees exactly one changed file against the catalog it built).
_CORE_EDITORS: dict[str, _OneEdit] = {}


def _core_editor(corpus: Corpus, catalog: Any) -> _OneEdit:
    if corpus.root not in _CORE_EDITORS:
        if not catalog.skills:
            raise BenchUnavailable("the corpus has no valid skill to edit")
        _CORE_EDITORS[corpus.root] = _OneEdit(catalog.skills[len(catalog.skills) // 2].path)
    return _CORE_EDITORS[corpus.root]


def prepare_relist(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """What the daemon does on a file event (core level): ``refresh_catalog`` with the path.

    Before each run one valid skill's SKILL.md gets an atomic save (untimed); the run applies
    the event to the catalog built before the first edit. It must re-list one directory and
    re-parse exactly that file (``stats.parsed == 1``).
    """
    from skillsd.core.catalog import build_catalog, refresh_catalog

    config, plan = skillsd_plan(corpus)
    previous = build_catalog(plan, config)
    editor = _core_editor(corpus, previous)

    def run() -> Outcome:
        catalog = refresh_catalog(previous, [editor.path])
        skills, errors = len(catalog.skills), len(catalog.errors)
        return Outcome(
            ok=skills, failed=errors, processed=skills + errors, parsed=catalog.stats.parsed
        )

    return Prepared(run, before_each=editor.edit, cleanup=editor.restore)


def prepare_rescan(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A full rescan reusing every unchanged parse: ``build_catalog(previous=...)`` after one
    edit. The daemon does this only for structural events (a skill added or removed, a root
    appearing) or a watcher fallback; shown for comparison with ``relist``."""
    from skillsd.core.catalog import build_catalog

    config, plan = skillsd_plan(corpus)
    previous = build_catalog(plan, config)
    editor = _core_editor(corpus, previous)

    def run() -> Outcome:
        catalog = build_catalog(plan, config, previous=previous)
        skills, errors = len(catalog.skills), len(catalog.errors)
        return Outcome(
            ok=skills, failed=errors, processed=skills + errors, parsed=catalog.stats.parsed
        )

    return Prepared(run, before_each=editor.edit, cleanup=editor.restore)


def search_queries(names: Sequence[str], descriptions: Sequence[str], seed: int) -> list[str]:
    """A deterministic mix of what users and models type into ``skills.search``.

    40 % words from a description, 20 % exact names, 15 % name prefixes, 15 % names with a typo
    (two letters swapped), 10 % Japanese or single generic words.
    """
    rng = random.Random(seed)
    queries = []
    for _ in range(200):
        roll = rng.random()
        name = rng.choice(names)
        if roll < 0.4:
            words = [w.strip(".,") for w in rng.choice(descriptions).split() if len(w) > 3]
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
        elif roll < 0.6:
            queries.append(name)
        elif roll < 0.75:
            queries.append(name[: max(3, len(name) * 3 // 5)])
        elif roll < 0.9:
            token = max(name.split("-"), key=len)
            i = rng.randrange(max(1, len(token) - 1))
            queries.append(token[:i] + token[i + 1 : i + 2] + token[i : i + 1] + token[i + 2 :])
        else:
            queries.append(rng.choice(("レビュー", "デプロイ", "review", "deploy", "pdf forms")))
    return queries


def prepare_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``SearchIndex.search`` latency over a built index (the daemon caches one per catalog)."""
    from skillsd.core.catalog import build_catalog
    from skillsd.core.search import SearchIndex

    config, plan = skillsd_plan(corpus)
    catalog = build_catalog(plan, config)
    index = SearchIndex(catalog.skills)
    queries = search_queries(
        [s.name for s in catalog.skills], [s.description for s in catalog.skills], corpus.seed
    )
    clock = time.perf_counter

    def run() -> Outcome:
        samples = []
        hits = 0
        for query in queries:
            start = clock()
            result = index.search(query)
            samples.append(clock() - start)
            hits += result.count > 0
        return Outcome(ok=hits, failed=len(queries) - hits, processed=len(queries), samples=samples)

    return Prepared(run)


# Runs in a fresh interpreter: peak RSS after imports, then after building the catalog and its
# search index (what the daemon holds for one cwd). VmHWM (the high-water mark of this process's
# address space, in kB) is used, not ru_maxrss: Linux carries ru_maxrss over from the parent
# across fork + exec, so a child of this large bench process would report the parent's peak.
_RSS_SCRIPT = """
import json, sys
def hwm():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
sys.path.insert(0, sys.argv[1])
import run as bench
from skillsd.core.catalog import build_catalog
from skillsd.core.search import SearchIndex
corpus = bench.Corpus(sys.argv[2], int(sys.argv[3]), 0, 0, 0)
config, plan = bench.skillsd_plan(corpus)
base = hwm()
catalog = build_catalog(plan, config)
index = SearchIndex(catalog.skills)
peak = hwm()
print(json.dumps({"base_kib": base, "peak_kib": peak, "skills": len(catalog.skills),
                  "errors": len(catalog.errors)}))
"""


def prepare_rss(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Peak RSS of a fresh process holding the cold catalog and its search index (MB)."""
    if sys.platform != "linux":
        raise BenchUnavailable("peak RSS is read from /proc/self/status (Linux only)")

    def run() -> Outcome:
        out = subprocess.run(
            [sys.executable, "-c", _RSS_SCRIPT, str(BENCH_DIR), corpus.root, str(corpus.n)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        data = json.loads(out.strip().splitlines()[-1])
        skills, errors = data["skills"], data["errors"]
        return Outcome(
            ok=skills,
            failed=errors,
            processed=skills + errors,
            value=data["peak_kib"] / 1024,
            detail=f"interpreter + imports alone: {data['base_kib'] / 1024:.1f} MB",
        )

    return Prepared(run)


# -- daemon-level contenders -------------------------------------------------------------------
#
# The real ``skillsd serve`` on stdio, spawned with an empty HOME (so no real user skill leaks
# in), a config file raising ``discovery.maxDirs`` (via ``SKILLSD_CONFIG``), the repo root pinned
# to an empty directory (``SKILLSD_ROOT``) and the corpus as its extra root
# (``AGENT_SKILLS_PATH``). Every client loop below is the same for skillsd and the MCP server.

#: How long to wait for one answer before calling the daemon stuck.
WIRE_TIMEOUT = 10.0
#: How long to wait for ``skills.changed`` after an edit before calling it missed (the target
#: is 300 ms; a daemon that fell back to stat-validation never sends one on its own).
CHANGED_TIMEOUT = 2.0
#: Edits per run of the edit-to-``skills.changed`` latency contender.
EDITS_PER_RUN = 5
#: ``ping`` requests per run: one at a time, and written in one burst.
PINGS_SEQUENTIAL = 1000
PINGS_BURST = 2000


class StdioPeer:
    """A JSON-RPC server spawned on pipes, spoken to one newline-delimited message at a time.

    Notifications that arrive while waiting for an answer are kept in ``notifications``.
    """

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already searched for a newline
        self._next_id = 0
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self._stderr: list[bytes] = []
        # Drain stderr so a chatty server never blocks on a full pipe.
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-20]  # only the tail is ever shown

    def stderr_tail(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")[-1500:]

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view) :]

    def line(self, deadline: float) -> bytes:
        """The next message line (without its newline)."""
        while True:
            end = self._buf.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buf)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.argv[-1]}: no message in time")
            ready, _, _ = select.select([self._out], [], [], remaining)
            if ready:
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise BenchUnavailable(
                        f"{' '.join(self.argv[1:])} exited: {self.stderr_tail() or 'no stderr'}"
                    )
                self._buf += chunk

    def new_id(self) -> int:
        return self.reserve_ids(1)

    def reserve_ids(self, count: int) -> int:
        """Reserve ``count`` consecutive request ids; return the first."""
        first = self._next_id + 1
        self._next_id += count
        return first

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, bytes]:
        """Send one request; return (seconds until its answer's last byte, the answer line)."""
        rid = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        data = json.dumps(message).encode() + b"\n"
        marker = f'"id":{rid},'.encode()
        deadline = time.monotonic() + WIRE_TIMEOUT
        start = time.perf_counter()
        self.write(data)
        while True:
            line = self.line(deadline)
            if line.startswith(b'{"jsonrpc":"2.0","method"') or b'"id"' not in line[:64]:
                self.notifications.append((time.perf_counter(), json.loads(line)))
                continue
            elapsed = time.perf_counter() - start
            if marker not in line[:64]:
                raise BenchUnavailable(f"unexpected answer to {method}: {line[:200]!r}")
            return elapsed, line

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A request whose decoded ``result`` is returned (an error is fatal for the contender)."""
        _, line = self.request(method, params)
        answer = json.loads(line)
        if "error" in answer:
            raise BenchUnavailable(f"{method} failed: {answer['error']}")
        return answer["result"]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.write(json.dumps(message).encode() + b"\n")

    def wait_notification(self, method: str, timeout: float) -> tuple[float, dict[str, Any]]:
        """The next ``method`` notification: (perf_counter when it arrived, its params)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (when, message) in enumerate(self.notifications):
                if message.get("method") == method:
                    del self.notifications[i]
                    return when, message.get("params") or {}
            line = self.line(deadline)
            self.notifications.append((time.perf_counter(), json.loads(line)))

    def memory_mb(self) -> tuple[float, float]:
        """(peak RSS ``VmHWM``, current RSS ``VmRSS``) of the server process, in MB."""
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmHWM", "VmRSS"))  # type: ignore[return-value]

    def close(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _daemon_env(corpus: Corpus, opts: argparse.Namespace) -> tuple[dict[str, str], str]:
    """The environment and cwd for a ``skillsd serve`` that sees only the corpus."""
    base = Path(tempfile.mkdtemp(prefix="skillsd-bench-daemon-"))
    opts.temp_dirs.append(str(base))
    home, cwd = base / "home", base / "cwd"
    home.mkdir()
    cwd.mkdir()
    config = base / "config.toml"
    config.write_text(f"[discovery]\nmaxDirs = {max(10 * corpus.n, 1000)}\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLSD_", "XDG_")) and k != "AGENT_SKILLS_PATH"
    }
    env.update(
        HOME=str(home),
        SKILLSD_CONFIG=str(config),
        SKILLSD_ROOT=str(cwd),
        AGENT_SKILLS_PATH=corpus.root,
    )
    return env, str(cwd)


def _start_skillsd(corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    """A fresh ``skillsd serve``, initialised (the ``initialize`` handshake done, untimed)."""
    env, cwd = _daemon_env(corpus, opts)
    peer = StdioPeer(opts.serve_command, env, cwd)
    try:
        peer.call("initialize", {"clientInfo": {"name": "skillsd-bench", "version": "1"}})
        peer.notify("initialized")
    except BaseException:
        peer.close()
        raise
    return peer


#: Per corpus root, the daemon that warm contenders share (one cold catalog per N, not per case).
_SHARED: dict[str, tuple[StdioPeer, dict[str, Any]]] = {}
#: Per corpus root, the shared daemon's RSS (MB) after ``initialize``, before any catalog.
_BASE_RSS: dict[str, float] = {}


def _shared_skillsd(corpus: Corpus, opts: argparse.Namespace) -> tuple[StdioPeer, dict[str, Any]]:
    """The shared daemon for this corpus and its first (cold) ``skills.list`` result."""
    if corpus.root not in _SHARED:
        peer = _start_skillsd(corpus, opts)
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


def _watch_mode(peer: StdioPeer) -> str:
    watch = peer.call("context.inspect")["skills"]["watch"]
    return str(watch["mode"]) + (f" ({watch['reason']})" if watch.get("reason") else "")


def _list_outcome(seconds: float, line: bytes, detail: str | None = None) -> Outcome:
    result = msgspec.json.decode(line)["result"]
    skills, errors = len(result["skills"]), len(result["errors"])
    return Outcome(
        ok=skills, failed=errors, processed=skills + errors, seconds=seconds, detail=detail
    )


def prepare_d_cold(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """The first ``skills.list`` of a fresh daemon, over the wire (to the answer's last byte).

    A new daemon is started and initialised before each run (untimed); the run is the request.
    It includes the scan, the parses, watching every root, and encoding the answer.
    """
    state: dict[str, StdioPeer | None] = {"peer": None}

    def fresh() -> None:
        stop()
        state["peer"] = _start_skillsd(corpus, opts)

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
    peer, _ = _shared_skillsd(corpus, opts)
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
    peer, _ = _shared_skillsd(corpus, opts)

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
    peer, listing = _shared_skillsd(corpus, opts)
    skill = _valid_skill(listing, 0.4)
    editor = _OneEdit(skill["path"])
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


def prepare_d_changed(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Edit-to-``skills.changed`` latency: from the atomic save (the rename) to the
    notification's arrival, ``EDITS_PER_RUN`` edits per run, one at a time."""
    peer, listing = _shared_skillsd(corpus, opts)
    editor = _OneEdit(_valid_skill(listing, 0.6)["path"])

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
                return Outcome(
                    ok=len(samples) - 1,
                    failed=1,
                    processed=len(samples),
                    samples=samples,
                    problem=f"an edit got no skills.changed within {CHANGED_TIMEOUT:g} s",
                )
            samples.append(arrived - start)
            time.sleep(0.05)  # let the daemon settle, as between two saves by a person
        return Outcome(ok=EDITS_PER_RUN, failed=0, processed=EDITS_PER_RUN, samples=samples)

    return Prepared(run, cleanup=editor.restore)


def prepare_d_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``skills.search`` round trips over the wire, the same 200 queries as ``search``."""
    peer, listing = _shared_skillsd(corpus, opts)
    skills = listing["skills"]
    queries = search_queries(
        [s["name"] for s in skills], [s["description"] for s in skills], corpus.seed
    )
    peer.call("skills.search", {"query": queries[0]})  # the daemon builds its index once

    def run() -> Outcome:
        samples = []
        hits = 0
        for query in queries:
            seconds, line = peer.request("skills.search", {"query": query})
            samples.append(seconds)
            hits += b'"count":0,' not in line
        return Outcome(ok=hits, failed=len(queries) - hits, processed=len(queries), samples=samples)

    return Prepared(run)


def prepare_d_rss(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Peak RSS (``VmHWM``) of the shared daemon holding the catalog, after every case before
    this one used it (lists, edits, searches: its search index is built)."""
    if sys.platform != "linux":
        raise BenchUnavailable("peak RSS is read from /proc/PID/status (Linux only)")
    peer, listing = _shared_skillsd(corpus, opts)
    skills, errors = len(listing["skills"]), len(listing["errors"])
    base = _BASE_RSS.get(corpus.root, 0.0)
    mode = _watch_mode(peer)  # after all the edits: is the daemon still watching?

    def run() -> Outcome:
        peak, now = peer.memory_mb()
        return Outcome(
            ok=skills,
            failed=errors,
            processed=skills + errors,
            value=peak,
            detail=f"current RSS {now:.1f} MB; after initialize {base:.1f} MB; "
            f"watch mode now: {mode}",
        )

    return Prepared(run)


# ``ping`` throughput: the same client loop against skillsd and the MCP SDK's stdio server.

_PING_SERVERS: dict[str, tuple[dict[str, Any], str]] = {
    # server -> (initialize params, the "initialized" notification's method)
    "skillsd": ({"clientInfo": {"name": "skillsd-bench", "version": "1"}}, "initialized"),
    "mcp": (
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "skillsd-bench", "version": "1"},
        },
        "notifications/initialized",
    ),
}


# The floor: a server that answers every line it reads with a fixed pong, no JSON parsing, no
# event loop. Nothing speaking JSON-RPC over the same pipes can be faster.
_ECHO_SERVER = """
import os
while data := os.read(0, 65536):
    os.write(1, b'{"jsonrpc":"2.0","id":0,"result":{}}\\n' * data.count(b"\\n"))
"""


def _ping_peer(server: str, corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    if server == "floor":
        env, cwd = _daemon_env(corpus, opts)
        return StdioPeer([sys.executable, "-c", _ECHO_SERVER], env, cwd)
    if server == "mcp":
        try:
            import mcp  # noqa: F401  (only to know the server script can run)
        except ImportError:
            raise BenchUnavailable("skipped: pip install mcp") from None
        env, cwd = _daemon_env(corpus, opts)
        peer = StdioPeer([sys.executable, str(BENCH_DIR / "mcp_ping_server.py")], env, cwd)
    else:
        env, cwd = _daemon_env(corpus, opts)
        peer = StdioPeer(opts.serve_command, env, cwd)
    params, initialized = _PING_SERVERS[server]
    try:
        peer.call("initialize", params)
        peer.notify(initialized)
        peer.call("ping")
    except BaseException:
        peer.close()
        raise
    return peer


def _ping_lines(peer: StdioPeer, count: int) -> bytes:
    first = peer.reserve_ids(count)
    return b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (first + i) for i in range(count)
    )


def prepare_ping(server: str, burst: bool) -> Callable[[Corpus, argparse.Namespace], Prepared]:
    """``ping`` requests over stdio: one at a time (send, wait for the answer, repeat), or all
    written at once by a second thread while this one reads the answers (a pipelined burst)."""

    def prepare(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
        peer = _ping_peer(server, corpus, opts)
        count = PINGS_BURST if burst else PINGS_SEQUENTIAL

        def pong_outcome(lines: list[bytes]) -> Outcome:
            ok = sum(1 for line in lines if b'"result":{}' in line)
            return Outcome(ok=ok, failed=count - ok, processed=count, operations=count)

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


class BenchUnavailable(Exception):
    """A contender cannot run here (missing API or platform); reported, not fatal."""


CONTENDERS: dict[str, Contender] = {
    c.key: c
    for c in (
        Contender("walk", "os.walk only (finding SKILL.md)", prepare_walk),
        Contender("a", "(a) os.walk + read first 4 KiB", prepare_a),
        Contender("b", "(b) (a) + frontmatter + CBaseLoader", prepare_b),
        Contender("c", "(c) skills-ref read_properties", prepare_c),
        Contender("scan", "skillsd discovery scan only", prepare_scan),
        Contender("skillsd", "skillsd cold catalog", prepare_skillsd),
        Contender("relist", "skillsd refresh_catalog after 1 edit (core)", prepare_relist),
        Contender("rescan", "skillsd full rescan after 1 edit (core)", prepare_rescan),
        Contender("search", "skillsd search p50 (core index)", prepare_search, metric="p50"),
        Contender("rss", "skillsd peak RSS, catalog + index (core)", prepare_rss, "value", "MB"),
        Contender("d_cold", "daemon: cold skills.list", prepare_d_cold),
        Contender("d_warm", "daemon: warm skills.list (cached)", prepare_d_warm),
        Contender(
            "d_warm_scope",
            "daemon: warm skills.list, scope=user (0 skills)",
            prepare_d_warm_scope,
            whole_corpus=False,
        ),
        Contender("d_relist", "daemon: skills.list after 1 edit", prepare_d_relist),
        Contender(
            "d_changed",
            "daemon: edit -> skills.changed p50",
            prepare_d_changed,
            metric="p50",
            whole_corpus=False,
        ),
        Contender("d_search", "daemon: skills.search p50", prepare_d_search, metric="p50"),
        Contender("d_rss", "daemon: peak RSS holding the catalog", prepare_d_rss, "value", "MB"),
        Contender(
            "ping_skillsd",
            f"skillsd: {PINGS_SEQUENTIAL} pings, one at a time",
            prepare_ping("skillsd", burst=False),
            whole_corpus=False,
        ),
        Contender(
            "ping_mcp",
            f"MCP SDK: {PINGS_SEQUENTIAL} pings, one at a time",
            prepare_ping("mcp", burst=False),
            whole_corpus=False,
        ),
        Contender(
            "ping_floor",
            f"floor (echo, no JSON-RPC): {PINGS_SEQUENTIAL} pings, one at a time",
            prepare_ping("floor", burst=False),
            whole_corpus=False,
        ),
        Contender(
            "burst_skillsd",
            f"skillsd: {PINGS_BURST} pings, pipelined",
            prepare_ping("skillsd", burst=True),
            whole_corpus=False,
        ),
        Contender(
            "burst_mcp",
            f"MCP SDK: {PINGS_BURST} pings, pipelined",
            prepare_ping("mcp", burst=True),
            whole_corpus=False,
        ),
    )
}


# -- cases and targets -------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One promise about contender ``subject``.

    kinds: ``within`` (subject <= bound x baseline), ``faster`` (baseline >= bound x subject),
    ``at_most`` (subject <= bound, in the subject's unit; no baseline).
    """

    subject: str
    kind: Literal["within", "faster", "at_most"]
    bound: float
    source: str
    baseline: str | None = None

    def describe(self) -> str:
        if self.kind == "within":
            return f"{self.subject} <= {self.bound:g}x {self.baseline}"
        if self.kind == "faster":
            return f"{self.subject} >= {self.bound:g}x faster than {self.baseline}"
        contender = CONTENDERS[self.subject]
        if contender.unit == "s":
            return f"{self.subject} <= {self.bound * 1e3:g} ms"
        return f"{self.subject} <= {self.bound:g} {contender.unit}"

    def check(self, values: dict[str, float]) -> tuple[float, bool] | None:
        """(measured: a ratio, or the value itself for ``at_most``; passed), None if missing."""
        if self.subject not in values:
            return None
        subject = values[self.subject]
        if self.kind == "at_most":
            return subject, subject <= self.bound
        if self.baseline not in values:
            return None
        baseline = values[self.baseline]
        if self.kind == "within":
            return subject / baseline, subject / baseline <= self.bound
        return baseline / subject, baseline / subject >= self.bound


@dataclass(frozen=True)
class Case:
    """A scenario run on each corpus size: contenders timed together, and targets. A target may
    name a baseline from an earlier case at the same N (e.g. re-list vs the cold catalog)."""

    name: str
    contenders: tuple[str, ...]
    targets: tuple[Target, ...] = ()
    #: Run at the largest N only (the corpus does not matter, e.g. ``ping``).
    once: bool = False


CASES: tuple[Case, ...] = (
    Case(
        "cold_catalog",
        ("walk", "a", "b", "c", "scan", "skillsd"),
        (
            Target("skillsd", "within", 1.5, "issue", "b"),
            Target("skillsd", "faster", 20, "issue", "c"),
            Target("skillsd", "within", 3, "SPEC 12", "a"),
            Target("skillsd", "faster", 10, "SPEC 12", "c"),
        ),
    ),
    Case(
        "relist_one_edit",
        ("relist", "rescan"),
        (Target("relist", "within", 0.05, "issue, SPEC 12", "skillsd"),),
    ),
    Case("search", ("search",), (Target("search", "at_most", 0.005, "SPEC 12"),)),
    Case("memory", ("rss",), (Target("rss", "at_most", 80, "SPEC 12"),)),
    # Before the daemon cases: no other daemon runs beside the pings (an idle machine is the
    # harder case for a one-at-a-time round trip: waking a sleeping core costs tens of us).
    Case(
        "ping",
        ("ping_skillsd", "ping_mcp", "ping_floor", "burst_skillsd", "burst_mcp"),
        (
            Target("ping_skillsd", "faster", 10, "issue", "ping_mcp"),
            Target("burst_skillsd", "faster", 10, "issue", "burst_mcp"),
            Target("ping_skillsd", "faster", 3, "SPEC 12", "ping_mcp"),
            Target("burst_skillsd", "faster", 3, "SPEC 12", "burst_mcp"),
        ),
        once=True,
    ),
    Case(
        "daemon_list",
        ("d_cold", "d_warm", "d_warm_scope", "d_relist"),
        (Target("d_relist", "within", 0.05, "issue, SPEC 12", "d_cold"),),
    ),
    Case("daemon_changed", ("d_changed",), (Target("d_changed", "at_most", 0.3, "SPEC 12"),)),
    Case("daemon_search", ("d_search",), (Target("d_search", "at_most", 0.005, "SPEC 12"),)),
    Case("daemon_memory", ("d_rss",), (Target("d_rss", "at_most", 80, "SPEC 12"),)),
)


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Measurement:
    """One contender on one corpus. ``value`` is what targets compare (seconds or ``unit``)."""

    contender: str
    label: str
    metric: Metric
    unit: str
    runs: list[float] = field(default_factory=list)
    value: float | None = None
    outcome: Outcome | None = None
    outcomes: list[Outcome] = field(default_factory=list, repr=False)
    scale: float | None = None
    note: str = ""


def run_case(
    case: Case, corpus: Corpus, opts: argparse.Namespace, walk_time: float | None
) -> dict[str, Measurement]:
    """Warm up each contender once, then run them interleaved ``opts.repeat`` times."""
    prepared: dict[str, Prepared] = {}
    results: dict[str, Measurement] = {}
    try:
        for key in case.contenders:
            contender = CONTENDERS[key]
            m = results[key] = Measurement(key, contender.label, contender.metric, contender.unit)
            p = None
            try:
                p = contender.prepare(corpus, opts)
                if p.before_each:
                    p.before_each()
                m.outcome = p.run()  # warm-up: imports, caches, allocator pools
            except _UNAVAILABLE as exc:
                m.note = _unavailable(exc)
                if p is not None and p.cleanup:
                    p.cleanup()
                continue
            m.scale = p.scale
            prepared[key] = p
        for _ in range(opts.repeat):
            for key, p in list(prepared.items()):
                try:
                    if p.before_each:
                        p.before_each()
                    gc.collect()  # garbage from the previous contender is not charged to it
                    start = time.perf_counter()
                    outcome = p.run()
                    elapsed = time.perf_counter() - start
                except _UNAVAILABLE as exc:  # e.g. the daemon died mid-case: report, go on
                    results[key].note = _unavailable(exc)
                    results[key].runs.clear()
                    del prepared[key]
                    if p.cleanup:
                        p.cleanup()
                    continue
                results[key].runs.append(elapsed if outcome.seconds is None else outcome.seconds)
                results[key].outcomes.append(outcome)
    finally:
        for p in prepared.values():
            if p.cleanup:
                p.cleanup()
    walk = results.get("walk")
    if walk is not None and walk.runs:
        summarise(walk, corpus, None)
        walk_time = walk.value  # the subset extrapolation below adds the walk of this corpus
    for m in results.values():
        if m.runs and m is not walk:
            summarise(m, corpus, walk_time)
    return results


# OSError covers a server that cannot be spawned and TimeoutError (a daemon that stopped answering).
_UNAVAILABLE = (BenchUnavailable, ImportError, NotImplementedError, OSError)


def _unavailable(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if text.startswith("skipped") else f"not available: {text}"


def summarise(m: Measurement, corpus: Corpus, walk_time: float | None) -> None:
    """Turn the raw runs into ``value`` (and a note saying how, when it is not plain)."""
    if m.metric == "p50":
        samples = sorted(s for o in m.outcomes for s in o.samples or ())
        m.value = statistics.median(samples)
        p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
        m.note = f"{len(samples)} samples: p50 {m.value * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms"
    elif m.metric == "value":
        m.value = statistics.median(o.value for o in m.outcomes if o.value is not None)
        m.note = m.outcomes[-1].detail or ""
    else:
        m.value = statistics.median(m.runs)
        last = m.outcomes[-1]
        if last.operations:
            m.note = (
                f"{last.operations / m.value:,.0f} per second "
                f"({m.value / last.operations * 1e6:.1f} us each)"
            )
        elif last.detail:
            m.note = last.detail
        if m.scale is not None and m.outcome is not None:
            walk = walk_time or 0.0
            m.note = (
                f"extrapolated from {m.outcome.processed:,} of {corpus.n:,} skills: "
                f"walk {walk * 1e3:.0f} ms + {m.value * 1e3:.0f} ms x {m.scale:.2f}"
            )
            m.value = walk + m.value * m.scale


#: Contenders whose counts must equal the manifest's (valid skills / load errors).
_CATALOG_KEYS = ("skillsd", "relist", "rescan", "rss", "d_cold", "d_warm", "d_relist", "d_rss")


def check_outcomes(corpus: Corpus, results: dict[str, Measurement]) -> list[str]:
    """Every contender must have seen the whole corpus, and skillsd must agree with the manifest."""
    problems = []
    for key, m in results.items():
        for problem in dict.fromkeys(o.problem for o in m.outcomes if o.problem):
            problems.append(f"{key}: {problem}")
        o = m.outcome
        if o is None or m.metric == "p50" or not CONTENDERS[key].whole_corpus:
            continue
        if m.scale is None and o.processed != corpus.n:
            problems.append(f"{key}: processed {o.processed} skills, the corpus has {corpus.n}")
        if key in _CATALOG_KEYS and (o.ok, o.failed) != (
            corpus.expected_valid,
            corpus.expected_invalid,
        ):
            problems.append(
                f"{key}: {o.ok} skills / {o.failed} errors, the manifest expects "
                f"{corpus.expected_valid} / {corpus.expected_invalid}"
            )
    for key in ("relist", "rescan", "d_relist"):
        edited = results.get(key)
        if edited is not None and edited.outcomes:
            parsed = {o.parsed for o in edited.outcomes}
            if parsed != {1}:
                problems.append(f"{key}: re-parsed {parsed} files per run, must be exactly 1")
    return problems


def profile_contender(key: str, corpus: Corpus, opts: argparse.Namespace, top: int) -> str:
    """cProfile one run of a contender (after a warm-up): top entries by own and total time."""
    p = CONTENDERS[key].prepare(corpus, opts)
    p.run()
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    p.run()
    profiler.disable()
    if p.cleanup:
        p.cleanup()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# -- reporting ---------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    versions = {}
    for dist in ("skillsd", "PyYAML", "skills-ref", "msgspec"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "not installed"
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            mem = fh.readline().split(":", 1)[1].strip()
    except (OSError, IndexError):
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory": mem,
        "yaml_c_loader": hasattr(yaml, "CBaseLoader"),
        "versions": versions,
    }


def _fmt(value: float, unit: str) -> str:
    if unit != "s":
        return f"{value:,.1f} {unit}"
    if value < 0.01:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e3:,.1f} ms" if value < 10 else f"{value:,.2f} s"


def format_table(report: dict[str, Any]) -> str:
    """The Markdown tables printed at the end (and pasted into docs/benchmarks.md)."""
    lines = [
        "| case | N | contender | median | vs (a) | vs (b) | vs (c) | runs | ok/failed |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for block in report["results"]:
        times = {
            k: v["value"]
            for b in report["results"]
            if b["n"] == block["n"]
            for k, v in b["contenders"].items()
            if v["value"] is not None and v["metric"] == "time"
        }
        for m in block["contenders"].values():
            head = f"| {block['case']} | {block['n']:,} | {m['label']} "
            if m["value"] is None:
                lines.append(head + f"| {m['note']} | | | | | |")
                continue
            ratios = ["-"] * 3
            if m["metric"] == "time" and block["case"] == "cold_catalog":
                ratios = [f"{m['value'] / times[b]:.2f}x" if b in times else "-" for b in "abc"]
            o = m["outcome"]
            value = _fmt(m["value"], m["unit"]) + ("*" if m["scale"] else "")
            lines.append(
                head + f"| {value} | {' | '.join(ratios)} | {len(m['runs'])} "
                f"| {o['ok']:,}/{o['failed']:,} |"
            )
    lines += [
        "",
        "| case | N | target | source | measured | result |",
        "|---|---:|---|---|---:|---|",
    ]
    for block in report["results"]:
        for t in block["targets"]:
            measured = t["measured"]
            if measured is None:
                shown = "-"
            elif t["kind"] == "at_most":
                shown = _fmt(measured, CONTENDERS[t["subject"]].unit)
            else:
                shown = f"{measured:.2f}x"
            lines.append(
                f"| {block['case']} | {block['n']:,} | {t['target']} | {t['source']} | {shown} "
                f"| {t['result']} |"
            )
    notes = [
        f"- {m['label']}, N={block['n']:,}: {m['note']}"
        for block in report["results"]
        for m in block["contenders"].values()
        if m["note"] and m["value"] is not None
    ]
    problems = [f"- PROBLEM at N={b['n']:,}: {p}" for b in report["results"] for p in b["problems"]]
    if notes or problems:
        lines += ["", *notes, *problems]
    return "\n".join(lines)


# -- main --------------------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1000,10000, got {text!r}") from None
    if not sizes or any(s <= 0 for s in sizes):
        raise argparse.ArgumentTypeError("every size must be a positive integer")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10000], help="default 1000,10000")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per contender (5)")
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--json", metavar="OUT", help="also write the full report as JSON")
    parser.add_argument(
        "--corpus-dir", default=str(DEFAULT_OUT), help="where corpora are kept (bench/out/)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="generate into a temporary directory, removed after"
    )
    parser.add_argument(
        "--c-subset",
        type=int,
        default=2000,
        help="run skills-ref on at most this many skills and extrapolate (0 = all; 2000)",
    )
    parser.add_argument("--only", help="comma-separated contender keys (default: all)")
    parser.add_argument(
        "--serve-command",
        type=shlex.split,
        default=[sys.executable, "-m", "skillsd", "serve"],
        help="the command starting skillsd on stdio (default: this Python's -m skillsd serve)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile skillsd at the largest N")
    parser.add_argument("--profile-top", type=int, default=25, help="entries per profile listing")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    opts = parser.parse_args(argv)
    if opts.repeat < 1:
        parser.error("--repeat must be >= 1")
    only = set(opts.only.split(",")) if opts.only else None
    if only and not only <= set(CONTENDERS):
        parser.error(f"--only: unknown {sorted(only - set(CONTENDERS))}; known {list(CONTENDERS)}")

    opts.temp_dirs = []  # homes and cwds of spawned daemons, removed at the end
    tmp = tempfile.mkdtemp(prefix="skillsd-bench-") if opts.fresh else None
    base = Path(tmp or opts.corpus_dir)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "options": {k: getattr(opts, k) for k in ("sizes", "repeat", "seed", "c_subset")},
        "results": [],
        "profile": None,
    }
    try:
        corpora = {}
        for n in opts.sizes:
            start = time.perf_counter()
            path = base / f"n{n}-s{opts.seed}"
            totals = gen_corpus.ensure_corpus(path, n, opts.seed)["totals"]
            root = str(path.resolve())
            corpora[n] = Corpus(root, n, opts.seed, totals["valid"], totals["invalid"])
            primed = prime_page_cache(root)
            print(
                f"corpus N={n:,}: {root} ({totals['valid']:,} valid, {totals['invalid']:,} "
                f"invalid; {primed / 1e6:.0f} MB primed) in {time.perf_counter() - start:.1f} s",
                file=sys.stderr,
            )
        for n, corpus in corpora.items():
            values: dict[str, float] = {}
            walk_time: float | None = None
            for case in CASES:
                chosen = tuple(k for k in case.contenders if only is None or k in only)
                if not chosen or (case.once and n != max(corpora)):
                    continue
                start = time.perf_counter()
                results = run_case(Case(case.name, chosen), corpus, opts, walk_time)
                walk = results.get("walk")
                if walk is not None and walk.value is not None:
                    walk_time = walk.value
                values.update({k: m.value for k, m in results.items() if m.value is not None})
                targets = []
                for t in case.targets:
                    checked = t.check(values)
                    targets.append(
                        {
                            "target": t.describe(),
                            "subject": t.subject,
                            "kind": t.kind,
                            "source": t.source,
                            "measured": None if checked is None else checked[0],
                            "result": "n/a"
                            if checked is None
                            else "PASS"
                            if checked[1]
                            else "FAIL",
                        }
                    )
                contenders = {}
                for k, m in results.items():
                    entry = asdict(m)
                    del entry["outcomes"]  # the per-run samples would bloat the JSON
                    if entry["outcome"]:
                        entry["outcome"].pop("samples", None)
                    contenders[k] = entry
                report["results"].append(
                    {
                        "case": case.name,
                        "n": n,
                        "contenders": contenders,
                        "targets": targets,
                        "problems": check_outcomes(corpus, results),
                    }
                )
                print(f"{case.name} N={n:,}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
            close_shared_daemons()
        if opts.profile:
            largest = corpora[max(corpora)]
            report["profile"] = profile_contender("skillsd", largest, opts, opts.profile_top)
    finally:
        close_shared_daemons()
        for path in [*opts.temp_dirs, *([tmp] if tmp else [])]:
            shutil.rmtree(path, ignore_errors=True)
    print(format_table(report))
    if report["profile"]:
        print(f"\ncProfile of one cold skillsd catalog build, N={max(opts.sizes):,}:\n")
        print(report["profile"])
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
