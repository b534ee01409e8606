"""What the skill methods (:mod:`skillsd.mcp_bridge.native_skills`) get from their connection
(:mod:`skillsd.mcp_bridge.mcp_connection`): one request, and the client to notify or ask. Kept
apart so that neither module imports the other's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "ClientRefused",
    "Era",
    "Exchange",
    "Listeners",
    "Peer",
]

#: Versions reached through ``initialize``, oldest first.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Versions of the per-request envelope.
MODERN_VERSIONS = ("2026-07-28",)

#: The handshake era (``initialize``) or the 2026-07-28 one (an envelope on every request).
Era = Literal["handshake", "modern"]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request: its method and params, the protocol version it is served at, and the
    capabilities the client declared (the handshake's, or the request's own envelope's)."""

    method: str
    params: dict[str, Any]
    version: str
    capabilities: dict[str, Any] | None
    request_id: Any

    @property
    def modern(self) -> bool:
        return self.version in MODERN_VERSIONS


class ClientRefused(Exception):
    """The client answered the server's request with an error, or never will."""


class Listeners(Protocol):
    """The client's ``subscriptions/listen`` streams (2026-07-28)."""

    def publish(self, kind: Literal["prompts", "resources", "updated"], uri: str = "") -> None:
        """A list changed (``kind``), or the resource ``uri`` was updated (``"updated"``)."""

    def wants_updates(self) -> bool:
        """Whether a stream asked for some resource's updates."""
        ...


class Peer(Protocol):
    """The client's connection, as the skill methods use it."""

    @property
    def era(self) -> Era | None: ...

    @property
    def listeners(self) -> Listeners: ...

    @property
    def client_name(self) -> str | None:
        """The name the client gave (``initialize``'s ``clientInfo.name``), if any."""

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Ask the client and wait for its answer's result (`ClientRefused` if none comes)."""
