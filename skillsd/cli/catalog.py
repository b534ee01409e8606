"""``skillsd list|search|show|prompt|schema``: the catalog for people and scripts.

These commands run the daemon's operations (:mod:`skillsd.operations`) in this process, with no
daemon: ``--json`` prints exactly the Struct the same method returns. The CLI acts for the user,
so ``show`` is not gated by permissions (docs/permissions.md). Human output shows control
characters in names, descriptions, paths and contents escaped (:func:`escape_controls`), never
raw.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from skillsd import operations as ops
from skillsd.cli.list_summary import list_summary
from skillsd.core.config import Config
from skillsd.core.discovery import RootPlan
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.host_fields import invocation_marks, slash_usage
from skillsd.core.search import SearchIndex
from skillsd.core.skill_evidence import EvidenceCache
from skillsd.core.skill_scan import ScanSeverity
from skillsd.core.state import StateStore, default_state_path
from skillsd.core.suggest import SCORE_DECIMALS, SuggestIndex
from skillsd.core.trust import TrustState
from skillsd.runtime.scan_marks import ScanMarks
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    ListParams,
    LoadParams,
    PromptBudget,
    PromptParams,
    RefParams,
    SearchParams,
    SuggestParams,
)
from skillsd_protocol.schema import render_schema


def register(subparsers: Any) -> None:
    """Add ``list``, ``search``, ``show``, ``prompt`` and ``schema``."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
        p.add_argument(
            "--extra-root", action="append", default=[], metavar="DIR", help="an extra root"
        )
        p.add_argument("--json", action="store_true", help="machine-readable output")

    p = subparsers.add_parser("list", help="list the skills of a working directory")
    common(p)
    p.add_argument(
        "--scope",
        choices=("repo", "user", "plugin", "extra", "remote"),
        help="only skills of this scope",
    )
    p.add_argument(
        "--agent",
        help="what this agent (claude-code, codex, copilot, ...) sees here: docs/agents.md",
    )
    p.set_defaults(func=_list)

    p = subparsers.add_parser("search", help="search skills by name, description and tags")
    common(p)
    p.add_argument("query", help="what to look for: a name, words of a description, a path")
    p.add_argument("--limit", type=int, help="at most this many hits (config search.defaultLimit)")
    p.add_argument(
        "--scope",
        choices=("repo", "user", "plugin", "extra", "remote"),
        help="only skills of this scope",
    )
    p.add_argument("--tag", action="append", dest="tags", help="keep skills with this tag")
    p.set_defaults(func=_search)

    p = subparsers.add_parser(
        "suggest", help="the skills that fit a request, with score, reasons and activation"
    )
    common(p)
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

    p = subparsers.add_parser("show", help="show a skill as the model receives it")
    common(p)
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

    p = subparsers.add_parser("prompt", help="render the catalog for a system prompt")
    common(p)
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
    p.set_defaults(func=lambda args: _print(render_schema().rstrip("\n")))


def catalog_view(args: argparse.Namespace) -> ops.OperationView:
    """The catalog of ``--cwd`` (default: the process cwd) with ``--extra-root``s, as the user
    sees it: their enable flags applied, nothing gated."""
    cwd = os.path.realpath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise SkillsdError(f"--cwd {args.cwd}: not a directory", InvalidParamsData(field="cwd"))
    # The user's enable flags, as the daemon applies them (an unreadable state file is
    # reported by `skillsd doctor`; here it just means nothing is disabled).
    state = StateStore(default_state_path())
    view = ops.local_view(
        cwd,
        env=os.environ,
        home=os.path.expanduser("~"),
        extra_roots=args.extra_root,
        disabled=state.disabled,
        trust_decisions=state.trust_decisions(),
        before_build=refresh_remotes,
    )
    # A config typo is ignored, but the user should hear of it wherever they are.
    for path, warning in view.config.unknown_keys:
        print(f"skillsd: warning: {one_line(path)}: {one_line(warning)}", file=sys.stderr)
    return view


