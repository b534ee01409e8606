"""The operations behind every face: one synchronous function per concern.

The daemon's handlers, the CLI and ``tools.call`` (and, through the daemon, the TUI) run the
same functions here, so each request is assembled once: config defaults, the ``skill_load``
gate and its refusal, the shapes of the results. Each operation takes what the request sees
(:class:`OperationView`) plus its params Struct and returns a protocol Struct, or raises
:class:`~skillsd.core.errors.SkillsdError`.

Nothing here awaits. A daemon runs the operations that read files in a worker thread and keeps
session changes on its event loop: :func:`load` only reads, :func:`record_load` remembers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillsd.core import limits
from skillsd.core.bounded_read import sha256_of_file
from skillsd.core.catalog import Catalog, list_result, without_copies
from skillsd.core.catalog_build import build_catalog
from skillsd.core.catalog_delta import DeltaIds
from skillsd.core.catalog_prompt import (
    render_active_skills,
    render_catalog,
    render_catalog_within,
)
from skillsd.core.commands import CommandFile
from skillsd.core.config import Config, DiscoveryConfig
from skillsd.core.discovery import Root, RootPlan, compute_roots
from skillsd.core.effective_config import ConfigSource
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.invocation import InvokedBody, TooLarge, invoke_body, parse_command
from skillsd.core.loading import load_skill, record_load
from skillsd.core.mentions import find_mentions, mentions_hint, resolve_mentions
from skillsd.core.model_tools import (
    ToolRequest,
    error_text,
    read_file_text,
    search_text,
    user_only_text,
)
from skillsd.core.name_distance import closest_names
from skillsd.core.permissions import SKILL_LOAD, Check, evaluate, skill_load_rule
from skillsd.core.personas import (
    ResolvedSkill,
    agent_dirs,
    check_references,
    discover_agents,
    find_agent,
    render_agent,
    resolve_agent_skills,
)
from skillsd.core.prompt_budget import budget_tokens, paths_match_reason, paths_matcher
from skillsd.core.resources import list_skill_files, read_resource, read_skill_file_content
from skillsd.core.search import SearchIndex
from skillsd.core.sessions import Session
from skillsd.core.skill_render import render_skill
from skillsd.core.skillfile import (
    SKILL_FILE,
    Mode,
    ParsedSkillFile,
    read_skill_file,
    written_frontmatter,
)
from skillsd.core.state import StateStore
from skillsd.core.suggest import Scored, SuggestIndex, verdicts
from skillsd.core.trust import TrustState, resolve_trust
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.errors import (
    NotModelInvocableData,
    NotUserInvocableData,
    PermissionDeniedData,
    PermissionRequiredData,
    SkillNotFoundData,
    TooLargeData,
)
from skillsd_protocol.messages import (
    MAX_QUERY_CHARS,
    AgentDefinition,
    AgentLoadError,
    AgentsGetParams,
    AgentsGetResult,
    AgentsListResult,
    CatalogDelta,
    CatalogInfo,
    CommandsParams,
    CommandsResult,
    Decision,
    IgnoredRule,
    InspectParams,
    InspectResult,
    InspectTrust,
    InvokeParams,
    InvokeResult,
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
    SearchParams,
    SearchResult,
    Suggestion,
    SuggestParams,
    SuggestResult,
    ToolsCallResult,
    TrustInfo,
    ValidateParams,
    ValidateResult,
    WatchInfo,
)

__all__ = [
    "FileDigest",
    "InvokeOutcome",
    "OperationView",
    "PolicyCheck",
    "ToolCall",
    "agents_get",
    "agents_list",
    "commands",
    "gate_load",
    "gate_model_read",
    "inspect",
    "invoke",
    "list_skills",
    "load",
    "local_view",
    "mentions",
    "prompt",
    "read_file",
    "record_invocation",
    "record_load",
    "resolve",
    "search",
    "session_cwd",
    "skill_contents",
    "skill_file_names",
    "skill_file_verdict",
    "tool_failure",
    "tools_call",
    "trust_info",
    "validate",
]

#: The policy decision for one call: (session whose memory and grants count, tool, input).
PolicyCheck = Callable[[Session | None, str, str | None], Check]


#: What a skill id looks like (docs/embedding.md: 24 hex digits).
_SKILL_ID = re.compile(r"[0-9a-f]{24}")


@dataclass(frozen=True, slots=True)
class OperationView:
    """What an operation sees: the request's catalog, its session, and the permission policy.

    ``check`` is None when the user acts directly (the CLI): nothing is gated then
    (docs/permissions.md).
    ``trust`` is the trust of the catalog's repository root, and ``is_trusted`` answers it for
    any root (a session may hold skills loaded from another repository): workspace trust.
    """

    catalog: Catalog
    session: Session | None = None
    check: PolicyCheck | None = None
    trust: TrustState | None = None
    is_trusted: Callable[[str], bool] | None = None

    @property
    def trusted(self) -> bool:
        """Whether the catalog's repository root is trusted (not known: not trusted)."""
        return self.trust is not None and self.trust.trusted

    @property
    def cwd(self) -> str:
        return self.catalog.cwd

    @property
    def config(self) -> Config:
        return self.catalog.config


