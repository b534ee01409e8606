"""File operations run off the loop in threads that are reused: an idle thread takes the next
operation (starting one costs milliseconds on a busy machine), and a stuck one is never waited
for: the next operation gets a thread of its own."""

from __future__ import annotations

import asyncio
import threading

import pytest

from skillsd.runtime.file_ops import FileOps, RequestCancelled


def test_one_operation_after_another_reuses_one_thread() -> None:
    async def main() -> list[threading.Thread]:
        ops = FileOps(seconds=5, slots=4)
        # The thread objects themselves (kept alive, so no two can be mistaken for one).
        return [await ops.run(threading.current_thread) for _ in range(30)]

    assert len({id(thread) for thread in asyncio.run(main())}) == 1


def test_a_stuck_operation_gets_no_successor_waiting_behind_it() -> None:
    release = threading.Event()

    async def main() -> tuple[list[int], int]:
        ops = FileOps(seconds=0.5, slots=4)
        stuck = asyncio.ensure_future(ops.run(release.wait, 30))
        await asyncio.sleep(0.05)
        others = await asyncio.gather(*(ops.run(threading.get_ident) for _ in range(3)))
        with pytest.raises(RequestCancelled):
            await stuck
        # The stuck thread finishes later and is idle again: the next operation may take it.
        release.set()
        await asyncio.sleep(0.05)
        return list(others), await ops.run(threading.get_ident)

    others, after = asyncio.run(main())
    assert len(others) == 3
    assert after in {t.ident for t in threading.enumerate()}


def test_concurrent_operations_run_at_once() -> None:
    gate = threading.Barrier(3, timeout=5)

    async def main() -> list[int]:
        ops = FileOps(seconds=5, slots=4)
        return await asyncio.gather(*(ops.run(gate.wait) for _ in range(3)))

    # Three operations that each wait for the other two: they finish only if all three run.
    assert sorted(asyncio.run(main())) == [0, 1, 2]
