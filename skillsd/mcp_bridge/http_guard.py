"""What keeps ``skillsd mcp --http`` to its one user: a bearer token on every request, the
``Host`` and ``Origin`` of the bound address only (:class:`HttpRules`, decided from the request
line and headers alone, before a body is read), and the bounds of :class:`HttpLimits`, which
the server (:mod:`skillsd.mcp_bridge.native_http`) keeps. The token's life cycle is in
``docs/security.md``.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from skillsd.core.fs.atomic_files import atomic_write

__all__ = [
    "TOKEN_ENV",
    "WRITE_SECONDS_ENV",
    "HttpLimits",
    "HttpRules",
    "allowed_hosts",
    "is_loopback",
    "new_token",
    "write_token_file",
]

log = logging.getLogger(__name__)

#: The token a client must send, when not given with ``--token-file``.
TOKEN_ENV = "SKILLSD_MCP_TOKEN"
#: ``SKILLSD_HTTP_WRITE_SECONDS=N`` replaces the write deadline (tests use a short one).
WRITE_SECONDS_ENV = "SKILLSD_HTTP_WRITE_SECONDS"
#: Names that mean this machine, whatever address the server is bound to.
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The HTTP face's bounds (see ``docs/security.md``)."""

    #: Live MCP sessions; beyond it, 503 naming the limit (existing sessions keep working).
    max_sessions: int = 256
    #: An idle session's skillsd session and memory are freed after this.
    session_idle_seconds: float = 30 * 60
    #: Request bodies over this are refused with 413 (before they are read, when their
    #: length is given).
    max_body_bytes: int = 16 * 1024 * 1024
    #: Requests being answered at once (a reply is built whole in memory: a few at a time
    #: keep the peak at a few replies, not one per client). Streams (a session's GET, a
    #: ``subscriptions/listen``) hold none.
    max_concurrent: int = 4
    #: A request (head and body) must arrive, and each write of its reply be taken by the
    #: client, within this; else the request is dropped (408 if no reply began, connection
    #: cut, slot freed), so a client that stops reading or sending holds no slot.
    write_seconds: float = 30.0
    #: A kept-alive connection with no request for this long is closed.
    keep_alive_seconds: float = 75.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> HttpLimits:
        """The defaults, with the write deadline of ``$SKILLSD_HTTP_WRITE_SECONDS`` if set."""
        text = env.get(WRITE_SECONDS_ENV)
        if text is None:
            return cls()
        try:
            seconds = float(text)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            log.warning("%s=%r is not a number of seconds; using 30", WRITE_SECONDS_ENV, text)
            return cls()
        return cls(write_seconds=seconds)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) stays on this machine."""
    bare = host.strip("[]")
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """32 random bytes, URL-safe base64."""
    return secrets.token_urlsafe(32)


def write_token_file(directory: Path, port: int, token: str) -> Path:
    """``directory/mcp-<port>.token`` holding ``token``, readable by the user only (written
    whole before it is renamed into place, so no reader ever sees half a token)."""
    path = directory / f"mcp-{port}.token"
    atomic_write(os.fspath(path), token.encode() + b"\n", mode=0o600)
    return path


class HttpRules:
    """Who may ask: a request's ``Host`` must name this server, its ``Origin`` (when sent) be
    ``http://`` one of those names, and it must carry the bearer token.

    ``token`` None means ``--no-auth`` (loopback only). ``hosts`` are the names a request's
    ``Host`` may carry (with any port)."""

    def __init__(self, *, token: str | None, hosts: tuple[str, ...]) -> None:
        self._token = token.encode() if token is not None else None
        self._hosts = tuple(h.lower() for h in hosts)

    def refusal(self, headers: Mapping[str, str]) -> tuple[int, str, dict[str, str]] | None:
        """``(status, message, extra headers)`` refusing a request with these (lower-cased)
        headers, or None when it may be served."""
        if not self._host_allowed(headers.get("host", "")):
            return 421, "the Host header does not name this server", {}
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, "requests from this Origin are not accepted", {}
        if self._token is not None:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self._token
            ):
                return (
                    401,
                    "missing or wrong bearer token: send `Authorization: Bearer <token>` (the "
                    "token file's path is printed when skillsd mcp --http starts)",
                    {"www-authenticate": "Bearer"},
                )
        return None

    def _host_allowed(self, host: str) -> bool:
        name = host.lower()
        if name.startswith("["):
            name = name.split("]")[0] + "]"
        else:
            name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
        return name in self._hosts

    def _origin_allowed(self, origin: str) -> bool:
        scheme, _, rest = origin.lower().partition("://")
        return scheme in ("http", "https") and self._host_allowed(rest.split("/")[0])


def allowed_hosts(bound: str) -> tuple[str, ...]:
    """The names a request may use: the bound address, and this machine's loopback names."""
    names = {*_LOOPBACK_NAMES, bound.lower()}
    if ":" in bound and not bound.startswith("["):
        names.add(f"[{bound.lower()}]")
    return tuple(sorted(names))