def local_view(
    cwd: str,
    *,
    env: Mapping[str, str],
    home: str,
    extra_roots: Iterable[str] = (),
    disabled: Callable[[str], Collection[str]] = lambda _root: frozenset(),
    trust_decisions: Mapping[str, bool] | None = None,
    before_build: Callable[[Config, RootPlan, TrustState], None] | None = None,
) -> OperationView:
    """The view of a process without a daemon: the catalog of ``cwd`` (a real directory), built
    now, with no session and no policy, the user's enable flags in its repository (``disabled``
    of the repository root) and the repository's trust (the state file's ``trust_decisions``,
    else the config). The repo root is found once, with the config. ``before_build`` runs once
    the roots and trust are known (the CLI refreshes remote listings there)."""
    config, _sources, repo_root = ConfigSource(env).for_cwd(cwd)
    plan = compute_roots(
        cwd, config, home=home, env=env, client_extra_roots=extra_roots, repo_root=repo_root
    )
    # The merged config's [trust] is the user's: layering drops a project's.
    trust = resolve_trust(plan.repo_root, trust_decisions or {}, config.trust, home=home)
    if before_build is not None:
        before_build(config, plan, trust)
    catalog = build_catalog(plan, config, disabled=disabled(plan.repo_root), trusted=trust.trusted)
    return OperationView(catalog, trust=trust)


# -- resolving and gating --------------------------------------------------------------------


def resolve(catalog: Catalog, ref: RefParams, *, include_disabled: bool = False) -> SkillMetadata:
    """The skill a request names (``path`` > ``id`` > ``name``); naming none is a bad param."""
    if ref.path is None and ref.id is None and ref.name is None:
        raise SkillsdError("give one of `path`, `id` or `name`", InvalidParamsData())
    return catalog.resolve(
        path=ref.path, id=ref.id, name=ref.name, include_disabled=include_disabled
    )


def ref_from_text(catalog: Catalog, text: str) -> RefParams:
    """A skill reference a person typed: a path if it looks like one, an id if one matches, else
    a name."""
    if os.sep in text or os.path.exists(os.path.join(catalog.cwd, text)):
        return RefParams(path=text)
    if _SKILL_ID.fullmatch(text) and catalog.get(text) is not None:
        return RefParams(id=text)
    return RefParams(name=text)


def save_enabled(
    state: StateStore,
    catalog: Catalog,
    skill: SkillMetadata,
    enabled: bool,
    *,
    project: bool = False,
) -> None:
    """The user's enable flag of ``skill`` in the state file (``skills.setEnabled`` with
    ``persist: "user"`` and ``skillsd enable|disable``), or (``project``) its flag in the
    catalog's repository only (``persist: "project"``, ``--project``), kept in the state file
    under the repository's root, never in the repository. Writes a file: run it off the loop."""
    real = catalog.real_path_of[skill.id]
    # Every spelling a hand-edited state file may use, so enabling clears them all.
    aliases = (skill.id, skill.path, skill.dir, os.path.dirname(real))
    if project:
        state.set_project_enabled(catalog.root, aliases, enabled, key=real)
    else:
        state.set_enabled(aliases, enabled, key=real)


