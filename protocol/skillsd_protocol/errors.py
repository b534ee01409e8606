"""JSON-RPC error codes and skillsd's application error kinds (``data.kind``)."""

from __future__ import annotations

import enum
from typing import Literal

ErrorKind = Literal[
    "skill_not_found",
    "ambiguous_skill",
    "invalid_skill",
    "permission_denied",
    "permission_required",
    "path_not_allowed",
    "resource_not_found",
    "too_large",
    "session_not_found",
    "agent_not_found",
    "unknown_skill_reference",
    "invalid_config",
    "state_unreadable",
    "state_write_failed",
]


class ErrorCode(enum.IntEnum):
    """Numeric codes: JSON-RPC 2.0's reserved ones, LSP's cancel code, then skillsd's (1001+)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    SKILL_NOT_FOUND = 1001
    AMBIGUOUS_SKILL = 1002
    INVALID_SKILL = 1003
    PERMISSION_DENIED = 1004
    PERMISSION_REQUIRED = 1005
    PATH_NOT_ALLOWED = 1006
    RESOURCE_NOT_FOUND = 1007
    TOO_LARGE = 1008
    SESSION_NOT_FOUND = 1009
    AGENT_NOT_FOUND = 1010
    UNKNOWN_SKILL_REFERENCE = 1011
    INVALID_CONFIG = 1012
    STATE_UNREADABLE = 1013
    STATE_WRITE_FAILED = 1014


#: The code each application error kind is sent with.
KIND_CODES: dict[str, ErrorCode] = {
    "skill_not_found": ErrorCode.SKILL_NOT_FOUND,
    "ambiguous_skill": ErrorCode.AMBIGUOUS_SKILL,
    "invalid_skill": ErrorCode.INVALID_SKILL,
    "permission_denied": ErrorCode.PERMISSION_DENIED,
    "permission_required": ErrorCode.PERMISSION_REQUIRED,
    "path_not_allowed": ErrorCode.PATH_NOT_ALLOWED,
    "resource_not_found": ErrorCode.RESOURCE_NOT_FOUND,
    "too_large": ErrorCode.TOO_LARGE,
    "session_not_found": ErrorCode.SESSION_NOT_FOUND,
    "agent_not_found": ErrorCode.AGENT_NOT_FOUND,
    "unknown_skill_reference": ErrorCode.UNKNOWN_SKILL_REFERENCE,
    # Beyond SPEC 9's list: a config file that cannot be used (names file, key and reason),
    # and a state file that cannot be read or written (the previous state is kept).
    "invalid_config": ErrorCode.INVALID_CONFIG,
    "state_unreadable": ErrorCode.STATE_UNREADABLE,
    "state_write_failed": ErrorCode.STATE_WRITE_FAILED,
}
