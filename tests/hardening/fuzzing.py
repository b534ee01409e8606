"""What the hardening fuzzers share: example budgets, a hang guard, a memory guard, and the
documented diagnostic codes.

Budgets are small by default so the whole hardening set stays fast in ``make test``;
``SKILLSD_LONG=1`` (``make soak``) multiplies them. Hangs are caught by an interval timer that
interrupts the example (a pure-Python loop or a ``re`` match never returns otherwise), memory by
``tracemalloc``'s peak over one example.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from hypothesis import HealthCheck, settings

__all__ = [
    "DOCUMENTED_CODES",
    "LONG",
    "Hang",
    "bounded",
    "fuzz_settings",
]

#: Long runs: ``SKILLSD_LONG=1`` (set by ``make soak``).
LONG = os.environ.get("SKILLSD_LONG") == "1"

_DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
#: Every diagnostic code ``docs/diagnostics.md`` documents (first column of its tables).
DOCUMENTED_CODES = frozenset(
    re.findall(r"^\| `([a-z_]+\.[a-z_]+)`", _DOCS.read_text(encoding="utf-8"), re.MULTILINE)
)


def fuzz_settings(examples: int) -> settings:
    """Hypothesis settings for one fuzz property: ``examples`` by default, 20x under
    ``SKILLSD_LONG=1``. No per-example deadline (a slow CI box is not a bug); `bounded`
    catches real hangs instead."""
    return settings(
        max_examples=examples * 20 if LONG else examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        derandomize=not LONG,  # the default run is reproducible; long runs explore
    )


class Hang(AssertionError):
    """An input kept the code under test busy past the hang bound."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Hang("still running after the hang bound: this input makes the code hang")


@contextlib.contextmanager
def bounded(*, seconds: float = 5.0, peak_bytes: int = 64 * 1024 * 1024) -> Iterator[None]:
    """Fail the block if it runs past ``seconds`` (a hang, not a slow machine: the bound is
    orders of magnitude above the normal cost) or its Python allocations peak over
    ``peak_bytes``. Main thread only (it uses ``SIGALRM``)."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if not tracing:
            tracemalloc.stop()
    assert peak <= peak_bytes, f"allocations peaked at {peak} bytes (bound {peak_bytes})"
