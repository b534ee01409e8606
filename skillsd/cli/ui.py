"""``skillsd ui``: the terminal skills picker (needs the optional extra ``skillsd[tui]``)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any

from skillsd.cli.extras import extra_hint

__all__ = ["register"]

#: Exit status for a missing Textual or a bad --cwd: usage problems, as argparse reports them.
USAGE_STATUS = 2


def register(subparsers: Any) -> None:
    """Add the ``ui`` subcommand."""
    ui = subparsers.add_parser(
        "ui",
        help="browse, search and enable/disable skills in a terminal UI",
        description="A keyboard-driven skills picker talking to the shared skillsd daemon "
        "(started if needed). Needs a terminal and the extra skillsd[tui] "
        "(from a clone: make ui; see docs/install.md).",
    )
    ui.add_argument(
        "--cwd",
        type=Path,
        default=None,
        metavar="DIR",
        help="show the catalog of this directory (default: the current directory)",
    )
    ui.add_argument(
        "--socket",
        type=Path,
        default=None,
        metavar="PATH",
        help="the daemon's socket (default: the per-user shared daemon's)",
    )
    ui.set_defaults(func=_ui)


def _has_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ui(args: argparse.Namespace) -> int:
    try:
        importlib.import_module("textual")
    except ImportError:
        hint = extra_hint("tui", Path(__file__).resolve().parents[1], sys.executable)
        print(
            f"skillsd ui needs Textual (the extra skillsd[tui]), which is not installed; add "
            f"it with: {hint}",
            file=sys.stderr,
        )
        return USAGE_STATUS
    cwd = args.cwd if args.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        print(f"skillsd ui: --cwd {os.fspath(cwd)!r} is not a directory", file=sys.stderr)
        return USAGE_STATUS
    if not _has_terminal():
        # Checked before any daemon is started: nothing is left running.
        print(
            "skillsd ui: needs a terminal (stdin and stdout must be a TTY); "
            "for scripts use `skillsd list`, `skillsd search` or `--json`",
            file=sys.stderr,
        )
        return USAGE_STATUS
    # Imported here: Textual loads only for this command.
    from skillsd.tui import SkillsApp, shared_connector

    app = SkillsApp(cwd, connect=shared_connector(args.socket))
    app.run()
    return app.return_code or 0
