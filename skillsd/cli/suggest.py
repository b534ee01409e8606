"""``skillsd suggest``: the skills that fit a request (``skills.suggest``), with score,
reasons and activation.

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process
from skillsd.cli.output import emit_json, failing, one_line
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
    digits = score_digits([hit.score for hit in result.suggestions], result.threshold)
    for n, hit in enumerate(result.suggestions, 1):
        if hit.activate:
            mark = "activates"
        else:
            mark = "loaded already" if hit.loaded else "below threshold"
        name = one_line(hit.skill.qualified_name or hit.skill.name)
        print(f"{n}. {name}  {hit.score:.{digits}f} ({mark})  [{hit.skill.scope}]")
        for reason in hit.reasons:
            print(f"     {one_line(reason)}")
    print(f"threshold {result.threshold:.{digits}f} (config suggest.threshold)")
    return 0


def score_digits(scores: Sequence[float], threshold: float) -> int:
    """The decimals to show ``scores`` and ``threshold`` with: two, or as many more as it takes
    for no score to read as the threshold it is not (0.3996 would print as 0.40 beside a
    threshold of 0.40)."""
    for digits in range(2, 17):
        if all(
            score == threshold or f"{score:.{digits}f}" != f"{threshold:.{digits}f}"
            for score in scores
        ):
            return digits
    return 17
