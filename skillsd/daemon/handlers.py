"""One thin handler per skill method (SPEC 9's table): decode is done by the endpoint, the work
by the core, the catalog by :class:`~skillsd.daemon.services.Services`; results are protocol
Structs. ``tools.call`` reuses the same operations and turns failures into model text."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from functools import partial

import msgspec

from skillsd.core.agents import (
    ResolvedSkill,
    agent_dirs,
    check_references,
    discover_agents,
    find_agent,
    render_agent,
    resolve_agent_skills,
)
from skillsd.core.catalog import Catalog, build_catalog, list_result
from skillsd.core.catalog_prompt import render_active_skills, render_catalog
from skillsd.core.config import Config, DiscoveryConfig
from skillsd.core.discovery import Root, RootPlan
from skillsd.core.errors import SkillsdError
from skillsd.core.loading import load_skill
from skillsd.core.mentions import find_mentions, mentions_hint, resolve_mentions
from skillsd.core.model_tools import (
    decode_tool_call,
    error_text,
    list_text,
    read_file_text,
    search_text,
    tool_definitions,
    user_only_text,
)
from skillsd.core.permissions import SKILL_LOAD, Check, RuleError, parse_rule, skill_load_rule
from skillsd.core.resources import list_skill_files, read_resource, read_skill_file_content
from skillsd.core.sessions import Session
from skillsd.core.skillfile import read_skill_file
from skillsd.daemon.endpoint import InvalidParams, RequestContext, Router
from skillsd.daemon.services import Services, View
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.messages import (
    AgentDefinition,
    AgentLoadError,
    AgentsGetParams,
    AgentsGetResult,
    AgentsListParams,
    AgentsListResult,
    CatalogInfo,
    CheckParams,
    CheckResult,
    Empty,
    InspectParams,
    InspectResult,
    ListParams,
    ListResult,
    LoadParams,
    LoadResult,
    MentionsParams,
    MentionsResult,
    PermissionPrompt,
    PromptParams,
    PromptResult,
    ReadFileParams,
    ReadFileResult,
    RefParams,
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


def _resolve(
    catalog: Catalog, ref: RefParams, method: str, *, include_disabled: bool = False
) -> SkillMetadata:
    if ref.path is None and ref.id is None and ref.name is None:
        raise InvalidParams(f"Invalid params for {method}: give one of `path`, `id` or `name`")
    return catalog.resolve(
        path=ref.path, id=ref.id, name=ref.name, include_disabled=include_disabled
    )


# -- catalog methods ----------------------------------------------------------------------


async def _list(svc: Services, params: ListParams, ctx: RequestContext) -> ListResult:
    conn = ctx.connection
    if not conn.state.get("catalogListener"):
        # A closed connection must stop being notified (and stop being held by the cache).
        conn.state["catalogListener"] = True
        conn.add_close_callback(partial(svc.catalogs.forget_listener, conn))
    view = await _view(
        svc,
        ctx,
        params,
        extra_roots=params.extra_roots or (),
        force=params.force_reload,
        listener=ctx.connection,
    )
    result = list_result(view.catalog, scope=params.scope, include_disabled=params.include_disabled)
    result.diagnostics = _with_state_problem(svc, result.diagnostics)
    return result


def _with_state_problem(svc: Services, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A catalog's scan diagnostics plus the state file's problem, if it has one."""
    problem = svc.state.problem
    return diagnostics if problem is None else [*diagnostics, problem]


async def _search(svc: Services, params: SearchParams, ctx: RequestContext) -> SearchResult:
    view = await _view(svc, ctx, params)
    return await svc.search(
        view, params.query, limit=params.limit, scope=params.scope, tags=params.tags
    )


async def _load(svc: Services, params: LoadParams, ctx: RequestContext) -> LoadResult:
    view = await _view(svc, ctx, params)
    skill = _resolve(view.catalog, params, "skills.load")
    _gate_load(svc, view, skill)
    return load_skill(view.session, skill, force=params.force, format=params.format or "codelia")


