"""The method table: each method's params and result types, what it does and which
application errors it may answer with. Dispatcher, clients, the JSON Schema and
``docs/protocol.md`` are all derived from it."""

from __future__ import annotations

from typing import Any

import msgspec

from skillsd_protocol import install as i
from skillsd_protocol import listing as ls
from skillsd_protocol import messages as m

PROTOCOL_VERSION = "1.0"


class MethodSpec(msgspec.Struct, frozen=True):
    """A method's params type and result type (``None`` result means JSON ``null``), a one-line
    summary, and the ``data.kind`` of each application error it may answer with (any method
    may also answer ``-32602`` for bad params)."""

    params: type[msgspec.Struct]
    result: Any
    summary: str = ""
    errors: tuple[str, ...] = ()


# Catalog-backed methods read the effective config of their cwd, and every method taking a
# `sessionId` needs that session to be open.
_CATALOG = ("session_not_found", "invalid_config")
_REF = ("skill_not_found", "ambiguous_skill", "invalid_skill")
# What placing skills may answer (docs/install-skills.md).
_INSTALL = (
    "install_failed",
    "already_exists",
    "invalid_skill",
    "too_large",
    "path_not_allowed",
    "invalid_lock",
    "invalid_config",
)

METHODS: dict[str, MethodSpec] = {
    "initialize": MethodSpec(
        m.InitializeParams,
        m.InitializeResult,
        "Introduce the client (optional); returns the protocol version and what the daemon offers.",
    ),
    "shutdown": MethodSpec(
        m.Params, None, "Announce that `exit` follows; every other request is refused from then on."
    ),
    "ping": MethodSpec(m.Params, m.Empty, "Liveness check."),
    "daemon.status": MethodSpec(
        m.Params,
        m.DaemonStatusResult,
        "The daemon's pid, uptime, clients, catalogs, sessions and memory.",
    ),
    "skills.list": MethodSpec(
        m.ListParams,
        m.ListResult,
        "The catalog of a cwd: valid skills, invalid ones with why, and scan diagnostics.",
        _CATALOG,
    ),
    "skills.search": MethodSpec(
        m.SearchParams,
        m.SearchResult,
        "Rank enabled skills (disabled too with includeDisabled) for a non-blank query: "
        "exact path > exact name > prefix > relevance over word forms.",
        _CATALOG,
    ),
    "skills.suggest": MethodSpec(
        m.SuggestParams,
        m.SuggestResult,
        "The enabled, model-invocable skills that fit a user's request, each with a 0..1 score, "
        "whether it activates (over suggest.threshold) and why.",
        _CATALOG,
    ),
    "skills.commands": MethodSpec(
        m.CommandsParams,
        m.CommandsResult,
        "Slash commands: user-invocable skills and Claude Code's legacy `.claude/commands` "
        "files (a skill hides a command of its name), sorted by name.",
        _CATALOG,
    ),
    "skills.invoke": MethodSpec(
        m.InvokeParams,
        m.InvokeResult,
        "Run a user's `/name arguments`: the body with its placeholders substituted, dynamic "
        "context listed (never run), recorded in the session like a load; deny refuses it.",
        (
            *_REF,
            "not_user_invocable",
            "permission_denied",
            "too_large",
            "resource_not_found",
            *_CATALOG,
        ),
    ),
    "skills.load": MethodSpec(
        m.LoadParams,
        m.LoadResult,
        "Load a skill for the model (permission-checked; a repeat load returns a reminder).",
        (
            *_REF,
            "permission_denied",
            "permission_required",
            "too_large",
            "resource_not_found",
            *_CATALOG,
        ),
    ),
    "skills.unload": MethodSpec(
        m.UnloadParams,
        m.UnloadResult,
        "Forget a loaded skill in a session and revoke the rules its `allowed-tools` granted.",
        (*_REF, *_CATALOG),
    ),
    "skills.readFile": MethodSpec(
        m.ReadFileParams,
        m.ReadFileResult,
        "Read a file inside a skill directory (paged; base64 when not UTF-8); refused where "
        "loading the skill is denied.",
        (*_REF, "permission_denied", "path_not_allowed", "resource_not_found", *_CATALOG),
    ),
    "skills.validate": MethodSpec(
        m.ValidateParams,
        m.ValidateResult,
        "Validate one skill directory or SKILL.md, in strict or lenient mode.",
        ("skill_not_found",),
    ),
    "skills.setEnabled": MethodSpec(
        m.SetEnabledParams,
        m.SetEnabledResult,
        "Enable or disable a skill for the user or in this repository only (both kept in the "
        "user's state file, never in the repository), or for one session.",
        (*_REF, "state_unreadable", "state_write_failed", *_CATALOG),
    ),
    "skills.prompt": MethodSpec(
        m.PromptParams,
        m.PromptResult,
        "Render the catalog (or a session's loaded skills) for a system prompt, within budget.",
        _CATALOG,
    ),
    "skills.mentions": MethodSpec(
        m.MentionsParams,
        m.MentionsResult,
        "Find and resolve `$skill` and `[$skill](path)` mentions in a text.",
        _CATALOG,
    ),
    "tools.list": MethodSpec(
        m.ToolsListParams, m.ToolsListResult, "Ready-made tool definitions for the model."
    ),
    "tools.call": MethodSpec(
        m.ToolsCallParams,
        m.ToolsCallResult,
        "Run one model tool call; failures come back as `isError` text, never as errors.",
    ),
    "session.open": MethodSpec(
        m.SessionOpenParams,
        m.SessionOpenResult,
        "Open a session (an unknown `sessionId` creates it; a known one resumes it).",
    ),
    "session.close": MethodSpec(
        m.SessionCloseParams,
        m.Empty,
        "Close a session: its grants are revoked and its memory dropped.",
        ("session_not_found",),
    ),
    "session.compacted": MethodSpec(
        m.SessionCompactedParams,
        m.SessionCompactedResult,
        "The client dropped context: forget loaded skills not in `retain`.",
        ("session_not_found",),
    ),
    "context.inspect": MethodSpec(
        m.InspectParams,
        m.InspectResult,
        "What a session holds and how the cwd's catalog is kept fresh.",
        _CATALOG,
    ),
    "permissions.check": MethodSpec(
        m.CheckParams,
        m.CheckResult,
        "Evaluate a tool call against the six policy layers.",
        _CATALOG,
    ),
    "permissions.remember": MethodSpec(
        m.RememberParams,
        m.Empty,
        "Remember the user's answer for a rule, for the session or always.",
        ("session_not_found", "state_unreadable", "state_write_failed"),
    ),
    "trust.get": MethodSpec(
        m.TrustGetParams,
        m.TrustInfo,
        "Whether the user trusts the repository root of a cwd, and where that comes from.",
        ("invalid_config",),
    ),
    "trust.set": MethodSpec(
        m.TrustSetParams,
        m.TrustInfo,
        "Trust or distrust a repository root: saved in the state file, in effect at once for "
        "every session.",
        ("invalid_config", "state_unreadable", "state_write_failed"),
    ),
    "agents.list": MethodSpec(
        m.AgentsListParams,
        m.AgentsListResult,
        "Agent definitions of a cwd, and the ones that cannot be used.",
        ("invalid_config",),
    ),
    "agents.get": MethodSpec(
        m.AgentsGetParams,
        m.AgentsGetResult,
        "One agent with its skills resolved; `render` adds its system prompt.",
        (
            "agent_not_found",
            "unknown_skill_reference",
            "ambiguous_skill",
            "permission_denied",
            "invalid_config",
        ),
    ),
    "skills.install": MethodSpec(
        i.InstallParams,
        i.InstallResult,
        "Install the skills of a folder, git repository or archive into the canonical folder, "
        "link them for the named agents and lock them (staged, validated, scanned, placed "
        "atomically; `$/progress` for clone and copy).",
        _INSTALL,
    ),
    "skills.installed": MethodSpec(
        i.InstalledParams,
        i.InstalledResult,
        "Each skill of the lock file with its state: ok, modified (naming the files), missing "
        "or links-broken.",
        ("invalid_lock", "invalid_config"),
    ),
    "skills.update": MethodSpec(
        i.UpdateParams,
        i.UpdateResult,
        "Re-resolve locked skills' refs and archive URLs; apply unless `check` (file by file); "
        "a skill modified locally is not overwritten without `force`.",
        (*_INSTALL, "not_installed"),
    ),
    "skills.remove": MethodSpec(
        i.RemoveParams,
        i.RemoveResult,
        "Remove a skill the lock owns, the links and copies its install made, and its entry.",
        ("not_installed", "invalid_lock", "install_failed", "invalid_config"),
    ),
    "skills.restore": MethodSpec(
        i.RestoreParams,
        i.RestoreResult,
        "Install every locked skill at its locked commit; a digest that differs refuses the "
        "whole restore, naming the files (`npm ci` for skills).",
        (*_INSTALL, "digest_mismatch"),
    ),
    "skills.scan": MethodSpec(
        i.ScanParams,
        i.ScanResult,
        "Static scan of a skill (`id`/`name`) or a folder (`path`): hidden Unicode, dynamic "
        "context, remote code, broad grants, secrets reads, prompt injection, binaries, "
        "obfuscation.",
        (*_REF, *_CATALOG),
    ),
    "usage.report": MethodSpec(
        m.UsageParams,
        m.UsageResult,
        "Which skills are used in this repository (counts, last use, by agent), never used, "
        "or suggested but not taken: from skillsd's local use ledger, and Claude Code's own "
        "transcripts when the user allows reading them (docs/usage.md).",
        ("invalid_config",),
    ),
    "skills.listing": MethodSpec(
        ls.ListingParams,
        ls.ListingResult,
        "What an agent puts in front of its model here: its skill listing under its own budget, "
        "settings and precedence, entry by entry, with the listing's text (docs/agents.md).",
        _CATALOG,
    ),
    "skills.profile.plan": MethodSpec(
        ls.ProfileParams,
        ls.ProfilePlanResult,
        "Propose, per agent, which skills to show its model in full, by name only or not at all "
        "in this project, so the relevant and pinned ones keep their descriptions.",
        ("invalid_config",),
    ),
    "skills.profile.apply": MethodSpec(
        ls.ProfileParams,
        ls.ProfileApplyResult,
        "Write the plan into each agent's own per-project setting (Claude Code: `skillOverrides` "
        "in `.claude/settings.local.json`), recording what was written; a user's key is kept.",
        ("invalid_config", "state_write_failed"),
    ),
    "skills.profile.reset": MethodSpec(
        ls.ProfileParams,
        ls.ProfileResetResult,
        "Remove exactly the keys `skills.profile.apply` wrote for this project; a key changed "
        "since is left and named.",
        ("invalid_config", "state_write_failed"),
    ),
}

#: Notifications: client->server ones first, then the server's.
NOTIFICATIONS: dict[str, type[msgspec.Struct]] = {
    "initialized": m.Params,
    "exit": m.Params,
    "$/cancelRequest": m.CancelParams,
    "$/progress": m.ProgressParams,
    "skills.changed": m.SkillsChangedParams,
}

#: The notifications the daemon sends (the others are the client's).
SERVER_NOTIFICATIONS: frozenset[str] = frozenset({"$/progress", "skills.changed"})

#: A one-line summary of each notification.
NOTIFICATION_SUMMARIES: dict[str, str] = {
    "initialized": "The client finished initializing (optional).",
    "exit": "Close the connection once in-flight requests are answered (stdio: the daemon exits).",
    "$/cancelRequest": "Cancel request `id`: it is answered with -32800 unless already done.",
    "$/progress": "Progress of a request whose params carried `_meta.progressToken`.",
    "skills.changed": "A catalog this connection listed changed (ids added, removed, changed).",
}
