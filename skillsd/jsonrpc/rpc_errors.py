"""JSON-RPC error replies as exceptions: one class per code, each knowing its code
(docs/protocol.md).

A handler raises one of these (or a core `SkillsdError`, which the endpoint maps by kind)."""

from __future__ import annotations

from typing import Any, ClassVar

from msgspec import UNSET

from skillsd_protocol import ErrorCode

__all__ = [
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MethodNotFound",
    "ParseError",
    "RpcError",
]


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
