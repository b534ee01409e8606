"""``skillsd validate PATH... [--strict] [--mode strict|lenient] [--json]``.

Each PATH is a skill directory, a SKILL.md file, or a folder searched recursively for skill
directories (following no link below it; what the search left out is named on stderr); each
SKILL.md is judged by the operation behind ``skills.validate``. Exit status 1
when any skill has an error (with ``--strict``, also a warning); info diagnostics never fail.
The validation mode comes from ``--mode`` only, never from the config.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import Any

import msgspec

from skillsd.core import limits
from skillsd.core.display_text import escape_controls
from skillsd.core.fs.fs_boundary import TreeLimit, walk_tree
from skillsd.core.skill.fs_skillfile import SKILL_FILE, Mode
from skillsd.runtime.validation_requests import skill_file_verdict
from skillsd_protocol import Diagnostic


class ValidatedSkill(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """One line of ``--json`` output: a SKILL.md, its verdict and everything found in it.

    ``valid`` is the verdict under the options given: no errors, and with ``--strict`` no
    warnings either.
    """

    path: str
    valid: bool
    diagnostics: list[Diagnostic]
    name: str | None = None


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check SKILL.md files against the Agent Skills specification",
        description=(
            "Validate skills. Each PATH is a skill directory, a SKILL.md file, or a folder "
            "searched recursively for skills. Exits 1 when a skill has an error (with --strict, "
            "also a warning)."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="skill dir, SKILL.md or folder")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail on warnings too (unknown fields, ...), as the reference validator does",
    )
    parser.add_argument(
        "--mode",
        choices=("strict", "lenient"),
        default="strict",
        help="validation mode (default strict; lenient accepts name/dir mismatch and long fields)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array of results")
    parser.set_defaults(func=run)


def _holds_skill(folder: str) -> bool:
    """Whether ``folder`` has a ``SKILL.md`` that is not a folder (a broken link counts: its
    check then says what is wrong)."""
    skill_file = os.path.join(folder, SKILL_FILE)
    return os.path.lexists(skill_file) and not os.path.isdir(skill_file)


def _walk(folder: str, skipped: list[str]) -> Iterator[str]:
    """Yield the SKILL.md paths under ``folder``, sorted by path. Skill dirs and
    ``node_modules`` are not descended, and no link below ``folder`` is followed (the
    filesystem boundary's walk, at most 64 folders deep): a link to a folder, a folder nested
    deeper and one that cannot be listed are added to ``skipped`` instead."""
    if _holds_skill(folder):
        yield os.path.join(folder, SKILL_FILE)
        return
    found: list[tuple[str, ...]] = []
    notes: list[str] = []

    def enter(rel: str, entry: os.DirEntry[str]) -> bool:
        if entry.name in limits.SKIPPED_DIR_NAMES:
            return False
        if _holds_skill(entry.path):
            found.append(tuple(rel.split("/")))
            return False
        return True

    def left_out(rel: str, problem: OSError | TreeLimit) -> None:
        if isinstance(problem, TreeLimit):
            why = f"nested deeper than {problem.limit} folders"
        else:
            why = f"cannot list it: {problem.strerror or problem}"
        notes.append(f"{os.path.join(folder, rel) if rel else folder} ({why})")

    for _, entry in walk_tree(folder, enter=enter, skipped=left_out):
        if (
            entry.is_symlink()
            and entry.name not in limits.SKIPPED_DIR_NAMES
            and os.path.isdir(entry.path)
        ):
            notes.append(
                f"{entry.path} (a symbolic link to a folder, not followed: "
                "name it as a PATH to validate what it leads to)"
            )
    skipped.extend(sorted(notes))
    for parts in sorted(found):
        yield os.path.join(folder, *parts, SKILL_FILE)


def _missing(path: str, message: str) -> ValidatedSkill:
    diagnostic = Diagnostic(severity="error", code="file.missing", message=message, path=path)
    return ValidatedSkill(path=path, valid=False, diagnostics=[diagnostic])


def _targets(path: str, skipped: list[str]) -> Iterator[str | ValidatedSkill]:
    """SKILL.md paths for one PATH argument, or a ready failure when there is nothing to check;
    what a folder's search left out goes to ``skipped``."""
    if os.path.isdir(path):
        direct = os.path.join(path, SKILL_FILE)
        if os.path.isfile(direct):
            yield direct
            return
        found = False
        for skill_file in _walk(path, skipped):
            found = True
            yield skill_file
        if not found:
            yield _missing(path, f"no {SKILL_FILE} found in {path} or below")
    elif os.path.exists(path):
        yield path
    else:
        yield _missing(path, f"{path} does not exist")


def _check(skill_file: str, mode: Mode, fail_on_warnings: bool) -> ValidatedSkill:
    parsed, valid = skill_file_verdict(skill_file, mode, fail_on_warnings=fail_on_warnings)
    name = parsed.fields.name if parsed.fields is not None else None
    return ValidatedSkill(path=skill_file, valid=valid, diagnostics=parsed.diagnostics, name=name)


def _has_errors(result: ValidatedSkill) -> bool:
    return any(d.severity == "error" for d in result.diagnostics)


def _verdict(result: ValidatedSkill) -> str:
    """FAILED only for an error; a skill ``--strict`` refuses for its warnings says so (the
    catalog lists it)."""
    if result.valid:
        return "ok"
    if _has_errors(result):
        return "FAILED"
    warnings = sum(d.severity == "warning" for d in result.diagnostics)
    return (
        f"refused by --strict ({warnings} warning(s), no error: "
        "the catalog lists this skill; --strict refuses what is not in the open spec)"
    )


def _print_human(results: list[ValidatedSkill]) -> None:
    out = sys.stdout
    for result in results:
        # Paths and messages quote the file: its control characters are shown escaped.
        out.write(escape_controls(f"{result.path}: {_verdict(result)}") + "\n")
        for d in result.diagnostics:
            where = f" [{d.field}]" if d.field else ""
            out.write(escape_controls(f"  {d.severity} {d.code}{where}: {d.message}") + "\n")
    failed = sum(not r.valid and _has_errors(r) for r in results)
    refused = sum(not r.valid and not _has_errors(r) for r in results)
    noun = "skill" if len(results) == 1 else "skills"
    tail = f", {refused} refused by --strict" if refused else ""
    out.write(f"{len(results)} {noun} checked, {failed} failed{tail}\n")


def run(args: argparse.Namespace) -> int:
    """Validate every PATH; return 1 if any skill fails, else 0."""
    mode: Mode = args.mode
    results: list[ValidatedSkill] = []
    seen: set[str] = set()
    skipped: list[str] = []
    for path in args.paths:
        for target in _targets(path, skipped):
            if isinstance(target, ValidatedSkill):
                results.append(target)
                continue
            key = os.path.realpath(target)
            if key in seen:
                continue
            seen.add(key)
            results.append(_check(target, mode, args.strict))
    for note in skipped:  # on stderr: --json output stays one JSON array
        sys.stderr.write(escape_controls(f"skillsd validate: not searched: {note}") + "\n")
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(results) + b"\n")
        sys.stdout.flush()
    else:
        _print_human(results)
    return 1 if any(not r.valid for r in results) else 0
