"""``skillsd doctor [--cwd DIR] [--extra-root DIR] [--json] [--no-fail]``: what skillsd sees
here, and why.

Config files in effect, every root with its counts, whether file watching works for those roots,
the state file, the repository's trust and what it withholds, the permission policy in effect,
personas, then every error and warning. It works without a daemon and reports in full whatever
it finds (a bad config is reported, and the rest is shown with the defaults); the exit status is
1 when a config file is invalid or the scan sees a ``danger`` in a skill, so a script or CI job
notices, and 0 otherwise or with ``--no-fail``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Literal

import msgspec

from skillsd.cli.agents_matrix import agents_present, drift_lines, print_agents
from skillsd.cli.list_summary import list_summary
from skillsd.core.catalog import Catalog
from skillsd.core.catalog_build import build_catalog
from skillsd.core.config import DEFAULT_CONFIG, Config, project_config_path, user_config_path
from skillsd.core.discovery import compute_roots, find_repo_root
from skillsd.core.display_text import escape_controls
from skillsd.core.effective_config import ConfigSource
from skillsd.core.errors import SkillsdError
from skillsd.core.personas import agent_dirs, check_references, discover_agents
from skillsd.core.remote_roots import remotes_in_effect
from skillsd.core.skill_scan import scan_skill
from skillsd.core.state import StateStore, default_state_path
from skillsd.core.trust import resolve_trust
from skillsd.core.watch_plan import watch_plan
from skillsd.installing.installer import wire_findings
from skillsd.runtime.embeddings import semantic_version
from skillsd.runtime.listing_requests import listing_warnings
from skillsd.runtime.remote_store import RemoteStore, remote_problems
from skillsd.runtime.watcher import Subscription, WatchService
from skillsd_protocol import Diagnostic, Scope, SkillLoadError
from skillsd_protocol.install import ScanFinding
from skillsd_protocol.messages import AgentLoadError

_INOTIFY_MAX_WATCHES = "/proc/sys/fs/inotify/max_user_watches"


class _Out(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    pass


class ConfigFile(_Out, kw_only=True):
    path: str
    exists: bool
    in_effect: bool


class RootReport(_Out, kw_only=True):
    path: str
    scope: Scope
    exists: bool
    skills: int
    errors: int


class WatchReport(_Out, kw_only=True):
    mode: Literal["watching", "stat"]
    directories: list[str]
    reason: str | None = None
    max_user_watches: int | None = None


class StateReport(_Out, kw_only=True):
    path: str
    exists: bool
    disabled: int
    remembered: int


class PermissionsReport(_Out, kw_only=True):
    default_action: str
    final_deny: list[str]
    override: list[str]
    deny: list[str]
    allow: list[str]


class IgnoredReport(_Out, kw_only=True):
    rule: str
    key: str
    until_trusted: bool


class TrustReport(_Out, kw_only=True):
    """The repository root's trust (docs/permissions.md) and what not trusting it withholds."""

    root: str
    trusted: bool
    source: str
    #: ``skill: rule`` for each repo skill's ``allowed-tools`` entry that grants nothing.
    withheld_grants: list[str] = msgspec.field(default_factory=list)
    #: Project config entries not applied (until trusted, or ever).
    ignored: list[IgnoredReport] = msgspec.field(default_factory=list)


class AgentsReport(_Out, kw_only=True):
    directories: list[str]
    names: list[str]


class SkillCounts(_Out, kw_only=True):
    total: int
    enabled: int
    invalid: int


class DoctorReport(_Out, kw_only=True):
    """Everything ``doctor`` found; ``errors`` and ``warnings`` gather problems of every kind."""

    cwd: str
    repo_root: str
    config: list[ConfigFile]
    roots: list[RootReport]
    skills: SkillCounts
    watch: WatchReport
    state: StateReport
    trust: TrustReport
    permissions: PermissionsReport
    agents: AgentsReport
    errors: list[Diagnostic]
    warnings: list[Diagnostic]
    invalid_skills: list[SkillLoadError]
    #: The stages ``skills.suggest`` runs here and its activation threshold.
    suggest_stages: list[str] = msgspec.field(default_factory=list)
    suggest_threshold: float = 0.0
    suggest_candidate_threshold: float = 0.0
    #: What the static scan (``skillsd scan``) sees in the catalog's skills: warnings and
    #: dangers only (docs/install-skills.md).
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    #: ``skillsd list``'s last line: what was left out, why, and what would keep it.
    catalog_summary: str = ""


