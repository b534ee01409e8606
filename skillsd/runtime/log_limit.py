"""Logs that do not flood: a warning with the same cause (the same logger and message
template, whatever its arguments) is written at most once a minute; the next one says how many
were left out. A process that serves clients installs it on its log handler."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["OncePerMinute", "install"]

#: Causes remembered at once (the oldest is forgotten first).
_MAX_CAUSES = 1024


class OncePerMinute(logging.Filter):
    """Pass a warning once per ``seconds`` per cause; errors and quieter levels always pass."""

    def __init__(self, seconds: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._seconds = seconds
        self._clock = clock
        #: cause -> (when it was last written, how many were left out since).
        self._seen: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        cause = (record.name, str(record.msg))
        now = self._clock()
        last = self._seen.get(cause)
        if last is not None and now - last[0] < self._seconds:
            self._seen[cause] = (last[0], last[1] + 1)
            return False
        if last is not None and last[1]:
            record.msg = f"{record.msg} ({last[1]} more like this in the last minute)"
        self._seen[cause] = (now, 0)
        self._seen.move_to_end(cause)
        while len(self._seen) > _MAX_CAUSES:
            self._seen.popitem(last=False)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Limit every handler of ``logger`` (the root logger by default)."""
    for handler in (logger or logging.getLogger()).handlers:
        handler.addFilter(OncePerMinute())
