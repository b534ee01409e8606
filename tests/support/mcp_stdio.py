"""``skillsd mcp`` on stdio through the MCP SDK's client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import TypeAdapter

from tests.support.env import daemon_env

DEADLINE = 60


@asynccontextmanager
async def connect(
    tree: dict[str, Path], on_note: Callable[[Any], None] | None = None
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillsd", "mcp"],
        cwd=os.fspath(tree["project"]),
        env=daemon_env(tree),
    )

    async def handler(message: Any) -> None:
        if on_note is not None and not isinstance(message, Exception):
            on_note(message)

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        yield session


def run(body: Callable[[], Any]) -> None:
    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            await body()

    anyio.run(main)


async def request(session: ClientSession, method: str, params: dict[str, Any]) -> Any:
    return await session.send_request(
        types.Request[dict[str, Any], str](method=method, params=params), TypeAdapter(dict)
    )
