"""skillsd wire protocol: msgspec types for every JSON-RPC method, notification and error.

This package imports nothing but msgspec, so a client can depend on it alone.
"""

from skillsd_protocol.errors import (
    ERROR_DATA,
    KIND_CODES,
    AnyErrorData,
    ErrorCode,
    ErrorData,
    ErrorKind,
    ErrorObject,
)
from skillsd_protocol.methods import (
    METHODS,
    NOTIFICATION_SUMMARIES,
    NOTIFICATIONS,
    PROTOCOL_VERSION,
    SERVER_NOTIFICATIONS,
    MethodSpec,
)
from skillsd_protocol.model import (
    DEFAULT_INVOCATION,
    Diagnostic,
    HostDependency,
    HostFields,
    Invocation,
    PluginInfo,
    RemoteInfo,
    ResourceCounts,
    Scope,
    Severity,
    SkillLoadError,
    SkillMetadata,
)

__all__ = [
    "DEFAULT_INVOCATION",
    "ERROR_DATA",
    "KIND_CODES",
    "METHODS",
    "NOTIFICATIONS",
    "NOTIFICATION_SUMMARIES",
    "PROTOCOL_VERSION",
    "SERVER_NOTIFICATIONS",
    "AnyErrorData",
    "Diagnostic",
    "ErrorCode",
    "ErrorData",
    "ErrorKind",
    "ErrorObject",
    "HostDependency",
    "HostFields",
    "Invocation",
    "MethodSpec",
    "PluginInfo",
    "RemoteInfo",
    "ResourceCounts",
    "Scope",
    "Severity",
    "SkillLoadError",
    "SkillMetadata",
]
