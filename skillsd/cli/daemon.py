"""``skillsd serve`` and ``skillsd proxy`` (docs/security.md).

The daemon modules (asyncio and friends) are imported only when one of these commands runs,
so the other CLI commands start fast.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from skillsd.core import limits

__all__ = ["register"]

_DEFAULT_SOCKET: Any = object()  # `--socket` given without a PATH


def register(subparsers: Any) -> None:
    """Add the ``serve`` and ``proxy`` subcommands."""
    serve = subparsers.add_parser(
        "serve",
        help="run the JSON-RPC daemon (stdio by default, or a Unix socket)",
        description="Speak JSON-RPC 2.0 on stdin/stdout, or on a Unix socket with --socket.",
    )
    serve.add_argument(
        "--socket",
        nargs="?",
        const=_DEFAULT_SOCKET,
        default=None,
        metavar="PATH",
        help="listen on a Unix socket (default path: in the per-user runtime directory)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="with --socket: exit once no client has been connected for this long",
    )
    serve.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=limits.DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help=f"largest accepted message (default {limits.DEFAULT_MAX_MESSAGE_BYTES})",
    )
    _add_log_level(serve)
    serve.set_defaults(func=_serve)

    proxy = subparsers.add_parser(
        "proxy",
        help="bridge stdio to the socket daemon, starting it if needed",
        description="Connect stdin/stdout to the shared socket daemon (started on demand).",
    )
    proxy.add_argument("--socket", type=Path, metavar="PATH", help="the daemon's socket")
    proxy.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=limits.PROXY_DAEMON_IDLE_SECONDS,
        metavar="SECONDS",
        help="idle timeout for a daemon this proxy starts "
        f"(default {limits.PROXY_DAEMON_IDLE_SECONDS:.0f})",
    )
    proxy.set_defaults(func=_proxy)


def _add_log_level(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="warning",
        help="stderr log verbosity (default: warning)",
    )


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="skillsd[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    from skillsd.runtime.log_limit import install

    install()  # a warning with the same cause: at most once a minute
    from skillsd.runtime.process_memory import prepare_daemon_process

    prepare_daemon_process()
    from skillsd.daemon.app import build_router

    router = build_router(deferred=True)
    if args.socket is None:
        if args.idle_timeout is not None:
            print("skillsd serve: --idle-timeout needs --socket", file=sys.stderr)
            return 2
        from skillsd.daemon.stdio import run_stdio

        return run_stdio(router, max_message_bytes=args.max_message_bytes)
    from skillsd.daemon.socket_server import run_socket_server

    path = None if args.socket is _DEFAULT_SOCKET else Path(args.socket)
    return run_socket_server(
        router, path, idle_timeout=args.idle_timeout, max_message_bytes=args.max_message_bytes
    )


def _proxy(args: argparse.Namespace) -> int:
    from skillsd.daemon.proxy import run_proxy

    return run_proxy(args.socket, idle_timeout=args.idle_timeout)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value
