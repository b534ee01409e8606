"""``skillsd prompt``: the catalog rendered for a system prompt (``skills.prompt``), and
``skillsd schema``: the protocol's JSON Schema.

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns.
"""

from __future__ import annotations

import argparse
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process
from skillsd.cli.output import emit_json, failing, print_text
from skillsd.runtime import use_cases
from skillsd_protocol.messages import (
    PromptBudget,
    PromptParams,
)
from skillsd_protocol.schema import render_schema


def register(subparsers: Any) -> None:
    """Add ``prompt`` and ``schema``."""
    p = subparsers.add_parser("prompt", help="render the catalog for a system prompt")
    catalog_options(p)
    p.add_argument(
        "--format",
        choices=("xml", "codelia", "attributes", "markdown"),
        help="the catalog's layout (default: config prompt.format)",
    )
    p.add_argument("--max-bytes", type=int, help="byte budget (default: config prompt.maxBytes)")
    p.add_argument(
        "--max-entries", type=int, help="most skills listed (default: config prompt.maxEntries)"
    )
    p.add_argument("--no-location", action="store_true", help="leave skill paths out")
    p.add_argument("--tokens", type=int, help="a token budget (replaces --max-bytes)")
    p.add_argument(
        "--context-window", type=int, help="budget: --percent (default 2) of this many tokens"
    )
    p.add_argument(
        "--percent", type=float, default=2.0, help="share of --context-window (default 2)"
    )
    p.add_argument("--query", help="the user's request: the most relevant skills are kept")
    p.add_argument(
        "--active-file",
        action="append",
        dest="active_files",
        metavar="PATH",
        help="a file being worked on (skills with `paths` show only when one matches)",
    )
    p.add_argument(
        "--max-description-chars", type=int, help="shorten each description to this length"
    )
    p.add_argument("--agent", help="render what this agent sees here (docs/agents.md)")
    p.set_defaults(func=_prompt)

    p = subparsers.add_parser("schema", help="print the protocol's JSON Schema")
    p.set_defaults(func=lambda args: print_text(render_schema().rstrip("\n")))


@failing
def _prompt(args: argparse.Namespace) -> int:
    budget = None
    if args.tokens is not None or args.context_window is not None:
        budget = PromptBudget(
            tokens=args.tokens, context_window=args.context_window, percent=args.percent
        )
    params = PromptParams(
        format=args.format,
        max_entries=args.max_entries,
        max_bytes=args.max_bytes,
        include_location=not args.no_location,
        budget=budget,
        query=args.query,
        active_files=args.active_files,
        max_description_chars=args.max_description_chars,
        agent=args.agent,
    )
    result = run_in_process(args, lambda svc, caller: use_cases.prompt(svc, params, caller))
    if args.json:
        return emit_json(result)
    return print_text(result.text)
