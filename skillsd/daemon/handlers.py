"""One thin handler per skill method (SPEC 9's table): decode is done by the endpoint, the work
by the core, the catalog by :class:`~skillsd.daemon.services.Services`; results are protocol
Structs. ``tools.call`` reuses the same operations and turns failures into model text."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from functools import partial

import msgspec

from skillsd.core.catalog import Catalog, build_catalog
from skillsd.core.catalog_prompt import render_active_skills, render_catalog
from skillsd.core.config import Config, DiscoveryConfig
from skillsd.core.discovery import Root, RootPlan
from skillsd.core.errors import SkillsdError
from skillsd.core.loading import load_skill
from skillsd.core.mentions import find_mentions, mentions_hint, resolve_mentions
from skillsd.core.model_tools import (
    decode_tool_call,
    list_text,
    read_file_text,
    search_text,
    tool_definitions,
)
from skillsd.core.resources import read_resource, read_skill_file_content
from skillsd.core.skillfile import read_skill_file
from skillsd.daemon.endpoint import InvalidParams, RequestContext, Router
from skillsd.daemon.services import Services, View
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    CatalogInfo,
    Empty,
    InspectParams,
    InspectResult,
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
    RefParams,
    SearchParams,
    SearchResult,
    SessionCloseParams,
    SessionCompactedParams,
    SessionCompactedResult,
    SessionOpenParams,
    SessionOpenResult,
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
    view = await _view(
        svc,
        ctx,
        params,
        extra_roots=params.extra_roots or (),
        force=params.force_reload,
        listener=ctx.connection,
    )
    catalog = view.catalog
    skills = catalog.skills
    if params.scope is not None or not params.include_disabled:
        skills = [
            s
            for s in skills
            if (params.scope is None or s.scope == params.scope)
            and (params.include_disabled or s.enabled)
        ]
    return ListResult(
        cwd=catalog.cwd,
        root=catalog.root,
        generation=catalog.generation,
        skills=skills,
        errors=catalog.errors,
        diagnostics=catalog.diagnostics,
    )


async def _search(svc: Services, params: SearchParams, ctx: RequestContext) -> SearchResult:
    view = await _view(svc, ctx, params)
    index, disabled = svc.search_index(view)
    search = view.catalog.config.search
    return index.search(
        params.query,
        limit=params.limit,
        scope=params.scope,
        tags=params.tags,
        cwd=view.cwd,
        disabled_ids=disabled,
        default_limit=search.default_limit,
        max_limit=search.max_limit,
    )


async def _load(svc: Services, params: LoadParams, ctx: RequestContext) -> LoadResult:
    view = await _view(svc, ctx, params)
    skill = _resolve(view.catalog, params, "skills.load")
    return load_skill(view.session, skill, force=params.force, format=params.format or "codelia")


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
    svc.sessions.close(params.session_id)
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
        diagnostics=catalog.diagnostics,
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
            index, disabled = svc.search_index(view)
            result = index.search(
                request.query or "",
                limit=request.limit,
                scope=request.scope,
                cwd=view.cwd,
                disabled_ids=disabled,
                default_limit=catalog.config.search.default_limit,
                max_limit=catalog.config.search.max_limit,
            )
            return ToolsCallResult(content=search_text(result), is_error=False)
        skill = catalog.resolve(path=request.path, name=request.name)
        if request.operation == "load":
            loaded = load_skill(view.session, skill, force=False, format="codelia")
            return ToolsCallResult(content=loaded.content, is_error=False)
        window = read_resource(skill.dir, request.file or "")
        return ToolsCallResult(content=read_file_text(window), is_error=False)
    except SkillsdError as exc:
        return ToolsCallResult(content=_model_error(exc), is_error=True)


def _model_error(exc: SkillsdError) -> str:
    """An error the model can act on: what went wrong and what to try instead."""
    text = exc.message
    suggestions = exc.data.get("suggestions")
    if suggestions:
        text += f". Did you mean: {', '.join(suggestions)}?"
    candidates = exc.data.get("candidates")
    if candidates:
        paths = ", ".join(str(c.get("path")) for c in candidates)
        text += f". Several skills have that name; pass `path` instead, one of: {paths}"
    if exc.kind == "session_not_found":
        text += " (the host must open a session before passing its id)"
    return text


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
}

__all__ = ["register"]
