"""What a handler gets besides its params: `RequestContext` (its connection, progress and
cancellation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import UnsetType

from skillsd.daemon.envelopes import RequestId
from skillsd.daemon.router import PROGRESS_METHOD
from skillsd.runtime.file_ops import RequestCancelled
from skillsd_protocol.messages import ProgressParams, ProgressValue

if TYPE_CHECKING:
    from skillsd.daemon.endpoint import Connection


class RequestContext:
    """What a handler gets besides its params: its connection, progress and cancellation."""

    __slots__ = ("_cancelled", "connection", "id", "method", "progress_token")

    def __init__(
        self,
        connection: Connection,
        id_: RequestId | UnsetType,
        method: str,
        progress_token: str | int | None,
    ) -> None:
        self.connection = connection
        self.id = id_
        self.method = method
        self.progress_token = progress_token
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """True once ``$/cancelRequest`` named this request (or the connection is closing)."""
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raise `RequestCancelled` if cancelled: a cheap poll for long thread handlers."""
        if self._cancelled:
            raise RequestCancelled("Request cancelled")

    def progress(self, message: str, percentage: float | None = None) -> None:
        """Send ``$/progress`` if the request asked for it (``_meta.progressToken``).

        Safe to call from a ``"thread"`` handler's thread."""
        token = self.progress_token
        if token is None or self._cancelled:
            return
        params = ProgressParams(
            token=token, value=ProgressValue(message=message, percentage=percentage)
        )
        self.connection.notify(PROGRESS_METHOD, params)