def refresh_remotes(config: Config, plan: RootPlan, trust: TrustState) -> None:
    """The listing of each remote in effect here, asked now when the cached one is past its ttl
    (no daemon refreshes it for a lone CLI command): one short timeout per remote at most; a
    remote that does not answer keeps its last listing, marked stale, as in the daemon."""
    from skillsd.core.remote_roots import remotes_in_effect

    remotes = remotes_in_effect(config, trust.trusted)
    if not remotes:
        return
    from skillsd.runtime.remote_store import RemoteStore  # the HTTP client: only when used

    store = RemoteStore()
    for remote in remotes:
        try:
            _listing, error = store.try_refresh(remote)
        except OSError as exc:
            error = f"cannot write its cache: {exc}"
        if error is not None:
            print(f"skillsd: warning: remote {remote.name!r}: {one_line(error)}", file=sys.stderr)


def fetch_remote(view: ops.OperationView, skill: SkillMetadata) -> None:
    """A remote skill's files fetched and verified into its folder before it is shown or run
    (until then the folder holds a placeholder written from the remote's listing); nothing for
    any other skill. Blocks for the fetch: the CLI has nothing else to do meanwhile."""
    if skill.remote is None:
        return
    from skillsd.runtime.remote_skills import ready_blocking  # the HTTP client: only when used
    from skillsd.runtime.remote_store import RemoteStore

    ready_blocking(RemoteStore(), skill, view.config, view.trusted)


def emit_json(value: Any) -> int:
    sys.stdout.buffer.write(msgspec.json.encode(value) + b"\n")
    return 0


def _print(text: str) -> int:
    """Print multi-line human text (a skill's content, a prompt) with its controls escaped."""
    print(escape_controls(text, multiline=True))
    return 0


def one_line(text: str, width: int | None = None) -> str:
    """A name, path or message on one line, controls escaped; shortened to ``width`` (runs of
    whitespace, a description's line breaks included, become one space)."""
    if width is None:
        return escape_controls(text)
    return textwrap.shorten(escape_controls(text, multiline=True), width, placeholder="...")