def gate_load(
    view: OperationView,
    name: str,
    *,
    agent: str | None = None,
    action: str = "loading",
    deny_only: bool = False,
) -> SkillsdError | None:
    """Loading is the tool ``skill_load`` with the skill's (or command's) ``name`` as input
    (docs/permissions.md). The error for a decision that is not ``allow``, or None.

    For an ``agent``'s skill the agent file is the user's own configuration, so only a deny
    holds (with no session's memory): there is nobody to ask. ``action`` words the refusal
    ("reading" the skill's files, "invoking" it), and ``deny_only`` lets an ``ask`` through."""
    if view.check is None:
        return None
    session = None if agent is not None else view.session
    check = view.check(session, SKILL_LOAD, name)
    if check.decision == "allow" or ((agent is not None or deny_only) and check.decision != "deny"):
        return None
    if check.decision == "deny":
        why = f"the {check.layer} rule {check.rule!r}" if check.rule else "the default action"
        subject = f"{action} skill {name!r}"
        if agent is not None:
            subject = f"agent {agent!r} uses skill {name!r}, whose loading"
        return SkillsdError(
            f"{subject} is denied by {why}",
            PermissionDeniedData(
                skill=name,
                layer=check.layer,
                rule=check.rule or skill_load_rule(name),
                agent=agent,
            ),
        )
    rule = skill_load_rule(name)
    return SkillsdError(
        f"{action} skill {name!r} needs the user's approval "
        "(as loading it does): ask them, then call "
        f"permissions.remember with rule {rule!r}",
        PermissionRequiredData(skill=name, layer=check.layer, rule=rule),
    )


# -- the catalog -----------------------------------------------------------------------------


