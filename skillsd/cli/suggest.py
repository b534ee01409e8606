"""``skillsd suggest``: the skills that fit a request (``skills.suggest``), with score,
reasons and activation.

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns.
"""

from __future__ import annotations

import argparse
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process
from skillsd.cli.output import emit_json, failing, format_score, one_line
from skillsd.runtime import use_cases
from skillsd_protocol.messages import (
    SuggestParams,
)


def register(subparsers: Any) -> None:
    """Add ``suggest``."""
    p = subparsers.add_parser(
        "suggest", help="the skills that fit a request, with score, reasons and activation"
    )
    catalog_options(p)
    p.add_argument("prompt", help="the user's request, as typed")
    p.add_argument("--limit", type=int, default=3, help="at most this many (default 3)")
    p.add_argument(
        "--active-file",
        action="append",
        dest="active_files",
        metavar="PATH",
        help="a file being worked on (skills whose `paths` match it rank higher)",
    )
    p.set_defaults(func=_suggest)


@failing
def _suggest(args: argparse.Namespace) -> int:
    params = SuggestParams(prompt=args.prompt, limit=args.limit, active_files=args.active_files)
    result = run_in_process(args, lambda svc, caller: use_cases.suggest(svc, params, caller))
    if args.json:
        return emit_json(result)
    if not result.suggestions:
        print("no skill fits this request")
    near = result.candidate_threshold
    for n, hit in enumerate(result.suggestions, 1):
        if hit.activate:
            mark = "activates"
        elif hit.loaded:
            mark = "loaded already"
        elif hit.candidate:
            mark = "candidate"
        else:
            # At a candidate's score yet not one: behind the best, or about another technology
            # (its reasons say which).
            reached = near is not None and hit.score >= near
            mark = "not offered" if reached else "below threshold"
        name = one_line(hit.skill.qualified_name or hit.skill.name)
        print(f"{n}. {name}  {format_score(hit.score)} ({mark})  [{hit.skill.scope}]")
        for reason in hit.reasons:
            print(f"     {one_line(reason)}")
    candidates = (
        ""
        if near is None
        else f"; candidates from {format_score(near)} (suggest.candidateThreshold)"
    )
    if near is not None and result.lead is not None and result.lead_floor is not None:
        lead, floor = format_score(result.lead), format_score(result.lead_floor)
        candidates += f", one {lead} ahead of the rest from {floor}"
    print(f"threshold {format_score(result.threshold)} (config suggest.threshold){candidates}")
    return 0
