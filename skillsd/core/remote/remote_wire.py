"""The client side of an MCP skills server's wire, without I/O: the HTTP requests skillsd sends
a remote (``skills/list``, ``resources/read``) and what it makes of the answers.

Two protocol versions are spoken. 2026-07-28 first: each POST stands alone, its envelope in
``params._meta`` and its routing mirrored in the ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` headers. A server that refuses that version (``-32022``, or the 400/404 a server of
the handshake era gives a request without a session) is spoken to in 2025-11-25: ``initialize``,
``notifications/initialized``, then every request with the ``Mcp-Session-Id`` it gave.

An answer is JSON or an event stream ending with the answer; everything a remote sends is input:
a malformed answer is a :class:`RemoteError` naming what is wrong, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import unquote, urlsplit

from skillsd.core.install.fs_install_source import is_loopback_host

__all__ = [
    "HANDSHAKE",
    "MODERN",
    "SKILLS_EXTENSION",
    "HttpRequest",
    "RemoteCallFailed",
    "RemoteEntry",
    "RemoteError",
    "RemoteFile",
    "Reply",
    "SkillsPage",
    "Wire",
    "check_url",
    "file_bytes",
    "parse_reply",
    "parse_skills_page",
    "refuses_version",
]

Version = Literal["2026-07-28", "2025-11-25"]
MODERN: Final = "2026-07-28"
HANDSHAKE: Final = "2025-11-25"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
_CLIENT_INFO = {"name": "skillsd", "version": "1"}
_CAPABILITIES: dict[str, Any] = {"extensions": {SKILLS_EXTENSION: {}}}
UNSUPPORTED_VERSION = -32022
#: Methods whose target travels in the ``Mcp-Name`` header too (2026-07-28).
_NAMED = {"resources/read": "uri"}
#: A listing entry past these is refused (they bound what one remote costs).
MAX_FILES_PER_SKILL = 2000
MAX_URI_CHARS = 4096
#: ``ttlMs`` beyond a day is taken as a day: a remote cannot freeze a stale listing.
MAX_TTL_MS = 24 * 3600 * 1000


class RemoteError(Exception):
    """The remote could not be talked to, or said something that cannot be used; the message
    names the URL, method or field."""


class RemoteCallFailed(RemoteError):
    """The remote answered a request with an error."""


def check_url(url: str) -> str:
    """``url`` when skillsd may send a token to it: https, or http on a loopback address."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise RemoteError(f"{url!r}: a remote's URL is https://host/path (http on loopback only)")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname):
        raise RemoteError(
            f"{url}: plain http is only allowed on a loopback address (the token and the "
            "skills would travel in the clear); use https"
        )
    return url


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request to send: method, headers, body."""

    method: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """A JSON-RPC answer: its result, or its error's code, message and data."""

    result: dict[str, Any] | None
    code: int = 0
    message: str = ""
    data: Any = None
    status: int = 200


@dataclass
class Wire:
    """One conversation with a remote: which version it speaks and, in 2025-11-25, its session.

    ``version`` is None until the first answer settles it."""

    url: str
    token: str | None = None
    version: Version | None = None
    session_id: str | None = None
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    _next_id: int = 0

    def request(self, method: str, params: dict[str, Any], version: Version) -> HttpRequest:
        """The POST carrying request ``method`` in ``version``."""
        self._next_id += 1
        headers = self._headers(version)
        if version == MODERN:
            meta = {
                _VERSION_KEY: MODERN,
                _CAPABILITIES_KEY: _CAPABILITIES,
                _CLIENT_INFO_KEY: _CLIENT_INFO,
            }
            params = {**params, "_meta": meta}
            headers["Mcp-Method"] = method
            named = _NAMED.get(method)
            if named is not None:
                headers["Mcp-Name"] = _header_value(str(params[named]))
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return HttpRequest("POST", headers, json.dumps(message).encode())

    def initialize(self) -> HttpRequest:
        """The 2025-11-25 handshake's first request."""
        params = {
            "protocolVersion": HANDSHAKE,
            "capabilities": _CAPABILITIES,
            "clientInfo": _CLIENT_INFO,
        }
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": "initialize", "params": params}
        return HttpRequest("POST", self._headers(HANDSHAKE), json.dumps(message).encode())

    def initialized(self) -> HttpRequest:
        message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        return HttpRequest("POST", self._headers(HANDSHAKE), json.dumps(message).encode())

    def end_session(self) -> HttpRequest | None:
        """The DELETE that ends a 2025-11-25 session, when there is one."""
        if self.session_id is None:
            return None
        return HttpRequest("DELETE", self._headers(HANDSHAKE), b"")

    def initialized_by(self, reply: Reply, session_id: str | None) -> None:
        """Take the ``initialize`` answer: the session and what the server offers."""
        if reply.result is None:
            raise RemoteError(f"{self.url}: initialize refused: {reply.code} {reply.message}")
        capabilities = reply.result.get("capabilities")
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.version = HANDSHAKE
        self.session_id = session_id

    @property
    def last_id(self) -> int:
        return self._next_id

    def _headers(self, version: Version) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if version == HANDSHAKE and self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers


