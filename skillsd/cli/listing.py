"""``skillsd list``: the skills of a working directory, for people and scripts.

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process, view_of
from skillsd.cli.output import emit_json, failing, one_line
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.skill.fs_security_scan import ScanSeverity
from skillsd.core.skill.host_fields import invocation_marks, slash_usage
from skillsd.runtime import use_cases
from skillsd.runtime.list_summary import list_summary
from skillsd.runtime.scan_marks import ScanMarks
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    ListParams,
    ListResult,
)


def register(subparsers: Any) -> None:
    """Add ``list``."""
    p = subparsers.add_parser("list", help="list the skills of a working directory")
    catalog_options(p)
    p.add_argument(
        "--scope",
        choices=("repo", "user", "plugin", "extra", "remote"),
        help="only skills of this scope",
    )
    p.add_argument(
        "--agent",
        help="what this agent (claude-code, codex, copilot, ...) sees here: docs/agents.md",
    )
    p.set_defaults(func=_list)


@failing
def _list(args: argparse.Namespace) -> int:
    async def body(svc: Services, caller: use_cases.Caller) -> tuple[ListResult, Catalog]:
        listing = await use_cases.list_skills(
            svc, ListParams(scope=args.scope, agent=args.agent), caller
        )
        return listing, (await view_of(svc, caller)).catalog

    listing, catalog = run_in_process(args, body)
    if args.json:
        return emit_json(listing)
    skills = listing.skills
    scanned = scan_marks(skills)
    names = {s.id: one_line(s.qualified_name or s.name) for s in skills}
    width = max(map(len, names.values()), default=4)
    scope = None
    for s in skills:
        if s.scope != scope:
            scope = s.scope
            print(f"{scope}:")
        flags = "" if s.enabled else " [disabled]"
        flags += f" [copy of {one_line(copied)}]" if (copied := _copied_name(catalog, s)) else ""
        flags += "".join(f" [{mark}]" for mark in invocation_marks(s))
        flags += f" [scan: {scanned[s.dir]}]" if s.dir in scanned else ""
        usage = slash_usage(s) if s.host is not None and s.host.argument_hint else None
        warn = f" ({len(s.diagnostics)} warning(s))" if s.diagnostics else ""
        desc = one_line(s.description, 70)
        usage_note = f"  (usage: {one_line(usage)})" if usage else ""
        print(f"  {names[s.id]:<{width}}  {desc}{flags}{warn}")
        print(f"  {'':<{width}}  {one_line(s.path)}{usage_note}")
    for error in listing.errors:
        print(one_line(f"invalid: {error.path}: {error.message}"))
    for diag in listing.diagnostics:
        print(one_line(f"{diag.severity}: {diag.path}: {diag.message}"))
    if scanned:
        print("scan: `skillsd scan PATH` shows what it found in a skill")
    print(one_line(list_summary(catalog, skills, scanned)))
    return 0


def scan_marks(skills: Sequence[SkillMetadata]) -> dict[str, ScanSeverity]:
    """Skill folder -> the worst static-scan finding in it, ``danger`` or ``warning``; folders
    with neither are left out. A folder whose files have not changed since an earlier run is
    not scanned again (:class:`~skillsd.runtime.scan_marks.ScanMarks`)."""
    remembered = ScanMarks()
    marks: dict[str, ScanSeverity] = {}
    for folder in dict.fromkeys(skill.dir for skill in skills):
        worst = remembered.worst(folder)
        if worst is not None:
            marks[folder] = worst
    remembered.save()
    return marks


def _copied_name(catalog: Catalog, skill: SkillMetadata) -> str | None:
    """Where an identical copy's original is (its path), for the listing."""
    original = catalog.get(skill.copy_of) if skill.copy_of else None
    return original.dir if original is not None else None
