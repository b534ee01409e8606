"""Running the MCP bridge: stdio (one client) or streamable HTTP (loopback by default)."""

from __future__ import annotations

import os
import sys

from skillsd.core.remote.fs_token_file import MIN_TOKEN_CHARS, read_token_file, weak_token
from skillsd.mcp_bridge.http_guard import (
    TOKEN_ENV,
    HttpLimits,
    HttpRules,
    allowed_hosts,
    is_loopback,
    new_token,
    write_token_file,
)
from skillsd_client._errors import ConnectError
from skillsd_client._local_socket import ensure_private_dir, runtime_dir

__all__ = ["MIN_TOKEN_CHARS", "serve_http", "serve_stdio"]


def serve_stdio(cwd: str, *, cwd_given: bool = True) -> int:
    """Serve one MCP client on stdin/stdout until it leaves: skillsd's own JSON-RPC endpoint,
    without the MCP SDK (:mod:`skillsd.mcp_bridge.native_stdio`), so that the first answer comes
    before a host gives up waiting for it."""
    from skillsd.mcp_bridge.native_stdio import serve

    return serve(cwd, cwd_given=cwd_given)


def serve_http(
    cwd: str,
    host: str,
    port: int,
    *,
    token_file: str | None = None,
    no_auth: bool = False,
    allow_remote: bool = False,
    cwd_given: bool = True,
    limits: HttpLimits | None = None,
    workers: int | None = None,
) -> int:
    """Serve MCP clients over streamable HTTP on ``host:port``, every request checked by
    :class:`~skillsd.mcp_bridge.http_guard.HttpRules`; returns the exit status (2 when the
    address or the token cannot be used, saying why on stderr)."""
    refusal = _refusal(host, no_auth=no_auth, allow_remote=allow_remote)
    if refusal is not None:
        return _fail(refusal)
    token, where = (None, "") if no_auth else _token(token_file, port)
    if not no_auth and token is None:
        return _fail(where)
    shown = f"[{host}]" if ":" in host else host
    _say(f"serving {cwd} at http://{shown}:{port}/mcp")
    if no_auth:
        _say("WARNING: --no-auth: any process on this machine can read your skills")
    else:
        _say(f"clients send `Authorization: Bearer <token>`; {where}")
    return _run_http(
        cwd,
        host,
        port,
        token,
        cwd_given=cwd_given,
        limits=limits or HttpLimits.from_env(os.environ),
        workers=workers,
    )


def _say(line: str) -> None:
    print(f"skillsd mcp: {line}", file=sys.stderr, flush=True)


def _fail(why: str) -> int:
    _say(why)
    return 2


def _refusal(host: str, *, no_auth: bool, allow_remote: bool) -> str | None:
    if not is_loopback(host) and not allow_remote:
        return (
            f"--http {host}: other machines could connect; bind a loopback address "
            "(127.0.0.1, ::1, localhost), or add --allow-remote if that is what you want"
        )
    if no_auth and not is_loopback(host):
        return "--no-auth is only accepted on a loopback address"
    return None


def _token(token_file: str | None, port: int) -> tuple[str | None, str]:
    """The bearer token and where it comes from (or None and why it cannot be had)."""
    if token_file:
        text, why = read_token_file(token_file)
        if text is None:
            return None, f"--token-file {token_file}: {why}"
        return text, f"the token is the one in {token_file}"
    if os.environ.get(TOKEN_ENV):
        text = os.environ[TOKEN_ENV].strip()
        why = weak_token(text)
        if why:
            return None, f"${TOKEN_ENV}: {why}"
        return text, f"the token is ${TOKEN_ENV}'s"
    try:
        directory = ensure_private_dir(runtime_dir())
    except ConnectError as exc:
        return None, f"cannot write the token file: {exc}"
    path = write_token_file(directory, port, token := new_token())
    return token, f"the token is in {path} (readable by you only)"


def _run_http(
    cwd: str,
    host: str,
    port: int,
    token: str | None,
    *,
    cwd_given: bool,
    limits: HttpLimits,
    workers: int | None,
) -> int:
    from skillsd.mcp_bridge.native_http import serve

    rules = HttpRules(token=token, hosts=allowed_hosts(host))
    return serve(cwd, host, port, cwd_given=cwd_given, rules=rules, limits=limits, workers=workers)
