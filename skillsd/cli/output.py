"""What every CLI command shares to write its answer: ``--json`` as the method's Struct,
human text with control characters escaped (:func:`escape_controls`), never raw, and a failed
request as one line on stderr with exit status 2."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

import msgspec

from skillsd.core.display_text import escape_controls
from skillsd.core.errors import SkillsdError

__all__ = ["disabled_note", "emit_json", "failing", "format_score", "one_line", "print_text"]


def emit_json(value: Any) -> int:
    sys.stdout.buffer.write(msgspec.json.encode(value) + b"\n")
    return 0


def print_text(text: str) -> int:
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


def disabled_note(name: str) -> str:
    """What a person is told beside a skill they disabled."""
    return f"{one_line(name)} is disabled: `skillsd enable {one_line(name)}` turns it back on"


def format_score(score: float) -> str:
    """A suggestion's score or threshold as every printout shows it: at the two decimals the
    wire gives it and ``activate`` is decided with, so a score shown equal to the threshold
    activates."""
    return f"{score:.2f}"
