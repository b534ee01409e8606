"""Running a case: each contender warmed up once, then timed runs interleaved, summarised into
one value per contender, and the runs checked against the corpus's manifest."""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import statistics
import time
from dataclasses import dataclass, field

from bench.cases import CONTENDERS, Case
from bench.contender import BenchUnavailable, Metric, Outcome, Prepared
from bench.corpus import Corpus


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
                p.before_each()
                m.outcome = p.run()  # warm-up: imports, caches, allocator pools
            except _UNAVAILABLE as exc:
                m.note = _unavailable(exc)
                if p is not None:
                    p.cleanup()
                continue
            m.scale = p.scale
            prepared[key] = p
        for _ in range(opts.repeat):
            for key, p in list(prepared.items()):
                try:
                    p.before_each()
                    gc.collect()  # garbage from the previous contender is not charged to it
                    start = time.perf_counter()
                    outcome = p.run()
                    elapsed = time.perf_counter() - start
                except _UNAVAILABLE as exc:  # e.g. the daemon died mid-case: report, go on
                    results[key].note = _unavailable(exc)
                    results[key].runs.clear()
                    del prepared[key]
                    p.cleanup()
                    continue
                results[key].runs.append(elapsed if outcome.seconds is None else outcome.seconds)
                results[key].outcomes.append(outcome)
    finally:
        for p in prepared.values():
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
    p.cleanup()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()