def _gate_load(svc: Services, view: View, skill: SkillMetadata) -> None:
    """SPEC 7: loading is the tool ``skill_load`` with the skill's name as input."""
    refusal = _load_refusal(
        svc.check(view.catalog.config, view.session, SKILL_LOAD, skill.name), skill
    )
    if refusal is not None:
        raise refusal


def _load_refusal(check: Check, skill: SkillMetadata, **context: str) -> SkillsdError | None:
    """The error for a ``skill_load`` decision that is not ``allow`` (None when it is)."""
    if check.decision == "allow":
        return None
    if check.decision == "deny":
        why = f"the {check.layer} rule {check.rule!r}" if check.rule else "the default action"
        subject = f"loading skill {skill.name!r}"
        if "agent" in context:
            subject = f"agent {context['agent']!r} uses skill {skill.name!r}, whose loading"
        return SkillsdError(
            "permission_denied",
            f"{subject} is denied by {why}",
            **context,
            skill=skill.name,
            layer=check.layer,
            rule=check.rule or skill_load_rule(skill.name),
        )
    rule = skill_load_rule(skill.name)
    return SkillsdError(
        "permission_required",
        f"loading skill {skill.name!r} needs the user's approval: ask them, then call "
        f"permissions.remember with rule {rule!r}",
        skill=skill.name,
        layer=check.layer,
        rule=rule,
    )


async def _unload(svc: Services, params: UnloadParams, ctx: RequestContext) -> UnloadResult:
    view = await _view(svc, ctx, params)
    assert view.session is not None  # session_id is required by the params type
    skill = _resolve(view.catalog, params, "skills.unload", include_disabled=True)
    unloaded, revoked = view.session.unload(skill)
    return UnloadResult(unloaded=unloaded, revoked_rules=revoked)


async def _read_file(svc: Services, params: ReadFileParams, ctx: RequestContext) -> ReadFileResult:
    view = await _view(svc, ctx, params)
    skill = _resolve(view.catalog, params, "skills.readFile")
    return read_resource(skill.dir, params.file, offset=params.offset, length=params.length)


def _validate(params: ValidateParams, ctx: RequestContext) -> ValidateResult:
    path = os.path.abspath(params.path)
    skill_md = path if os.path.basename(path) == "SKILL.md" else os.path.join(path, "SKILL.md")
    if not os.path.exists(skill_md):
        raise SkillsdError(
            "skill_not_found", f"{skill_md}: no SKILL.md there to validate", suggestions=[]
        )
    mode = params.mode or "strict"
    parsed = read_skill_file(skill_md, mode=mode, read_body=True)
    valid = parsed.fields is not None and not any(d.severity == "error" for d in parsed.diagnostics)
    skill = None
    if valid:
        # The skill as a catalog would list it: an extra root that is itself a skill.
        skill_dir = os.path.dirname(skill_md)
        config = Config(validation=mode, discovery=DiscoveryConfig(auto=False))
        plan = RootPlan(cwd=skill_dir, repo_root=skill_dir, roots=(Root(skill_dir, "extra"),))
        listed = build_catalog(plan, config).skills
        skill = listed[0] if listed else None
    return ValidateResult(valid=valid, skill=skill, diagnostics=parsed.diagnostics)


async def _prompt(svc: Services, params: PromptParams, ctx: RequestContext) -> PromptResult:
    view = await _view(svc, ctx, params)
    budget = view.catalog.config.prompt
    fmt = params.format or budget.format
    max_entries = params.max_entries if params.max_entries is not None else budget.max_entries
    if params.active:
        if view.session is None:
            raise InvalidParams("Invalid params for skills.prompt: `active` needs `sessionId`")
        loaded = []
        for record in view.session.loaded.values():
            skill = view.catalog.get(record.id)
            if skill is not None:
                loaded.append((skill, read_skill_file_content(skill.path).body))
        return render_active_skills(
            loaded, format=fmt, max_entries=max_entries, max_bytes=params.max_bytes
        )
    return render_catalog(
        view.catalog.skills,
        format=fmt,
        max_entries=max_entries,
        max_bytes=params.max_bytes if params.max_bytes is not None else budget.max_bytes,
        include_location=params.include_location,
    )


