"""Diagnosis: ``doctor.report`` (what skillsd sees in a cwd, and why) and ``agents.matrix``
(which coding agent finds which skill), for every face: ``skillsd doctor`` only renders them,
and an editor or the TUI can ask a daemon for them.

**Where the doctor report is built**: :func:`doctor_report`. It works whatever it finds: a
config file that cannot be used is reported, and the rest is shown with the defaults (the
catalog is then built here, with them, instead of taken from the catalog cache, which refuses
such a config). The work that waits on files (every skill's static scan, a trial of file
watching, the state file) runs in the install pool: a scan of a large catalog may take longer
than a file read's time limit.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from collections.abc import Callable, Collection, Mapping
from typing import Literal

import msgspec

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.fs_copy_detection import drift
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.agent_folders import AGENT_RULES, AgentRules, expand_folder
from skillsd.core.discovery.fs_personas import agent_dirs, check_references, discover_agents
from skillsd.core.discovery.fs_roots import compute_roots, find_repo_root
from skillsd.core.discovery.fs_watch_plan import watch_plan
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import DEFAULT_CONFIG, Config, project_config_path, user_config_path
from skillsd.core.policy.trust import TrustState, resolve_trust
from skillsd.core.remote.fs_remote_roots import remotes_in_effect
from skillsd.core.skill.fs_security_scan import scan_skill
from skillsd.installing.installer import wire_findings
from skillsd.runtime.caller import NOBODY, Caller, view_for
from skillsd.runtime.embeddings import semantic_model_name
from skillsd.runtime.list_summary import list_summary
from skillsd.runtime.listing_requests import listing_warnings
from skillsd.runtime.remote_store import remote_problems
from skillsd.runtime.request_view import RequestView
from skillsd.runtime.services import Services
from skillsd.runtime.watcher import Subscription, WatchService
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.diagnosis import (
    AgentsMatrix,
    AgentsMatrixParams,
    ConfigFile,
    DoctorParams,
    DoctorReport,
    IgnoredReport,
    MatrixRow,
    PermissionsReport,
    PersonasReport,
    RootReport,
    SkillCounts,
    StateReport,
    TrustReport,
    WatchReport,
)
from skillsd_protocol.install import ScanFinding
from skillsd_protocol.messages import AgentLoadError

__all__ = [
    "PRESENCE",
    "agents_matrix",
    "agents_present",
    "doctor_report",
    "drift_lines",
    "matrix_of",
]

_INOTIFY_MAX_WATCHES = "/proc/sys/fs/inotify/max_user_watches"

#: Agent -> (the commands that start it, its own folders in the home). Its skills folders
#: are no sign: most agents read shared ones (``~/.agents/skills``) that any other may create.
PRESENCE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "claude-code": (("claude",), ("$CLAUDE_CONFIG_DIR",)),
    "codex": (("codex",), ("$CODEX_HOME",)),
    "opencode": (("opencode",), ("$XDG_CONFIG_HOME/opencode",)),
    "copilot": (("copilot",), ("$COPILOT_HOME",)),
    "cursor": (("cursor-agent", "cursor"), ("~/.cursor",)),
    "gemini-cli": (("gemini",), ("$GEMINI_CLI_HOME/.gemini",)),
    "windsurf": (("windsurf",), ("~/.codeium/windsurf",)),
    "goose": (("goose",), ("$XDG_CONFIG_HOME/goose",)),
    "amp": (("amp",), ("$XDG_CONFIG_HOME/amp",)),
    "cline": (("cline",), ("~/.cline",)),
    "roo-code": ((), ("~/.roo",)),
    "kiro": (("kiro", "kiro-cli"), ("~/.kiro",)),
    "openclaw": (("openclaw",), ("~/.openclaw",)),
    "junie": (("junie",), ("~/.junie",)),
    "qwen-code": (("qwen",), ("~/.qwen",)),
    "factory": (("droid",), ("~/.factory",)),
    "mux": (("mux",), ("~/.mux",)),
}
#: Project folders that are no sign of their agent: a repository has ``.github`` for its
#: workflows whoever codes in it.
_NOT_A_SIGN = {"copilot": ".github/skills"}


# -- doctor.report ------------------------------------------------------------------------


async def doctor_report(
    svc: Services, params: DoctorParams, caller: Caller = NOBODY
) -> DoctorReport:
    """``doctor.report``: the whole report for the request's cwd (no output: a face renders
    it)."""
    cwd = os.path.join(svc.cwd, params.cwd) if params.cwd is not None else svc.cwd
    extra = tuple(params.extra_roots or ())
    errors: list[Diagnostic] = []
    config, files, usable = await asyncio.to_thread(_config, svc, cwd, errors)
    if usable:
        view = await view_for(svc, caller, cwd, None, extra_roots=extra)
        seen = view.seen
    else:
        roots = (*caller.extra_roots, *extra)
        seen = await asyncio.to_thread(_with_defaults, svc, cwd, config, roots)
    return await svc.install_pool.run(_report, svc, seen, files, errors)


def _config(
    svc: Services, cwd: str, errors: list[Diagnostic]
) -> tuple[Config, list[ConfigFile], bool]:
    """The config in effect at ``cwd``, its files, and whether it can be used (else the
    defaults, and the reason in ``errors``)."""
    user = user_config_path(svc.env)
    usable = True
    try:
        config, sources, repo_root = svc.catalogs.configs.for_cwd(os.path.realpath(cwd))
    except SkillsdError as exc:
        where = getattr(exc.data, "path", None) or user
        errors.append(_diag("error", "config.invalid", exc.message, where))
        config, sources, usable = DEFAULT_CONFIG, [], False
        repo_root = find_repo_root(cwd, DEFAULT_CONFIG.discovery.markers, svc.env)
    paths = [user, project_config_path(repo_root)]
    files = [ConfigFile(path=p, exists=os.path.exists(p), in_effect=p in sources) for p in paths]
    return config, files, usable


def _with_defaults(
    svc: Services, cwd: str, config: Config, extra_roots: tuple[str, ...]
) -> RequestView:
    """What the request would see with the default config (its own failed): built here."""
    real = os.path.realpath(cwd)
    plan = compute_roots(real, config, home=svc.home, env=svc.env, client_extra_roots=extra_roots)
    # The user config may be the broken one: its [trust] is the default's too.
    trust = resolve_trust(plan.repo_root, svc.state.trust_decisions(), config.trust, home=svc.home)
    catalog = build_catalog(
        plan, config, disabled=svc.state.disabled(plan.repo_root), trusted=trust.trusted
    )
    return RequestView(catalog, trust=trust)


def _report(
    svc: Services, seen: RequestView, files: list[ConfigFile], errors: list[Diagnostic]
) -> DoctorReport:
    catalog, config = seen.catalog, seen.config
    assert seen.trust is not None  # a view the runtime made knows its root's trust
    trust = seen.trust
    warnings: list[Diagnostic] = []
    state = svc.state
    if state.problem is not None:
        errors.append(state.problem)
    data = state.read()
    for diag in catalog.diagnostics:
        (errors if diag.severity == "error" else warnings).append(diag)
    for skill in catalog.skills:
        warnings.extend(
            msgspec.structs.replace(d, path=d.path or skill.path)
            for d in skill.diagnostics
            if d.severity == "warning"
        )
    for load_error in catalog.errors:
        errors.append(_diag("error", "skill.invalid", load_error.message, load_error.path))
    # Agents in use here whose model is shown some skill without its description.
    present = agents_present(catalog.cwd, catalog.repo_root, env=svc.env, home=svc.home)
    warnings.extend(
        _diag("warning", "agent.listing_truncated", line, catalog.cwd)
        for line in listing_warnings(catalog, present, home=svc.home, env=svc.env)
    )
    # Refused remote skills are errors, unreachable remotes warnings (docs/remote.md).
    for problem in remote_problems(remotes_in_effect(config, trust.trusted), svc.remotes.store):
        (errors if problem.severity == "error" else warnings).append(problem)
    # Copies of one skill in several agents' folders that no longer match.
    warnings.extend(
        _diag("warning", "skill.drift", line, line.split(" differs from ")[0])
        for line in drift_lines(catalog)
    )
    dirs = agent_dirs(catalog.cwd, config, home=svc.home, env=svc.env)
    personas, persona_errors = discover_agents(dirs)
    persona_errors += check_references(personas, lambda name: catalog.resolve(name=name))
    errors.extend(_persona_problem(e) for e in persona_errors)
    policy = config.policy
    allow = [*policy.allow, *(policy.project_allow if trust.trusted else ())]
    withheld = [f"{s.name}: {rule}" for s in catalog.skills for rule in seen.withheld_grants(s)]
    return DoctorReport(
        cwd=catalog.cwd,
        repo_root=catalog.repo_root,
        config=files,
        roots=_roots(catalog),
        skills=SkillCounts(
            total=len(catalog.skills),
            enabled=sum(s.enabled for s in catalog.skills),
            invalid=len(catalog.errors),
        ),
        watch=_watch(catalog),
        state=StateReport(
            path=state.path,
            exists=os.path.exists(state.path),
            disabled=len(data.disabled),
            remembered=len(data.permissions),
        ),
        trust=_trust(trust, withheld, config),
        permissions=PermissionsReport(
            default_action=policy.default_action,
            final_deny=[r.text for r in policy.final_deny],
            override=[r.text for r in policy.override],
            deny=[r.text for r in policy.deny],
            allow=[r.text for r in allow],
        ),
        agents=PersonasReport(directories=dirs, names=[a.name for a in personas]),
        errors=errors,
        warnings=warnings,
        invalid_skills=catalog.errors,
        findings=_scan(catalog),
        suggest_stages=_suggest_stages(config, svc.semantic.problem),
        suggest_threshold=config.suggest.threshold,
        suggest_candidate_threshold=config.suggest.candidate_threshold,
        catalog_summary=list_summary(catalog, catalog.skills),
    )


def _trust(trust: TrustState, withheld: list[str], config: Config) -> TrustReport:
    return TrustReport(
        repo_root=trust.root,
        root=trust.root,
        trusted=trust.trusted,
        source=trust.source,
        withheld_grants=withheld,
        ignored=[
            IgnoredReport(rule=i.rule, key=i.key, until_trusted=i.until_trusted)
            for i in config.policy.ignored_now(trust.trusted)
        ],
    )


def _diag(severity: Literal["error", "warning"], code: str, message: str, path: str) -> Diagnostic:
    return Diagnostic(severity=severity, code=code, message=message, path=path)


def _persona_problem(error: AgentLoadError) -> Diagnostic:
    return _diag("error", "agent.invalid", error.message, error.path)


def _suggest_stages(config: Config, problem: Callable[[], str | None]) -> list[str]:
    """The suggestion stages in use; ``problem`` reads the semantic stage's vectors (blocking)
    and says why they cannot be used."""
    if not config.suggest.semantic:
        return ["lexical", "semantic: off (suggest.semantic = false)"]
    if (why := problem()) is not None:
        return ["lexical", f"semantic: unavailable ({why})"]
    return ["lexical", f"semantic ({semantic_model_name()})"]


def _scan(catalog: Catalog) -> list[ScanFinding]:
    """The warnings and dangers of every listed skill (each skill folder once)."""
    found: list[ScanFinding] = []
    seen: set[str] = set()
    for skill in catalog.skills:
        if skill.dir in seen:
            continue
        seen.add(skill.dir)
        notable = [f for f in scan_skill(skill.dir) if f.severity != "info"]
        found.extend(wire_findings(notable, skill.name))
    return found


def _roots(catalog: Catalog) -> list[RootReport]:
    reports = []
    for root in catalog.roots:
        prefix = root.path.rstrip(os.sep) + os.sep
        reports.append(
            RootReport(
                path=root.path,
                scope=root.scope,
                exists=os.path.exists(root.path),
                skills=sum(s.root == root.path for s in catalog.skills),
                errors=sum(
                    e.path == root.path or e.path.startswith(prefix) for e in catalog.errors
                ),
            )
        )
    return reports


def _watch(catalog: Catalog) -> WatchReport:
    """Try to watch what the daemon would watch for this catalog (:func:`watch_plan`)."""
    plan = watch_plan(catalog)
    service = WatchService()
    sub = Subscription(on_event=lambda _paths: None)
    try:
        service.update(sub, plan.directories)
    finally:
        service.cancel(sub)
        service.close()
    return WatchReport(
        mode="stat" if sub.failure else "watching",
        directories=sorted(plan.directories),
        reason=sub.failure,
        max_user_watches=_max_user_watches(),
    )


def _max_user_watches() -> int | None:
    try:
        with open(_INOTIFY_MAX_WATCHES, encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


# -- agents.matrix ------------------------------------------------------------------------


async def agents_matrix(
    svc: Services, params: AgentsMatrixParams, caller: Caller = NOBODY
) -> AgentsMatrix:
    """``agents.matrix``: the request's catalog against the agents found here (``allAgents``:
    every agent; none found: every agent too, and ``noneFound``)."""
    extra = tuple(params.extra_roots or ())
    view = await view_for(svc, caller, params.cwd, None, extra_roots=extra)
    catalog = view.catalog

    def build() -> AgentsMatrix:
        present = None
        if not params.all_agents:
            present = agents_present(catalog.cwd, catalog.repo_root, env=svc.env, home=svc.home)
        matrix = matrix_of(catalog, present or None)
        matrix.none_found = present == []
        return matrix

    return await svc.install_pool.run(build)


def agents_present(cwd: str, repo_root: str, *, env: Mapping[str, str], home: str) -> list[str]:
    """The agents this person has, in table order: a command of theirs on ``PATH``, or their
    own folder in the home (``~/.cursor``), the working directory or the repository root
    (``.cursor``)."""
    path = env.get("PATH", os.defpath)
    found = []
    for rules in AGENT_RULES:
        commands, home_folders = PRESENCE.get(rules.name, ((), ()))
        own = _NOT_A_SIGN.get(rules.name, rules.own)
        places = [expand_folder(f, home=home, env=env) for f in home_folders]
        if own:
            places += [os.path.join(cwd, own), os.path.join(repo_root, own)]
        if any(shutil.which(c, path=path) for c in commands) or any(map(os.path.isdir, places)):
            found.append(rules.name)
    return found


def _folders(rules: AgentRules) -> list[str]:
    where = " (and each parent)" if rules.walk == "chain" else ""
    project = [f"{p}{where}" for p in rules.project]
    user = [*rules.system, *rules.user, *(f"${v}" for v, _ in rules.env_lists)]
    return [*user, *project] if rules.user_first else [*project, *user]


def matrix_of(catalog: Catalog, agents: Collection[str] | None = None) -> AgentsMatrix:
    """Rows in catalog order. The columns: ``agents`` (in table order), or every agent with
    real adoption and a secondary one only when it finds something here."""
    views = {rules.name: catalog.seen_by(rules.name) for rules in AGENT_RULES}
    seen = {agent: {s.id for s in view} for agent, view in views.items()}
    columns = [
        rules
        for rules in AGENT_RULES
        if (
            rules.name in agents
            if agents is not None
            else not rules.secondary or any(rules.name in s.agents for s in catalog.skills)
        )
    ]
    names = [rules.name for rules in columns]
    rows = []
    for s in catalog.skills:
        instead = {
            a: _shown_instead(views[a], s) for a in s.agents if a in names and s.id not in seen[a]
        }
        rows.append(
            MatrixRow(
                id=s.id,
                name=s.name,
                path=s.path,
                scope=s.scope,
                agents=list(s.agents),
                missed_by=[a for a in names if a not in s.agents],
                hidden_for=list(instead),
                shown_instead=instead,
                copy_of=s.copy_of,
            )
        )
    return AgentsMatrix(
        agents=names,
        skills=rows,
        folders={rules.name: _folders(rules) for rules in columns},
        drift=drift_lines(catalog),
        all_agents=agents is None,
    )


def drift_lines(catalog: Catalog) -> list[str]:
    """One line per pair of same-named skills whose files differ (copies drifted apart)."""
    lines = []
    for group in catalog.by_name.values():
        plain = [s for s in group if s.qualified_name is None and s.copy_of is None]
        for a, b in itertools.pairwise(plain):
            changes = drift(a, b)
            if changes:
                differ = changes.names()
                lines.append(
                    f"{a.dir} differs from {b.dir} in {len(differ)} file(s): "
                    + ", ".join(differ[:5])
                    + (", ..." if len(differ) > 5 else "")
                )
    return lines


def _shown_instead(view: list[SkillMetadata], hidden: SkillMetadata) -> str:
    """The path of the skill of ``hidden``'s name in an agent's ``view`` (a plugin's skills go
    by their qualified name)."""
    key = hidden.qualified_name or hidden.name
    return next((s.path for s in view if (s.qualified_name or s.name) == key), "")
