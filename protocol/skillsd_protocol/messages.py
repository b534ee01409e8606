"""Params and result types of every method and notification (docs/protocol.md).

Every field added after 1.0 must get a default, so older peers keep decoding.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from skillsd_protocol.model import (
    Diagnostic,
    Scope,
    SkillLoadError,
    SkillMetadata,
    Wire,
)

Decision = Literal["allow", "deny", "ask"]
Layer = Literal["finalDeny", "memory", "override", "deny", "allow", "default"]
Persist = Literal["session", "always"]
EnablePersist = Literal["session", "user", "project"]
Mode = Literal["strict", "lenient"]
CatalogFormat = Literal["xml", "codelia", "attributes", "markdown"]
LoadFormat = Literal["codelia", "spec", "markdown"]
SearchReason = Literal["exact_path", "exact_name", "prefix", "token_overlap"]
ToolStyle = Literal["default", "swiftagent", "tavernkit"]
TrustSource = Literal["state", "config", "default"]


#: Text naming a file, folder or skill: no NUL (no file system name holds one; the robustness
#: rules).
PathText = Annotated[str, msgspec.Meta(pattern=r"^[^\x00]*$")]
#: A session id: at most 256 characters, no NUL (docs/security.md).
SessionId = Annotated[str, msgspec.Meta(max_length=256, pattern=r"^[^\x00]*$")]
#: An operating-system process id.
ProcessId = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]


class Meta(Wire, kw_only=True):
    """The optional ``_meta`` member of params (LSP style)."""

    progress_token: str | int | None = None


class Params(Wire, kw_only=True):
    """Base for params: every method accepts ``_meta``."""

    meta: Meta | None = msgspec.field(default=None, name="_meta")


class RefParams(Params, kw_only=True):
    """A skill reference: ``path`` (dir or SKILL.md) > ``id`` > ``name``."""

    path: PathText | None = None
    id: PathText | None = None
    name: PathText | None = None


class Empty(Wire, kw_only=True):
    """An empty object result (``{}``)."""


# -- lifecycle ----------------------------------------------------------------------------


class ClientInfo(Wire, kw_only=True):
    name: str
    version: str | None = None


class InitializeParams(Params, kw_only=True):
    protocol_version: str | None = None
    client_info: ClientInfo | None = None
    capabilities: dict[str, Any] | None = None
    process_id: ProcessId | None = None
    extra_roots: list[PathText] | None = None


class ServerInfo(Wire, kw_only=True):
    name: str
    version: str


class ServerCapabilities(Wire, kw_only=True):
    methods: list[str]
    notifications: list[str]


class InitializeResult(Wire, kw_only=True):
    protocol_version: str
    server_info: ServerInfo
    capabilities: ServerCapabilities


class DaemonStatusResult(Wire, kw_only=True):
    """What a running daemon holds: ``skillsd daemon status``. ``startedAt`` is Unix time;
    ``clients`` counts the connections it serves now; RSS is in bytes (None off Linux)."""

    pid: int
    version: str
    started_at: float
    uptime_seconds: float
    clients: int
    catalogs: int
    sessions: int
    rss_bytes: int | None = None
    peak_rss_bytes: int | None = None


class CancelParams(Wire, kw_only=True):
    id: str | int | None


class ProgressValue(Wire, kw_only=True):
    message: str
    percentage: float | None = None


class ProgressParams(Wire, kw_only=True):
    token: str | int
    value: ProgressValue


# -- catalog ------------------------------------------------------------------------------


class ListParams(Params, kw_only=True):
    cwd: PathText | None = None
    force_reload: bool = False
    scope: Scope | None = None
    include_disabled: bool = True
    extra_roots: list[PathText] | None = None
    session_id: SessionId | None = None
    #: The generation the client already has: the answer is a ``delta`` from it when the
    #: daemon still holds the changes since (docs/embedding.md).
    since_generation: Annotated[int, msgspec.Meta(ge=0)] | None = None
    #: One agent's view (``claude-code``, ``codex``, ...): only what it discovers here, a name
    #: clash decided as that agent decides it (docs/agents.md).
    agent: str | None = None


class CatalogDelta(Wire, kw_only=True):
    """What changed since ``sinceGeneration``: skills added and changed (whole), ids removed."""

    added: list[SkillMetadata]
    changed: list[SkillMetadata]
    removed: list[str]


class ListResult(Wire, kw_only=True):
    cwd: str
    #: The repository root the ``repo`` scope was computed from.
    repo_root: str
    #: The repository root (deprecated name: the same value as ``repoRoot``; a skill's ``root``
    #: is its source root, another thing).
    root: str
    generation: int
    skills: list[SkillMetadata]
    errors: list[SkillLoadError]
    diagnostics: list[Diagnostic]
    #: Whether the user trusts the cwd's repository root (docs/permissions.md); always sent by this
    #: daemon (None only from a peer that predates workspace trust).
    trusted: bool | None = None
    #: With ``sinceGeneration`` the daemon still covers: the changes (``skills`` is empty).
    delta: CatalogDelta | None = None


#: A search query: something to search for (an empty or blank one is ``-32602`` naming it).
#: The longest search query (docs/security.md: search cost stays bounded for any query allowed).
MAX_QUERY_CHARS = 1000
NonBlankQuery = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=MAX_QUERY_CHARS)]


class SearchParams(Params, kw_only=True):
    query: NonBlankQuery
    cwd: PathText | None = None
    limit: int | None = None
    scope: Scope | None = None
    tags: list[str] | None = None
    session_id: SessionId | None = None
    #: Also return disabled skills (``enabled: false``), for a UI where they can be re-enabled.
    include_disabled: bool = False


class SearchHit(Wire, kw_only=True):
    skill: SkillMetadata
    score: float
    reason: SearchReason


class SearchResult(Wire, kw_only=True):
    results: list[SearchHit]
    count: int
    truncated: bool


class SuggestParams(Params, kw_only=True):
    """The user's request (``prompt``) and what the host knows: the files being worked on, the
    session (whose loaded skills are reported, never activated again)."""

    prompt: Annotated[str, msgspec.Meta(max_length=MAX_QUERY_CHARS)]
    cwd: PathText | None = None
    session_id: SessionId | None = None
    active_files: list[PathText] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=50)] = 3


class Suggestion(Wire, kw_only=True):
    """One skill that fits the request: ``score`` in 0..1 at two decimals (the share of the
    request's informative words the skill's own words hold; the same at any catalog size),
    ``activate`` when it reaches the threshold, ``candidate`` when nothing activates but it is
    close (the host asks the model to check it), and ``reasons`` such as ``description:
    deploy, vercel``."""

    skill: SkillMetadata
    score: float
    activate: bool
    loaded: bool
    candidate: bool
    reasons: list[str]


class SuggestResult(Wire, kw_only=True):
    suggestions: list[Suggestion]
    #: The threshold ``activate`` was decided with (config ``suggest.threshold``).
    threshold: float
    #: The least score of the best candidate (config ``suggest.candidateThreshold``), but for
    #: one skill far ahead of the rest (``lead_floor``, ``lead``).
    candidate_threshold: float | None = None
    #: Under ``candidate_threshold``, the best skill is offered alone from this score when it
    #: leads the next one by ``lead`` (docs/hooks.md).
    lead_floor: float | None = None
    lead: float | None = None


class LoadParams(RefParams, kw_only=True):
    cwd: PathText | None = None
    session_id: SessionId | None = None
    force: bool = False
    format: LoadFormat | None = None


class LoadResult(Wire, kw_only=True):
    skill: SkillMetadata
    content: str
    body: str
    base_dir: str
    files: list[str]
    already_loaded: bool
    #: The skill's ``allowed-tools`` not granted: it comes from an untrusted repository.
    withheld_grants: list[str] = msgspec.field(default_factory=list)


# -- user invocation (docs/protocol.md) ------------------------------------------------------------


class CommandsParams(Params, kw_only=True):
    cwd: PathText | None = None
    session_id: SessionId | None = None


class Command(Wire, kw_only=True):
    """A slash command: a user-invocable skill (``skill`` is its id) or a Claude Code command
    file (``.claude/commands/**/*.md``); ``path`` is the SKILL.md or the command file."""

    name: str
    description: str
    source: Literal["skill", "command"]
    path: str
    argument_hint: str | None = None
    arguments: list[str] | None = None
    display_name: str | None = None
    skill: str | None = None


class CommandsResult(Wire, kw_only=True):
    commands: list[Command]


class InvokeParams(RefParams, kw_only=True):
    """``command`` is what the user typed (``/name rest``, the ``/`` optional); otherwise a skill
    ref (or a command's ``name``) and ``arguments``."""

    command: str | None = None
    arguments: str | None = None
    cwd: PathText | None = None
    session_id: SessionId | None = None
    format: LoadFormat | None = None


class DynamicContext(Wire, kw_only=True):
    """A ``!`cmd` `` or ```` ```! ```` block left in the body, never run: ``start``/``end`` are
    code-point offsets into the substituted body, ``decision`` that of ``Bash(command)``."""

    command: str
    start: int
    end: int
    decision: Decision


class InvokeResult(Wire, kw_only=True):
    content: str
    body: str
    arguments: list[str]
    dynamic_context: list[DynamicContext]
    grants: list[str]
    withheld_grants: list[str]
    skill: SkillMetadata | None = None
    command: Command | None = None


class UnloadParams(RefParams, kw_only=True):
    session_id: SessionId
    cwd: PathText | None = None


class UnloadResult(Wire, kw_only=True):
    unloaded: bool
    revoked_rules: list[str]


class ReadFileParams(RefParams, kw_only=True):
    file: PathText
    cwd: PathText | None = None
    session_id: SessionId | None = None
    offset: int = 0
    length: int | None = None


class ReadFileResult(Wire, kw_only=True):
    file: str
    path: str
    size: int
    encoding: Literal["utf-8", "base64"]
    content: str
    truncated: bool


class ValidateParams(Params, kw_only=True):
    path: PathText
    mode: Mode | None = None


class ValidateResult(Wire, kw_only=True):
    valid: bool
    diagnostics: list[Diagnostic]
    skill: SkillMetadata | None = None


class SetEnabledParams(RefParams, kw_only=True):
    """``persist``: ``user`` (the user's state file: every repository, session and host),
    ``project`` (the state file too, under the real root of ``cwd``'s repository: only there,
    winning over the user's flag; never written in the repository) or ``session`` (only the
    calls that pass ``sessionId``). ``scope``: the same choice under another name; when both
    are given, a ``persist`` other than ``user`` must agree with it."""

    enabled: bool
    cwd: PathText | None = None
    persist: EnablePersist = "user"
    scope: EnablePersist | None = None
    session_id: SessionId | None = None


class SetEnabledResult(Wire, kw_only=True):
    skill: SkillMetadata


class PromptBudget(Wire, kw_only=True):
    """A token budget: ``tokens``, or ``percent`` (default 2) of ``contextWindow``. Tokens are
    estimated as UTF-8 bytes / 4, rounded up (docs/embedding.md)."""

    tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    context_window: Annotated[int, msgspec.Meta(ge=1)] | None = None
    percent: Annotated[float, msgspec.Meta(gt=0, le=100)] = 2.0


class PromptParams(Params, kw_only=True):
    cwd: PathText | None = None
    session_id: SessionId | None = None
    format: CatalogFormat | None = None
    max_entries: int | None = None
    max_bytes: int | None = None
    include_location: bool = True
    active: bool = False
    #: Replaces ``maxBytes`` when given.
    budget: PromptBudget | None = None
    #: The longest description (``whenToUse`` included) of an entry; default 1536.
    max_description_chars: Annotated[int, msgspec.Meta(ge=0)] | None = None
    #: Files the user is working on (absolute, or relative to the repo root): a skill with
    #: ``paths`` is shown only while one matches.
    active_files: list[PathText] | None = None
    #: The user's request: over budget, the skills most relevant to it keep their place.
    query: Annotated[str, msgspec.Meta(max_length=MAX_QUERY_CHARS)] | None = None
    #: Render one agent's view (see ``skills.list``).
    agent: str | None = None


class PromptResult(Wire, kw_only=True):
    text: str
    shown: int
    total: int
    truncated: bool
    bytes: int
    #: The token estimate for ``text`` (UTF-8 bytes / 4, rounded up).
    tokens: int | None = None
    #: Enabled, model-invocable skills not shown (catalog order), when a budget, a query,
    #: active files or a description cap was given.
    omitted: list[str] | None = None


class MentionsParams(Params, kw_only=True):
    text: str
    cwd: PathText | None = None
    session_id: SessionId | None = None


class MentionError(Wire, kw_only=True):
    kind: str
    message: str


class Mention(Wire, kw_only=True):
    text: str
    start: int
    end: int
    skill: SkillMetadata | None = None
    error: MentionError | None = None


class MentionsResult(Wire, kw_only=True):
    mentions: list[Mention]
    hint: str


# -- model-facing tools -------------------------------------------------------------------


class ToolsListParams(Params, kw_only=True):
    style: ToolStyle | None = None


class ToolDefinition(Wire, kw_only=True):
    name: str
    description: str
    input_schema: dict[str, Any]


class ToolsListResult(Wire, kw_only=True):
    tools: list[ToolDefinition]


class ToolsCallParams(Params, kw_only=True):
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    session_id: SessionId | None = None
    cwd: PathText | None = None


class PermissionPrompt(Wire, kw_only=True):
    decision: Decision
    rule: str


class ToolsCallResult(Wire, kw_only=True):
    content: str
    is_error: bool
    permission: PermissionPrompt | None = None


# -- sessions -----------------------------------------------------------------------------


class SessionOpenParams(Params, kw_only=True):
    cwd: PathText | None = None
    session_id: SessionId | None = None
    extra_roots: list[PathText] | None = None


class SessionOpenResult(Wire, kw_only=True):
    session_id: SessionId
    cwd: str
    resumed: bool


class SessionCloseParams(Params, kw_only=True):
    session_id: SessionId


class SessionCompactedParams(Params, kw_only=True):
    session_id: SessionId
    retain: list[str] | None = None


class SessionCompactedResult(Wire, kw_only=True):
    forgotten: list[str]


class InspectParams(Params, kw_only=True):
    session_id: SessionId | None = None
    cwd: PathText | None = None
    include_skills: bool = False


class LoadedSkill(Wire, kw_only=True):
    id: str
    name: str
    path: str
    mtime_ms: float


class Grant(Wire, kw_only=True):
    rule: str
    granted_by: list[str]


class SessionInfo(Wire, kw_only=True):
    id: str
    cwd: str
    loaded: list[LoadedSkill]
    grants: list[Grant]
    #: Grants of loaded repo skills whose repository is not trusted: they allow nothing.
    withheld_grants: list[Grant] = msgspec.field(default_factory=list)


class WatchInfo(Wire, kw_only=True):
    mode: Literal["watching", "stat", "off"]
    roots: list[str]
    reason: str | None = None


class CatalogInfo(Wire, kw_only=True):
    cwd: str
    #: The repository root the ``repo`` scope was computed from.
    repo_root: str
    #: The repository root (deprecated name: the same value as ``repoRoot``; a skill's ``root``
    #: is its source root, another thing).
    root: str
    generation: int
    watch: WatchInfo
    skills: list[SkillMetadata] = msgspec.field(default_factory=list)
    errors: list[SkillLoadError] = msgspec.field(default_factory=list)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)