async def _mentions(svc: Services, params: MentionsParams, ctx: RequestContext) -> MentionsResult:
    view = await _view(svc, ctx, params)
    catalog = view.catalog
    names = {s.name for s in catalog.skills if s.enabled}
    mentions = resolve_mentions(find_mentions(params.text, names), catalog.resolve)
    return MentionsResult(mentions=mentions, hint=mentions_hint(mentions))


# -- sessions -----------------------------------------------------------------------------


async def _session_open(
    svc: Services, params: SessionOpenParams, ctx: RequestContext
) -> SessionOpenResult:
    cwd = os.path.join(svc.cwd, params.cwd) if params.cwd is not None else svc.cwd
    if not os.path.isdir(cwd):
        raise InvalidParams(f"Invalid params for session.open: cwd {cwd!r} is not a directory")
    session, resumed = svc.sessions.open(
        params.session_id, os.path.realpath(cwd), tuple(params.extra_roots or ())
    )
    return SessionOpenResult(session_id=session.id, cwd=session.cwd, resumed=resumed)


async def _session_close(svc: Services, params: SessionCloseParams, ctx: RequestContext) -> Empty:
    svc.sessions.close(params.session_id)  # revokes its grants, drops its memory
    return Empty()


async def _session_compacted(
    svc: Services, params: SessionCompactedParams, ctx: RequestContext
) -> SessionCompactedResult:
    session = svc.sessions.get(params.session_id)
    return SessionCompactedResult(forgotten=session.compacted(params.retain))


async def _inspect(svc: Services, params: InspectParams, ctx: RequestContext) -> InspectResult:
    session = svc.session(params.session_id)
    view = await _view(svc, ctx, params)
    catalog = view.catalog
    info = CatalogInfo(
        cwd=catalog.cwd,
        root=catalog.root,
        generation=catalog.generation,
        watch=view.entry.watch_info(),
        errors=catalog.errors,
        diagnostics=_with_state_problem(svc, catalog.diagnostics),
        skills=catalog.skills if params.include_skills else [],
    )
    return InspectResult(session=session.info() if session else None, skills=info)


# -- model-facing tools -------------------------------------------------------------------


def _tools_list(params: ToolsListParams, ctx: RequestContext) -> ToolsListResult:
    return ToolsListResult(tools=tool_definitions(params.style or "default"))


async def _tools_call(
    svc: Services, params: ToolsCallParams, ctx: RequestContext
) -> ToolsCallResult:
    try:
        request = decode_tool_call(params.name, params.arguments)
        view = await svc.view(
            cwd=params.cwd,
            session_id=params.session_id,
            connection_roots=ctx.connection.extra_roots,
        )
        catalog = view.catalog
        if request.operation == "list":
            return ToolsCallResult(content=list_text(catalog.skills), is_error=False)
        if request.operation == "search":
            result = await svc.search(
                view, request.query or "", limit=request.limit, scope=request.scope, for_model=True
            )
            return ToolsCallResult(content=search_text(result), is_error=False)
        skill = catalog.resolve(path=request.path, name=request.name)
        if request.operation == "load":
            if not skill.invocation.model:
                return ToolsCallResult(content=user_only_text(skill), is_error=True)
            check = svc.check(catalog.config, view.session, SKILL_LOAD, skill.name)
            refusal = _load_refusal(check, skill)
            if refusal is not None:
                prompt = PermissionPrompt(decision=check.decision, rule=refusal.data["rule"])
                return ToolsCallResult(
                    content=error_text(refusal), is_error=True, permission=prompt
                )
            loaded = load_skill(view.session, skill, force=False, format="codelia")
            return ToolsCallResult(content=loaded.content, is_error=False)
        window = read_resource(skill.dir, request.file or "")
        return ToolsCallResult(content=read_file_text(window), is_error=False)
    except SkillsdError as exc:
        return ToolsCallResult(content=error_text(exc), is_error=True)


# -- policy: permissions, enable flags ----------------------------------------------------


async def _save(fn: Callable[..., None], *args: object, **kw: object) -> None:
    """Run a state-file write off the loop (a failure is ``state_write_failed``, old state kept)."""
    await asyncio.to_thread(fn, *args, **kw)


