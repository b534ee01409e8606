"""``skillsd run /name args…``: a user's slash command, as a host would run it (docs/protocol.md).

The operation is :func:`skillsd.operations.invoke`, in this process with no daemon and no
session; the CLI acts for the user, so only a deny refuses. The shell has already split the
arguments, so they are joined back with shell quoting: ``$ARGUMENTS`` then reads as the user
would have typed it, and splitting it again gives the same words. One quoted argument holding
the whole command (``skillsd run "/fix-issue 12 'high priority'"``) is taken as typed.
``skillsd run`` with no command lists the commands there are; ``--path``/``--id`` or
``NAME@scope`` pick one of several skills sharing a name.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from skillsd import operations as ops
from skillsd.cli.catalog import catalog_view, emit_json, failing, fetch_remote, one_line
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd_protocol.messages import CommandsParams, InvokeParams, RefParams


def register(subparsers: Any) -> None:
    """Add ``run``."""
    p = subparsers.add_parser(
        "run", help="run a slash command: a user-invocable skill or a .claude/commands file"
    )
    p.add_argument(
        "slash",
        nargs="?",
        metavar="/NAME",
        help="the command (the / is optional; NAME@repo or NAME@user picks one of a shared "
        "name); none: list the commands",
    )
    p.add_argument("arguments", nargs=argparse.REMAINDER, help="the command's arguments")
    p.add_argument("--path", help="run the skill at this path (its dir or SKILL.md) instead")
    p.add_argument("--id", help="run the skill with this id instead")
    p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument(
        "--format",
        choices=("codelia", "spec", "markdown"),
        default="codelia",
        help="how a skill's content is wrapped (default codelia)",
    )
    p.add_argument("--json", action="store_true", help="print the skills.invoke result")
    p.set_defaults(func=_run)


def command_text(command: str, arguments: list[str]) -> str:
    """What the user typed, from the words the shell gave us."""
    if not arguments:
        return command
    return f"{command} {shlex.join(arguments)}"


@failing
def _run(args: argparse.Namespace) -> int:
    view = catalog_view(args)
    if args.path is not None or args.id is not None:
        # No command name: every word is an argument.
        words = [args.slash, *args.arguments] if args.slash is not None else []
        params = InvokeParams(
            path=args.path, id=args.id, arguments=shlex.join(words), format=args.format
        )
    elif args.slash is None:
        return _list_commands(view, args.json)
    else:
        params = InvokeParams(command=command_text(args.slash, args.arguments), format=args.format)
    _fetch_target(view, params)
    result = ops.invoke(view, params).result
    if args.json:
        return emit_json(result)
    print(escape_controls(result.content, multiline=True))
    for entry in result.dynamic_context:
        # Never run here either: say what a host would run, and what policy says of it.
        print(
            f"dynamic context (not run, {entry.decision}): {one_line(entry.command)}",
            file=sys.stderr,
        )
    for rule in result.withheld_grants:
        print(f"withheld until the repository is trusted: {one_line(rule)}", file=sys.stderr)
    return 0


def _fetch_target(view: ops.OperationView, params: InvokeParams) -> None:
    """The invoked skill's files fetched first when it is a remote's; a command that names no
    skill is left to the invocation to answer."""
    ref: RefParams = params
    if params.command is not None:
        name = params.command.lstrip("/").split(maxsplit=1)
        if not name:
            return
        ref = RefParams(name=name[0])
    try:
        skill = ops.resolve(view.catalog, ref, include_disabled=True)
    except SkillsdError:
        return
    fetch_remote(view, skill)


def _list_commands(view: ops.OperationView, as_json: bool) -> int:
    listed = ops.commands(view, CommandsParams())
    if as_json:
        return emit_json(listed)
    usages = [
        one_line(f"/{c.name} {c.argument_hint}" if c.argument_hint else f"/{c.name}")
        for c in listed.commands
    ]
    width = max(map(len, usages), default=8)
    for usage, command in zip(usages, listed.commands, strict=True):
        origin = "" if command.source == "skill" else "  (.claude/commands)"
        print(f"{usage:<{width}}  {one_line(command.description)}{origin}")
    print(f"{len(listed.commands)} command(s); run one with `skillsd run /name args…`")
    return 0
