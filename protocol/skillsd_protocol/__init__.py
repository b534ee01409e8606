"""skillsd wire protocol: msgspec types for every JSON-RPC method, notification and error.

This package imports nothing but msgspec, so a client can depend on it alone.
"""

from skillsd_protocol.errors import KIND_CODES, ErrorCode, ErrorKind
from skillsd_protocol.methods import METHODS, NOTIFICATIONS, PROTOCOL_VERSION, MethodSpec
from skillsd_protocol.model import (
    Diagnostic,
    ResourceCounts,
    Scope,
    Severity,
    SkillLoadError,
    SkillMetadata,
)

__all__ = [
    "KIND_CODES",
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_VERSION",
    "Diagnostic",
    "ErrorCode",
    "ErrorKind",
    "MethodSpec",
    "ResourceCounts",
    "Scope",
    "Severity",
    "SkillLoadError",
    "SkillMetadata",
]
