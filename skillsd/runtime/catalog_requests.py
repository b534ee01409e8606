"""The catalog's use cases: ``skills.list``, ``skills.commands``, ``skills.search``,
``skills.suggest``, ``skills.prompt``, ``skills.mentions`` and ``context.inspect``.

Each async use case resolves what the request sees, then runs its step (a plain function of the
view and the params, here too) off the loop where it reads files or may take long."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from skillsd.core import limits
from skillsd.core.catalog.catalog_delta import DeltaIds
from skillsd.core.catalog.catalog_prompt import (
    render_active_skills,
    render_catalog,
    render_catalog_within,
)
from skillsd.core.catalog.prompt_budget import budget_tokens, paths_match_reason, paths_matcher
from skillsd.core.catalog.search import SearchIndex
from skillsd.core.catalog.skill_catalog import list_result, without_copies
from skillsd.core.catalog.suggest import (
    LEAD,
    LEAD_FLOOR,
    Scored,
    SuggestIndex,
    check_active_files,
    verdicts,
)
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.listing.use_ledger import Kind
from skillsd.core.skill.fs_resources import read_skill_file_content
from skillsd.core.skill.host_fields import model_may_see
from skillsd.core.skill.mentions import find_mentions, mentions_hint, resolve_mentions
from skillsd.runtime.caller import NOBODY, Caller, note_uses, view_for
from skillsd.runtime.request_view import (
    RequestView,
)
from skillsd.runtime.services import Services, View
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.messages import (
    MAX_QUERY_CHARS,
    CatalogDelta,
    CatalogInfo,
    CommandsParams,
    CommandsResult,
    IgnoredRule,
    InspectParams,
    InspectResult,
    InspectTrust,
    ListParams,
    ListResult,
    MentionsParams,
    MentionsResult,
    PromptParams,
    PromptResult,
    SearchParams,
    SearchResult,
    Suggestion,
    SuggestParams,
    SuggestResult,
    WatchInfo,
)

_Shaped = TypeVar("_Shaped")


async def list_skills(svc: Services, params: ListParams, caller: Caller = NOBODY) -> ListResult:
    """``skills.list``."""
    view = await view_for(
        svc,
        caller,
        params.cwd,
        params.session_id,
        extra_roots=tuple(params.extra_roots or ()),
        force=params.force_reload,
    )
    since = params.since_generation
    delta = view.entry.delta_since(since) if since is not None else None
    return listing(view.seen, params, state_problem=view.entry.state_problem, delta=delta)


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
    face's own form is kept, never a second copy of the list. ``seen``: as
    :func:`~skillsd.runtime.loading_requests.read_file` says."""
    view = seen if seen is not None else await view_for(svc, caller, params.cwd, params.session_id)
    return view.catalog.derived(key, lambda: shape(view, slash_commands(view.seen, params)))


async def search(svc: Services, params: SearchParams, caller: Caller = NOBODY) -> SearchResult:
    view = await view_for(svc, caller, params.cwd, params.session_id)
    index, disabled = await svc.search_index(view)
    return search_in(view.seen, index, params, disabled_ids=disabled)


async def suggest(
    svc: Services,
    params: SuggestParams,
    caller: Caller = NOBODY,
    *,
    blind_to: str | None = None,
) -> SuggestResult:
    """``skills.suggest``: the skills that fit the user's request, ranked off the loop (matching
    ``activeFiles`` against every skill's ``paths`` is CPU work a client chooses the size of)
    under the file operations' time limit. ``blind_to``: the id of a skill whose own trigger
    queries are left out of the ranking's evidence (``skillsd eval`` tests with them)."""
    check_active_files(params.active_files)
    view = await view_for(svc, caller, params.cwd, params.session_id)
    if blind_to is None:
        index = await svc.suggest_index(view)
    else:
        index = await svc.suggest_index_blind_to(view, blind_to)
    similarity = await svc.similarity(view, params.prompt)
    result = await svc.file_ops.run(ranked_suggestions, view.seen, index, params, similarity)
    kinds: tuple[tuple[Kind, bool], ...] = (("activation", True), ("candidate", False))
    for kind, activate in kinds:
        hits = [h.skill for h in result.suggestions if h.activate is activate and not h.loaded]
        note_uses(svc, caller, view, kind, hits)
    return result


async def prompt(svc: Services, params: PromptParams, caller: Caller = NOBODY) -> PromptResult:
    check_active_files(params.active_files)
    view = await view_for(svc, caller, params.cwd, params.session_id)
    index = None
    if params.query is not None and not params.active:
        index, _disabled = await svc.search_index(view)  # the cached one: relevance ranking
    return await svc.file_ops.run(render_prompt, view.seen, params, index)


async def mentions(
    svc: Services, params: MentionsParams, caller: Caller = NOBODY
) -> MentionsResult:
    view = await view_for(svc, caller, params.cwd, params.session_id)
    return mentions_in(view.seen, params)