def failing(fn: Any) -> Any:
    """Turn a core error into a one-line message on stderr and exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            status: int = fn(args)
        except SkillsdError as exc:
            print(f"skillsd {args.command}: {one_line(exc.message)}", file=sys.stderr)
            return 2
        return status

    return run


@failing
def _list(args: argparse.Namespace) -> int:
    view = catalog_view(args)
    listing = ops.list_skills(view, ListParams(scope=args.scope, agent=args.agent))
    if args.json:
        return emit_json(listing)
    skills = listing.skills
    scanned = scan_marks(skills)
    names = {s.id: one_line(s.qualified_name or s.name) for s in skills}
    width = max(map(len, names.values()), default=4)
    scope = None
    for s in skills:
        if s.scope != scope:
            scope = s.scope
            print(f"{scope}:")
        flags = "" if s.enabled else " [disabled]"
        flags += f" [copy of {one_line(copied)}]" if (copied := _copied_name(view, s)) else ""
        flags += "".join(f" [{mark}]" for mark in invocation_marks(s))
        flags += f" [scan: {scanned[s.dir]}]" if s.dir in scanned else ""
        usage = slash_usage(s) if s.host is not None and s.host.argument_hint else None
        warn = f" ({len(s.diagnostics)} warning(s))" if s.diagnostics else ""
        desc = one_line(s.description, 70)
        usage_note = f"  (usage: {one_line(usage)})" if usage else ""
        print(f"  {names[s.id]:<{width}}  {desc}{flags}{warn}")
        print(f"  {'':<{width}}  {one_line(s.path)}{usage_note}")
    for error in listing.errors:
        print(one_line(f"invalid: {error.path}: {error.message}"))
    for diag in listing.diagnostics:
        print(one_line(f"{diag.severity}: {diag.path}: {diag.message}"))
    if scanned:
        print("scan: `skillsd scan PATH` shows what it found in a skill")
    print(one_line(list_summary(view.catalog, skills, scanned)))
    return 0


def scan_marks(skills: Sequence[SkillMetadata]) -> dict[str, ScanSeverity]:
    """Skill folder -> the worst static-scan finding in it, ``danger`` or ``warning``; folders
    with neither are left out. A folder whose files have not changed since an earlier run is
    not scanned again (:class:`~skillsd.runtime.scan_marks.ScanMarks`)."""
    remembered = ScanMarks()
    marks: dict[str, ScanSeverity] = {}
    for folder in dict.fromkeys(skill.dir for skill in skills):
        worst = remembered.worst(folder)
        if worst is not None:
            marks[folder] = worst
    remembered.save()
    return marks


@failing
def _suggest(args: argparse.Namespace) -> int:
    view = catalog_view(args)
    params = SuggestParams(prompt=args.prompt, limit=args.limit, active_files=args.active_files)
    meaning = semantic_stage(view)
    similarity = meaning(params.prompt) if meaning is not None else None
    index = SuggestIndex.read(view.catalog.skills, EvidenceCache())
    result = ops.suggest(view, index, params, similarity)
    if args.json:
        return emit_json(result)
    if not result.suggestions:
        print("no skill fits this request")
    for n, hit in enumerate(result.suggestions, 1):
        if hit.activate:
            mark = "activates"
        elif hit.loaded:
            mark = "loaded already"
        else:
            mark = "candidate" if hit.candidate else "below threshold"
        name = one_line(hit.skill.qualified_name or hit.skill.name)
        print(f"{n}. {name}  {format_score(hit.score)} ({mark})  [{hit.skill.scope}]")
        for reason in hit.reasons:
            print(f"     {one_line(reason)}")
    near = result.candidate_threshold
    candidates = (
        ""
        if near is None
        else f"; candidates from {format_score(near)} (suggest.candidateThreshold)"
    )
    print(f"threshold {format_score(result.threshold)} (config suggest.threshold){candidates}")
    return 0


def format_score(score: float) -> str:
    """A suggestion's score or threshold as every printout shows it: at the decimals
    ``activate`` is decided with, so a score shown equal to the threshold activates."""
    return f"{score:.{SCORE_DECIMALS}f}"


def semantic_stage(view: ops.OperationView) -> Callable[[str], Sequence[float]] | None:
    """The suggestions' semantic stage over the view's skills, as the daemon runs it, when the
    extra ``skillsd[semantic]`` is installed (else None: lexical only)."""
    from skillsd.runtime.embeddings import SemanticIndex, SemanticModel, semantic_version

    if semantic_version() is None:
        return None
    return SemanticIndex(SemanticModel(), view.catalog.skills)


def _copied_name(view: ops.OperationView, skill: Any) -> str | None:
    """Where an identical copy's original is (its path), for the listing."""
    original = view.catalog.get(skill.copy_of) if skill.copy_of else None
    return original.dir if original is not None else None


@failing
def _search(args: argparse.Namespace) -> int:
    view = catalog_view(args)
    # The user's own search shows the skills they disabled too, marked: a disabled skill
    # must not look deleted.
    params = SearchParams(
        query=args.query,
        limit=args.limit,
        scope=args.scope,
        tags=args.tags,
        include_disabled=True,
    )
    result = ops.search(view, SearchIndex(view.catalog.skills), params)
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


@failing
def _show(args: argparse.Namespace) -> int:
    view = catalog_view(args)
    if args.path is not None or args.id is not None:
        ref = RefParams(path=args.path, id=args.id)
    elif args.ref is not None:
        ref = ops.ref_from_text(view.catalog, args.ref)
    else:
        raise SkillsdError("name a skill: NAME, --path PATH or --id ID", InvalidParamsData())
    # The user may look at a skill they disabled: say so, and how to turn it back on.
    skill = ops.resolve(view.catalog, ref, include_disabled=True)
    fetch_remote(view, skill)
    params = LoadParams(path=skill.path, format=args.format)
    loaded = ops.load(view, params)
    if args.json:
        return emit_json(loaded)
    if not skill.enabled:
        print(disabled_note(skill.name), file=sys.stderr)
    return _print(loaded.content)


def disabled_note(name: str) -> str:
    """What a person is told beside a skill they disabled."""
    return f"{one_line(name)} is disabled: `skillsd enable {one_line(name)}` turns it back on"


@failing
def _prompt(args: argparse.Namespace) -> int:
    view = catalog_view(args)
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
    result = ops.prompt(view, params)
    if args.json:
        return emit_json(result)
    return _print(result.text)