def _header_value(value: str) -> str:
    """A header-safe value: as is when printable ASCII, else base64 in ``=?base64?…?=``."""
    if value.isascii() and value.isprintable():
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def parse_reply(status: int, content_type: str, body: bytes, request_id: int, url: str) -> Reply:
    """The answer to request ``request_id`` in an HTTP response (JSON or an event stream)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    messages: list[Any] = []
    if kind == "text/event-stream":
        messages = _events(body)
    elif kind == "application/json" or (not kind and body[:1] == b"{"):
        try:
            messages = [json.loads(body)]
        except (ValueError, RecursionError):
            raise RemoteError(f"{url}: HTTP {status} with a body that is not JSON") from None
    if status in (401, 403):
        raise RemoteError(
            f"{url}: HTTP {status}: the server refused the token "
            "(no tokenFile, or not the token it expects)"
        )
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id:
            return _reply(message, status, url)
    for message in messages:  # an error the server could not tie to the request
        if isinstance(message, dict) and "error" in message and message.get("id") is None:
            return _reply(message, status, url)
    return Reply(None, code=0, message=f"HTTP {status} without an answer", status=status)


def _events(body: bytes) -> list[Any]:
    """The JSON messages of an event stream's ``data:`` lines (one event may span lines)."""
    messages: list[Any] = []
    data: list[str] = []
    for raw in [*body.decode("utf-8", "replace").splitlines(), ""]:
        if raw.startswith("data:"):
            data.append(raw[5:].removeprefix(" "))
        elif raw == "" and data:
            # A malformed event is no answer: the request fails as unanswered.
            with contextlib.suppress(ValueError, RecursionError):
                messages.append(json.loads("\n".join(data)))
            data = []
    return messages


def _reply(message: dict[str, Any], status: int, url: str) -> Reply:
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        text = error.get("message")
        return Reply(
            None,
            code=code if isinstance(code, int) else 0,
            message=text[:500] if isinstance(text, str) else "",
            data=error.get("data"),
            status=status,
        )
    result = message.get("result")
    if not isinstance(result, dict):
        raise RemoteError(f"{url}: an answer whose result is not an object")
    return Reply(result, status=status)


def refuses_version(reply: Reply) -> bool:
    """Whether a 2026-07-28 request failed because the server does not speak that version (a
    server of the handshake era answers a request without a session with 400 or 404)."""
    if reply.result is not None:
        return False
    return reply.code == UNSUPPORTED_VERSION or reply.status in (400, 404, 405, 406)


# -- skills/list ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """A file a listing entry names: its URI, path in the skill, digest and size."""

    uri: str
    path: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """One ``skills/list`` entry: the skill's ``SKILL.md`` URI, its frontmatter and its files
    (None: ``"dynamic"``, files not listed)."""

    uri: str
    name: str
    frontmatter: dict[str, Any]
    files: tuple[RemoteFile, ...] | None

    @property
    def skill_file(self) -> RemoteFile | None:
        return next((f for f in self.files or () if f.path == "SKILL.md"), None)

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class SkillsPage:
    entries: list[RemoteEntry]
    refused: list[str]
    next_cursor: str | None
    ttl_ms: int
    cache_scope: str


