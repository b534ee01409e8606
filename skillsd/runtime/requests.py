"""Every request's use case, written once for every face.

A use case owns the order of its steps: resolve what the request sees (catalog, session,
policy), gate, read files off the event loop (:class:`~skillsd.runtime.file_ops.FileOps`),
record in the session, render. The JSON-RPC handlers and the MCP bridge decode their wire into
the params Struct, call the use case with a :class:`Caller` describing themselves, and encode
its result; nothing else.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from skillsd import operations as ops
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.model_tools import decode_tool_call
from skillsd.core.permissions import Check, Rule, RuleError, parse_rule, remember_rule
from skillsd.core.sessions import Session
from skillsd.core.skillfile import SKILL_FILE
from skillsd.core.suggest import check_active_files
from skillsd.core.use_ledger import Kind, make_record
from skillsd.runtime.catalog_cache import Listener, Progress
from skillsd.runtime.remote_serving import remote_contents, remote_file_names
from skillsd.runtime.search_answers import search_tool
from skillsd.runtime.services import Services, View
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    AgentsGetParams,
    AgentsGetResult,
    AgentsListParams,
    AgentsListResult,
    CheckParams,
    CheckResult,
    CommandsParams,
    CommandsResult,
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
    RefParams,
    RememberParams,
    SearchParams,
    SearchResult,
    SessionCloseParams,
    SessionCompactedParams,
    SessionCompactedResult,
    SessionOpenParams,
    SetEnabledParams,
    SetEnabledResult,
    SuggestParams,
    SuggestResult,
    ToolsCallParams,
    ToolsCallResult,
    TrustGetParams,
    TrustInfo,
    TrustSetParams,
    UnloadParams,
    UnloadResult,
)

__all__ = [
    "Caller",
    "agents_get",
    "agents_list",
    "check",
    "close_session",
    "commands",
    "compact_session",
    "inspect",
    "invoke",
    "list_skills",
    "load",
    "mentions",
    "model_view",
    "open_session",
    "prompt",
    "read_file",
    "remember",
    "search",
    "set_enabled",
    "skill_contents",
    "skill_files",
    "tools_call",
    "trust_get",
    "trust_set",
    "unload",
]


@dataclass(frozen=True, slots=True)
class Caller:
    """What a use case needs to know about the face asking: roots its connection added, who
    hears about changes to the catalogs this request sees (the face decides which requests
    subscribe), where progress goes, and whether the host already asked its user (an MCP client
    approves each tool call itself, which answers ``ask``), and its name (the client's or
    agent's, for the use ledger)."""

    extra_roots: tuple[str, ...] = ()
    listener: Listener | None = None
    progress: Progress | None = None
    host_approves: bool = False
    client: str | None = None


_NOBODY = Caller()
_Shaped = TypeVar("_Shaped")


def _bad(field: str, why: str) -> SkillsdError:
    """A bad parameter (each face prefixes the method it came with)."""
    return SkillsdError(f"`{field}`{why}", InvalidParamsData(field=field))


async def _view(
    svc: Services,
    caller: Caller,
    cwd: str | None,
    session_id: str | None,
    *,
    extra_roots: tuple[str, ...] = (),
    force: bool = False,
) -> View:
    view = await svc.view(
        cwd=cwd,
        session_id=session_id,
        connection_roots=caller.extra_roots,
        extra_roots=extra_roots,
        force=force,
        listener=caller.listener,
        progress=caller.progress,
    )
    return model_view(view) if caller.host_approves else view


def model_view(view: View) -> View:
    """``view`` for a host that asked its user before calling: an ``ask`` counts as ``allow``
    (a ``deny`` still refuses)."""
    seen = view.seen
    check = seen.check
    if check is None:
        return view

    def approved(session: Session | None, tool: str, input: str | None) -> Check:
        result = check(session, tool, input)
        if result.decision == "ask":
            return Check("allow", result.layer, result.rule)
        return result

    return View(
        ops.OperationView(seen.catalog, seen.session, approved, seen.trust, seen.is_trusted),
        view.entry,
    )


def _note(
    svc: Services, caller: Caller, view: View, kind: Kind, skills: Iterable[SkillMetadata]
) -> None:
    """Record uses (or suggestions) served in the use ledger (docs/usage.md); its writer
    thread does the writing, so this never waits on the disk."""
    ledger = svc.ledger
    if ledger is None:
        return
    session = view.session.id if view.session is not None else None
    now = time.time()
    root = view.catalog.root
    ledger.record(
        *(
            make_record(kind, s, repo=root, at=now, client=caller.client, session=session)
            for s in skills
        )
    )


# -- the catalog ---------------------------------------------------------------------------


async def list_skills(svc: Services, params: ListParams, caller: Caller = _NOBODY) -> ListResult:
    """``skills.list``."""
    view = await _view(
        svc,
        caller,
        params.cwd,
        params.session_id,
        extra_roots=tuple(params.extra_roots or ()),
        force=params.force_reload,
    )
    since = params.since_generation
    delta = view.entry.delta_since(since) if since is not None else None
    return ops.list_skills(view.seen, params, state_problem=svc.state.problem, delta=delta)


async def commands(
    svc: Services,
    params: CommandsParams,
    caller: Caller,
    shape: Callable[[View, CommandsResult], _Shaped],
    *,
    key: str,
    seen: View | None = None,
) -> _Shaped:
    """``skills.commands`` in the form a face sends it (``shape``: an encoding, a prompt list),
    built once per catalog under ``key``: on 10 000 skills the answer is megabytes, so only the
    face's own form is kept, never a second copy of the list. ``seen``: as :func:`read_file`
    says."""
    view = seen if seen is not None else await _view(svc, caller, params.cwd, params.session_id)
    return view.catalog.derived(key, lambda: shape(view, ops.commands(view.seen, params)))


async def search(svc: Services, params: SearchParams, caller: Caller = _NOBODY) -> SearchResult:
    view = await _view(svc, caller, params.cwd, params.session_id)
    index, disabled = await svc.search_index(view)
    return ops.search(view.seen, index, params, disabled_ids=disabled)


async def suggest(svc: Services, params: SuggestParams, caller: Caller = _NOBODY) -> SuggestResult:
    """``skills.suggest``: the skills that fit the user's request, ranked off the loop (matching
    ``activeFiles`` against every skill's ``paths`` is CPU work a client chooses the size of)
    under the file operations' time limit."""
    check_active_files(params.active_files)
    view = await _view(svc, caller, params.cwd, params.session_id)
    index = await svc.suggest_index(view)
    similarity = await svc.similarity(view, params.prompt)
    result = await svc.file_ops.run(ops.suggest, view.seen, index, params, similarity)
    kinds: tuple[tuple[Kind, bool], ...] = (("activation", True), ("candidate", False))
    for kind, activate in kinds:
        hits = [h.skill for h in result.suggestions if h.activate is activate and not h.loaded]
        _note(svc, caller, view, kind, hits)
    return result


async def load(svc: Services, params: LoadParams, caller: Caller = _NOBODY) -> LoadResult:
    """``skills.load``: gate, read off the loop, then remember in the session."""
    view = await _view(svc, caller, params.cwd, params.session_id)
    await _remote_ready(svc, view, params)
    loaded = await svc.file_ops.run(ops.load, view.seen, params)
    ops.record_load(view.session, loaded, view.catalog)
    _note(svc, caller, view, "load", [loaded.skill])
    return loaded


async def unload(svc: Services, params: UnloadParams, caller: Caller = _NOBODY) -> UnloadResult:
    view = await _view(svc, caller, params.cwd, params.session_id)
    assert view.session is not None  # session_id is required by the params type
    skill = ops.resolve(view.catalog, params, include_disabled=True)
    unloaded, revoked = view.session.unload(skill)
    return UnloadResult(unloaded=unloaded, revoked_rules=revoked)


async def read_file(
    svc: Services,
    params: ReadFileParams,
    caller: Caller = _NOBODY,
    *,
    model: bool = False,
    seen: View | None = None,
) -> ReadFileResult:
    """``skills.readFile``, or (``model``) a read on the model's behalf, which obeys the
    model's rules: a skill the model may not invoke is refused. ``seen``: the view this
    request took already for ``caller``, ``params.cwd`` and ``params.session_id``."""
    view = seen if seen is not None else await _view(svc, caller, params.cwd, params.session_id)
    await _remote_ready(svc, view, params, deny_only=not model)
    window = await svc.file_ops.run(ops.read_file, view.seen, params, model=model)
    if model and params.offset == 0 and window.file == SKILL_FILE:
        # A host reading a skill's SKILL.md for its model (an MCP resource) is loading it.
        _note(svc, caller, view, "load", [ops.resolve(view.catalog, params)])
    return window


async def invoke(
    svc: Services, params: InvokeParams, caller: Caller = _NOBODY, *, seen: View | None = None
) -> InvokeResult:
    """``skills.invoke``: substitute off the loop (under the time limit), then record.
    ``seen``: the view this request took already (as :func:`read_file` says)."""
    view = seen if seen is not None else await _view(svc, caller, params.cwd, params.session_id)
    command = (params.command or "").lstrip("/").split(maxsplit=1)
    target = RefParams(name=command[0]) if command else params
    await _remote_ready(svc, view, target, deny_only=True)
    invocation = await svc.file_ops.run(ops.invoke, view.seen, params)
    ops.record_invocation(view.session, invocation)
    if isinstance(invocation.source, SkillMetadata):
        _note(svc, caller, view, "invoke", [invocation.source])
    return invocation.result


async def prompt(svc: Services, params: PromptParams, caller: Caller = _NOBODY) -> PromptResult:
    check_active_files(params.active_files)
    view = await _view(svc, caller, params.cwd, params.session_id)
    index = None
    if params.query is not None and not params.active:
        index, _disabled = await svc.search_index(view)  # the cached one: relevance ranking
    return await svc.file_ops.run(ops.prompt, view.seen, params, index)


async def mentions(
    svc: Services, params: MentionsParams, caller: Caller = _NOBODY
) -> MentionsResult:
    view = await _view(svc, caller, params.cwd, params.session_id)
    return ops.mentions(view.seen, params)


async def inspect(svc: Services, params: InspectParams, caller: Caller = _NOBODY) -> InspectResult:
    view = await _view(svc, caller, params.cwd, params.session_id)
    watch = await view.entry.settled_watch_info()
    return ops.inspect(view.seen, params, watch=watch, state_problem=svc.state.problem)


# -- what the model may read without loading (the MCP skills extension) ---------------------


async def skill_contents(
    svc: Services,
    cwd: str,
    session_id: str | None,
    skills: list[SkillMetadata],
    caller: Caller = _NOBODY,
    *,
    strict: bool = False,
) -> list[ops.SkillContents]:
    """Each skill's frontmatter and file digests, gated like a model read: a refused skill is
    left out of a listing, or (``strict``) refuses the request."""
    view = await _view(svc, caller, cwd, session_id)

    def gather() -> list[ops.SkillContents]:
        found = []
        for skill in skills:
            try:
                if skill.remote is not None:  # what its remote lists, loaded or not
                    found.append(remote_contents(svc.remotes.store, view.seen, skill))
                else:
                    found.append(ops.skill_contents(view.seen, skill))
            except SkillsdError:
                if strict:
                    raise
        return found

    return await svc.file_ops.run(gather)


async def skill_files(
    svc: Services,
    cwd: str,
    session_id: str | None,
    skill: SkillMetadata,
    caller: Caller = _NOBODY,
) -> list[str]:
    """The files of ``skill`` (``SKILL.md`` first), gated like a model read."""
    view = await _view(svc, caller, cwd, session_id)
    if skill.remote is not None:
        return await svc.file_ops.run(remote_file_names, svc.remotes.store, view.seen, skill)
    return await svc.file_ops.run(ops.skill_file_names, view.seen, skill)


# -- model-facing tools ---------------------------------------------------------------------


async def tools_call(
    svc: Services, params: ToolsCallParams, caller: Caller = _NOBODY
) -> ToolsCallResult:
    """``tools.call`` (and the MCP tools): whatever goes wrong becomes model text, in the order a
    model can fix it: the call itself, then the session it names."""
    try:
        request = decode_tool_call(params.name, params.arguments)
        view = await _view(svc, caller, params.cwd, params.session_id)
        index = await svc.search_index(view) if request.operation == "search" else None
        if request.operation in ("load", "read_file"):
            await _remote_ready(svc, view, RefParams(name=request.name, path=request.path))
    except SkillsdError as exc:
        return ops.tool_failure(exc)
    if index is not None:  # in memory: answered on the loop, remembered per catalog
        return search_tool(view, request, index)
    call = await svc.file_ops.run(ops.tools_call, view.seen, request, index)
    if call.loaded is not None:
        ops.record_load(view.session, call.loaded, view.catalog)
        _note(svc, caller, view, "load", [call.loaded.skill])
    return call.result


async def _remote_ready(
    svc: Services, view: View, ref: RefParams, *, deny_only: bool = False
) -> None:
    """A remote skill's verified files in place before it is read (docs/remote.md); a skill
    that does not resolve is left to the operation to refuse. ``deny_only``: the operation lets
    an ``ask`` through (a read or an invocation the user makes), so the fetch must too: what it
    reads is never the folder's placeholder."""
    if not view.catalog.plan.remote_roots:
        return
    try:
        skill = ops.resolve(view.catalog, ref, include_disabled=True)
    except SkillsdError:
        return
    if skill.remote is None:
        return
    # Nothing is fetched for a load the policy would not let through (not even to ask).
    loaded = view.session is not None and skill.path in view.session.loaded
    lenient = deny_only or loaded
    if await svc.file_ops.run(ops.gate_load, view.seen, skill.name, deny_only=lenient):
        return
    await svc.remotes.ready(skill, view.catalog.config, view.seen.trusted)


# -- sessions ------------------------------------------------------------------------------


async def open_session(svc: Services, params: SessionOpenParams) -> tuple[Session, bool]:
    """``session.open``: the session (new, or resumed by id) and whether it was resumed."""
    cwd = await asyncio.to_thread(ops.session_cwd, svc.cwd, params.cwd)
    return svc.sessions.open(params.session_id, cwd, tuple(params.extra_roots or ()))


async def close_session(svc: Services, params: SessionCloseParams) -> Empty:
    svc.sessions.close(params.session_id)  # revokes its grants, drops its memory
    return Empty()


async def compact_session(svc: Services, params: SessionCompactedParams) -> SessionCompactedResult:
    session = svc.sessions.get(params.session_id)
    return SessionCompactedResult(forgotten=session.compacted(params.retain))


# -- policy: permissions, enable flags -------------------------------------------------------


async def _save(fn: Callable[..., None], *args: object, **kw: object) -> None:
    """Run a state-file write off the loop (a failure is ``state_write_failed``, old state kept)."""
    await asyncio.to_thread(fn, *args, **kw)


async def check(svc: Services, params: CheckParams) -> CheckResult:
    if not params.tool.strip():
        raise _bad("tool", " is empty")
    session = svc.session(params.session_id)
    config, root = svc.config_for(params.cwd, session)
    decided = svc.check(config, root, session, params.tool, params.input)
    return CheckResult(
        decision=decided.decision,
        layer=decided.layer,
        rule=decided.rule,
        granted_by=list(decided.granted_by) if decided.granted_by is not None else None,
        withheld_by=list(decided.withheld_by) if decided.withheld_by is not None else None,
    )


async def remember(svc: Services, params: RememberParams) -> Empty:
    session = svc.sessions.get(params.session_id)
    try:
        rule = parse_rule(params.rule)
    except RuleError as exc:
        raise _bad("rule", f": {exc}") from None
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


def _enable_persist(params: SetEnabledParams) -> str:
    """Where ``skills.setEnabled`` keeps its flag: ``scope`` names the same choice as
    ``persist``; a ``persist`` other than the default that says otherwise is a bad ``scope``."""
    if params.scope is None:
        return params.persist
    if params.persist not in ("user", params.scope):
        raise _bad("scope", f' "{params.scope}" disagrees with persist "{params.persist}"')
    return params.scope


async def set_enabled(
    svc: Services, params: SetEnabledParams, caller: Caller = _NOBODY
) -> SetEnabledResult:
    persist = _enable_persist(params)
    if persist == "session" and params.session_id is None:
        raise _bad(
            "sessionId", f' is required with {"scope" if params.scope else "persist"} "session"'
        )
    view = await _view(svc, caller, params.cwd, params.session_id)
    skill = ops.resolve(view.catalog, params, include_disabled=True)
    session = view.session
    if persist == "session":
        assert session is not None
        session.enabled_overrides[skill.id] = params.enabled
    else:
        project = persist == "project"
        await _save(
            ops.save_enabled, svc.state, view.catalog, skill, params.enabled, project=project
        )
        if session is not None:
            # The user's newest choice also ends this session's own override of it.
            session.enabled_overrides.pop(skill.id, None)
    after = await _view(svc, caller, params.cwd, params.session_id)
    return SetEnabledResult(skill=after.catalog.get(skill.id) or skill)


# -- workspace trust -----------------------------------------------------------------------


async def trust_get(svc: Services, params: TrustGetParams) -> TrustInfo:
    _config, root = svc.config_for(params.cwd, None)
    return ops.trust_info(svc.trust_of(root))


async def trust_set(svc: Services, params: TrustSetParams) -> TrustInfo:
    if params.root is not None:
        root = os.path.realpath(os.path.join(svc.cwd, params.root))
        if not os.path.isdir(root):
            raise _bad("root", f" {root!r} is not a directory")
    else:
        _config, root = svc.config_for(params.cwd, None)
    # Every later check reads the state file's decision: in effect for every session at once.
    await _save(svc.state.set_trust, root, params.trusted)
    return ops.trust_info(svc.trust_of(root))


# -- agents --------------------------------------------------------------------------------


async def agents_list(
    svc: Services, params: AgentsListParams, caller: Caller = _NOBODY
) -> AgentsListResult:
    view = await _view(svc, caller, params.cwd, None)
    return await svc.file_ops.run(ops.agents_list, view.seen, home=svc.home, env=svc.env)


async def agents_get(
    svc: Services, params: AgentsGetParams, caller: Caller = _NOBODY
) -> AgentsGetResult:
    view = await _view(svc, caller, params.cwd, None)
    return await svc.file_ops.run(ops.agents_get, view.seen, params, home=svc.home, env=svc.env)
