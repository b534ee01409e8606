"""The event loop of a process that serves one protocol (the daemon, ``skillsd mcp`` on stdio):
run it, then clear up what is left, and leave."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

__all__ = ["leave_now", "run_loop"]


def run_loop(main: Coroutine[Any, Any, int], *, worker_prefix: str) -> int:
    """Run ``main`` on a fresh loop whose executor's threads are named ``worker_prefix``;
    cancel the tasks still running after it, and return its exit status. The executor is shut
    down without waiting: a thread stuck in a file must not hold the process."""
    loop = asyncio.new_event_loop()
    executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix=worker_prefix)
    loop.set_default_executor(executor)
    try:
        status = loop.run_until_complete(main)
        loop.run_until_complete(_cancel_leftovers())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        loop.close()
    return status


def leave_now(status: int) -> NoReturn:
    """Exit at once with ``status``, the log and output flushed, skipping the interpreter's
    teardown (joining threads, freeing the catalog). State files are only ever replaced whole,
    so nothing is left torn."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(status)


async def _cancel_leftovers() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
