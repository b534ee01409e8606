"""One thin handler per skill method (SPEC 9's table): decode -> operation -> encode.

The endpoint decodes params and encodes results; :class:`~skillsd.daemon.services.Services`
gives the view a request sees (the async part: catalog cache, session); the work is the
operation of the same name in :mod:`skillsd.operations`, run in a worker thread when it reads
files so the event loop never waits on a disk. Session changes stay on the loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from functools import partial

import msgspec

from skillsd import operations as ops
from skillsd.core.errors import SkillsdError
from skillsd.core.model_tools import decode_tool_call, tool_definitions
from skillsd.core.permissions import Rule, RuleError, parse_rule, remember_rule
from skillsd.core.sessions import Session
from skillsd.daemon.endpoint import Connection, InvalidParams, RequestContext, Router
from skillsd.daemon.router import Encoded
from skillsd.daemon.services import Services, View
from skillsd_protocol.messages import (
    AgentsGetParams,
    AgentsGetResult,
    AgentsListParams,
    AgentsListResult,
    CheckParams,
    CheckResult,
    CommandsParams,
    Empty,
    InspectParams,
    InspectResult,
    InvokeParams,
    InvokeResult,
    ListParams,
    ListResult,
    LoadParams,
    LoadResult,
    MentionsParams,
    MentionsResult,
    PromptParams,
    PromptResult,
    ReadFileParams,
    ReadFileResult,
    RememberParams,
    SearchParams,
    SearchResult,
    SessionCloseParams,
    SessionCompactedParams,
    SessionCompactedResult,
    SessionOpenParams,
    SessionOpenResult,
    SetEnabledParams,
    SetEnabledResult,
    ToolsCallParams,
    ToolsCallResult,
    ToolsListParams,
    ToolsListResult,
    TrustGetParams,
    TrustInfo,
    TrustSetParams,
    UnloadParams,
    UnloadResult,
    ValidateParams,
    ValidateResult,
)


def register(router: Router, services: Services) -> None:
    """Add every skill, session and tool method to ``router``."""
    for method, fn in _ASYNC.items():
        router.add(method, partial(fn, services))
    router.add("tools.list", _tools_list, mode="inline")
    router.add("skills.validate", _validate, mode="thread")
    router.emits("skills.changed")


async def _view(svc: Services, ctx: RequestContext, params: object, **kw: object) -> View:
    return await svc.view(
        cwd=getattr(params, "cwd", None),
        session_id=getattr(params, "session_id", None),
        connection_roots=ctx.connection.extra_roots,
        progress=ctx.progress,
        **kw,  # type: ignore[arg-type]
    )


# -- catalog methods ----------------------------------------------------------------------


def _listening(svc: Services, ctx: RequestContext) -> Connection:
    """The request's connection, from now on told ``skills.changed`` for the catalogs it
    asks about (skills.list and skills.commands)."""
    conn = ctx.connection
    if not conn.listens_for_catalogs:
        # A closed connection must stop being notified (and stop being held by the cache).
        conn.listens_for_catalogs = True
        conn.add_close_callback(partial(svc.catalogs.forget_listener, conn))
    return conn


async def _list(svc: Services, params: ListParams, ctx: RequestContext) -> ListResult:
    view = await _view(
        svc,
        ctx,
        params,
        extra_roots=params.extra_roots or (),
        force=params.force_reload,
        listener=_listening(svc, ctx),
    )
    since = params.since_generation
    delta = view.entry.delta_since(since) if since is not None else None
    return ops.list_skills(view.seen, params, state_problem=svc.state.problem, delta=delta)


async def _commands(svc: Services, params: CommandsParams, ctx: RequestContext) -> Encoded:
    view = await _view(svc, ctx, params, listener=_listening(svc, ctx))
    # Every skill is a command: on 10 000 skills the answer is megabytes, encoded once per
    # catalog (a session's enable overrides make a catalog of their own).
    return view.seen.catalog.derived(
        "skills.commands:encoded", lambda: Encoded.of(ops.commands(view.seen, params))
    )


async def _invoke(svc: Services, params: InvokeParams, ctx: RequestContext) -> InvokeResult:
    view = await _view(svc, ctx, params)
    invocation = await svc.run_file_op(ops.invoke, view.seen, params)
    ops.record_invocation(view.session, invocation)
    return invocation.result


async def _search(svc: Services, params: SearchParams, ctx: RequestContext) -> SearchResult:
    view = await _view(svc, ctx, params)
    index, disabled = await svc.search_index(view)
    return ops.search(view.seen, index, params, disabled_ids=disabled)


async def _load(svc: Services, params: LoadParams, ctx: RequestContext) -> LoadResult:
    view = await _view(svc, ctx, params)
    loaded = await svc.run_file_op(ops.load, view.seen, params)
    ops.record_load(view.session, loaded, view.catalog)
    return loaded


async def _unload(svc: Services, params: UnloadParams, ctx: RequestContext) -> UnloadResult:
    view = await _view(svc, ctx, params)
    assert view.session is not None  # session_id is required by the params type
    skill = ops.resolve(view.catalog, params, include_disabled=True)
    unloaded, revoked = view.session.unload(skill)
    return UnloadResult(unloaded=unloaded, revoked_rules=revoked)


async def _read_file(svc: Services, params: ReadFileParams, ctx: RequestContext) -> ReadFileResult:
    view = await _view(svc, ctx, params)
    return await svc.run_file_op(ops.read_file, view.seen, params)


def _validate(params: ValidateParams, ctx: RequestContext) -> ValidateResult:
    return ops.validate(params)


async def _prompt(svc: Services, params: PromptParams, ctx: RequestContext) -> PromptResult:
    view = await _view(svc, ctx, params)
    index = None
    if params.query is not None and not params.active:
        index, _disabled = await svc.search_index(view)  # the cached one: relevance ranking
    return await svc.run_file_op(ops.prompt, view.seen, params, index)


async def _mentions(svc: Services, params: MentionsParams, ctx: RequestContext) -> MentionsResult:
    view = await _view(svc, ctx, params)
    return ops.mentions(view.seen, params)


# -- sessions -----------------------------------------------------------------------------


async def _session_open(
    svc: Services, params: SessionOpenParams, ctx: RequestContext
) -> SessionOpenResult:
    cwd = await asyncio.to_thread(ops.session_cwd, svc.cwd, params.cwd)
    session, resumed = svc.sessions.open(params.session_id, cwd, tuple(params.extra_roots or ()))
    conn = ctx.connection
    if session.id not in conn.held_sessions:
        # Held while this connection lives: the session cap drops unheld sessions first.
        if not conn.held_sessions:
            conn.add_close_callback(partial(_release_sessions, svc, conn))
        conn.held_sessions.add(session.id)
        svc.sessions.hold(session.id)
    return SessionOpenResult(session_id=session.id, cwd=session.cwd, resumed=resumed)


def _release_sessions(svc: Services, conn: Connection) -> None:
    for session_id in conn.held_sessions:
        svc.sessions.release(session_id)
    conn.held_sessions.clear()


async def _session_close(svc: Services, params: SessionCloseParams, ctx: RequestContext) -> Empty:
    svc.sessions.close(params.session_id)  # revokes its grants, drops its memory
    return Empty()


async def _session_compacted(
    svc: Services, params: SessionCompactedParams, ctx: RequestContext
) -> SessionCompactedResult:
    session = svc.sessions.get(params.session_id)
    return SessionCompactedResult(forgotten=session.compacted(params.retain))


async def _inspect(svc: Services, params: InspectParams, ctx: RequestContext) -> InspectResult:
    view = await _view(svc, ctx, params)
    watch = await view.entry.settled_watch_info()
    return ops.inspect(view.seen, params, watch=watch, state_problem=svc.state.problem)


# -- model-facing tools -------------------------------------------------------------------


def _tools_list(params: ToolsListParams, ctx: RequestContext) -> ToolsListResult:
    return ToolsListResult(tools=tool_definitions(params.style or "default"))


async def _tools_call(
    svc: Services, params: ToolsCallParams, ctx: RequestContext
) -> ToolsCallResult:
    # Whatever goes wrong becomes model text, in the order a model can fix it: the call itself,
    # then the session it names.
    try:
        request = decode_tool_call(params.name, params.arguments)
        view = await svc.view(
            cwd=params.cwd,
            session_id=params.session_id,
            connection_roots=ctx.connection.extra_roots,
        )
        index = await svc.search_index(view) if request.operation == "search" else None
    except SkillsdError as exc:
        return ops.tool_failure(exc)
    call = await svc.run_file_op(ops.tools_call, view.seen, request, index)
    if call.loaded is not None:
        ops.record_load(view.session, call.loaded, view.catalog)
    return call.result


# -- policy: permissions, enable flags ----------------------------------------------------


async def _save(fn: Callable[..., None], *args: object, **kw: object) -> None:
    """Run a state-file write off the loop (a failure is ``state_write_failed``, old state kept)."""
    await asyncio.to_thread(fn, *args, **kw)


async def _check(svc: Services, params: CheckParams, ctx: RequestContext) -> CheckResult:
    if not params.tool.strip():
        raise InvalidParams("Invalid params for permissions.check: `tool` is empty")
    session = svc.session(params.session_id)
    config, root = svc.config_for(params.cwd, session)
    check = svc.check(config, root, session, params.tool, params.input)
    return CheckResult(
        decision=check.decision,
        layer=check.layer,
        rule=check.rule,
        granted_by=list(check.granted_by) if check.granted_by is not None else None,
        withheld_by=list(check.withheld_by) if check.withheld_by is not None else None,
    )


async def _remember(svc: Services, params: RememberParams, ctx: RequestContext) -> Empty:
    session = svc.sessions.get(params.session_id)
    try:
        rule = parse_rule(params.rule)
    except RuleError as exc:
        raise InvalidParams(f"Invalid params for permissions.remember: `rule`: {exc}") from None
    if params.persist == "always":
        await _save(svc.state.remember, rule.text, params.decision)
        # The newest answer wins: a session-only one for the same rule would now contradict it.
        for text in [t for t in session.remembered if _same_rule(t, rule)]:
            del session.remembered[text]
    else:
        remember_rule(session.remembered, rule, params.decision)
    return Empty()


def _same_rule(text: str, rule: Rule) -> bool:
    try:
        return parse_rule(text).key == rule.key
    except RuleError:
        return False


# -- workspace trust ----------------------------------------------------------------------


async def _trust_get(svc: Services, params: TrustGetParams, ctx: RequestContext) -> TrustInfo:
    _config, root = svc.config_for(params.cwd, None)
    return ops.trust_info(svc.trust_of(root))


async def _trust_set(svc: Services, params: TrustSetParams, ctx: RequestContext) -> TrustInfo:
    if params.root is not None:
        root = os.path.realpath(os.path.join(svc.cwd, params.root))
        if not os.path.isdir(root):
            raise InvalidParams(f"Invalid params for trust.set: `root` {root!r} is not a directory")
    else:
        _config, root = svc.config_for(params.cwd, None)
    # Every later check reads the state file's decision: in effect for every session at once.
    await _save(svc.state.set_trust, root, params.trusted)
    return ops.trust_info(svc.trust_of(root))


async def _set_enabled(
    svc: Services, params: SetEnabledParams, ctx: RequestContext
) -> SetEnabledResult:
    if params.persist == "session" and params.session_id is None:
        raise InvalidParams(
            'Invalid params for skills.setEnabled: `sessionId` is required with persist "session"'
        )
    view = await _view(svc, ctx, params)
    skill = ops.resolve(view.catalog, params, include_disabled=True)
    session: Session | None = view.session
    if params.persist == "session":
        assert session is not None
        session.enabled_overrides[skill.id] = params.enabled
    else:
        await _save(ops.save_enabled, svc.state, view.catalog, skill, params.enabled)
        if session is not None:
            # The user's newest choice also ends this session's own override of it.
            session.enabled_overrides.pop(skill.id, None)
    after = await _view(svc, ctx, params)
    return SetEnabledResult(skill=after.catalog.get(skill.id) or skill)


# -- agents -------------------------------------------------------------------------------


async def _agents_list(
    svc: Services, params: AgentsListParams, ctx: RequestContext
) -> AgentsListResult:
    view = await _view(svc, ctx, params)
    return await svc.run_file_op(ops.agents_list, view.seen, home=svc.home, env=svc.env)


async def _agents_get(
    svc: Services, params: AgentsGetParams, ctx: RequestContext
) -> AgentsGetResult:
    view = await _view(svc, ctx, params)
    return await svc.run_file_op(ops.agents_get, view.seen, params, home=svc.home, env=svc.env)


_ASYNC: dict[str, Callable[..., Awaitable[msgspec.Struct | Encoded]]] = {
    "skills.list": _list,
    "skills.search": _search,
    "skills.commands": _commands,
    "skills.invoke": _invoke,
    "skills.load": _load,
    "skills.unload": _unload,
    "skills.readFile": _read_file,
    "skills.prompt": _prompt,
    "skills.mentions": _mentions,
    "session.open": _session_open,
    "session.close": _session_close,
    "session.compacted": _session_compacted,
    "context.inspect": _inspect,
    "tools.call": _tools_call,
    "permissions.check": _check,
    "permissions.remember": _remember,
    "trust.get": _trust_get,
    "trust.set": _trust_set,
    "skills.setEnabled": _set_enabled,
    "agents.list": _agents_list,
    "agents.get": _agents_get,
}

__all__ = ["register"]
