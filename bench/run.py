"""skillsd benchmark: proves (or disproves) the performance targets in docs/benchmarks.md.

    python bench/run.py [--sizes 1000,10000] [--repeat 5] [--json OUT] [--profile]

For each size N it generates (or reuses, under ``bench/out/``) a synthetic corpus with
``bench/gen_corpus.py`` and primes the OS page cache by reading every file once. Each contender
then gets one untimed warm-up run and ``--repeat`` timed runs, interleaved (a, b, c, skillsd, a,
b, ...) so drift on a shared machine hits them all alike; the median is reported.

The page cache is warm for every contender equally: nobody pays cold-disk cost. "Cold" for
skillsd means a catalog built from nothing (no previous catalog, no cache) in a process whose
imports are done, which is what the daemon does on the first ``skills.list`` for a cwd.

Everything is a table in ``bench/cases.py``: ``CONTENDERS`` (what is timed, and how its number is
summarised: median wall time, p50 of per-operation latencies, or a measured value such as peak
RSS) and ``CASES`` (which contenders run together and the targets they must meet, each naming its
baseline and its source). This file is the command line; ``bench/__init__.py`` lists the modules.

Core-level contenders (``bench/core_probes.py``) call ``skillsd.core`` in this process.
Daemon-level ones (``bench/daemon_probes.py``: ``d_*``, ``ping_*``) spawn the real ``skillsd serve``
on stdio (and, for ``ping``, the MCP Python SDK's stdio server from ``bench/mcp_ping_server.py``)
and talk JSON-RPC to it over pipes, exactly as an editor would.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is on sys.path, not the repository holding the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cases import CASES, CONTENDERS, Case
from bench.corpus import Corpus, prepare_corpus
from bench.daemon_probes import close_shared_daemons
from bench.measure import profile_contender, run_case
from bench.report import case_block, format_table, machine_info

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


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


def measure_corpus(
    corpus: Corpus, opts: argparse.Namespace, only: set[str] | None, largest: bool
) -> list[dict[str, Any]]:
    """Every case (or the ``only`` contenders of it) on one corpus, as report blocks."""
    blocks = []
    values: dict[str, float] = {}  # every contender measured so far at this N, for the targets
    walk_time: float | None = None
    for case in CASES:
        chosen = tuple(k for k in case.contenders if only is None or k in only)
        if not chosen or (case.once and not largest):
            continue
        start = time.perf_counter()
        results = run_case(Case(case.name, chosen), corpus, opts, walk_time)
        walk = results.get("walk")
        if walk is not None and walk.value is not None:
            walk_time = walk.value
        values.update({k: m.value for k, m in results.items() if m.value is not None})
        blocks.append(case_block(case, corpus, results, values))
        print(f"{case.name} N={corpus.n:,}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return blocks


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
        corpora = {n: prepare_corpus(base / f"n{n}-s{opts.seed}", n, opts.seed) for n in opts.sizes}
        for n, corpus in corpora.items():
            report["results"] += measure_corpus(corpus, opts, only, largest=n == max(corpora))
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
