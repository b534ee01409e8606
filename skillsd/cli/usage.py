"""``skillsd usage [--since DURATION|DATE] [--cwd DIR] [--json]``: which skills are used in this
repository, never used, or suggested but not taken (docs/usage.md).

The same report as ``usage.report``: skillsd's local use ledger (what the daemon and ``skillsd
mcp`` served), plus Claude Code's own transcripts when the user's config allows reading them
(``ledger.agentTranscripts``). Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time
from functools import partial
from typing import Any

import msgspec

from skillsd.cli.in_process import run_in_process
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd.runtime import use_cases
from skillsd.runtime.services import Services
from skillsd_protocol.messages import UsageParams, UsageResult

__all__ = ["parse_since", "register"]

#: A bad ``--since``, a bad ``--cwd`` or an invalid config.
FAILURE_STATUS = 2
#: Rows of "never used" a person is shown (``--json`` lists them all).
_SHOWN_UNUSED = 40
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+)([smhdw])")


def register(subparsers: Any) -> None:
    """Add ``usage``."""
    summary = "which skills are used here, never used, or suggested but not taken"
    p = subparsers.add_parser("usage", help=summary, description=summary)
    p.add_argument(
        "--since",
        metavar="DURATION|DATE",
        help="only from this time: a duration back from now (30m, 12h, 7d, 2w) or a date "
        "(2026-11-01, or an ISO-8601 time)",
    )
    p.add_argument("--cwd", help="a directory in the repository (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)


def parse_since(text: str, now: float) -> float:
    """``--since`` as Unix seconds: ``7d`` back from ``now``, or a date or time (a date, or a
    time without a zone, is the local one). Raises ``ValueError`` with what is allowed."""
    match = _DURATION.fullmatch(text.strip())
    if match is not None:
        return now - int(match.group(1)) * _UNITS[match.group(2)]
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since {text!r}: give a duration (30m, 12h, 7d, 2w) or a date (2026-11-01)"
        ) from None
    return moment.timestamp()  # a naive time is the local one


async def _report(params: UsageParams, svc: Services, caller: use_cases.Caller) -> UsageResult:
    return await use_cases.usage_report(svc, params, caller)


def _run(args: argparse.Namespace) -> int:
    now = time.time()
    try:
        since = parse_since(args.since, now) if args.since else None
    except ValueError as exc:
        print(f"skillsd usage: {exc}", file=sys.stderr)
        return FAILURE_STATUS
    params = UsageParams(since=since)
    try:
        result = run_in_process(args, partial(_report, params))
    except SkillsdError as exc:
        print(f"skillsd usage: {escape_controls(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    for problem in result.problems:
        print(f"skillsd usage: skipped: {escape_controls(problem.message)}", file=sys.stderr)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
        return 0
    print(render(result))
    return 0


def _when(iso: str) -> str:
    """An ISO time from the report, shown in local time to the minute."""
    moment = datetime.datetime.fromisoformat(iso).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def render(result: UsageResult) -> str:
    """The report as a person reads it."""
    name = escape_controls
    since = f" since {_when(result.since)}" if result.since else ""
    lines = [f"Skill use in {name(result.repo)}{since}"]
    lines.append("")
    lines.append(f"Used ({len(result.used)}):")
    if not result.used:
        lines.append("  (none recorded)")
    width = max((len(name(u.name)) for u in result.used), default=0)
    for use in result.used:
        parts = [_plural(use.loads, "load")] if use.loads else []
        if use.invokes:
            parts.append(_plural(use.invokes, "invocation"))
        agents = ", ".join(f"{name(a)} {n}" for a, n in use.by_agent.items())
        lines.append(
            f"  {name(use.name):<{width}}  {_plural(use.uses, 'use')} ({', '.join(parts)}), "
            f"last {_when(use.last_used)}; by {agents}"
        )
    lines.append("")
    lines.append(f"Never used ({len(result.never_used)} of the skills here now):")
    for skill in result.never_used[:_SHOWN_UNUSED]:
        lines.append(f"  {name(skill.name)} ({skill.scope})")
    if len(result.never_used) > _SHOWN_UNUSED:
        lines.append(f"  ... and {len(result.never_used) - _SHOWN_UNUSED} more (--json lists all)")
    lines.append("")
    lines.append(f"Suggested but not taken ({len(result.ignored)}):")
    if not result.ignored:
        lines.append("  (none)")
    for row in result.ignored:
        lines.append(
            f"  {name(row.name)}: {row.ignored} of {_plural(row.suggested, 'suggestion')} not "
            f"followed by a use ({row.activated} activated), last {_when(row.last_suggested)}"
        )
    lines.append("")
    ledger = (
        "on" if result.ledger_enabled else "off (ledger.enabled = false: nothing new is recorded)"
    )
    transcripts = (
        "read" if result.transcripts else "not read (allow it with ledger.agentTranscripts = true)"
    )
    lines.append(f"Ledger: {ledger}; Claude Code's transcripts: {transcripts}. Local only.")
    return "\n".join(lines)
