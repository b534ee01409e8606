"""``skillsd`` command line: one module per command group, each exposing ``register``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from skillsd import __version__
from skillsd_protocol import PROTOCOL_VERSION

#: Modules under ``skillsd.cli`` that add subcommands; each has ``register(subparsers)`` and
#: sets ``func`` (taking the parsed args, returning the exit status) on its parsers.
_COMMAND_MODULES = (
    "validate",
    "catalog",
    "run",
    "enable",
    "trust",
    "daemon",
    "doctor",
    "ui",
    "mcp",
    "install",
    "completion",
    "hook",
    "trigger_eval",
    "usage",
    "remote",
    "listing",
)


#: The module that adds each command: a command imports only its own module, so ``serve``
#: answers its first ``ping`` without importing the catalog machinery the other commands use.
#: ``tests/test_first_hour_cli.py`` checks it against what the modules register.
COMMAND_OWNERS = {
    "validate": "validate",
    "list": "catalog",
    "search": "catalog",
    "show": "catalog",
    "suggest": "catalog",
    "prompt": "catalog",
    "schema": "catalog",
    "run": "run",
    "enable": "enable",
    "disable": "enable",
    "trust": "trust",
    "serve": "daemon",
    "proxy": "daemon",
    "daemon": "daemon",
    "doctor": "doctor",
    "ui": "ui",
    "mcp": "mcp",
    "add": "install",
    "install": "install",
    "restore": "install",
    "update": "install",
    "remove": "install",
    "installed": "install",
    "scan": "install",
    "completion": "completion",
    "hook": "hook",
    "eval": "trigger_eval",
    "usage": "usage",
    "remote": "remote",
    "listing": "listing",
    "profile": "listing",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for ``command`` (only its module is imported), or for every command."""
    parser = argparse.ArgumentParser(
        prog="skillsd", description="Agent Skills runtime: discover, validate, search, load."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"skillsd {__version__} (protocol {PROTOCOL_VERSION})",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    owner = COMMAND_OWNERS.get(command or "")
    for name in _COMMAND_MODULES if owner is None else (owner,):
        try:
            module = importlib.import_module(f"skillsd.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"skillsd.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["__complete"]:
        # A shell's completion asking for names: answered before any parser is built (loaded
        # by name, as every command module is: completion imports this package).
        complete = importlib.import_module("skillsd.cli.completion").complete
        answered: int = complete(words[1:])
        return answered
    command = next((w for w in words if not w.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(words)
    try:
        status: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed: not an error worth a traceback.
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
