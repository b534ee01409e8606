"""``skillsd show``: a skill as the model receives it (``skills.load``).

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns. The CLI acts for the user, so ``show`` is not gated by permissions
(docs/permissions.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process, view_of
from skillsd.cli.output import disabled_note, emit_json, failing, print_text
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.runtime import use_cases
from skillsd.runtime.request_view import ref_from_text, resolve
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    LoadParams,
    LoadResult,
    RefParams,
)


def register(subparsers: Any) -> None:
    """Add ``show``."""
    p = subparsers.add_parser("show", help="show a skill as the model receives it")
    catalog_options(p)
    p.add_argument(
        "ref",
        nargs="?",
        help="skill name (NAME@repo or NAME@user for a shared name), id, or path of the skill "
        "dir / SKILL.md",
    )
    p.add_argument("--path", help="the skill at this path (its dir or SKILL.md)")
    p.add_argument("--id", help="the skill with this id")
    p.add_argument(
        "--format",
        choices=("codelia", "spec", "markdown"),
        default="codelia",
        help="how the skill is wrapped for the model (default codelia)",
    )
    p.set_defaults(func=_show)


@failing
def _show(args: argparse.Namespace) -> int:
    if args.path is None and args.id is None and args.ref is None:
        raise SkillsdError("name a skill: NAME, --path PATH or --id ID", InvalidParamsData())

    async def body(svc: Services, caller: use_cases.Caller) -> tuple[SkillMetadata, LoadResult]:
        catalog = (await view_of(svc, caller)).catalog
        if args.path is not None or args.id is not None:
            ref = RefParams(path=args.path, id=args.id)
        else:
            ref = ref_from_text(catalog, args.ref)
        # The user may look at a skill they disabled: say so, and how to turn it back on.
        skill = resolve(catalog, ref, include_disabled=True)
        params = LoadParams(path=skill.path, format=args.format)
        return skill, await use_cases.load(svc, params, caller)

    skill, loaded = run_in_process(args, body)
    if args.json:
        return emit_json(loaded)
    if not skill.enabled:
        print(disabled_note(skill.name), file=sys.stderr)
    return print_text(loaded.content)
