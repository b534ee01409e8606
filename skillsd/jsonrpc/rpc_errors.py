"""JSON-RPC error replies as exceptions: one class per code, each knowing its code
(docs/protocol.md).

A handler raises one of these, or a core `SkillsdError`, whose code every face takes from
:func:`code_of` (the one mapping: the daemon's endpoint and the MCP bridge alike)."""

from __future__ import annotations

from typing import Any, ClassVar

from msgspec import UNSET

from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd_protocol import KIND_CODES, ErrorCode

__all__ = [
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MethodNotFound",
    "ParseError",
    "RpcError",
    "code_of",
]


def code_of(exc: SkillsdError) -> ErrorCode:
    """The code a refusal is sent with, on every face: a bad parameter's ``-32602``, a known
    kind's own code, and ``-32603`` for a kind with none (a fault of the server's, not of the
    request)."""
    if isinstance(exc.data, InvalidParamsData):
        return ErrorCode.INVALID_PARAMS
    return KIND_CODES.get(exc.kind, ErrorCode.INTERNAL_ERROR)


class RpcError(Exception):
    """A JSON-RPC error reply; each subclass knows its code."""

    code: ClassVar[int] = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, data: Any = UNSET) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ParseError(RpcError):
    code = ErrorCode.PARSE_ERROR


class InvalidRequest(RpcError):
    code = ErrorCode.INVALID_REQUEST


class MethodNotFound(RpcError):
    code = ErrorCode.METHOD_NOT_FOUND


class InvalidParams(RpcError):
    code = ErrorCode.INVALID_PARAMS


class InternalError(RpcError):
    code = ErrorCode.INTERNAL_ERROR
