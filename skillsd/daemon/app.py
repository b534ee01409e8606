"""Assembly: the one place the daemon's router is built, and the event-loop runner.

Every transport gets its handlers from `build_router`, so a new handler module is wired in
with one line here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import Coroutine
from typing import Any

from skillsd.daemon import handlers, lifecycle
from skillsd.daemon.endpoint import Router
from skillsd.daemon.services import Services

__all__ = ["TEST_HOOKS_ENV", "build_router", "run"]

log = logging.getLogger("skillsd.daemon")

#: ``SKILLSD_TEST_HOOKS=<path of a .py file>`` adds the methods its ``register(router)`` adds: the
#: test suite's ``_test.*`` methods (``tests/daemon/hook_methods.py``), never shipped.
TEST_HOOKS_ENV = "SKILLSD_TEST_HOOKS"

_WORKER_PREFIX = "skillsd-worker"
#: After the last connection closed, how long idle worker threads get to wind down.
_WORKER_JOIN_SECONDS = 1.0


def build_router(services: Services | None = None) -> Router:
    """The router with every method the daemon serves.

    ``services`` is the daemon-wide state (catalog cache, sessions, ...) handed to handler
    modules' ``register(router, services)``.
    """
    router = Router()
    lifecycle.register(router)
    handlers.register(router, services or Services.create())
    if hooks := os.environ.get(TEST_HOOKS_ENV):
        _load_module(hooks).register(router)
    return router


def _load_module(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("skillsd_test_hooks", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{TEST_HOOKS_ENV}={path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # msgspec resolves the Structs' annotations through it
    spec.loader.exec_module(module)
    return module


def run(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` on a fresh event loop and return its exit status.

    ``"thread"`` handlers run on this loop's executor. A handler stuck in its thread past the
    shutdown grace would otherwise hold the process at interpreter exit, so then the process
    leaves at once (after flushing its output) rather than hang.
    """
    loop = asyncio.new_event_loop()
    executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix=_WORKER_PREFIX)
    loop.set_default_executor(executor)
    try:
        status = loop.run_until_complete(main)
        loop.run_until_complete(_cancel_leftovers())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        loop.close()
    if _workers_stuck():
        log.warning("a handler thread is still running at exit: leaving without waiting for it")
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(status)
    return status


async def _cancel_leftovers() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


def _workers_stuck() -> bool:
    deadline = time.monotonic() + _WORKER_JOIN_SECONDS
    for thread in threading.enumerate():
        if thread.name.startswith(_WORKER_PREFIX):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return True
    return False
