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
source). Daemon-level cases are listed in ``PENDING`` until the daemon exists; adding one means
writing a ``prepare_*`` function and appending a Contender and a Case.
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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

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
    """skillsd's discovery scan alone (walk, stat, resource counts), for the cost breakdown."""
    from skillsd.core.discovery import scan_plan

    config, plan = skillsd_plan(corpus)

    def run() -> Outcome:
        found = scan_plan(plan, config).skills
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
        skills, errors = len(catalog.skills), len(catalog.errors)
        return Outcome(
            ok=skills, failed=errors, processed=skills + errors, parsed=catalog.stats.parsed
        )

    return run


def prepare_skillsd(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A cold skillsd catalog with the core API: plan, scan, read + validate each SKILL.md."""
    return Prepared(_cold_catalog(corpus))


def prepare_relist(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Rebuild with the previous catalog after one SKILL.md was edited (core level).

    Before each run one valid skill's SKILL.md is rewritten (alternately with and without an
    extra body line, so its size and mtime change); the run is ``build_catalog(previous=...)``,
    which must re-parse exactly that file. The file is restored (bytes and mtime) at the end.
    """
    from skillsd.core.catalog import build_catalog

    config, plan = skillsd_plan(corpus)
    previous = build_catalog(plan, config)
    if not previous.skills:
        raise BenchUnavailable("the corpus has no valid skill to edit")
    target = previous.skills[len(previous.skills) // 2].path
    original = Path(target).read_bytes()
    st = os.stat(target)
    edited = original + b"\nEdited by the benchmark.\n"
    state = {"edits": 0}

    def edit() -> None:
        state["edits"] += 1
        Path(target).write_bytes(edited if state["edits"] % 2 else original)

    def run() -> Outcome:
        catalog = build_catalog(plan, config, previous=previous)
        skills, errors = len(catalog.skills), len(catalog.errors)
        return Outcome(
            ok=skills, failed=errors, processed=skills + errors, parsed=catalog.stats.parsed
        )

    def restore() -> None:
        Path(target).write_bytes(original)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))

    return Prepared(run, before_each=edit, cleanup=restore)


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
        Contender("relist", "skillsd rebuild after 1 edit (core)", prepare_relist),
        Contender("search", "skillsd search p50 (core index)", prepare_search, metric="p50"),
        Contender("rss", "skillsd peak RSS, catalog + index", prepare_rss, "value", "MB"),
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
        ("relist",),
        (Target("relist", "within", 0.05, "issue (daemon stage)", "skillsd"),),
    ),
    Case("search", ("search",), (Target("search", "at_most", 0.005, "SPEC 12"),)),
    Case("memory", ("rss",), (Target("rss", "at_most", 80, "SPEC 12"),)),
)

#: Targets that need the daemon; listed so the report shows what is not proven yet.
PENDING: tuple[tuple[str, str], ...] = (
    ("warm_list", "warm skills.list served from the daemon's cache"),
    ("relist_one_edit", "the same through the daemon: watcher + cache, over JSON-RPC"),
    ("edit_to_changed", "edit-to-skills.changed latency < 300 ms"),
    ("search_p50", "skills.search p50 < 5 ms over JSON-RPC"),
    ("ping_throughput", "ping over stdio >= 10x the MCP Python SDK's stdio server (SPEC: 3x)"),
    ("peak_rss", "peak RSS of the daemon process holding 10 000 skills < 80 MB"),
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
            try:
                p = contender.prepare(corpus, opts)
                if p.before_each:
                    p.before_each()
                m.outcome = p.run()  # warm-up: imports, caches, allocator pools
            except (BenchUnavailable, ImportError, NotImplementedError) as exc:
                m.note = f"not available: {exc}"
                continue
            m.scale = p.scale
            prepared[key] = p
        for _ in range(opts.repeat):
            for key, p in prepared.items():
                if p.before_each:
                    p.before_each()
                gc.collect()  # garbage from the previous contender is not charged to this one
                start = time.perf_counter()
                outcome = p.run()
                results[key].runs.append(time.perf_counter() - start)
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


def summarise(m: Measurement, corpus: Corpus, walk_time: float | None) -> None:
    """Turn the raw runs into ``value`` (and a note saying how, when it is not plain)."""
    if m.metric == "p50":
        samples = sorted(s for o in m.outcomes for s in o.samples or ())
        m.value = statistics.median(samples)
        p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
        m.note = f"{len(samples)} queries: p50 {m.value * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms"
    elif m.metric == "value":
        m.value = statistics.median(o.value for o in m.outcomes if o.value is not None)
        m.note = m.outcomes[-1].detail or ""
    else:
        m.value = statistics.median(m.runs)
        if m.scale is not None and m.outcome is not None:
            walk = walk_time or 0.0
            m.note = (
                f"extrapolated from {m.outcome.processed:,} of {corpus.n:,} skills: "
                f"walk {walk * 1e3:.0f} ms + {m.value * 1e3:.0f} ms x {m.scale:.2f}"
            )
            m.value = walk + m.value * m.scale


def check_outcomes(corpus: Corpus, results: dict[str, Measurement]) -> list[str]:
    """Every contender must have seen the whole corpus, and skillsd must agree with the manifest."""
    problems = []
    for key, m in results.items():
        o = m.outcome
        if o is None or m.metric == "p50":
            continue
        if m.scale is None and o.processed != corpus.n:
            problems.append(f"{key}: processed {o.processed} skills, the corpus has {corpus.n}")
        if key in ("skillsd", "relist", "rss") and (o.ok, o.failed) != (
            corpus.expected_valid,
            corpus.expected_invalid,
        ):
            problems.append(
                f"{key}: {o.ok} skills / {o.failed} errors, the manifest expects "
                f"{corpus.expected_valid} / {corpus.expected_invalid}"
            )
    relist = results.get("relist")
    if relist is not None:
        parsed = {o.parsed for o in relist.outcomes}
        if parsed != {1}:
            problems.append(f"relist: re-parsed {parsed} files per run, must be exactly 1")
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
    if report["pending"]:
        lines += ["", "Not measured yet (need the daemon):"]
        lines += [f"- {name}: {text}" for name, text in report["pending"]]
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

    tmp = tempfile.mkdtemp(prefix="skillsd-bench-") if opts.fresh else None
    base = Path(tmp or opts.corpus_dir)
    report: dict[str, Any] = {
        "machine": machine_info(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "options": {k: getattr(opts, k) for k in ("sizes", "repeat", "seed", "c_subset")},
        "results": [],
        "pending": [list(p) for p in PENDING],
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
                if not chosen:
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
        if opts.profile:
            largest = corpora[max(corpora)]
            report["profile"] = profile_contender("skillsd", largest, opts, opts.profile_top)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(format_table(report))
    if report["profile"]:
        print(f"\ncProfile of one cold skillsd catalog build, N={max(opts.sizes):,}:\n")
        print(report["profile"])
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
