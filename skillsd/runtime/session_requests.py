"""Sessions: ``session.open``, ``session.close``, ``session.compacted``, and the one lease every
face takes on the sessions it opens (:func:`lease_session`, :func:`release_sessions`): a daemon
connection and an MCP client both hold what they opened, so the session cap never drops it,
until they go."""

from __future__ import annotations

import asyncio
import contextlib
import os

from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.policy.sessions import Session
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


async def lease_session(
    svc: Services, params: SessionOpenParams, held: set[str]
) -> tuple[Session, bool]:
    """:func:`open_session` (its cwd a real directory, relative to the process's), and the
    session held for the holder whose sessions ``held`` names, once per holder."""
    session, resumed = await open_session(svc, params)
    if session.id not in held:
        held.add(session.id)
        svc.sessions.hold(session.id)
    return session, resumed


def release_sessions(svc: Services, held: set[str], *, close: bool = False) -> None:
    """The holder is gone: what it held may be dropped by the session cap again, or (``close``:
    a session only it could use) is closed now."""
    for session_id in held:
        svc.sessions.release(session_id)
        if close:
            with contextlib.suppress(SkillsdError):  # closed already by `session.close`
                svc.sessions.close(session_id)
    held.clear()


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
