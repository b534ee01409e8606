"""``skillsd enable|disable SKILL [--project] [--cwd DIR] [--json]``: the user's enable flag of
one skill, everywhere or (``--project``) in this repository only.

The flag is saved in the user's state file (atomically), exactly as ``skills.setEnabled`` with
``persist: "user"`` (or ``"project"``) saves it, so every daemon and host applies it at their
next request. A project's flag is kept under the repository's root in the state file, never in
the repository, and wins there over the user's. A disabled skill stays listed (``[disabled]``)
but is left out of prompts, search and mentions.
``SKILL`` is a name (disabled skills included, so one can be enabled again), an id, or the path
of the skill's directory or ``SKILL.md``.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any, Literal

import msgspec

from skillsd.cli.in_process import run_in_process, view_of
from skillsd.cli.output import one_line
from skillsd.core.errors import SkillsdError
from skillsd.runtime import use_cases
from skillsd.runtime.request_view import ref_from_text, resolve
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import SetEnabledParams, SetEnabledResult

__all__ = ["register"]

#: A skill that is not there, or a state file that cannot be written: a usage-level failure.
FAILURE_STATUS = 2


def register(subparsers: Any) -> None:
    """Add ``enable`` and ``disable``."""
    for verb, enabled, summary in (
        ("enable", True, "enable a skill for you (every session and host)"),
        ("disable", False, "disable a skill for you: kept listed, left out of prompts and search"),
    ):
        p = subparsers.add_parser(verb, help=summary, description=summary)
        p.add_argument("skill", help="skill name, id, or path of the skill dir / SKILL.md")
        p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
        p.add_argument(
            "--extra-root", action="append", default=[], metavar="DIR", help="an extra root"
        )
        p.add_argument(
            "--project",
            action="store_true",
            help=f"{verb} it in this repository only (kept in your state file, not the repo)",
        )
        p.add_argument("--json", action="store_true", help="print the skill as JSON")
        p.set_defaults(func=_run, enabled=enabled)


async def _set(
    text: str, enabled: bool, project: bool, svc: Services, caller: use_cases.Caller
) -> tuple[SkillMetadata, SkillMetadata, str]:
    """The skill ``text`` names (disabled ones too) as it was before the flag was saved, as it
    is after (in this repository), and the repository's root."""
    catalog = (await view_of(svc, caller)).catalog
    skill = resolve(catalog, ref_from_text(catalog, text), include_disabled=True)
    persist: Literal["user", "project"] = "project" if project else "user"
    params = SetEnabledParams(path=skill.path, enabled=enabled, persist=persist)
    result = await use_cases.set_enabled(svc, params, caller)
    return skill, result.skill, catalog.repo_root


def _run(args: argparse.Namespace) -> int:
    try:
        skill, after, root = run_in_process(
            args, partial(_set, args.skill, args.enabled, args.project)
        )
    except SkillsdError as exc:
        print(f"skillsd {args.command}: {one_line(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    was = skill.enabled
    # What holds now in this repository: a project's own flag wins over the user's.
    now = after.enabled
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(SetEnabledResult(skill=after)) + b"\n")
        return 0
    verb = "enabled" if args.enabled else "disabled"
    where = f"in {root}" if args.project else "for you"
    already = " (it already was)" if was == args.enabled else ""
    print(one_line(f"{skill.name} {verb} {where}{already}: {skill.path}"))
    if now != args.enabled:
        # Only a user-wide change can be overridden: this repository has its own flag.
        print(
            one_line(
                f"{skill.name} stays {'enabled' if now else 'disabled'} in {root}, "
                f"which has its own flag: `skillsd {args.command} --project {skill.name}`"
            )
        )
    return 0