def list_skills(
    view: OperationView,
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


def search(
    view: OperationView,
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


def suggest(
    view: OperationView,
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
        return (
            current is not None
            and current.enabled
            and current.invocation.model
            and current.id in shown
        )

    paths_match = (
        paths_match_reason(params.active_files, catalog.root) if params.active_files else None
    )
    ranked = index.rank(
        params.prompt,
        usable=usable,
        paths_match=paths_match,
        similarity=similarity,
        explain=params.limit,
        limit=params.limit,
    )
    skills = [catalog.get(scored.skill.id) or scored.skill for scored in ranked]
    held = [skill.path in loaded for skill in skills]
    near = view.config.suggest.candidate_threshold
    marks = verdicts([scored.score for scored in ranked], threshold, near, held=held)
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
    ]
    return SuggestResult(suggestions=suggestions, threshold=threshold, candidate_threshold=near)


def _suggest_reasons(scored: Scored) -> list[str]:
    reasons = [f"names the skill ({scored.skill.name})"] if scored.named else []
    reasons += [f"{field}: {', '.join(words)}" for field, words in scored.matched.items()]
    return reasons


def load(view: OperationView, params: LoadParams) -> LoadResult:
    """``skills.load``: resolve, gate, then read and render (or the reload reminder).

    Reads files; records nothing in the session (give the result to :func:`record_load`)."""
    skill = resolve(view.catalog, params)
    refusal = gate_load(view, skill.name)
    if refusal is not None:
        raise refusal
    loaded = load_skill(view.session, skill, force=params.force, format=params.format or "codelia")
    if not view.trusted and view.catalog.grants_need_trust(skill):
        loaded.withheld_grants = list(dict.fromkeys(skill.allowed_tools or ()))
    return loaded


def gate_model_read(view: OperationView, skill: SkillMetadata) -> None:
    """A read on the model's behalf (its tools, MCP resources and the skills extension) obeys
    the model's rules: refused for a skill only the user may invoke, and checked like a load
    (a deny refuses; a skill the session has not loaded also needs the load's ``ask``)."""
    if not skill.invocation.model:
        raise SkillsdError(
            f"skill {skill.name!r} is for the user only (its author set "
            "`disable-model-invocation: true`): the model may not read its files",
            NotModelInvocableData(skill=skill.name, path=skill.path),
        )
    loaded = view.session is not None and skill.path in view.session.loaded
    refusal = gate_load(view, skill.name, action="reading", deny_only=loaded)
    if refusal is not None:
        raise refusal


def read_file(
    view: OperationView, params: ReadFileParams, *, model: bool = False
) -> ReadFileResult:
    """``skills.readFile``: a window of one file inside the skill's directory, checked like a
    load of the skill (a deny refuses it); for the ``model``, as :func:`gate_model_read`
    says."""
    skill = resolve(view.catalog, params)
    if model:
        gate_model_read(view, skill)
    else:
        refusal = gate_load(view, skill.name, action="reading", deny_only=True)
        if refusal is not None:
            raise refusal
    return read_resource(skill.dir, params.file, offset=params.offset, length=params.length)


@dataclass(frozen=True, slots=True)
class FileDigest:
    """One file of a skill as the MCP skills extension lists it."""

    file: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class SkillContents:
    """A skill's frontmatter as written (all strings) and its files with their digests, or
    None past the listing bounds (the client then reads the directory as it goes)."""

    skill: SkillMetadata
    frontmatter: dict[str, Any]
    files: list[FileDigest] | None


def skill_file_names(view: OperationView, skill: SkillMetadata) -> list[str]:
    """Every file of ``skill``, ``SKILL.md`` first, gated like a model read. Reads a folder."""
    gate_model_read(view, skill)
    return [SKILL_FILE, *list_skill_files(skill.dir)]


def skill_contents(view: OperationView, skill: SkillMetadata) -> SkillContents:
    """What the model may know of ``skill`` without loading it: gated like a model read (see
    :func:`gate_model_read`). Reads files."""
    gate_model_read(view, skill)
    names = [SKILL_FILE, *list_skill_files(skill.dir, max_files=limits.MAX_MANIFEST_FILES + 1)]
    files: list[FileDigest] | None = []
    total = 0
    for name in names:
        if len(names) > limits.MAX_MANIFEST_FILES:
            files = None
            break
        try:
            got = sha256_of_file(f"{skill.dir}/{name}", limits.MAX_MANIFEST_BYTES - total)
        except (OSError, ValueError):
            continue  # gone or not a regular file since it was listed
        if got is None:
            files = None
            break
        sha256, size = got
        total += size
        assert files is not None
        files.append(FileDigest(name, size, sha256))
    return SkillContents(skill, written_frontmatter(skill.path), files)


def _within_budget(params: PromptParams) -> bool:
    """Whether the request uses the token-budget rendering."""
    return (
        params.budget is not None
        or params.query is not None
        or params.active_files is not None
        or params.max_description_chars is not None
    )


def prompt(
    view: OperationView, params: PromptParams, index: SearchIndex | None = None
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
        matches = paths_matcher(params.active_files, view.catalog.root)
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


def mentions(view: OperationView, params: MentionsParams) -> MentionsResult:
    """``skills.mentions``: ``$name`` and ``[$name](path)`` in user text, resolved."""
    catalog = view.catalog
    names = {s.name for s in catalog.skills if s.enabled}
    found = resolve_mentions(find_mentions(params.text, names), catalog.resolve)
    return MentionsResult(mentions=found, hint=mentions_hint(found))


def inspect(
    view: OperationView,
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
        root=catalog.root,
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
        trust = InspectTrust(root=t.root, trusted=t.trusted, source=t.source, ignored=ignored)
    return InspectResult(session=session_info, skills=info, trust=trust)


# -- slash commands (docs/protocol.md)
# ----------------------------------------------------------------


def commands(view: OperationView, params: CommandsParams) -> CommandsResult:
    """``skills.commands``: user-invocable skills and the legacy command files, by name."""
    return CommandsResult(commands=view.catalog.slash_commands())


@dataclass(frozen=True, slots=True)
class InvokeOutcome:
    """A ``skills.invoke`` outcome: the reply, and what to record in the session."""

    result: InvokeResult
    #: The skill invoked, or the command file (the session takes its grants).
    source: SkillMetadata | CommandFile
    #: The repository whose trust the grants need (None: they count without it).
    trust_root: str | None


def _invoked(view: OperationView, params: InvokeParams) -> tuple[SkillMetadata | CommandFile, str]:
    """What an invocation names (a skill, else a command file of that name) and its raw
    arguments."""
    catalog = view.catalog
    ref: RefParams = params
    raw = params.arguments or ""
    if params.command is not None:
        name, raw = parse_command(params.command)
        if not name:
            raise SkillsdError(
                "`command` names no command: type `/name arguments`",
                InvalidParamsData(field="command"),
            )
        ref = RefParams(name=name)
    if ref.path is None and ref.id is None and ref.name is not None:
        named = catalog.named(ref.name)
        if not any(s.enabled for s in named):
            files = {f.name: f for f in catalog.commands.files}
            if ref.name in files:
                return files[ref.name], raw
            if not named:
                everything = [c.name for c in catalog.slash_commands()]
                suggestions = closest_names(ref.name, everything)
                hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
                raise SkillsdError(
                    f"no skill or command named {ref.name!r}{hint}",
                    SkillNotFoundData(suggestions=suggestions),
                )
    elif ref.path is None and ref.id is None:
        raise SkillsdError("give `command`, or one of `path`, `id` or `name`", InvalidParamsData())
    return resolve(catalog, ref), raw


def _bash_decision(view: OperationView) -> Callable[[str], Decision]:
    """The policy for dynamic-context commands: the daemon's check, or (the CLI) the config's
    rules alone."""
    check = view.check
    if check is not None:
        session = view.session
        return lambda command: check(session, "Bash", command).decision
    config = view.config
    policy = config.policy
    trusted = view.trusted
    return lambda command: evaluate(policy, "Bash", command, trusted=trusted).decision


def _substituted(
    view: OperationView,
    name: str,
    body: str,
    raw: str,
    *,
    argument_names: Sequence[str],
    skill_dir: str,
    session_id: str | None,
) -> InvokedBody:
    """The invoked body, refused before it is built when the reply would pass the config's
    ``limits.maxReplyBytes`` (the reply carries the body twice: rendered and substituted)."""
    limit = view.config.limits.max_reply_bytes
    try:
        return invoke_body(
            body,
            raw,
            decide=_bash_decision(view),
            argument_names=argument_names,
            skill_dir=skill_dir,
            session_id=session_id,
            max_bytes=limit // 2,
        )
    except TooLarge as exc:
        raise SkillsdError(
            f"invoking {name!r} with these arguments would build a reply of more than "
            f"{exc.size * 2} bytes, over limits.maxReplyBytes ({limit})",
            TooLargeData(limit=limit),
        ) from None


def invoke(view: OperationView, params: InvokeParams) -> InvokeOutcome:
    """``skills.invoke``: the user runs ``/name arguments``. ``ask`` does not apply (the user
    acts), a deny does; the body is always sent, its placeholders substituted and its dynamic
    context listed with each command's decision, never run. Reads files; records nothing
    (give the result to :func:`record_invocation`)."""
    target, raw = _invoked(view, params)
    if isinstance(target, SkillMetadata) and not target.invocation.user:
        raise SkillsdError(
            f"skill {target.name!r} is for the model only (its author set "
            "`user-invocable: false`): it cannot be invoked as a command",
            NotUserInvocableData(skill=target.name, path=target.path),
        )
    refusal = gate_load(view, target.name, action="invoking", deny_only=True)
    if refusal is not None:
        raise refusal
    fmt = params.format or "codelia"
    if isinstance(target, SkillMetadata):
        content = read_skill_file_content(target.path)
        host = target.host
        invoked = _substituted(
            view,
            target.name,
            content.body,
            raw,
            argument_names=(host.arguments if host is not None else None) or (),
            skill_dir=target.dir,
            session_id=params.session_id,
        )
        # The frontmatter as written, then the substituted body (what ``codelia`` shows).
        head = content.text[: len(content.text) - len(content.body)]
        files = list_skill_files(target.dir)
        rendered = render_skill(target, head + invoked.body, invoked.body, files, format=fmt)
        rules = target.allowed_tools or []
        needs_trust = view.catalog.grants_need_trust(target)
        skill, command = target, None
    else:
        invoked = _substituted(
            view,
            target.name,
            target.body,
            raw,
            argument_names=target.arguments or (),
            skill_dir=os.path.dirname(target.path),
            session_id=params.session_id,
        )
        # A command file is the text of a user message: there is no skill to wrap it in.
        rendered = invoked.body
        rules = target.allowed_tools or []
        # Only the user's own (home) commands are outside the repository's trust.
        needs_trust = target.path.startswith(view.catalog.root.rstrip(os.sep) + os.sep)
        skill, command = None, target.as_command()
    grants = list(dict.fromkeys(rules))
    withheld = grants if needs_trust and not view.trusted else []
    result = InvokeResult(
        content=rendered,
        body=invoked.body,
        arguments=invoked.arguments,
        dynamic_context=invoked.dynamic_context,
        grants=[g for g in grants if g not in withheld],
        withheld_grants=withheld,
        skill=skill,
        command=command,
    )
    return InvokeOutcome(result, target, view.catalog.root if needs_trust else None)


def record_invocation(session: Session | None, invocation: InvokeOutcome) -> None:
    """Remember an invocation in ``session`` like a load: a skill counts as loaded (this
    version), and the grants of what was invoked are taken (bound to the repository's trust
    where they need it)."""
    if session is None:
        return
    source = invocation.source
    if isinstance(source, SkillMetadata):
        session.record_load(source, invocation.trust_root)
    else:
        rules = source.allowed_tools or ()
        session.record_grants(source.path, source.name, rules, invocation.trust_root)


# -- workspace trust -------------------------------------------------------------------------


def trust_info(trust: TrustState) -> TrustInfo:
    """``trust.get`` / ``trust.set``'s answer."""
    return TrustInfo(root=trust.root, trusted=trust.trusted, source=trust.source)


# -- validation ------------------------------------------------------------------------------


def skill_file_verdict(
    skill_md: str, mode: Mode, *, fail_on_warnings: bool = False
) -> tuple[ParsedSkillFile, bool]:
    """Read one SKILL.md in full and judge it: valid when it has fields and no error (with
    ``fail_on_warnings``, no warning either)."""
    parsed = read_skill_file(skill_md, mode=mode, read_body=True)
    failing = {"error", "warning"} if fail_on_warnings else {"error"}
    valid = parsed.fields is not None and not any(d.severity in failing for d in parsed.diagnostics)
    return parsed, valid


def validate(params: ValidateParams) -> ValidateResult:
    """``skills.validate``: one skill dir or SKILL.md, and the skill as a catalog would list it."""
    path = os.path.abspath(params.path)
    skill_md = path if os.path.basename(path) == SKILL_FILE else os.path.join(path, SKILL_FILE)
    if not os.path.exists(skill_md):
        raise SkillsdError(
            f"{skill_md}: no SKILL.md there to validate", SkillNotFoundData(suggestions=[])
        )
    mode = params.mode or "strict"
    parsed, valid = skill_file_verdict(skill_md, mode)
    skill = None
    if valid:
        # The skill as a catalog would list it: an extra root that is itself a skill.
        skill_dir = os.path.dirname(skill_md)
        config = Config(validation=mode, discovery=DiscoveryConfig(auto=False))
        plan = RootPlan(cwd=skill_dir, repo_root=skill_dir, roots=(Root(skill_dir, "extra"),))
        listed = build_catalog(plan, config).skills
        skill = listed[0] if listed else None
    return ValidateResult(valid=valid, skill=skill, diagnostics=parsed.diagnostics)


# -- sessions --------------------------------------------------------------------------------


def session_cwd(daemon_cwd: str, requested: str | None) -> str:
    """The real directory a new session works in (relative to the daemon's cwd)."""
    cwd = os.path.join(daemon_cwd, requested) if requested is not None else daemon_cwd
    if not os.path.isdir(cwd):
        raise SkillsdError(f"cwd {cwd!r} is not a directory", InvalidParamsData())
    return os.path.realpath(cwd)


# -- agents ----------------------------------------------------------------------------------


def _agents(
    view: OperationView, home: str, env: Mapping[str, str]
) -> tuple[list[AgentDefinition], list[AgentLoadError]]:
    return discover_agents(agent_dirs(view.cwd, view.config, home=home, env=env))


def _by_name(catalog: Catalog) -> Callable[[str], SkillMetadata]:
    return lambda name: catalog.resolve(name=name)


def agents_list(view: OperationView, *, home: str, env: Mapping[str, str]) -> AgentsListResult:
    """``agents.list``: every agent definition, and the ones that cannot be used, with why."""
    agents, errors = _agents(view, home, env)
    errors += check_references(agents, _by_name(view.catalog))
    return AgentsListResult(agents=agents, errors=errors)


def agents_get(
    view: OperationView, params: AgentsGetParams, *, home: str, env: Mapping[str, str]
) -> AgentsGetResult:
    """``agents.get``: one agent, its skills resolved, and (``render``) its prompt; a deny rule
    on one of its skills refuses the render."""
    agents, _errors = _agents(view, home, env)
    agent = find_agent(agents, params.name)
    skills = resolve_agent_skills(agent, _by_name(view.catalog))
    prompt = None
    if params.render:
        for skill in skills:
            refusal = gate_load(view, skill.name, agent=agent.name)
            if refusal is not None:
                raise refusal
        resolved = [
            ResolvedSkill(s, read_skill_file_content(s.path).body, list_skill_files(s.dir))
            for s in skills
        ]
        prompt = render_agent(agent, resolved)
    return AgentsGetResult(agent=agent, skills=skills, prompt=prompt)


# -- model-facing tools ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tools.call`` outcome: the model's text, and the load to record in the session."""

    result: ToolsCallResult
    loaded: LoadResult | None = None


def tool_failure(exc: SkillsdError) -> ToolsCallResult:
    """A failed tool call as model text (with the approval to ask for, if that is why)."""
    permission = None
    data = exc.data
    if isinstance(data, PermissionDeniedData | PermissionRequiredData) and data.rule is not None:
        permission = PermissionPrompt(
            decision="deny" if isinstance(data, PermissionDeniedData) else "ask", rule=data.rule
        )
    return ToolsCallResult(content=error_text(exc), is_error=True, permission=permission)


def tools_call(
    view: OperationView,
    request: ToolRequest,
    index: tuple[SearchIndex, frozenset[str]] | None = None,
) -> ToolCall:
    """``tools.call``: the operation a model's decoded tool call names, as model text. A search
    needs ``index`` (and the ids it must treat as disabled). Never raises a ``SkillsdError``."""
    try:
        catalog = view.catalog
        if request.operation == "list":
            # The same budgeted catalog as `skills.prompt` (docs/embedding.md), within the config's
            # prompt bytes: on a large catalog the model is told to search for the rest.
            listed = prompt(
                view,
                PromptParams(
                    format="markdown", max_description_chars=limits.PROMPT_DESCRIPTION_CHARS
                ),
            )
            text = listed.text or "No skills are available."
            return ToolCall(ToolsCallResult(content=text, is_error=False))
        if request.operation == "search":
            assert index is not None, "a search needs the view's search index"
            found = search(
                view,
                index[0],
                SearchParams(query=request.query or "", limit=request.limit, scope=request.scope),
                # The model never sees the skills only the user may invoke (docs/conformance.md).
                disabled_ids=index[1] | catalog.model_hidden,
            )
            return ToolCall(ToolsCallResult(content=search_text(found), is_error=False))
        ref = RefParams(path=request.path, name=request.name)
        if request.operation == "load":
            skill = resolve(catalog, ref)
            if not skill.invocation.model:
                return ToolCall(ToolsCallResult(content=user_only_text(skill), is_error=True))
            loaded = load(view, LoadParams(path=ref.path, name=ref.name))
            return ToolCall(ToolsCallResult(content=loaded.content, is_error=False), loaded)
        window = read_file(
            view, ReadFileParams(path=ref.path, name=ref.name, file=request.file or ""), model=True
        )
        return ToolCall(ToolsCallResult(content=read_file_text(window), is_error=False))
    except SkillsdError as exc:
        return ToolCall(tool_failure(exc))