class IgnoredRule(Wire, kw_only=True):
    """A project config entry not applied: ``key`` is where it is written; ``untilTrusted``
    says whether trusting the repository would apply it (``allow``) or nothing would."""

    rule: str
    key: str
    until_trusted: bool


class TrustInfo(Wire, kw_only=True):
    """The trust of a repository root and where it comes from (docs/permissions.md)."""

    repo_root: str
    #: The repository root (deprecated name: the same value as ``repoRoot``; a skill's ``root``
    #: is its source root, another thing).
    root: str
    trusted: bool
    source: TrustSource


class InspectTrust(TrustInfo, kw_only=True):
    #: What the project config asks for and the policy does not apply.
    ignored: list[IgnoredRule] = msgspec.field(default_factory=list)


class InspectResult(Wire, kw_only=True):
    session: SessionInfo | None = None
    skills: CatalogInfo | None = None
    trust: InspectTrust | None = None


# -- permissions --------------------------------------------------------------------------


class CheckParams(Params, kw_only=True):
    tool: str
    input: str | None = None
    session_id: SessionId | None = None
    cwd: PathText | None = None


class CheckResult(Wire, kw_only=True):
    decision: Decision
    layer: Layer
    rule: str | None = None
    granted_by: list[str] | None = None
    #: Loaded skills of an untrusted repository whose grant would have allowed the call.
    withheld_by: list[str] | None = None


