"""``skillsd trust [PATH] [--revoke] [--json]``: trust (or stop trusting) a repository.

Until you trust a repository root, its skills' ``allowed-tools`` grant nothing and its
``.agents/skillsd.toml`` can only tighten your policy (docs/permissions.md). The decision is
saved in the user's state file (atomically) by the use case ``trust.set`` runs, so every running
daemon applies it at its next check. ``PATH`` is any directory inside the repository (default: .);
its repository root is what gets trusted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import msgspec

from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import project_config_path
from skillsd.runtime import use_cases
from skillsd.runtime.services import Services
from skillsd_protocol.messages import TrustSetParams

__all__ = ["register"]

#: Not a directory, a bad config, or a state file that cannot be written.
FAILURE_STATUS = 2


def register(subparsers: Any) -> None:
    """Add ``trust``."""
    summary = "trust a repository: its skills' allowed-tools and project config allow rules count"
    p = subparsers.add_parser("trust", help=summary, description=summary)
    p.add_argument("path", nargs="?", default=".", help="a directory in the repository (default .)")
    p.add_argument("--revoke", action="store_true", help="stop trusting it")
    p.add_argument("--json", action="store_true", help="print the trust state as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    path = os.path.realpath(args.path)
    if not os.path.isdir(path):
        print(f"skillsd trust: {args.path}: not a directory", file=sys.stderr)
        return FAILURE_STATUS
    params = TrustSetParams(cwd=path, trusted=not args.revoke)
    try:
        svc = Services.create(cwd=path, for_one_command=True)
        config, root = svc.config_for(path, None)
        trust = asyncio.run(use_cases.trust_set(svc, params))
    except SkillsdError as exc:
        print(f"skillsd trust: {escape_controls(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(trust) + b"\n")
        return 0
    shown = escape_controls(root)
    if trust.trusted:
        print(f"trusted: {shown}")
        print("  its skills' allowed-tools now grant, and its project config's allow rules apply")
    else:
        print(f"not trusted: {shown}")
        print("  its skills' allowed-tools grant nothing; its project config can only tighten")
    policy = config.policy
    never = [i for i in policy.ignored_now(trust.trusted) if not i.until_trusted]
    if never:
        print(f"  always ignored in {escape_controls(project_config_path(root))}:")
        # Rules are written by the repository's config: shown escaped.
        print("\n".join(escape_controls(f"    {i.key}: {i.rule}") for i in never))
    return 0
