"""Keeping a long-running process's memory close to what it actually holds.

Called by ``skillsd serve`` and ``skillsd mcp`` before their modules are imported. Both
measures are measured by ``bench/`` (daemon peak RSS with a 10 000-skill catalog).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

log = logging.getLogger(__name__)

#: glibc's ``mallopt`` parameter number for the mmap threshold.
_M_MMAP_THRESHOLD = -3
#: Allocations at least this big get their own mapping, returned to the OS when freed.
_MMAP_THRESHOLD_BYTES = 256 * 1024
#: glibc's ``mallopt`` parameter number for the most malloc arenas.
_M_ARENA_MAX = -8
#: One arena per thread that allocates (the scan and the watch setup run in worker threads)
#: left each holding its own high-water mark; two arenas keep that memory shared.
_ARENA_MAX = 2


def prepare_daemon_process() -> None:
    """Leave OpenSSL out and make large reply buffers go back to the OS when freed.

    * asyncio imports :mod:`ssl` eagerly, which maps OpenSSL (~5 MB of RSS); the daemon
      and the MCP faces serve pipes, Unix sockets and plain HTTP, never TLS, so asyncio is
      imported without it. Only asyncio goes without: a download of an https archive imports
      :mod:`ssl` when it runs.
    * glibc raises its mmap threshold after the first large free, so later multi-megabyte
      ``skills.list`` replies come from the heap and stay resident after they are sent; a
      fixed threshold keeps them in mappings that are unmapped on free.
    * glibc gives each allocating thread an arena of its own; capped at two, the worker
      threads' allocations reuse each other's freed memory.
    """
    if "ssl" not in sys.modules and "asyncio" not in sys.modules:
        # Declined for asyncio's import only: an install that downloads an https archive
        # imports it for real later (urllib), paying for OpenSSL only then.
        sys.modules["ssl"] = None  # type: ignore[assignment]
        try:
            import asyncio  # noqa: F401
        finally:
            del sys.modules["ssl"]
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        if not libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES):
            log.debug("mallopt(M_MMAP_THRESHOLD) was refused")
        if not libc.mallopt(_M_ARENA_MAX, _ARENA_MAX):
            log.debug("mallopt(M_ARENA_MAX) was refused")
    except (OSError, AttributeError) as exc:  # not glibc (musl, ...): nothing to tune
        log.debug("cannot tune the allocator: %s", exc)
