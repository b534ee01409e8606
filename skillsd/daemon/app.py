"""Assembly: the one place the daemon's router is built, and the event-loop runner.

Every transport gets its handlers from `build_router`, so a new handler module is wired in
with one line here. A spawned daemon defers the skill methods: the lifecycle methods answer at
once while a thread imports the catalog machinery (half the start-up time), and a skill request
that comes first waits for it.
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
from typing import TYPE_CHECKING, Any

from skillsd.daemon import lifecycle
from skillsd.jsonrpc.endpoint import RequestContext
from skillsd.jsonrpc.process_loop import leave_now, run_loop
from skillsd.jsonrpc.router import Router
from skillsd_protocol import METHODS

if TYPE_CHECKING:
    from skillsd.runtime.services import Services

__all__ = ["TEST_HOOKS_ENV", "build_router", "run"]

log = logging.getLogger("skillsd.daemon")

#: ``SKILLSD_TEST_HOOKS=<path of a .py file>`` adds the methods its ``register(router)`` adds: the
#: test suite's ``_test.*`` methods (``tests/daemon/hook_methods.py``), never shipped.
TEST_HOOKS_ENV = "SKILLSD_TEST_HOOKS"

_WORKER_PREFIX = "skillsd-worker"
#: After the last connection closed, how long idle worker threads get to wind down.
_WORKER_JOIN_SECONDS = 1.0


def build_router(services: Services | None = None, *, deferred: bool = False) -> Router:
    """The router with every method the daemon serves.

    ``services`` is the daemon-wide state (catalog cache, sessions, ...) handed to handler
    modules' ``register(router, services)``. ``deferred``: the skill methods are stand-ins until
    a thread has imported and built them (see the module docstring).
    """
    router = Router()
    lifecycle.register(router)
    if deferred and services is None:
        _defer_skill_methods(router)
    else:
        router.adopt(_skill_methods(services))
    if hooks := os.environ.get(TEST_HOOKS_ENV):
        _load_module(hooks).register(router)
    return router


def _skill_methods(services: Services | None = None) -> Router:
    """A router holding the skill, session and tool methods."""
    from skillsd.daemon import handlers
    from skillsd.runtime.services import Services

    router = Router()
    handlers.register(router, services or Services.create())
    return router


#: What the skill methods send; declared up front so ``initialize`` lists it before they load.
_DEFERRED_NOTIFICATIONS = ("skills.changed",)


def _defer_skill_methods(router: Router) -> None:
    loaded: concurrent.futures.Future[Router] = concurrent.futures.Future()

    def load() -> None:
        try:
            loaded.set_result(_skill_methods())
        except BaseException as exc:  # each skill request reports it
            loaded.set_exception(exc)

    async def stand_in(method: str, params: Any, ctx: RequestContext) -> Any:
        # Shielded: a request cancelled while the methods load (its client went away) must not
        # cancel the one load every later request waits for.
        real = await asyncio.shield(asyncio.wrap_future(loaded))
        router.adopt(real)  # later requests go straight to the real handlers
        handler = real.get(method)
        assert handler is not None, method
        if handler.mode == "thread":
            return await asyncio.to_thread(handler.fn, params, ctx)
        if handler.mode == "inline":
            return handler.fn(params, ctx)
        return await handler.fn(params, ctx)

    for method in METHODS:
        if router.get(method) is None:
            router.add(method, _bind(stand_in, method))
    for notification in _DEFERRED_NOTIFICATIONS:
        router.emits(notification)
    threading.Thread(target=load, name="skillsd-load", daemon=True).start()


def _bind(fn: Any, method: str) -> Any:
    async def bound(params: Any, ctx: RequestContext) -> Any:
        return await fn(method, params, ctx)

    return bound


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
    status = run_loop(main, worker_prefix=_WORKER_PREFIX)
    if _workers_stuck():
        log.warning("a handler thread is still running at exit: leaving without waiting for it")
        leave_now(status)
    return status


def _workers_stuck() -> bool:
    deadline = time.monotonic() + _WORKER_JOIN_SECONDS
    for thread in threading.enumerate():
        if thread.name.startswith(_WORKER_PREFIX):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return True
    return False
