"""What a contender is: how it is prepared, what one run returns, and how it says it cannot run."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from bench.corpus import Corpus


class BenchUnavailable(Exception):
    """A contender cannot run here (missing API or platform); reported, not fatal."""


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

    @classmethod
    def counted(cls, ok: int, failed: int = 0, **fields: Any) -> Outcome:
        """An outcome that processed ``ok + failed`` items."""
        return cls(ok=ok, failed=failed, processed=ok + failed, **fields)


Runner = Callable[[], Outcome]


def _no_hook() -> None:
    """A hook with nothing to do."""


@dataclass
class Prepared:
    """A contender ready to run: ``run`` is timed; the hooks around it are not.

    ``scale`` (when the runner covers only part of the corpus) extrapolates the time per skill;
    ``before_each`` runs before every run (e.g. editing a file); ``cleanup`` once at the end.
    """

    run: Runner
    scale: float | None = None
    before_each: Callable[[], None] = _no_hook
    cleanup: Callable[[], None] = _no_hook


Prepare = Callable[[Corpus, argparse.Namespace], Prepared]
Metric = Literal["time", "p50", "value"]


@dataclass(frozen=True)
class Contender:
    """Something measured. ``metric``: ``time`` = median wall time of a run; ``p50`` = median of
    the per-operation latencies of all runs; ``value`` = median of a value each run measures."""

    key: str
    label: str
    prepare: Prepare
    metric: Metric = "time"
    unit: str = "s"
    #: Whether a run sees the whole corpus (its counts are checked against the manifest).
    whole_corpus: bool = True


Query = TypeVar("Query")


def latencies(queries: Iterable[Query], probe: Callable[[Query], tuple[float, bool]]) -> Outcome:
    """Run ``probe`` on each query; it returns (seconds it took, whether it found anything).

    The outcome holds every latency as a sample (for a ``p50`` contender) and counts hits as ok.
    """
    samples = []
    hits = 0
    for query in queries:
        seconds, hit = probe(query)
        samples.append(seconds)
        hits += hit
    return Outcome.counted(hits, len(samples) - hits, samples=samples)
