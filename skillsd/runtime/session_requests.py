"""Sessions: ``session.open``, ``session.close``, ``session.compacted``."""

from __future__ import annotations

import asyncio
import os

from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.sessions import Session
from skillsd.runtime.services import Services
from skillsd_protocol.messages import (
    Empty,
    SessionCloseParams,
    SessionCompactedParams,
    SessionCompactedResult,
    SessionOpenParams,
)


async def open_session(svc: Services, params: SessionOpenParams) -> tuple[Session, bool]:
    """``session.open``: the session (new, or resumed by id) and whether it was resumed."""
    cwd = await asyncio.to_thread(session_cwd, svc.cwd, params.cwd)
    return svc.sessions.open(params.session_id, cwd, tuple(params.extra_roots or ()))


async def close_session(svc: Services, params: SessionCloseParams) -> Empty:
    svc.sessions.close(params.session_id)  # revokes its grants, drops its memory
    return Empty()


async def compact_session(svc: Services, params: SessionCompactedParams) -> SessionCompactedResult:
    session = svc.sessions.get(params.session_id)
    return SessionCompactedResult(forgotten=session.compacted(params.retain))


def session_cwd(daemon_cwd: str, requested: str | None) -> str:
    """The real directory a new session works in (relative to the daemon's cwd)."""
    cwd = os.path.join(daemon_cwd, requested) if requested is not None else daemon_cwd
    if not os.path.isdir(cwd):
        raise SkillsdError(f"cwd {cwd!r} is not a directory", InvalidParamsData())
    return os.path.realpath(cwd)