class RememberParams(Params, kw_only=True):
    session_id: SessionId
    rule: str
    decision: Literal["allow", "deny"]
    persist: Persist = "session"


# -- workspace trust ---------------------------------------------------------------------


class TrustGetParams(Params, kw_only=True):
    cwd: PathText | None = None


class TrustSetParams(Params, kw_only=True):
    """The repository root to decide about: ``repoRoot`` (a path), else ``cwd``'s repository
    root, else the daemon's. ``root`` is the deprecated name of ``repoRoot``."""

    trusted: bool
    cwd: PathText | None = None
    repo_root: PathText | None = None
    root: PathText | None = None


# -- agents -------------------------------------------------------------------------------


class AgentDefinition(Wire, kw_only=True):
    name: str
    path: str
    skills: list[str]
    description: str | None = None
    model: str | None = None
    tools: list[str] | None = None
    body: str = ""


class AgentLoadError(Wire, kw_only=True):
    path: str
    message: str


class AgentsListParams(Params, kw_only=True):
    cwd: PathText | None = None


class AgentsListResult(Wire, kw_only=True):
    agents: list[AgentDefinition]
    errors: list[AgentLoadError]


class AgentsGetParams(Params, kw_only=True):
    name: str
    cwd: PathText | None = None
    render: bool = False