async def inspect(svc: Services, params: InspectParams, caller: Caller = NOBODY) -> InspectResult:
    view = await view_for(svc, caller, params.cwd, params.session_id)
    watch = await view.entry.settled_watch_info()
    # A session's grants ask for the trust of each granting skill's repository, which reads
    # the state file and the user's config: a thread (the grants are taken as a snapshot).
    return await asyncio.to_thread(
        partial(inspection, watch=watch, state_problem=view.entry.state_problem),
        view.seen,
        params,
    )


# -- the steps, run with what the request sees ----------------------------------------


def listing(
    view: RequestView,
    params: ListParams,
    *,
    state_problem: Diagnostic | None = None,
    delta: DeltaIds | None = None,
) -> ListResult:
    """``skills.list``: the catalog, plus the state file's problem if there is one. With the
    ``delta`` since the client's ``sinceGeneration`` (when the daemon still knows it), the
    changed skills instead of all of them (docs/embedding.md); a ``scope`` filter or
    ``includeDisabled:
    false`` always gets the full list."""
    result = list_result(
        view.catalog,
        scope=params.scope,
        include_disabled=params.include_disabled,
        agent=params.agent,
    )
    result.trusted = view.trusted
    if state_problem is not None:
        result.diagnostics = [*result.diagnostics, state_problem]
    if delta is not None and params.scope is None and params.include_disabled and not params.agent:
        by_id = view.catalog.by_id
        result.skills = []
        result.delta = CatalogDelta(
            added=[by_id[i] for i in delta.added],
            changed=[by_id[i] for i in delta.changed],
            removed=delta.removed,
        )
    return result


def search_in(
    view: RequestView,
    index: SearchIndex,
    params: SearchParams,
    *,
    disabled_ids: frozenset[str] = frozenset(),
) -> SearchResult:
    """``skills.search`` over ``index`` (built from the view's skills) with the config's limits;
    ``disabled_ids`` are skills the view disables that the index still lists."""
    # The wire rejects these at decode time; the CLI builds params directly.
    if not params.query.strip():
        raise SkillsdError(
            "the query is empty: `skillsd list` shows every skill", InvalidParamsData(field="query")
        )
    if len(params.query) > MAX_QUERY_CHARS:
        raise SkillsdError(
            f"the query is longer than {MAX_QUERY_CHARS} characters",
            InvalidParamsData(field="query"),
        )
    config = view.config.search
    return index.search(
        params.query,
        limit=params.limit,
        scope=params.scope,
        tags=params.tags,
        cwd=view.cwd,
        disabled_ids=disabled_ids,
        include_disabled=params.include_disabled,
        default_limit=config.default_limit,
        max_limit=config.max_limit,
    )


def ranked_suggestions(
    view: RequestView,
    index: SuggestIndex,
    params: SuggestParams,
    similarity: Sequence[float] | None = None,
) -> SuggestResult:
    """``skills.suggest``: the enabled, model-invocable skills ``index`` ranks for the request,
    with the view's enable flags; a skill the session loaded is reported, never activated.
    ``similarity``: the semantic stage's answer for this request, when it runs."""
    if not params.prompt.strip():
        raise SkillsdError("the prompt is empty", InvalidParamsData(field="prompt"))
    catalog = view.catalog
    threshold = view.config.suggest.threshold
    loaded = set(view.session.loaded) if view.session is not None else set()
    # Per catalog, not per request: a copy shown once is a property of the catalog.
    shown = catalog.derived(
        "suggest:shown", lambda: frozenset(s.id for s in without_copies(catalog.skills))
    )

    def usable(skill: SkillMetadata) -> bool:
        current = catalog.get(skill.id)
        return current is not None and model_may_see(current) and current.id in shown

    paths_match = (
        paths_match_reason(params.active_files, catalog.repo_root) if params.active_files else None
    )
    ranked = index.rank(
        params.prompt,
        usable=usable,
        paths_match=paths_match,
        similarity=similarity,
        explain=params.limit,
        limit=max(params.limit, 2),  # a lone lead is judged against the runner-up
    )
    skills = [catalog.get(scored.skill.id) or scored.skill for scored in ranked]
    held = [skill.path in loaded for skill in skills]
    near = view.config.suggest.candidate_threshold
    marks = verdicts(
        [scored.score for scored in ranked],
        threshold,
        near,
        held=held,
        foreign=[bool(scored.foreign) for scored in ranked],
    )
    suggestions = [
        Suggestion(
            skill=skill,
            score=mark.score,
            activate=mark.activate,
            candidate=mark.candidate,
            loaded=was_loaded,
            reasons=_suggest_reasons(scored),
        )
        for scored, skill, was_loaded, mark in zip(ranked, skills, held, marks, strict=True)
    ][: params.limit]
    return SuggestResult(
        suggestions=suggestions,
        threshold=threshold,
        candidate_threshold=near,
        lead_floor=LEAD_FLOOR,
        lead=LEAD,
    )


def _suggest_reasons(scored: Scored) -> list[str]:
    reasons = [f"names the skill ({scored.skill.name})"] if scored.named else []
    reasons += [f"{field}: {', '.join(words)}" for field, words in scored.matched.items()]
    if scored.foreign:
        reasons.append(f"never mentions: {', '.join(scored.foreign)}")
    return reasons


