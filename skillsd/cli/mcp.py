"""``skillsd mcp``: serve the skills to MCP clients (SPEC 16), on stdio or streamable HTTP.

Needs the optional extra ``skillsd[mcp]`` (the official MCP SDK); without it the command exits 2
naming the install line. Logs go to stderr only: stdout is the protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

INSTALL_HINT = "pip install 'skillsd[mcp]'"


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
        help="over HTTP: the bearer token clients must send, read from FILE (default: "
        "$SKILLSD_MCP_TOKEN, else a new token written to the runtime directory)",
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
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning"))
    p.set_defaults(func=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    try:
        import mcp.server  # noqa: F401  (the SDK: an optional extra)
    except ImportError:
        print(
            f"skillsd mcp: the MCP SDK is not installed; add it with: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 2
    from skillsd.runtime.process_memory import prepare_daemon_process

    prepare_daemon_process(tls=True)  # large replies go back to the OS once sent
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="skillsd-mcp[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    cwd = os.path.realpath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        print(f"skillsd mcp: --cwd {args.cwd}: not a directory", file=sys.stderr)
        return 2
    from skillsd.mcp_bridge.transports import serve_http, serve_stdio

    given = args.cwd is not None
    if args.http is None:
        return serve_stdio(cwd, cwd_given=given)
    host, _, port = args.http.rpartition(":")
    if not port.isdigit():
        print(f"skillsd mcp: --http {args.http}: expected HOST:PORT", file=sys.stderr)
        return 2
    host = host.strip("[]") or "127.0.0.1"
    from skillsd.mcp_bridge.http_guard import is_loopback

    if not is_loopback(host) and not args.allow_remote:
        print(
            f"skillsd mcp: --http {args.http} would let other machines connect; bind a loopback "
            "address (127.0.0.1, ::1, localhost), or add --allow-remote if that is what you want",
            file=sys.stderr,
        )
        return 2
    if args.no_auth and not is_loopback(host):
        print("skillsd mcp: --no-auth is only accepted on a loopback address", file=sys.stderr)
        return 2
    token, where = _token(args, int(port))
    if token is None and where:
        print(f"skillsd mcp: {where}", file=sys.stderr)
        return 2
    shown = f"[{host}]" if ":" in host else host
    print(f"skillsd mcp: serving {cwd} at http://{shown}:{port}/mcp", file=sys.stderr)
    if args.no_auth:
        print(
            "skillsd mcp: WARNING: --no-auth: any process on this machine can read your skills",
            file=sys.stderr,
        )
    else:
        print(
            f"skillsd mcp: clients send `Authorization: Bearer <token>`; {where}", file=sys.stderr
        )
    sys.stderr.flush()
    return serve_http(cwd, host, int(port), token=token, cwd_given=given)


def _token(args: argparse.Namespace, port: int) -> tuple[str | None, str]:
    """The bearer token and where it comes from (or None and why it cannot be had)."""
    from skillsd.mcp_bridge.http_guard import TOKEN_ENV, new_token, write_token_file
    from skillsd_client._connect import ensure_private_dir, runtime_dir
    from skillsd_client._errors import ConnectError

    if args.no_auth:
        return None, ""
    if args.token_file:
        try:
            text = open(args.token_file, encoding="utf-8").read().strip()  # noqa: SIM115
        except OSError as exc:
            return None, f"--token-file {args.token_file}: {exc.strerror}"
        if not text:
            return None, f"--token-file {args.token_file}: the file is empty"
        return text, f"the token is the one in {args.token_file}"
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV].strip(), f"the token is ${TOKEN_ENV}'s"
    try:
        directory = ensure_private_dir(runtime_dir())
    except ConnectError as exc:
        return None, f"cannot write the token file: {exc}"
    token = new_token()
    path = write_token_file(directory, port, token)
    return token, f"the token is in {path} (readable by you only)"
