"""Running a step that must not hang, so that a regression fails a test instead of stalling it."""

from __future__ import annotations

import threading
from collections.abc import Callable


def within(seconds: float, work: Callable[[], object]) -> object:
    """``work()``'s result, failing (not hanging) when it takes longer than ``seconds``."""
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"took more than {seconds} s"
    return done[0]
