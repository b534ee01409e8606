"""JSON-RPC error codes, skillsd's application error kinds (``data.kind``), the error object and
the typed ``data`` of each kind."""

from __future__ import annotations

import enum
from typing import Any, Literal

import msgspec

from skillsd_protocol.install import ScanFinding
from skillsd_protocol.model import Diagnostic, Scope, Wire

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
    "not_user_invocable",
    "not_model_invocable",
    "already_exists",
    "install_failed",
    "digest_mismatch",
    "not_installed",
    "invalid_lock",
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
    NOT_USER_INVOCABLE = 1015
    NOT_MODEL_INVOCABLE = 1016
    ALREADY_EXISTS = 1017
    INSTALL_FAILED = 1018
    DIGEST_MISMATCH = 1019
    NOT_INSTALLED = 1020
    INVALID_LOCK = 1021


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
    # Beyond the protocol's list: a config file that cannot be used (names file, key and reason),
    # and a state file that cannot be read or written (the previous state is kept).
    "invalid_config": ErrorCode.INVALID_CONFIG,
    "state_unreadable": ErrorCode.STATE_UNREADABLE,
    "state_write_failed": ErrorCode.STATE_WRITE_FAILED,
    "not_user_invocable": ErrorCode.NOT_USER_INVOCABLE,
    "not_model_invocable": ErrorCode.NOT_MODEL_INVOCABLE,
    # Installing skills (docs/install-skills.md).
    "already_exists": ErrorCode.ALREADY_EXISTS,
    "install_failed": ErrorCode.INSTALL_FAILED,
    "digest_mismatch": ErrorCode.DIGEST_MISMATCH,
    "not_installed": ErrorCode.NOT_INSTALLED,
    "invalid_lock": ErrorCode.INVALID_LOCK,
}


# -- error objects and their ``data`` -------------------------------------------------------


class ErrorObject(Wire, kw_only=True):
    """A JSON-RPC error object: ``{code, message, data?}``.

    Application errors (codes 1001+) carry ``data.kind`` plus the members of the kind's
    `ErrorData` type; ``-32602`` may carry ``data.field``; the other codes carry no data."""

    code: int
    message: str
    data: Any = None


class ErrorData(Wire, tag_field="kind", kw_only=True):
    """Base of the typed ``data`` of application errors, tagged by ``kind``.

    Every member has a default: a daemon may leave out what does not apply (a ``path`` ref that
    matched nothing has no close names to suggest), and newer daemons may add members."""


class SkillCandidate(Wire, kw_only=True):
    """One of the skills an ambiguous name matched."""

    id: str
    path: str
    scope: Scope


class SkillNotFoundData(ErrorData, tag="skill_not_found", kw_only=True):
    """No (enabled) skill matches the ref; ``suggestions`` are the closest names."""

    suggestions: list[str] = msgspec.field(default_factory=list)
    path: str | None = None


class AmbiguousSkillData(ErrorData, tag="ambiguous_skill", kw_only=True):
    """Several enabled skills have that name; pass ``path`` or ``id`` of one candidate.

    ``agent``/``skill`` name the agent definition and its reference when an agent's skill list
    was being resolved."""

    candidates: list[SkillCandidate] = msgspec.field(default_factory=list)
    agent: str | None = None
    skill: str | None = None


class InvalidSkillData(ErrorData, tag="invalid_skill", kw_only=True):
    """The ref names a SKILL.md that failed validation (its diagnostics say why)."""

    path: str | None = None
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)


class PermissionDeniedData(ErrorData, tag="permission_denied", kw_only=True):
    """A deny rule (``layer``, ``rule``) refuses loading ``skill``."""

    skill: str | None = None
    layer: str | None = None
    rule: str | None = None
    agent: str | None = None


class PermissionRequiredData(ErrorData, tag="permission_required", kw_only=True):
    """Loading needs the user's approval: ask, then ``permissions.remember`` ``rule``."""

    skill: str | None = None
    layer: str | None = None
    rule: str | None = None


class PathNotAllowedData(ErrorData, tag="path_not_allowed", kw_only=True):
    """``file`` is absolute, has ``..``, a NUL or a backslash, or leaves the skill directory."""

    file: str | None = None


class ResourceNotFoundData(ErrorData, tag="resource_not_found", kw_only=True):
    """A contained ``file`` (or the skill's own SKILL.md at ``path``) does not exist."""

    file: str | None = None
    path: str | None = None


class TooLargeData(ErrorData, tag="too_large", kw_only=True):
    """Something is over a bound: the file at ``path`` is larger than the daemon reads, or a
    reply, a table or a count would pass ``limit`` (named in the message)."""

    path: str | None = None
    limit: int | None = None


class SessionNotFoundData(ErrorData, tag="session_not_found", kw_only=True):
    """No open session has this id: open it with ``session.open`` first."""

    session_id: str | None = None


