"""``skillsd search``: skills by name, description and tags (``skills.search``).

It runs the daemon's use case (:mod:`skillsd.runtime.use_cases`) in this process
(:mod:`skillsd.cli.in_process`), with no daemon: ``--json`` prints exactly the Struct the same
method returns. The user's own search shows the skills they disabled too, marked.
"""

from __future__ import annotations

import argparse
from typing import Any

from skillsd.cli.in_process import catalog_options, run_in_process
from skillsd.cli.output import disabled_note, emit_json, failing, one_line
from skillsd.runtime import use_cases
from skillsd_protocol.messages import (
    SearchParams,
)


def register(subparsers: Any) -> None:
    """Add ``search``."""
    p = subparsers.add_parser("search", help="search skills by name, description and tags")
    catalog_options(p)
    p.add_argument("query", help="what to look for: a name, words of a description, a path")
    p.add_argument("--limit", type=int, help="at most this many hits (config search.defaultLimit)")
    p.add_argument(
        "--scope",
        choices=("repo", "user", "plugin", "extra", "remote"),
        help="only skills of this scope",
    )
    p.add_argument("--tag", action="append", dest="tags", help="keep skills with this tag")
    p.set_defaults(func=_search)


@failing
def _search(args: argparse.Namespace) -> int:
    # The user's own search shows the skills they disabled too, marked: a disabled skill
    # must not look deleted.
    params = SearchParams(
        query=args.query,
        limit=args.limit,
        scope=args.scope,
        tags=args.tags,
        include_disabled=True,
    )
    result = run_in_process(args, lambda svc, caller: use_cases.search(svc, params, caller))
    if args.json:
        return emit_json(result)
    for n, hit in enumerate(result.results, 1):
        desc = one_line(hit.skill.description, 60)
        name = one_line(hit.skill.name)
        print(f"{n:>2}. {name}  [{hit.reason} {hit.score:.2f}, {hit.skill.scope}]  {desc}")
        if not hit.skill.enabled:
            print(f"    ({disabled_note(hit.skill.name)})")
    more = f", showing {len(result.results)}" if result.truncated else ""
    print(f"{result.count} match(es){more}")
    return 0
