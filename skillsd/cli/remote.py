"""``skillsd remote``: skills servers (the MCP skills extension) as skillsd consumes them.

``remote probe URL`` talks to one server as a configured remote would be talked to and lists its
skills, reading no file; ``--load NAME`` / ``--load-all`` then loads them as a host does when a
skill is used (``SKILL.md`` first, then each listed file, each verified before the next is read,
stopping at the first that fails) and prints what was verified or refused. It exits 0 when it
could talk to the server, 1 when it could not, 2 for a bad command line or token file.
``remote list`` shows the remotes of the user's configuration with their state.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from skillsd.core.display_text import escape_controls

__all__ = ["register"]

UNREACHABLE_STATUS = 1
USAGE_STATUS = 2


def register(subparsers: Any) -> None:
    """Add ``remote`` with ``probe`` and ``list``."""
    summary = "skills servers (the MCP skills extension) that skillsd consumes"
    p = subparsers.add_parser("remote", help=summary, description=summary)
    sub = p.add_subparsers(dest="remote_command", required=True, metavar="{probe,list}")
    probe = sub.add_parser(
        "probe",
        help="list (and optionally load and verify) the skills of one server",
        description="Connect to a skills server as a remote, list its skills without reading "
        "any file, and with --load/--load-all load and verify them.",
    )
    probe.add_argument("url", help="the server's MCP endpoint, e.g. https://skills.acme.dev/mcp")
    which = probe.add_mutually_exclusive_group()
    which.add_argument("--load", metavar="NAME", help="load and verify the skill NAME")
    which.add_argument("--load-all", action="store_true", help="load and verify every skill")
    probe.add_argument(
        "--token-file", metavar="F", help="a private file holding the bearer token to send"
    )
    probe.add_argument(
        "--timeout", type=float, default=10.0, help="seconds for the whole probe (default 10)"
    )
    probe.set_defaults(func=_probe)
    listing = sub.add_parser("list", help="the configured remotes and their state")
    listing.add_argument("--json", action="store_true", help="print them as JSON")
    listing.set_defaults(func=_list)


def _say(text: str) -> None:
    print(escape_controls(text))


def _probe(args: argparse.Namespace) -> int:
    from skillsd.core.remote.fs_token_file import read_token_file
    from skillsd.core.remote.remote_wire import RemoteEntry, RemoteError, check_url
    from skillsd.runtime.remote_http import RemoteClient
    from skillsd.runtime.remote_load import load_skill

    token: str | None = None
    if args.token_file:
        token, why = read_token_file(args.token_file)
        if token is None:
            print(f"skillsd remote probe: --token-file {args.token_file}: {why}", file=sys.stderr)
            return USAGE_STATUS
    try:
        check_url(args.url)
    except RemoteError as exc:
        print(f"skillsd remote probe: {escape_controls(str(exc))}", file=sys.stderr)
        return USAGE_STATUS
    try:
        with RemoteClient(args.url, token=token, timeout=args.timeout) as client:
            listing = client.list_skills()
            count = len(listing.entries)
            _say(
                f"{args.url}: protocol {listing.version}, {count} skill{'s' * (count != 1)}, "
                f"ttlMs {listing.ttl_ms}, cacheScope {listing.cache_scope}"
            )
            for entry in listing.entries:
                n = len(entry.files or ())
                files = "dynamic" if entry.files is None else f"{n} file{'s' * (n != 1)}"
                _say(f"  {entry.name}  ({files})  {entry.description}")
            for why in listing.refused:
                _say(f"  refused entry {why}")
            chosen: list[RemoteEntry] = []
            if args.load_all:
                chosen = listing.entries
            elif args.load:
                chosen = [e for e in listing.entries if e.name == args.load]
                if not chosen:
                    print(
                        f"skillsd remote probe: {args.url} lists no skill {args.load!r}",
                        file=sys.stderr,
                    )
                    return USAGE_STATUS
            for entry in chosen:
                outcome = load_skill(client, entry)
                for file, data in outcome.verified:
                    pinned = f"{len(data)} bytes, {file.digest}" if file.digest else "dynamic"
                    _say(f"verified {entry.name}/{file.path} ({pinned})")
                if outcome.refusal is not None:
                    _say(f"refused {entry.name}: {outcome.refusal}")
                else:
                    n = len(outcome.verified)
                    _say(f"loaded {entry.name}: {n} file{'s' * (n != 1)} verified")
    except RemoteError as exc:
        print(f"skillsd remote probe: {escape_controls(str(exc))}", file=sys.stderr)
        return UNREACHABLE_STATUS
    return 0


def _list(args: argparse.Namespace) -> int:
    import os
    import time

    import msgspec

    from skillsd.core.errors import SkillsdError
    from skillsd.core.policy.fs_effective_config import ConfigSource
    from skillsd.runtime.remote_store import RemoteStore

    try:
        remotes = ConfigSource(os.environ).user().remote
    except SkillsdError as exc:
        print(f"skillsd remote list: {escape_controls(exc.message)}", file=sys.stderr)
        return USAGE_STATUS
    store = RemoteStore()
    rows = []
    for remote in remotes:
        listing = store.listing(remote.name)
        state = store.state(remote.name)
        if listing is None or listing.url != remote.url:
            status = "unreachable" if state.error else "not listed yet"
        else:
            status = "stale" if state.error else "ok"
        rows.append(
            {
                "name": remote.name,
                "url": remote.url,
                "trusted": remote.trusted,
                "state": status,
                "skills": len(listing.skills) if listing is not None else 0,
                "loaded": len(state.verified),
                "refused": state.refused,
                "error": state.error,
                "lastSuccess": state.last_success or None,
            }
        )
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(rows) + b"\n")
        return 0
    if not rows:
        print("skillsd remote list: no remotes are configured ([[remote]] in your config)")
        return 0
    for row in rows:
        when = row["lastSuccess"]
        ago = f", listed {time.time() - when:.0f} s ago" if isinstance(when, float) else ""
        trusted = ", trusted" if row["trusted"] else ""
        _say(
            f"{row['name']}  {row['url']}  {row['state']}: {row['skills']} skills, "
            f"{row['loaded']} loaded{ago}{trusted}"
        )
        if row["error"]:
            _say(f"  last error: {row['error']}")
        refused: dict[str, str] = row["refused"]  # type: ignore[assignment]
        for skill, why in sorted(refused.items()):
            _say(f"  refused {row['name']}:{skill}: {why}")
    return 0
