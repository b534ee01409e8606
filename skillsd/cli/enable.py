"""``skillsd enable|disable SKILL [--cwd DIR] [--json]``: the user's enable flag of one skill.

The flag is saved in the user's state file (atomically), exactly as ``skills.setEnabled`` with
``persist: "user"`` saves it, so every daemon and host applies it at their next request. A
disabled skill stays listed (``[disabled]``) but is left out of prompts, search and mentions.
``SKILL`` is a name (disabled skills included, so one can be enabled again), an id, or the path
of the skill's directory or ``SKILL.md``.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any

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
        p.add_argument("--json", action="store_true", help="print the skill as JSON")
        p.set_defaults(func=_run, enabled=enabled)


async def _set(text: str, enabled: bool, svc: Services, caller: use_cases.Caller) -> SkillMetadata:
    """The skill ``text`` names (disabled ones too), as it was before the flag was saved."""
    catalog = (await view_of(svc, caller)).catalog
    skill = resolve(catalog, ref_from_text(catalog, text), include_disabled=True)
    params = SetEnabledParams(path=skill.path, enabled=enabled, persist="user")
    await use_cases.set_enabled(svc, params, caller)
    return skill


def _run(args: argparse.Namespace) -> int:
    try:
        skill = run_in_process(args, partial(_set, args.skill, args.enabled))
    except SkillsdError as exc:
        print(f"skillsd {args.command}: {one_line(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    was = skill.enabled
    after = msgspec.structs.replace(skill, enabled=args.enabled)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(SetEnabledResult(skill=after)) + b"\n")
        return 0
    verb = "enabled" if args.enabled else "disabled"
    already = " (it already was)" if was == args.enabled else ""
    print(one_line(f"{skill.name} {verb} for you{already}: {skill.path}"))
    return 0
