"""Test-only ``_test.*`` methods, loaded by a daemon started with ``SKILLSD_TEST_HOOKS`` set to
this file's path (see `skillsd.daemon.app.build_router`); `tests.support.daemons.env` sets it.

The end-to-end tests need methods that are slow, fail, crash or print, to exercise
cancellation, progress, draining on shutdown, error mapping and stdout purity through a real
process. They are never part of the protocol, never listed in ``METHODS`` and not shipped: the
daemon loads this file by path, so it must import nothing from ``tests``.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import msgspec

from skillsd.core.errors import SkillsdError
from skillsd.jsonrpc.endpoint import RequestContext
from skillsd.jsonrpc.router import Router
from skillsd_protocol import AnyErrorData
from skillsd_protocol.messages import Empty, Params

__all__ = ["register"]


class SleepParams(Params, kw_only=True):
    seconds: float = 1.0
    steps: int = 1


class SleepResult(msgspec.Struct, kw_only=True):
    slept: float
    steps: int


class FailParams(Params, kw_only=True):
    kind: str
    message: str = "failed on purpose"
    data: dict[str, Any] = msgspec.field(default_factory=dict)


class PrintParams(Params, kw_only=True):
    text: str = "stray output"


class EchoResult(msgspec.Struct, kw_only=True):
    text: str


def register(router: Router) -> None:
    """Add the ``_test.*`` methods to ``router``."""
    router.add("_test.sleep", _sleep, params_type=SleepParams, result_type=SleepResult)
    router.add(
        "_test.spin",
        _spin,
        mode="thread",
        params_type=SleepParams,
        result_type=SleepResult,
    )
    router.add("_test.fail", _fail, mode="inline", params_type=FailParams, result_type=Empty)
    router.add("_test.crash", _crash, mode="inline", params_type=Params, result_type=Empty)
    router.add("_test.print", _print, mode="thread", params_type=PrintParams, result_type=Empty)
    router.add("_test.echo", _echo, params_type=PrintParams, result_type=EchoResult)
    router.add("_test.badText", _bad_text, params_type=Params, result_type=EchoResult)
    router.add(
        "_test.stopWatcher", _stop_watcher, mode="inline", params_type=Params, result_type=Empty
    )


async def _sleep(params: SleepParams, ctx: RequestContext) -> SleepResult:
    """Sleep ``seconds`` in ``steps``, reporting progress before each step."""
    steps = max(1, params.steps)
    for step in range(steps):
        ctx.progress(f"step {step + 1}/{steps}", 100.0 * step / steps)
        await asyncio.sleep(params.seconds / steps)
    return SleepResult(slept=params.seconds, steps=steps)


def _spin(params: SleepParams, ctx: RequestContext) -> SleepResult:
    """Like ``_test.sleep`` but blocking in a worker thread, polling for cancellation."""
    steps = max(1, params.steps)
    for step in range(steps):
        ctx.check_cancelled()
        ctx.progress(f"step {step + 1}/{steps}", 100.0 * step / steps)
        time.sleep(params.seconds / steps)
    return SleepResult(slept=params.seconds, steps=steps)


def _fail(params: FailParams, ctx: RequestContext) -> Empty:
    data = msgspec.convert({"kind": params.kind, **params.data}, AnyErrorData)
    raise SkillsdError(params.message, data)


def _crash(params: Params, ctx: RequestContext) -> Empty:
    raise RuntimeError("crashed on purpose")


def _print(params: PrintParams, ctx: RequestContext) -> Empty:
    # Stray writes to stdout, from Python and from the OS level, must never reach the client.
    print(params.text)
    os.write(1, params.text.encode() + b"\n")
    return Empty()


async def _echo(params: PrintParams, ctx: RequestContext) -> EchoResult:
    """Return ``text``: a reply as large as the request, for flow-control tests."""
    await asyncio.sleep(0)
    return EchoResult(text=params.text)


def _stop_watcher(params: Params, ctx: RequestContext) -> Empty:
    """Stop the file watcher's reader thread, as if it had died."""
    import threading

    for thread in threading.enumerate():
        if thread.name == "skillsd-watcher":
            thread.stop()  # type: ignore[attr-defined]
            thread.join(timeout=5)
    return Empty()


async def _bad_text(params: Params, ctx: RequestContext) -> EchoResult:
    """A result holding a file name that is not UTF-8 (as Python decodes one)."""
    return EchoResult(text=os.fsdecode(b"skills/bad-\xff-name"))
