"""The client's exceptions: one base class, then one per way a call can fail."""

from __future__ import annotations

from typing import Any

import msgspec

from skillsd_protocol import ERROR_DATA, AnyErrorData, ErrorCode, ErrorData

# The error data's decoding information, worked out at import on one thread: msgspec works it
# out on first use otherwise, and two threads doing that at once crash the process.
msgspec.json.Decoder(AnyErrorData)

__all__ = [
    "ClientError",
    "ConnectError",
    "ConnectionClosed",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
]


class ClientError(Exception):
    """Base of every error the client raises."""


class RpcError(ClientError):
    """The daemon answered a request with a JSON-RPC error.

    ``kind`` is ``data.kind`` for application errors (codes 1001+), else None; ``details`` is
    ``data`` decoded into the kind's `ErrorData` type (e.g. `SkillNotFoundData` with its
    ``suggestions``), or None when the kind is unknown to this client or carries no data."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str = "") -> None:
        super().__init__(f"{method}: {message}" if method else message)
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        self.kind: str | None = None
        self.details: ErrorData | None = None
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            self.kind = data["kind"]
            if self.kind in ERROR_DATA:
                try:
                    self.details = msgspec.convert(data, AnyErrorData)
                except msgspec.ValidationError:
                    self.details = None  # a newer daemon's shape: `data` still has it all

    @property
    def code_name(self) -> str | None:
        """The `ErrorCode` name (``"SKILL_NOT_FOUND"``), or None for a code this client lacks."""
        try:
            return ErrorCode(self.code).name
        except ValueError:
            return None

    def __repr__(self) -> str:
        return f"RpcError(code={self.code}, kind={self.kind!r}, message={self.message!r})"


class RequestTimeout(ClientError, TimeoutError):
    """No answer within the request's timeout; the request was cancelled (``$/cancelRequest``)."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method}: no answer within {timeout:g}s; the request was cancelled")
        self.method = method
        self.timeout = timeout


class ConnectionClosed(ClientError, ConnectionError):
    """The connection to the daemon ended; pending and later calls fail with this.

    For a daemon this client spawned, ``returncode`` is its exit status (when known) and
    ``stderr`` the tail of what it wrote there, which usually says why."""

    def __init__(self, reason: str, *, returncode: int | None = None, stderr: str = "") -> None:
        message = reason
        if returncode is not None:
            message += f" (daemon exit status {returncode})"
        if stderr.strip():
            message += "; daemon stderr:\n" + stderr.rstrip()
        super().__init__(message)
        self.reason = reason
        self.returncode = returncode
        self.stderr = stderr


class ConnectError(ClientError, ConnectionError):
    """The daemon could not be started or reached; the message says what to look at."""


class ProtocolError(ClientError):
    """The daemon sent something that does not follow the protocol (a result that does not
    decode into the method's result type, a malformed reply)."""
