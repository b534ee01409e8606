"""``skillsd listing --agent A [--json]``: what that agent shows its model here, skill by skill
(docs/agents.md); ``skillsd profile [--agent A] [--apply | --reset] [--json]``: a per-project
profile that keeps the descriptions of the skills that matter here, written into the agent's
own settings and taken back exactly.

Both run in this process on the catalog of ``--cwd``, as ``skills.listing`` and
``skills.profile.*`` do in the daemon.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import Any

from skillsd.cli.in_process import run_in_process, view_of
from skillsd.cli.output import emit_json, one_line
from skillsd.core.catalog.agent_view import known_agent
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.fs_effective_config import ConfigSource
from skillsd.core.policy.fs_state import default_state_path
from skillsd.runtime.caller import Caller
from skillsd.runtime.listing_requests import (
    ProfileRequest,
    apply_profiles,
    compute_listing,
    plan_profiles,
    profile_uses,
    records_path_for,
    reset_profiles,
)
from skillsd.runtime.services import Services
from skillsd_protocol.listing import AgentProfile, ListingResult

__all__ = ["register", "render_listing", "render_profile"]

#: A bad agent, a settings file that cannot be read or written: a usage-level failure.
FAILURE_STATUS = 2


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def register(subparsers: Any) -> None:
    """Add ``listing`` and ``profile``."""
    summary = "what an agent shows its model here: each skill in full, by name, or not at all"
    p = subparsers.add_parser("listing", help=summary, description=summary)
    p.add_argument("--agent", required=True, help="the agent (claude-code, codex, ...)")
    p.add_argument(
        "--context-window", type=int, metavar="TOKENS", help="the model's context window"
    )
    _common(p)
    p.set_defaults(func=_listing)

    summary = "propose, apply or reset which skills each agent shows its model in this project"
    p = subparsers.add_parser("profile", help=summary, description=summary)
    p.add_argument("--agent", help="one agent (default: every agent skillsd writes profiles for)")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--apply", action="store_true", help="write the plan into the agent's settings"
    )
    what.add_argument("--reset", action="store_true", help="remove exactly what --apply wrote")
    p.add_argument(
        "--budget-fraction",
        type=float,
        metavar="F",
        help="plan for this share of the context window instead of the agent's setting",
    )
    _common(p)
    p.set_defaults(func=_profile)


def render_listing(result: ListingResult, title: str) -> str:
    """The human table of a listing."""
    if not result.modelled:
        return one_line(result.why or f"{title}: not modelled")
    lines = [
        f"{title}: {result.full} of {result.shown} skills in full; budget "
        f"{result.budget_chars} characters, {result.used_chars} used",
        f"{'SHOWN':<10} {'CHARS':>6}  {'SKILL':<32} WHY",
    ]
    for entry in result.entries:
        name = escape_controls(entry.name) + (" (bundled)" if entry.bundled else "")
        lines.append(f"{entry.shown:<10} {entry.chars:>6}  {name:<32} {escape_controls(entry.why)}")
    for problem in result.problems or ():
        lines.append(f"warning: {one_line(problem)}")
    if not result.agent_text and result.agent_text_why:
        lines.append(
            f"note: the text holds only the lines of the skills on disk: "
            f"{one_line(result.agent_text_why)}"
        )
    return "\n".join(lines)


async def _catalog(svc: Services, caller: Caller) -> Catalog:
    return (await view_of(svc, caller)).catalog


async def _catalog_and_paths(svc: Services, caller: Caller) -> tuple[Catalog, dict[str, str]]:
    # Where the user's config says the agents are (a repository's config is not read).
    return await _catalog(svc, caller), svc.catalogs.configs.user().listing.paths()


def _listing(args: argparse.Namespace) -> int:
    try:
        rules = known_agent(args.agent)
        catalog, paths = run_in_process(args, _catalog_and_paths)
        result = compute_listing(
            catalog.seen_by(rules.name),
            rules.name,
            catalog.plan.cwd,
            home=os.path.expanduser("~"),
            env=os.environ,
            context_window=args.context_window,
            agent_paths=paths,
        )
    except SkillsdError as exc:
        print(f"skillsd listing: {one_line(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    if args.json:
        return emit_json(result)
    print(render_listing(result, rules.title))
    return 0


def render_profile(profile: AgentProfile) -> str:
    """The human form of one agent's plan."""
    title = known_agent(profile.agent).title
    if not profile.supported:
        return one_line(profile.why or f"{title}: no profile")
    changes = profile.changes or {}
    lines = [
        f"{title}: {profile.full_before} of {profile.shown} skills in full now, "
        f"{profile.full_after} with this profile ({len(changes)} setting(s) in {profile.target})"
    ]
    for choice in profile.choices or ():
        mark = " [pinned]" if choice.pinned else ""
        setting = f"  -> {changes[choice.name]}" if choice.name in changes else ""
        lines.append(
            f"  {choice.shown:<10} {escape_controls(choice.name)}{mark}: "
            f"{escape_controls(choice.why)}{setting}"
        )
    return "\n".join(lines)


def _profile(args: argparse.Namespace) -> int:
    home, env = os.path.expanduser("~"), os.environ
    state_path = default_state_path()
    records = records_path_for(state_path)
    try:
        catalog = run_in_process(args, _catalog)
        req = ProfileRequest.of(catalog, args.agent, args.budget_fraction)
        if not args.reset:
            ledger = ConfigSource(env).user().ledger
            uses = profile_uses(req.root, ledger, state_path=state_path, home=home, env=env)
            req = replace(req, uses=uses)
        if args.reset:
            reset = reset_profiles(req, records, home=home, env=env)
            if args.json:
                return emit_json(reset)
            if not reset.reset:
                print("nothing to reset: no profile was applied here")
            for done in reset.reset:
                print(one_line(f"{done.path}: removed {len(done.removed)} setting(s)"))
                for left in done.left:
                    print(one_line(f"  left {left.name}: {left.why}"))
            return 0
        if args.apply:
            applied = apply_profiles(req, records, home=home, env=env)
            if args.json:
                return emit_json(applied)
            for profile in applied.profiles:
                print(render_profile(profile))
            for wrote in applied.applied:
                print(one_line(f"wrote {len(wrote.written)} setting(s) into {wrote.path}"))
                for left in wrote.left:
                    print(one_line(f"  left {left.name}: {left.why}"))
            return 0
        plan = plan_profiles(req, records, home=home, env=env)
    except SkillsdError as exc:
        print(f"skillsd profile: {one_line(exc.message)}", file=sys.stderr)
        return FAILURE_STATUS
    if args.json:
        return emit_json(plan)
    for profile in plan.profiles:
        print(render_profile(profile))
    print("(nothing written: `skillsd profile --apply` writes it, `--reset` takes it back)")
    return 0
