"""``skillsd mcp``: serve the skills to MCP clients (docs/mcp.md), on stdio or streamable HTTP.

Both are served by skillsd itself, with no MCP SDK (a host gives a stdio server little time to
answer its first request). ``--http`` needs the optional extra ``skillsd[mcp]`` (httptools, the
HTTP parser); without it the command exits 2 naming the install line. Logs go to stderr only:
stdout is the protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

#: The most processes ``--workers`` may ask for.
MAX_WORKERS = 64


def register(subparsers: Any) -> None:
    """Add ``mcp``."""
    p = subparsers.add_parser("mcp", help="serve skills over MCP (tools, resources, prompts)")
    p.add_argument(
        "--cwd",
        help="the project whose skills to serve (default: the client's first root, else .)",
    )
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="streamable HTTP instead of stdio (HOST defaults to loopback: ':8765')",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="over HTTP: the bearer token clients must send, read from FILE (yours alone: "
        "mode 0600; at least 32 characters; default: $SKILLSD_MCP_TOKEN, else a new token "
        "written to the runtime directory)",
    )
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="over HTTP on a loopback address only: accept requests without a token",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="over HTTP: allow binding an address other machines can reach",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="over HTTP: N processes serve the address (Linux; default: two per core, up to "
        "4; each holds its own sessions, and a request for another's is relayed to it)",
    )
    p.add_argument(
        "--log-level",
        default="warning",
        choices=("debug", "info", "warning"),
        help="stderr log verbosity (default: warning)",
    )
    p.set_defaults(func=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    stdio = args.http is None
    if not stdio:
        try:
            import httptools  # noqa: F401  (HTTP/1.1 parsing: an optional extra)
        except ImportError:
            from skillsd.cli.extras import extra_hint

            hint = extra_hint("mcp", Path(__file__).resolve().parents[1], sys.executable)
            print(
                "skillsd mcp: --http needs the extra skillsd[mcp] (httptools), which is not "
                f"installed; add it with: {hint}",
                file=sys.stderr,
            )
            return 2
    from skillsd.runtime.process_memory import prepare_daemon_process

    # Large replies go back to the OS once sent; neither face speaks TLS.
    prepare_daemon_process()
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="skillsd-mcp[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    from skillsd.runtime.log_limit import install

    install()  # a warning with the same cause: at most once a minute
    cwd = os.path.realpath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        print(f"skillsd mcp: --cwd {args.cwd}: not a directory", file=sys.stderr)
        return 2
    from skillsd.mcp_bridge.transports import serve_http, serve_stdio

    given = args.cwd is not None
    if stdio:
        if args.workers is not None:
            print("skillsd mcp: --workers is for --http (stdio has one client)", file=sys.stderr)
            return 2
        return serve_stdio(cwd, cwd_given=given)
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        print(
            f"skillsd mcp: --workers {args.workers}: expected 1 to {MAX_WORKERS}", file=sys.stderr
        )
        return 2
    host, _, port = args.http.rpartition(":")
    if not port.isdigit():
        print(f"skillsd mcp: --http {args.http}: expected HOST:PORT", file=sys.stderr)
        return 2
    return serve_http(
        cwd,
        host.strip("[]") or "127.0.0.1",
        int(port),
        token_file=args.token_file,
        no_auth=args.no_auth,
        allow_remote=args.allow_remote,
        cwd_given=given,
        workers=args.workers,
    )
