"""``skillsd serve``, ``skillsd proxy`` and ``skillsd daemon status|stop`` (docs/security.md).

The daemon modules (asyncio and friends) are imported only when one of these commands runs,
so the other CLI commands start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

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

    daemon = subparsers.add_parser(
        "daemon",
        help="see or stop the shared socket daemon",
        description="The shared per-user socket daemon that `skillsd proxy` and the clients "
        "start on demand (it exits by itself once no client has been connected for a while).",
    )
    actions = daemon.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (
        ("status", "pid, socket, uptime, clients, catalogs, sessions and memory"),
        ("stop", "stop it (SIGTERM: it answers what is in flight, then exits)"),
    ):
        p = actions.add_parser(action, help=text, description=text)
        p.add_argument("--socket", type=Path, metavar="PATH", help="the daemon's socket")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=_daemon_status if action == "status" else _daemon_stop)


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


def _daemon_status(args: argparse.Namespace) -> int:
    path, status = _ask_status(args.socket)
    if status is None:
        return _not_running(args, path, status=1)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode({"socket": str(path), **_as_dict(status)}))
        sys.stdout.write("\n")
        return 0
    rss = "unknown" if status.rss_bytes is None else f"{status.rss_bytes / 2**20:.1f} MiB"
    peak = (
        "" if status.peak_rss_bytes is None else f" (peak {status.peak_rss_bytes / 2**20:.1f} MiB)"
    )
    print(f"skillsd {status.version} daemon running")
    print(f"  pid       {status.pid}")
    print(f"  socket    {path}")
    print(f"  uptime    {_duration(status.uptime_seconds)}")
    print(f"  clients   {status.clients}")
    print(f"  catalogs  {status.catalogs}")
    print(f"  sessions  {status.sessions}")
    print(f"  memory    {rss}{peak}")
    return 0


def _daemon_stop(args: argparse.Namespace) -> int:
    path, status = _ask_status(args.socket)
    if status is None:
        return _not_running(args, path, status=0)
    with contextlib.suppress(ProcessLookupError):
        os.kill(status.pid, signal.SIGTERM)
    deadline = time.monotonic() + limits.DAEMON_STOP_SECONDS
    while time.monotonic() < deadline:
        if not _alive(status.pid):
            break
        time.sleep(0.05)
    else:
        print(
            f"skillsd daemon stop: pid {status.pid} is still running after "
            f"{limits.DAEMON_STOP_SECONDS:.0f}s",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps({"stopped": True, "pid": status.pid, "socket": str(path)}))
    else:
        print(f"stopped the daemon (pid {status.pid}) on {path}")
    return 0


def _alive(pid: int) -> bool:
    """Is ``pid`` running (an exited process its parent has not reaped yet is not)?"""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except ProcessLookupError:
        return False
    except OSError:  # no /proc: the signal test is all there is
        return True


def _ask_status(socket_path: Path | None) -> tuple[Path, Any]:
    """The socket and what its daemon says of itself, or None when nobody listens there."""
    from skillsd_client import Client, ClientError, default_socket_path

    path = socket_path or default_socket_path()
    try:
        with Client.connect(path, timeout=10) as client:
            return path, client.daemon_status()
    except (ClientError, OSError):
        return path, None


def _not_running(args: argparse.Namespace, path: Path, *, status: int) -> int:
    if args.json:
        print(json.dumps({"running": False, "socket": str(path)}))
    else:
        print(f"no skillsd daemon is running on {path}")
    return status


def _as_dict(status: Any) -> dict[str, Any]:
    decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(status))
    return decoded


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


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