async def _check(svc: Services, params: CheckParams, ctx: RequestContext) -> CheckResult:
    if not params.tool.strip():
        raise InvalidParams("Invalid params for permissions.check: `tool` is empty")
    session = svc.session(params.session_id)
    check = svc.check(svc.config_for(params.cwd, session), session, params.tool, params.input)
    return CheckResult(
        decision=check.decision,
        layer=check.layer,
        rule=check.rule,
        granted_by=list(check.granted_by) if check.granted_by is not None else None,
    )


async def _remember(svc: Services, params: RememberParams, ctx: RequestContext) -> Empty:
    session = svc.sessions.get(params.session_id)
    try:
        rule = parse_rule(params.rule)
    except RuleError as exc:
        raise InvalidParams(f"Invalid params for permissions.remember: `rule`: {exc}") from None
    if params.persist == "always":
        await _save(svc.state.remember, rule.key, params.decision)
        # The newest answer wins: a session-only one for the same rule would now contradict it.
        session.remembered.pop(rule.key, None)
    else:
        session.remembered[rule.key] = params.decision
    return Empty()


async def _set_enabled(
    svc: Services, params: SetEnabledParams, ctx: RequestContext
) -> SetEnabledResult:
    if params.persist == "session" and params.session_id is None:
        raise InvalidParams(
            'Invalid params for skills.setEnabled: `sessionId` is required with persist "session"'
        )
    view = await _view(svc, ctx, params)
    skill = _resolve(view.catalog, params, "skills.setEnabled", include_disabled=True)
    session: Session | None = view.session
    if params.persist == "session":
        assert session is not None
        session.enabled_overrides[skill.id] = params.enabled
    else:
        real = view.catalog.real_path_of[skill.id]
        aliases = (skill.id, skill.path, skill.dir, os.path.dirname(real))
        await _save(svc.state.set_enabled, aliases, params.enabled, key=real)
        if session is not None:
            # The user's newest choice also ends this session's own override of it.
            session.enabled_overrides.pop(skill.id, None)
    after = await _view(svc, ctx, params)
    return SetEnabledResult(skill=after.catalog.get(skill.id) or skill)


# -- agents -------------------------------------------------------------------------------


async def _agents(svc: Services, view: View) -> tuple[list[AgentDefinition], list[AgentLoadError]]:
    dirs = agent_dirs(view.cwd, view.catalog.config, home=svc.home, env=svc.env)
    return await asyncio.to_thread(discover_agents, dirs)


def _by_name(catalog: Catalog) -> Callable[[str], SkillMetadata]:
    return lambda name: catalog.resolve(name=name)


async def _agents_list(
    svc: Services, params: AgentsListParams, ctx: RequestContext
) -> AgentsListResult:
    view = await _view(svc, ctx, params)
    agents, errors = await _agents(svc, view)
    errors += check_references(agents, _by_name(view.catalog))
    return AgentsListResult(agents=agents, errors=errors)


async def _agents_get(
    svc: Services, params: AgentsGetParams, ctx: RequestContext
) -> AgentsGetResult:
    view = await _view(svc, ctx, params)
    agents, _errors = await _agents(svc, view)
    agent = find_agent(agents, params.name)
    skills = resolve_agent_skills(agent, _by_name(view.catalog))
    prompt = None
    if params.render:
        for skill in skills:
            # The agent file is the user's own configuration (no approval to ask for), but a
            # deny rule on one of its skills still holds.
            check = svc.check(view.catalog.config, None, SKILL_LOAD, skill.name)
            refusal = _load_refusal(check, skill, agent=agent.name)
            if refusal is not None and check.decision == "deny":
                raise refusal
        resolved = await asyncio.to_thread(
            lambda: [
                ResolvedSkill(s, read_skill_file_content(s.path).body, list_skill_files(s.dir))
                for s in skills
            ]
        )
        prompt = render_agent(agent, resolved)
    return AgentsGetResult(agent=agent, skills=skills, prompt=prompt)


_ASYNC: dict[str, Callable[..., Awaitable[msgspec.Struct]]] = {
    "skills.list": _list,
    "skills.search": _search,
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
    "skills.setEnabled": _set_enabled,
    "agents.list": _agents_list,
    "agents.get": _agents_get,
}

__all__ = ["register"]