def register(subparsers: Any) -> None:
    """Add the ``doctor`` subcommand."""
    p = subparsers.add_parser(
        "doctor",
        help="report roots, config, watcher, state and every problem found",
        description="Report roots, config, watcher, state and every problem found. Exit status: "
        "1 when a config file is invalid or a skill has a danger scan finding (--no-fail: 0), "
        "2 on a usage error, else 0.",
    )
    p.add_argument("--cwd", help="working directory to diagnose (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--no-fail",
        action="store_true",
        help="exit 0 even with an invalid config file or a danger scan finding",
    )
    p.add_argument(
        "--agents",
        action="store_true",
        help="which coding agent (Claude Code, Codex, opencode) finds which skill: the agents "
        "found here (on PATH or by their own folders), in 80 columns",
    )
    p.add_argument("--all", action="store_true", help="with --agents: every agent skillsd knows")
    p.add_argument(
        "--wide", action="store_true", help="with --agents: the whole table, lines of any length"
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    cwd = os.path.realpath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        print(f"skillsd doctor: --cwd {args.cwd}: not a directory", file=sys.stderr)
        return 2
    if (args.all or args.wide) and not args.agents:
        print("skillsd doctor: --all and --wide go with --agents", file=sys.stderr)
        return 2
    if args.agents:
        return print_agents(
            cwd,
            env=os.environ,
            home=os.path.expanduser("~"),
            extra_roots=args.extra_root,
            as_json=args.json,
            every_agent=args.all,
            wide=args.wide,
        )
    report = diagnose(
        cwd,
        env=os.environ,
        home=os.path.expanduser("~"),
        extra_roots=args.extra_root,
        state_path=default_state_path(),
    )
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
    else:
        print(render(report))
    return 0 if args.no_fail else failure_status(report)


def failure_status(report: DoctorReport) -> int:
    """1 when a config file is invalid or a skill has a danger scan finding, else 0: the
    problems a person must act on before trusting this setup (broken skills are left out of
    the catalog and only reported)."""
    config_error = any(e.code == "config.invalid" for e in report.errors)
    return 1 if config_error or _dangers(report) else 0


def _dangers(report: DoctorReport) -> int:
    return sum(f.severity == "danger" for f in report.findings)


def _diag(severity: Literal["error", "warning"], code: str, message: str, path: str) -> Diagnostic:
    return Diagnostic(severity=severity, code=code, message=message, path=path)


def diagnose(
    cwd: str,
    *,
    env: Any,
    home: str,
    extra_roots: list[str],
    state_path: str,
) -> DoctorReport:
    """Build the report for ``cwd`` (no output; the CLI renders it)."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []

    config, files = _config(cwd, env, errors)
    state = StateStore(state_path)
    if state.problem is not None:
        errors.append(state.problem)
    plan = compute_roots(cwd, config, home=home, env=env, client_extra_roots=extra_roots)
    data = state.read()
    # The merged config's [trust] is the user's own: layering drops a project's.
    trust = resolve_trust(plan.repo_root, data.trust, config.trust, home=home)
    catalog = build_catalog(
        plan, config, disabled=state.disabled(plan.repo_root), trusted=trust.trusted
    )

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
    for problem in remote_problems(remotes_in_effect(config, trust.trusted), RemoteStore()):
        (errors if problem.severity == "error" else warnings).append(problem)
    # Agents in use here whose model is shown some skill without its description.
    warnings.extend(
        _diag("warning", "agent.listing_truncated", line, cwd)
        for line in listing_warnings(
            catalog, agents_present(cwd, plan.repo_root, env=env, home=home), home=home, env=env
        )
    )
    # Copies of one skill in several agents' folders that no longer match.
    warnings.extend(
        _diag("warning", "skill.drift", line, line.split(" differs from ")[0])
        for line in drift_lines(catalog)
    )

    dirs = agent_dirs(cwd, config, home=home, env=env)
    agents, agent_errors = discover_agents(dirs)
    agent_errors += check_references(agents, lambda name: catalog.resolve(name=name))
    errors.extend(_agent_problem(e) for e in agent_errors)

    policy = config.policy
    allow = [*policy.allow, *(policy.project_allow if trust.trusted else ())]
    withheld = []
    if not trust.trusted:
        withheld = [
            f"{s.name}: {rule}"
            for s in catalog.skills
            if catalog.grants_need_trust(s)
            for rule in dict.fromkeys(s.allowed_tools or ())
        ]
    return DoctorReport(
        cwd=cwd,
        repo_root=catalog.root,
        config=files,
        roots=_roots(catalog),
        skills=SkillCounts(
            total=len(catalog.skills),
            enabled=sum(s.enabled for s in catalog.skills),
            invalid=len(catalog.errors),
        ),
        watch=_watch(catalog),
        state=StateReport(
            path=state_path,
            exists=os.path.exists(state_path),
            disabled=len(data.disabled),
            remembered=len(data.permissions),
        ),
        trust=TrustReport(
            root=trust.root,
            trusted=trust.trusted,
            source=trust.source,
            withheld_grants=withheld,
            ignored=[
                IgnoredReport(rule=i.rule, key=i.key, until_trusted=i.until_trusted)
                for i in policy.ignored_now(trust.trusted)
            ],
        ),
        permissions=PermissionsReport(
            default_action=policy.default_action,
            final_deny=[r.text for r in policy.final_deny],
            override=[r.text for r in policy.override],
            deny=[r.text for r in policy.deny],
            allow=[r.text for r in allow],
        ),
        agents=AgentsReport(directories=dirs, names=[a.name for a in agents]),
        errors=errors,
        warnings=warnings,
        invalid_skills=catalog.errors,
        findings=_scan(catalog),
        suggest_stages=_suggest_stages(),
        suggest_threshold=config.suggest.threshold,
        suggest_candidate_threshold=config.suggest.candidate_threshold,
        catalog_summary=list_summary(catalog, catalog.skills),
    )


def _suggest_stages() -> list[str]:
    semantic = semantic_version()
    missing = "semantic: not installed (pip install '.[semantic]')"
    return ["lexical", f"semantic ({semantic})" if semantic else missing]


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


def _config(cwd: str, env: Any, errors: list[Diagnostic]) -> tuple[Config, list[ConfigFile]]:
    source = ConfigSource(env)
    user = user_config_path(env)
    try:
        config, sources, repo_root = source.for_cwd(cwd)
    except SkillsdError as exc:
        where = getattr(exc.data, "path", None) or user
        errors.append(_diag("error", "config.invalid", exc.message, where))
        config, sources = DEFAULT_CONFIG, []
        repo_root = find_repo_root(cwd, DEFAULT_CONFIG.discovery.markers, env)
    paths = [user, project_config_path(repo_root)]
    files = [ConfigFile(path=p, exists=os.path.exists(p), in_effect=p in sources) for p in paths]
    return config, files


def _agent_problem(error: AgentLoadError) -> Diagnostic:
    return _diag("error", "agent.invalid", error.message, error.path)


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


def render(report: DoctorReport) -> str:
    """The human form of the report, one line per entry (control characters in paths, names
    and messages shown escaped, so an embedded newline cannot fake a line either)."""
    lines = [f"skillsd doctor: {report.cwd}", f"repository root: {report.repo_root}", ""]
    lines.append("config files:")
    for f in report.config:
        status = "in effect" if f.in_effect else ("present, not used" if f.exists else "absent")
        lines.append(f"  {f.path}  ({status})")
    lines.append("")
    lines.append("roots:")
    width = max((len(r.path) for r in report.roots), default=0)
    for r in report.roots:
        if not r.exists:
            detail = "missing"
        else:
            detail = f"{r.skills} skill(s)" + (f", {r.errors} invalid" if r.errors else "")
        lines.append(f"  {r.scope:<5}  {r.path:<{width}}  {detail}")
    lines.append("")
    w = report.watch
    count = len(w.directories)
    watch = f"watcher: {w.mode}, {count} {'directory' if count == 1 else 'directories'}"
    if w.reason:
        watch += f" - {w.reason}; catalogs are stat-validated on every request"
    if w.max_user_watches is not None:
        watch += f" (inotify max_user_watches {w.max_user_watches})"
    lines.append(watch)
    s = report.state
    lines.append(
        f"state: {s.path} ("
        + (f"{s.disabled} disabled, {s.remembered} remembered" if s.exists else "absent")
        + ")"
    )
    t = report.trust
    how = {"state": "your decision", "config": "[trust] roots", "default": "[trust] default"}
    lines.append(
        f"trust: {t.root} is {'trusted' if t.trusted else 'NOT trusted'} ({how[t.source]})"
        + ("" if t.trusted else "; `skillsd trust` trusts it")
    )
    if t.withheld_grants:
        lines.append(f"  withheld grants of repo skills ({len(t.withheld_grants)}):")
        lines.extend(f"    {g}" for g in t.withheld_grants)
    for item in t.ignored:
        why = "ignored until trusted" if item.until_trusted else "always ignored (never loosens)"
        lines.append(f"  project {item.key} {item.rule}: {why}")
    p = report.permissions
    lines.append(
        f"permissions: defaultAction {p.default_action}; finalDeny {len(p.final_deny)}, "
        f"override {len(p.override)}, deny {len(p.deny)}, allow {len(p.allow)} rule(s)"
    )
    a = report.agents
    # Agent definitions (personas), not the coding agents of `doctor --agents`.
    lines.append(f"personas: {', '.join(a.names) if a.names else 'none'}")
    lines.append(
        f"suggestions: {'; '.join(report.suggest_stages)}; activate at "
        f"{report.suggest_threshold:.2f} (suggest.threshold), candidates from "
        f"{report.suggest_candidate_threshold:.2f} (suggest.candidateThreshold)"
    )
    for title, items in (("errors", report.errors), ("warnings", report.warnings)):
        if items:
            lines.append("")
            lines.append(f"{title} ({len(items)}):")
            lines.extend(f"  {d.path}: [{d.code}] {d.message}" for d in items)
    if report.findings:
        lines.append("")
        lines.append(f"scan findings ({len(report.findings)}; `skillsd scan PATH` for one skill):")
        for seen in report.findings:
            where = f"{seen.file}:{seen.line}" if seen.line is not None else seen.file
            lines.append(f"  {seen.severity:<7} {seen.skill}/{where}: [{seen.code}] {seen.message}")
    k = report.skills
    lines.append("")
    if report.catalog_summary:
        lines.append(f"catalog: {report.catalog_summary}")
    lines.append(
        f"summary: {k.total} skill(s) ({k.enabled} enabled), {k.invalid} invalid, "
        f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
        + (f", {dangers} dangerous scan finding(s)" if (dangers := _dangers(report)) else "")
    )
    return "\n".join(map(escape_controls, lines))
