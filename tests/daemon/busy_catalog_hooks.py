"""Test-only hooks for ``test_no_change_lost``, loaded by a daemon started with
``SKILLSD_TEST_HOOKS`` set to this file's path.

Every catalog build that starts from an earlier catalog (a refresh, a rescan after the watches
are in place) holds on to its result for ``SKILLSD_TEST_BUILD_DELAY`` seconds before handing it
over, so an edit made meanwhile is not in it: the window in which a real build of a large tree
is busy, made wide enough to hit every time. ``_test.catalogBusy`` answers once such a build is
in that window. The daemon loads this file by path, so it imports nothing from ``tests``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

import msgspec

from skillsd.jsonrpc.endpoint import RequestContext
from skillsd.jsonrpc.router import Router
from skillsd.runtime import catalog_cache
from skillsd_protocol.messages import Params

__all__ = ["register"]

DELAY_ENV = "SKILLSD_TEST_BUILD_DELAY"

_busy = threading.Event()


class BusyParams(Params, kw_only=True):
    timeout: float = 10.0


class BusyResult(msgspec.Struct, kw_only=True):
    busy: bool


def register(router: Router) -> None:
    """Slow the catalog's later builds down and add ``_test.catalogBusy``."""
    delay = float(os.environ.get(DELAY_ENV, "1.0"))
    build = catalog_cache.CatalogCache._build

    def slow_build(self: Any, entry: Any, previous: Any, pending: Any) -> Any:
        catalog = build(self, entry, previous, pending)
        if previous is None:
            return catalog  # a first scan: nobody has a catalog to miss an edit against
        _busy.set()
        try:
            time.sleep(delay)
        finally:
            _busy.clear()
        return catalog

    catalog_cache.CatalogCache._build = slow_build  # type: ignore[method-assign]
    router.add("_test.catalogBusy", _catalog_busy, params_type=BusyParams, result_type=BusyResult)


async def _catalog_busy(params: BusyParams, ctx: RequestContext) -> BusyResult:
    """Answer once a build holds its result back (``busy`` false after ``timeout`` seconds)."""
    deadline = time.monotonic() + params.timeout
    while not _busy.is_set():
        if time.monotonic() > deadline:
            return BusyResult(busy=False)
        await asyncio.sleep(0.005)
    return BusyResult(busy=True)
