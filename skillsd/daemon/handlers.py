"""The skill, session, policy and tool methods on JSON-RPC: each one decodes (the endpoint
does, from the method table), calls its use case in :mod:`skillsd.runtime.use_cases`, and
encodes. What is JSON-RPC's own stays here: which connection hears ``skills.changed``, which
sessions a connection holds, and one encoding of a large answer per catalog."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import msgspec

from skillsd import __version__
from skillsd.core.catalog.model_tools import tool_definitions
from skillsd.jsonrpc.endpoint import Connection, RequestContext, Router, open_connections
from skillsd.jsonrpc.router import Encoded
from skillsd.runtime import process_status
from skillsd.runtime import use_cases as rq
from skillsd.runtime.services import Services
from skillsd_protocol.listing import ListingParams
from skillsd_protocol.messages import (
    CommandsParams,
    DaemonStatusResult,
    Params,
    SessionOpenParams,
    SessionOpenResult,
    ToolsListParams,
    ToolsListResult,
)


def register(router: Router, services: Services) -> None:
    """Add every skill, session and tool method to ``router``."""
    for method, fn in _WITH_CALLER.items():
        router.add(method, partial(_with_caller, fn, services, method in _LISTING))
    for method, fn in _WITHOUT_CALLER.items():
        router.add(method, partial(_without_caller, fn, services))
    router.add("skills.commands", partial(_commands, services))
    router.add("skills.listing", partial(_listing, services))
    router.add("session.open", partial(_session_open, services))
    router.add("tools.list", _tools_list, mode="inline")
    router.add("daemon.status", partial(_status, services))
    router.emits("skills.changed")


#: The methods after which a connection hears ``skills.changed`` for the catalog it asked
#: about.
_LISTING = frozenset({"skills.list", "skills.commands"})


def _caller(svc: Services, ctx: RequestContext, *, listens: bool) -> rq.Caller:
    return rq.Caller(
        extra_roots=tuple(ctx.connection.extra_roots),
        listener=_listener(svc, ctx.connection) if listens else None,
        progress=ctx.progress,
        client=ctx.connection.client_name,
    )


def _listener(svc: Services, conn: Connection) -> Connection:
    """``conn``, told ``skills.changed`` for the catalogs it lists from now on (until it
    closes: then it stops being notified, and stops holding catalogs in the cache)."""
    if not conn.listens_for_catalogs:
        conn.listens_for_catalogs = True
        conn.add_close_callback(partial(svc.catalogs.forget_listener, conn))
    return conn


async def _with_caller(
    fn: Callable[..., Awaitable[msgspec.Struct]],
    svc: Services,
    listens: bool,
    params: Any,
    ctx: RequestContext,
) -> msgspec.Struct:
    return await fn(svc, params, _caller(svc, ctx, listens=listens))


async def _without_caller(
    fn: Callable[..., Awaitable[msgspec.Struct]], svc: Services, params: Any, ctx: RequestContext
) -> msgspec.Struct:
    return await fn(svc, params)


async def _commands(svc: Services, params: CommandsParams, ctx: RequestContext) -> Encoded:
    # Megabytes on 10 000 skills: encoded once per catalog, not once per request.
    caller = _caller(svc, ctx, listens=True)
    return await rq.commands(
        svc, params, caller, lambda _view, result: Encoded.of(result), key="skills.commands:json"
    )


async def _listing(svc: Services, params: ListingParams, ctx: RequestContext) -> Encoded:
    # Over a megabyte on 10 000 skills: encoded once per listing, not once per request.
    caller = _caller(svc, ctx, listens=False)
    encoded: Encoded = await rq.skills_listing(svc, params, caller, Encoded.of, key="json")
    return encoded


async def _session_open(
    svc: Services, params: SessionOpenParams, ctx: RequestContext
) -> SessionOpenResult:
    conn = ctx.connection
    if not conn.held_sessions:
        # Held while this connection lives: the session cap only drops unheld sessions.
        conn.add_close_callback(partial(rq.release_sessions, svc, conn.held_sessions))
    session, resumed = await rq.lease_session(svc, params, conn.held_sessions)
    return SessionOpenResult(session_id=session.id, cwd=session.cwd, resumed=resumed)


def _tools_list(params: ToolsListParams, ctx: RequestContext) -> ToolsListResult:
    return ToolsListResult(tools=tool_definitions(params.style or "default"))


async def _status(svc: Services, params: Params, ctx: RequestContext) -> DaemonStatusResult:
    # Counted on the loop that owns them; /proc is read off it.
    clients, catalogs, sessions = open_connections(), len(svc.catalogs.entries()), len(svc.sessions)
    started, (rss, peak) = await asyncio.to_thread(
        lambda: (process_status.started_at(), process_status.memory())
    )
    return DaemonStatusResult(
        pid=os.getpid(),
        version=__version__,
        started_at=started,
        uptime_seconds=max(0.0, time.time() - started),
        clients=clients,
        catalogs=catalogs,
        sessions=sessions,
        rss_bytes=rss,
        peak_rss_bytes=peak,
    )


_WITH_CALLER: dict[str, Callable[..., Awaitable[msgspec.Struct]]] = {
    "skills.list": rq.list_skills,
    "skills.search": rq.search,
    "skills.suggest": rq.suggest,
    "skills.invoke": rq.invoke,
    "skills.load": rq.load,
    "skills.unload": rq.unload,
    "skills.readFile": rq.read_file,
    "skills.prompt": rq.prompt,
    "skills.mentions": rq.mentions,
    "skills.setEnabled": rq.set_enabled,
    "context.inspect": rq.inspect,
    "tools.call": rq.tools_call,
    "personas.list": rq.personas_list,
    "personas.get": rq.personas_get,
    # Deprecated aliases of personas.*, kept for one release.
    "agents.list": rq.personas_list,
    "agents.get": rq.personas_get,
    "doctor.report": rq.doctor_report,
    "agents.matrix": rq.agents_matrix,
    "skills.install": rq.install_skills,
    "skills.installed": rq.installed_skills,
    "skills.update": rq.update_skills,
    "skills.remove": rq.remove_skill,
    "skills.restore": rq.restore_skills,
    "skills.scan": rq.scan_skills,
    "usage.report": rq.usage_report,
    "skills.profile.plan": rq.profile_plan,
    "skills.profile.apply": rq.profile_apply,
    "skills.profile.reset": rq.profile_reset,
}

_WITHOUT_CALLER: dict[str, Callable[..., Awaitable[msgspec.Struct]]] = {
    "session.close": rq.close_session,
    "session.compacted": rq.compact_session,
    "permissions.check": rq.check,
    "permissions.remember": rq.remember,
    "trust.get": rq.trust_get,
    "trust.set": rq.trust_set,
    "skills.validate": rq.validate,
}

__all__ = ["register"]