class AgentNotFoundData(ErrorData, tag="agent_not_found", kw_only=True):
    """No agent definition has that name; ``suggestions`` are the closest names."""

    suggestions: list[str] = msgspec.field(default_factory=list)


class UnknownSkillReferenceData(ErrorData, tag="unknown_skill_reference", kw_only=True):
    """Agent ``agent`` (file ``path``) lists a skill ``skill`` that resolves to no skill."""

    agent: str | None = None
    skill: str | None = None
    path: str | None = None
    suggestions: list[str] = msgspec.field(default_factory=list)


class InvalidConfigData(ErrorData, tag="invalid_config", kw_only=True):
    """The config file at ``path`` cannot be used (the message names the key and reason)."""

    path: str | None = None


class StateUnreadableData(ErrorData, tag="state_unreadable", kw_only=True):
    """The state file at ``path`` cannot be read, so it is not overwritten."""

    path: str | None = None


class StateWriteFailedData(ErrorData, tag="state_write_failed", kw_only=True):
    """The state file at ``path`` could not be written; the previous state is kept."""

    path: str | None = None


class NotUserInvocableData(ErrorData, tag="not_user_invocable", kw_only=True):
    """``skills.invoke`` of a skill whose author set ``user-invocable: false``
    (docs/conformance.md):
    only the model may load it (``skill``, at ``path``)."""

    skill: str | None = None
    path: str | None = None


class NotModelInvocableData(ErrorData, tag="not_model_invocable", kw_only=True):
    """A read on the model's behalf (its tools, MCP resources) of a skill whose author set
    ``disable-model-invocation: true``: only the user may invoke it (``skill``, at ``path``)."""

    skill: str | None = None
    path: str | None = None


class AlreadyExistsData(ErrorData, tag="already_exists", kw_only=True):
    """An install would replace ``path`` (skill ``skill``), which the lock file does not own;
    ``force`` replaces it."""

    skill: str | None = None
    path: str | None = None


class InstallFailedData(ErrorData, tag="install_failed", kw_only=True):
    """An install, update, remove or restore stopped at ``step`` (``resolve``, ``fetch``,
    ``scan``, ``limits``, ``place``, ``lock``); nothing was changed. ``findings`` holds the
    scan's danger findings when the scan refused."""

    step: str | None = None
    skill: str | None = None
    source: str | None = None
    path: str | None = None
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)


class DigestMismatchData(ErrorData, tag="digest_mismatch", kw_only=True):
    """What the source holds for ``skill`` no longer has the locked digest; ``files`` names the
    files that differ when known."""

    skill: str | None = None
    expected: str | None = None
    actual: str | None = None
    files: list[str] = msgspec.field(default_factory=list)


class NotInstalledData(ErrorData, tag="not_installed", kw_only=True):
    """The lock file owns no skill ``skill``; ``suggestions`` are the closest locked names."""

    skill: str | None = None
    suggestions: list[str] = msgspec.field(default_factory=list)


class InvalidLockData(ErrorData, tag="invalid_lock", kw_only=True):
    """The lock file at ``path`` cannot be used (``field`` says where); it is not overwritten."""

    path: str | None = None
    field: str | None = None


#: The typed ``data`` of each application error kind.
ERROR_DATA: dict[str, type[ErrorData]] = {
    "skill_not_found": SkillNotFoundData,
    "ambiguous_skill": AmbiguousSkillData,
    "invalid_skill": InvalidSkillData,
    "permission_denied": PermissionDeniedData,
    "permission_required": PermissionRequiredData,
    "path_not_allowed": PathNotAllowedData,
    "resource_not_found": ResourceNotFoundData,
    "too_large": TooLargeData,
    "session_not_found": SessionNotFoundData,
    "agent_not_found": AgentNotFoundData,
    "unknown_skill_reference": UnknownSkillReferenceData,
    "invalid_config": InvalidConfigData,
    "state_unreadable": StateUnreadableData,
    "state_write_failed": StateWriteFailedData,
    "not_user_invocable": NotUserInvocableData,
    "not_model_invocable": NotModelInvocableData,
    "already_exists": AlreadyExistsData,
    "install_failed": InstallFailedData,
    "digest_mismatch": DigestMismatchData,
    "not_installed": NotInstalledData,
    "invalid_lock": InvalidLockData,
}

#: Decodes an application error's ``data`` into its kind's type (a tagged union on ``kind``).
AnyErrorData = (
    SkillNotFoundData
    | AmbiguousSkillData
    | InvalidSkillData
    | PermissionDeniedData
    | PermissionRequiredData
    | PathNotAllowedData
    | ResourceNotFoundData
    | TooLargeData
    | SessionNotFoundData
    | AgentNotFoundData
    | UnknownSkillReferenceData
    | InvalidConfigData
    | StateUnreadableData
    | StateWriteFailedData
    | NotUserInvocableData
    | NotModelInvocableData
    | AlreadyExistsData
    | InstallFailedData
    | DigestMismatchData
    | NotInstalledData
    | InvalidLockData
)
