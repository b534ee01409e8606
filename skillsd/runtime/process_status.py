"""What ``daemon.status`` says of this process: when it started and the memory it holds.

Read from ``/proc`` on Linux (the start time the kernel recorded, so it does not depend on when
this module was imported); elsewhere the start is this module's import and memory is unknown.
"""

from __future__ import annotations

import os
import time

__all__ = ["memory", "started_at"]

_IMPORTED_AT = time.time()


def started_at() -> float:
    """The Unix time this process started."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            # The command name (field 2) may hold spaces: count fields after its ")".
            ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return _IMPORTED_AT
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def memory() -> tuple[int | None, int | None]:
    """(resident bytes now, peak resident bytes), None where the system does not say."""
    found: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError):
        return None, None
    return found.get("VmRSS"), found.get("VmHWM")
