"""``skillsd add|install|restore|update|remove|installed|scan``: installing skills for every
agent, with a lock file (``docs/install-skills.md``). ``install SOURCE`` is ``add`` and a bare
``install`` is ``restore``, as npm's ``install <pkg>`` and ``install``.

Each runs the use case of ``skills.install``, ``skills.restore``, ``skills.update``,
``skills.remove``, ``skills.installed`` or ``skills.scan`` in this process
(:mod:`skillsd.runtime.install_requests`, the install pool included); ``--json`` prints exactly
the Struct the method returns. Progress lines (clone, copy) go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import msgspec

from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError
from skillsd.runtime import use_cases
from skillsd.runtime.services import Services
from skillsd_protocol.install import (
    InstalledParams,
    InstallParams,
    RemoveParams,
    RestoreParams,
    ScanFinding,
    ScanParams,
    UpdateParams,
)

_P = TypeVar("_P")
_R = TypeVar("_R")


def _common(parser: argparse.ArgumentParser, *, scope: bool = True) -> None:
    if scope:
        parser.add_argument(
            "--user",
            action="store_true",
            help="the user's skills (~/.agents/skills, lock in the state directory) instead of "
            "the repository's",
        )
    parser.add_argument("--cwd", help="act as if run from this directory")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def register(subparsers: Any) -> None:
    """Add the install commands."""
    add = subparsers.add_parser(
        "add",
        help="install skills from a folder, git repository or archive",
        description=(
            "Install the skills of SOURCE into .agents/skills (or ~/.agents/skills with "
            "--user), link them into the named agents' folders, and record them in "
            "skills-lock.json. SOURCE: a folder, a git URL (https://, ssh://, git@host:path, "
            "file://), owner/repo (GitHub), or an archive (.zip, .tar.gz, .skill)."
        ),
    )
    add.add_argument(
        "source",
        metavar="SOURCE",
        help="a folder, a git URL or owner/repo (with @ref), or a .zip/.tar.gz/.skill archive",
    )
    _add_options(add)
    _common(add)
    add.set_defaults(func=_failing(_add))

    # npm's verbs: `install <pkg>` adds, a bare `install` (like `npm ci`) restores the lock.
    both = subparsers.add_parser(
        "install",
        help="install skills from SOURCE (as add), or with no SOURCE every skill of "
        "skills-lock.json as locked (as restore)",
        description=(
            "With SOURCE, the same as skillsd add SOURCE. Without one, the same as skillsd "
            "restore: every skill of the lock file at its locked commit, refusing any whose "
            "digest differs (like npm ci)."
        ),
    )
    both.add_argument(
        "source",
        metavar="SOURCE",
        nargs="?",
        help="what to add (see skillsd add); none: restore skills-lock.json",
    )
    _add_options(both, restores=True)
    _common(both)
    both.set_defaults(func=_failing(_install))

    restore_parser = subparsers.add_parser(
        "restore",
        help="install every skill of skills-lock.json as locked",
        description=(
            "Install every skill of the lock file at its locked commit; refuses any whose "
            "digest differs (like npm ci)."
        ),
    )
    restore_parser.add_argument(
        "--force", action="store_true", help="replace skills modified locally"
    )
    _common(restore_parser)
    restore_parser.set_defaults(func=_failing(_restore))

    upd = subparsers.add_parser(
        "update",
        help="update locked skills to what their source holds now",
        description="Re-resolve each locked skill's ref and install what changed.",
    )
    upd.add_argument("names", nargs="*", metavar="NAME", help="the skills to update (default: all)")
    upd.add_argument("--check", action="store_true", help="show what would change, file by file")
    upd.add_argument("--force", action="store_true", help="overwrite skills modified locally")
    _common(upd)
    upd.set_defaults(func=_failing(_update))

    rm = subparsers.add_parser(
        "remove",
        help="remove an installed skill, its links and its lock entry",
        description="Remove a skill the lock file owns, with the links and copies made for it.",
    )
    rm.add_argument("name", metavar="NAME", help="the installed skill to remove")
    _common(rm)
    rm.set_defaults(func=_failing(_remove))

    ls = subparsers.add_parser(
        "installed",
        help="list locked skills with their state (ok, modified, missing, links-broken)",
        description="Each skill of the lock file and whether its files still match the digest.",
    )
    _common(ls)
    ls.set_defaults(func=_failing(_installed))

    scan = subparsers.add_parser(
        "scan",
        help="scan skills for hidden text, remote code, secrets reads and more",
        description="Static scan of a skill folder, or of every skill below PATH.",
    )
    scan.add_argument("path", metavar="PATH", help="a skill folder, or a folder of skills")
    _common(scan, scope=False)
    scan.set_defaults(func=_failing(_scan))


#: The options only an add takes (a restore installs what the lock says), by their dest.
_ADD_ONLY = {
    "ref": "--ref",
    "path": "--path",
    "skills": "--skill",
    "agents": "--agent",
    "copy": "--copy",
}


def _add_options(parser: argparse.ArgumentParser, *, restores: bool = False) -> None:
    parser.add_argument("--ref", help="branch, tag or commit (default: the default branch)")
    parser.add_argument("--path", help="subfolder of the source to look in")
    parser.add_argument(
        "--skill", action="append", dest="skills", metavar="NAME", help="install only NAME"
    )
    parser.add_argument(
        "--agent",
        action="append",
        dest="agents",
        metavar="AGENT",
        help="link for AGENT (claude-code or claude, gemini-cli or gemini, ...)",
    )
    parser.add_argument("--copy", action="store_true", help="copy into agents' folders, no links")
    parser.add_argument(
        "--force",
        action="store_true",
        help="install despite validation errors, danger findings or a folder the lock does "
        "not own" + ("; without SOURCE, replace skills modified locally" if restores else ""),
    )


# -- plumbing -----------------------------------------------------------------------------------


def _failing(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except SkillsdError as exc:
            print(f"skillsd {args.command}: {escape_controls(exc.message)}", file=sys.stderr)
            return 2

    return run


def _progress(line: str) -> None:
    sys.stderr.write(f"skillsd: {escape_controls(line)}\n")
    sys.stderr.flush()


def _run(
    args: argparse.Namespace,
    use_case: Callable[[Services, _P, use_cases.Caller], Coroutine[Any, Any, _R]],
    params: _P,
) -> _R:
    """``use_case`` in this process, for ``--cwd``, its progress on stderr."""
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    svc = Services.create(cwd=cwd, for_one_command=True)
    caller = use_cases.Caller(progress=lambda line, _done: _progress(line))
    try:
        return asyncio.run(use_case(svc, params, caller))
    finally:
        svc.catalogs.close()


def _scope(args: argparse.Namespace) -> Any:
    return "user" if getattr(args, "user", False) else "repo"


def _emit(value: msgspec.Struct) -> None:
    sys.stdout.buffer.write(msgspec.json.encode(value) + b"\n")


def _out(text: str) -> None:
    print(escape_controls(text))


def _findings(findings: list[ScanFinding]) -> None:
    for f in findings:
        where = f"{f.skill}/{f.file}" if f.skill else f.file
        at = f":{f.line}" if f.line else ""
        _out(f"  {f.severity:7} {f.code} {where}{at}: {f.message}")


# -- commands -----------------------------------------------------------------------------------


def _add(args: argparse.Namespace) -> int:
    params = InstallParams(
        source=args.source,
        ref=args.ref,
        path=args.path,
        names=args.skills,
        scope=_scope(args),
        agents=args.agents,
        mode="copy" if args.copy else "link",
        force=args.force,
    )
    result = _run(args, use_cases.install_skills, params)
    if args.json:
        _emit(result)
        return 0
    for skill in result.installed:
        at = f" @ {skill.commit[:12]}" if skill.commit else ""
        _out(f"installed {skill.name} -> {skill.path}{at}")
        for link in skill.links:
            _out(f"  linked {link}")
    if result.findings:
        _out("scan findings:")
        _findings(result.findings)
    _out(f"lock: {result.lock}")
    return 0


def _install(args: argparse.Namespace) -> int:
    if args.source is not None:
        return _add(args)
    given = [option for dest, option in _ADD_ONLY.items() if getattr(args, dest)]
    if given:
        print(
            f"skillsd install: {given[0]} needs a SOURCE (without one, install restores "
            "skills-lock.json)",
            file=sys.stderr,
        )
        return 2
    return _restore(args)


def _restore(args: argparse.Namespace) -> int:
    params = RestoreParams(scope=_scope(args), force=args.force)
    result = _run(args, use_cases.restore_skills, params)
    if args.json:
        _emit(result)
        return 0
    for skill in result.restored:
        _out(f"restored {skill.name} -> {skill.path}")
    if result.unchanged:
        _out(f"{len(result.unchanged)} already as locked")
    if result.findings:
        _out("scan findings:")
        _findings(result.findings)
    return 0


def _update(args: argparse.Namespace) -> int:
    params = UpdateParams(
        names=args.names or None, check=args.check, force=args.force, scope=_scope(args)
    )
    result = _run(args, use_cases.update_skills, params)
    if args.json:
        _emit(result)
        return 0
    if not result.updates:
        _out("everything is up to date")
    for u in result.updates:
        state = "updated" if u.applied else f"not applied: {u.skipped}"
        _out(f"{u.name}: {u.from_[:19]} -> {u.to[:19]} ({state})")
        for label, paths in (
            ("+", u.files.added),
            ("~", u.files.changed),
            ("-", u.files.removed),
        ):
            for path in paths:
                _out(f"  {label} {path}")
    if result.findings:
        _out("scan findings:")
        _findings(result.findings)
    skipped = [u for u in result.updates if not u.applied and u.skipped != "check"]
    return 1 if skipped else 0


def _remove(args: argparse.Namespace) -> int:
    params = RemoveParams(name=args.name, scope=_scope(args))
    result = _run(args, use_cases.remove_skill, params)
    if args.json:
        _emit(result)
        return 0
    for path in result.removed:
        _out(f"removed {path}")
    return 0


def _installed(args: argparse.Namespace) -> int:
    result = _run(args, use_cases.installed_skills, InstalledParams(scope=_scope(args)))
    if args.json:
        _emit(result)
        return 0 if all(s.status == "ok" for s in result.skills) else 1
    if not result.skills:
        _out(f"no skills in {result.lock}")
    for s in result.skills:
        pin = f"@{s.commit[:12]}" if s.commit else ""
        _out(f"{s.name:30} {s.status:12} {s.source}{pin}")
        for path in s.files:
            _out(f"  modified {path}")
        if s.status == "modified" and not s.files:
            _out("  (which files: unknown, no record of the installed files on this machine)")
        for link in s.broken_links:
            _out(f"  broken {link}")
    return 0 if all(s.status == "ok" for s in result.skills) else 1


def _scan(args: argparse.Namespace) -> int:
    result = _run(args, use_cases.scan_skills, ScanParams(path=args.path))
    danger = any(f.severity == "danger" for f in result.findings)
    if args.json:
        _emit(result)
        return 1 if danger else 0
    if not result.findings:
        _out("no findings")
    _findings(result.findings)
    return 1 if danger else 0
