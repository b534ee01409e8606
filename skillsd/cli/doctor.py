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
from typing import Any

import msgspec

from skillsd.cli.agents_matrix import print_agents
from skillsd.cli.in_process import run_in_process
from skillsd.core.display_text import escape_controls
from skillsd.runtime import use_cases
from skillsd_protocol.diagnosis import DoctorParams, DoctorReport


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
    if not os.path.isdir(os.path.realpath(args.cwd or os.getcwd())):
        print(f"skillsd doctor: --cwd {args.cwd}: not a directory", file=sys.stderr)
        return 2
    if (args.all or args.wide) and not args.agents:
        print("skillsd doctor: --all and --wide go with --agents", file=sys.stderr)
        return 2
    if args.agents:
        return print_agents(args)
    params = DoctorParams()  # the caller holds the --extra-root folders
    report = run_in_process(
        args, lambda svc, caller: use_cases.doctor_report(svc, params, caller), warn=False
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
