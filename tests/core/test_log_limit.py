"""A warning with the same cause is logged at most once a minute; the next one counts the rest."""

from __future__ import annotations

import logging

from skillsd.runtime.log_limit import OncePerMinute


def _record(msg: str, *args: object, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord("skillsd.daemon", level, __file__, 1, msg, args, None)


def test_the_same_cause_passes_once_a_minute_and_counts_the_rest() -> None:
    now = [0.0]
    limit = OncePerMinute(clock=lambda: now[0])
    refused = "refusing a client with uid %d (this daemon serves uid %d)"
    assert limit.filter(_record(refused, 1000, 0))
    passed = [limit.filter(_record(refused, uid, 0)) for uid in range(500)]
    assert not any(passed)  # other arguments, same cause
    assert limit.filter(_record("another cause %s", "x"))
    assert limit.filter(_record(refused, 7, 0, level=logging.ERROR))  # errors always pass
    now[0] = 61.0
    later = _record(refused, 1001, 0)
    assert limit.filter(later)
    assert "500 more like this" in later.getMessage()
