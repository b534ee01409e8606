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
from typing import Any

import msgspec

from skillsd import operations as ops
from skillsd.cli.catalog import catalog_view, one_line
from skillsd.core.errors import SkillsdError
from skillsd.core.state import StateStore, default_state_path
from skillsd_protocol.messages import SetEnabledResult

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


def _run(args: argparse.Namespace) -> int:
    try:
        view = catalog_view(args)
        ref = ops.ref_from_text(view.catalog, args.skill)
        skill = ops.resolve(view.catalog, ref, include_disabled=True)
        was = skill.enabled
        state = StateStore(default_state_path())
        ops.save_enabled(state, view.catalog, skill, args.enabled, project=args.project)
        # What holds now in this repository: a project's own flag wins over the user's.
        flagged = view.catalog.with_disabled(state.disabled(view.catalog.root)).get(skill.id)
        now = flagged.enabled if flagged is not None else args.enabled
    except SkillsdError as exc:
        print(f"skillsd {args.command}: {one_line(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    after = msgspec.structs.replace(skill, enabled=now)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(SetEnabledResult(skill=after)) + b"\n")
        return 0
    verb = "enabled" if args.enabled else "disabled"
    where = f"in {view.catalog.root}" if args.project else "for you"
    already = " (it already was)" if was == args.enabled else ""
    print(one_line(f"{skill.name} {verb} {where}{already}: {skill.path}"))
    if now != args.enabled:
        # Only a user-wide change can be overridden: this repository has its own flag.
        print(
            one_line(
                f"{skill.name} stays {'enabled' if now else 'disabled'} in {view.catalog.root}, "
                f"which has its own flag: `skillsd {args.command} --project {skill.name}`"
            )
        )
    return 0
