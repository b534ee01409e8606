"""A channel that collects what a JSON-RPC connection writes, for in-process endpoint tests."""

from __future__ import annotations

import asyncio
import json
from typing import Any


class FakeChannel:
    """Collects what the connection writes; writes can be held back to play a slow reader."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.paused = False
        self.pauses = 0
        self.closed = False
        self.gate = asyncio.Event()
        self.gate.set()
        self.direct = True  # False: every write goes through the writer task
        self.direct_writes = 0

    def try_write(self, data: bytes) -> bool:
        if not self.direct or not self.gate.is_set():
            return False
        self.data += data
        self.direct_writes += 1
        return True

    async def write(self, data: bytes) -> None:
        await self.gate.wait()
        self.data += data

    def pause_reading(self) -> None:
        self.paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        self.paused = False

    def close(self) -> None:
        self.closed = True

    def messages(self) -> list[Any]:
        return [json.loads(line) for line in bytes(self.data).splitlines() if line]