def _within_budget(params: PromptParams) -> bool:
    """Whether the request uses the token-budget rendering."""
    return (
        params.budget is not None
        or params.query is not None
        or params.active_files is not None
        or params.max_description_chars is not None
    )


def render_prompt(
    view: RequestView, params: PromptParams, index: SearchIndex | None = None
) -> PromptResult:
    """``skills.prompt``: the catalog for a system prompt, or (``active``) the session's loaded
    skills re-rendered; unset budgets come from the config. With a token budget, a ``query``
    (ranked by ``index``, built here when not given), active files or a description cap, the
    skills kept are chosen by relevance (docs/embedding.md)."""
    budget = view.config.prompt
    fmt = params.format or budget.format
    max_entries = params.max_entries if params.max_entries is not None else budget.max_entries
    if params.active:
        if view.session is None:
            raise SkillsdError("`active` needs `sessionId`", InvalidParamsData())
        # A copy in one step: the event loop may record a load while this thread reads.
        records = list(view.session.loaded.values())
        loaded = []
        for record in records:
            skill = view.catalog.get(record.id)
            if skill is not None:
                loaded.append((skill, read_skill_file_content(skill.path).body))
        return render_active_skills(
            loaded, format=fmt, max_entries=max_entries, max_bytes=params.max_bytes
        )
    # One agent's view, and a skill copied into several folders once.
    catalog = view.catalog
    skills = without_copies(
        catalog.skills if params.agent is None else catalog.seen_by(params.agent)
    )
    max_bytes = params.max_bytes if params.max_bytes is not None else budget.max_bytes
    if not _within_budget(params):
        return render_catalog(
            skills,
            format=fmt,
            max_entries=max_entries,
            max_bytes=max_bytes,
            include_location=params.include_location,
        )
    tokens = budget_tokens(params.budget) if params.budget is not None else None
    if tokens is not None:
        max_bytes = tokens * 4  # the estimate is bytes / 4, rounded up
    matched: list[str] = []
    hidden: frozenset[str] = frozenset()
    if params.active_files is not None:
        matches = paths_matcher(params.active_files, view.catalog.repo_root)
        with_paths = [s for s in skills if s.host is not None and s.host.paths]
        matched = [s.id for s in with_paths if matches(s)]
        hidden = frozenset(s.id for s in with_paths) - set(matched)
    relevant: list[str] = []
    if params.query is not None and params.query.strip():
        index = index or SearchIndex(skills)
        # Past the first few hundred, relevance no longer decides who keeps a description
        # within any budget a prompt has: catalog order does.
        most = limits.PROMPT_RELEVANCE_HITS
        ranked = index.search(
            params.query, limit=most, cwd=view.cwd, default_limit=most, max_limit=most
        )
        relevant = [hit.skill.id for hit in ranked.results]
    return render_catalog_within(
        skills,
        format=fmt,
        include_location=params.include_location,
        max_bytes=max_bytes,
        max_entries=params.max_entries,
        max_description_chars=(
            params.max_description_chars
            if params.max_description_chars is not None
            else limits.PROMPT_DESCRIPTION_CHARS
        ),
        priority=[*matched, *relevant],
        hidden=hidden,
    )


def mentions_in(view: RequestView, params: MentionsParams) -> MentionsResult:
    """``skills.mentions``: ``$name`` and ``[$name](path)`` in user text, resolved."""
    catalog = view.catalog
    names = {s.name for s in catalog.skills if s.enabled}
    found = resolve_mentions(find_mentions(params.text, names), catalog.resolve)
    return MentionsResult(mentions=found, hint=mentions_hint(found))


def inspection(
    view: RequestView,
    params: InspectParams,
    *,
    watch: WatchInfo,
    state_problem: Diagnostic | None = None,
) -> InspectResult:
    """``context.inspect``: the session's state and the catalog with how it is kept current."""
    catalog = view.catalog
    diagnostics = catalog.diagnostics
    if state_problem is not None:
        diagnostics = [*diagnostics, state_problem]
    info = CatalogInfo(
        cwd=catalog.cwd,
        repo_root=catalog.repo_root,
        root=catalog.repo_root,
        generation=catalog.generation,
        watch=watch,
        errors=catalog.errors,
        diagnostics=diagnostics,
        skills=catalog.skills if params.include_skills else [],
    )
    session = view.session
    session_info = session.info(view.is_trusted) if session is not None else None
    trust = None
    if view.trust is not None:
        policy = view.config.policy
        ignored = [
            IgnoredRule(rule=i.rule, key=i.key, until_trusted=i.until_trusted)
            for i in policy.ignored_now(view.trust.trusted)
        ]
        t = view.trust
        trust = InspectTrust(
            repo_root=t.root, root=t.root, trusted=t.trusted, source=t.source, ignored=ignored
        )
    return InspectResult(session=session_info, skills=info, trust=trust)


def slash_commands(view: RequestView, params: CommandsParams) -> CommandsResult:
    """``skills.commands``: user-invocable skills and the legacy command files, by name."""
    return CommandsResult(commands=view.catalog.slash_commands())