def parse_skills_page(result: dict[str, Any], url: str) -> SkillsPage:
    """One page of ``skills/list``; an entry that cannot be used is left out, with why."""
    skills = result.get("skills")
    if not isinstance(skills, list):
        raise RemoteError(f"{url}: skills/list answered without a `skills` array")
    entries: list[RemoteEntry] = []
    refused: list[str] = []
    for index, raw in enumerate(skills):
        try:
            entries.append(_entry(raw))
        except RemoteError as exc:
            refused.append(f"skills[{index}]: {exc}")
    cursor = result.get("nextCursor")
    ttl = result.get("ttlMs")
    scope = result.get("cacheScope")
    return SkillsPage(
        entries,
        refused,
        cursor if isinstance(cursor, str) and cursor else None,
        min(max(ttl, 0), MAX_TTL_MS) if isinstance(ttl, int) and not isinstance(ttl, bool) else 0,
        scope if scope in ("private", "public") else "private",
    )


def _entry(raw: Any) -> RemoteEntry:
    if not isinstance(raw, dict):
        raise RemoteError("not an object")
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri.endswith("/SKILL.md") or len(uri) > MAX_URI_CHARS:
        raise RemoteError("`uri` is not the URI of a SKILL.md")
    frontmatter = raw.get("frontmatter")
    if not isinstance(frontmatter, dict):
        raise RemoteError(f"{uri}: `frontmatter` is not an object")
    prefix = uri[: -len("SKILL.md")]
    name = frontmatter.get("name")
    if not isinstance(name, str) or not name:
        name = unquote(prefix.rstrip("/").rsplit("/", 1)[-1])
    resources = raw.get("resources")
    files: tuple[RemoteFile, ...] | None = None
    if isinstance(resources, list):
        if len(resources) > MAX_FILES_PER_SKILL:
            raise RemoteError(f"{uri}: over {MAX_FILES_PER_SKILL} files listed")
        files = tuple(_file(r, prefix, uri, i) for i, r in enumerate(resources))
    elif resources != "dynamic" and resources is not None:
        raise RemoteError(f'{uri}: `resources` is neither a list nor "dynamic"')
    return RemoteEntry(uri, name, frontmatter, files)


def _file(raw: Any, prefix: str, skill: str, index: int) -> RemoteFile:
    where = f"{skill}: resources[{index}]"
    if not isinstance(raw, dict):
        raise RemoteError(f"{where} is not an object")
    uri, digest, size = raw.get("uri"), raw.get("digest"), raw.get("size")
    if not isinstance(uri, str) or not uri.startswith(prefix) or len(uri) > MAX_URI_CHARS:
        raise RemoteError(f"{where}: `uri` is not a file of the skill")
    path = unquote(uri[len(prefix) :])
    parts = path.split("/")
    if not path or any(p in ("", ".", "..") for p in parts) or "\x00" in path:
        raise RemoteError(f"{where}: `uri` {uri!r} does not name a file inside the skill")
    if not isinstance(digest, str) or not _is_sha256(digest):
        raise RemoteError(f"{where}: `digest` is not sha256:<64 hex digits>")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise RemoteError(f"{where}: `size` is not a byte count")
    return RemoteFile(uri, path, digest.lower(), size)


def _is_sha256(digest: str) -> bool:
    hexpart = digest[7:] if digest.lower().startswith("sha256:") else ""
    return len(hexpart) == 64 and all(c in "0123456789abcdefABCDEF" for c in hexpart)


# -- resources/read --------------------------------------------------------------------------------


def file_bytes(result: dict[str, Any], uri: str) -> bytes:
    """The bytes a ``resources/read`` result gives for ``uri`` (text as UTF-8, blob decoded)."""
    contents = result.get("contents")
    if not isinstance(contents, list) or not contents:
        raise RemoteError(f"{uri}: resources/read answered without contents")
    chosen = next(
        (c for c in contents if isinstance(c, dict) and c.get("uri") == uri),
        contents[0],
    )
    if not isinstance(chosen, dict):
        raise RemoteError(f"{uri}: resources/read answered contents that are not objects")
    text, blob = chosen.get("text"), chosen.get("blob")
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(blob, str):
        try:
            return base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise RemoteError(f"{uri}: the blob is not base64") from None
    raise RemoteError(f"{uri}: resources/read answered neither text nor blob")