class AgentsGetResult(Wire, kw_only=True):
    agent: AgentDefinition
    skills: list[SkillMetadata]
    prompt: str | None = None


# -- the use ledger (docs/usage.md) -------------------------------------------------------


class UsageParams(Params, kw_only=True):
    """``usage.report``: which skills are used in ``cwd``'s repository, never used, or
    suggested but not taken, from the use ledger (and the agents' transcripts where the user
    allows reading them)."""

    cwd: PathText | None = None
    #: Only what happened at or after this time (Unix seconds).
    since: Annotated[float, msgspec.Meta(ge=0)] | None = None


class SkillUse(Wire, kw_only=True):
    """One skill used in the repository: ``uses`` is ``loads`` + ``invokes``; ``byAgent`` the
    uses by agent or client name; ``lastUsed`` an ISO-8601 UTC time. ``id`` is the skill's id
    in the current catalog (None: no skill of that name is there now)."""

    name: str
    uses: int
    loads: int
    invokes: int
    last_used: str
    by_agent: dict[str, int]
    id: str | None = None


class UnusedSkill(Wire, kw_only=True):
    """A skill of the current catalog nobody used in the repository (in the window)."""

    name: str
    id: str
    scope: Scope


class IgnoredSuggestion(Wire, kw_only=True):
    """A skill suggested (``activated``: the suggestion passed the threshold; the rest were
    candidates) and not used afterwards: ``ignored`` of ``suggested`` suggestions were followed
    by no use of the skill in the same session, nor in the repository within 30 minutes."""

    name: str
    suggested: int
    activated: int
    ignored: int
    last_suggested: str
    id: str | None = None


class UsageResult(Wire, kw_only=True):
    """The report: ``repo`` is the repository root it covers; ``ledgerEnabled`` whether
    skillsd records uses now (config ``ledger.enabled``); ``transcripts`` whether Claude Code's
    own transcripts were read (config ``ledger.agentTranscripts``); ``records`` how many uses
    and suggestions in this repository were counted; ``problems`` what was skipped and why
    (a torn or corrupt ledger line, an unreadable transcript)."""

    repo: str
    since: str | None
    ledger_enabled: bool
    transcripts: bool
    records: int
    used: list[SkillUse]
    never_used: list[UnusedSkill]
    ignored: list[IgnoredSuggestion]
    problems: list[Diagnostic]


# -- notifications ------------------------------------------------------------------------


class SkillsChangedParams(Wire, kw_only=True):
    cwd: str
    generation: int
    added: list[str]
    removed: list[str]
    changed: list[str]
