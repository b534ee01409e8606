"""``skills-lock.json``: which skills an install placed, from where, at which commit and digest.

The format is fixed so that any tool can read and write it::

    {"version": 1, "skills": {"<name>": {source, sourceType, ref?, commit?, path?, digest,
                                          agents[], mode, installedAt}}}

Keys sorted, two-space indent, a trailing newline (so the file diffs cleanly when committed).
Decoding refuses a file it cannot trust and says which file and field; members it does not
know are ignored, so a newer tool's lock still reads.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import msgspec

from skillsd.core.install.fs_skill_digest import is_digest

__all__ = [
    "LOCK_FILE",
    "LOCK_VERSION",
    "LockEntry",
    "LockError",
    "LockFile",
    "SourceType",
    "decode_lock",
    "encode_lock",
    "is_installable_name",
]

LOCK_FILE = "skills-lock.json"
LOCK_VERSION = 1

SourceType = Literal["git", "local", "archive", "mcp"]
InstallMode = Literal["link", "copy"]

#: A skill name the installer will use as a folder name: one safe path component.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_installable_name(name: str) -> bool:
    """Whether ``name`` can be a skill's folder: ASCII letters, digits, ``.``, ``_``, ``-``, at
    most 128 characters, not starting with a dot (so never ``.`` or ``..``)."""
    return _NAME.fullmatch(name) is not None


class LockEntry(msgspec.Struct, rename="camel", kw_only=True):
    """One installed skill (``ref``, ``commit`` and ``path`` are left out of the file when None)."""

    source: str
    source_type: SourceType
    digest: str
    agents: list[str] = msgspec.field(default_factory=list)
    mode: InstallMode = "link"
    installed_at: str = ""
    ref: str | None = None
    commit: str | None = None
    path: str | None = None


class LockFile(msgspec.Struct, kw_only=True):
    """The whole file."""

    version: int = LOCK_VERSION
    skills: dict[str, LockEntry] = msgspec.field(default_factory=dict)


class LockError(Exception):
    """The lock file cannot be used; the message names the file and the field."""

    def __init__(self, message: str, path: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.field = field


_RAW_DECODER = msgspec.json.Decoder(dict[str, Any])
# Works LockEntry's decoding information out at import, on one thread: see `config`.
msgspec.json.Decoder(LockEntry)
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _entry(path: str, name: str, raw: Any) -> LockEntry:
    field = f"skills.{name}"
    if not is_installable_name(name):
        raise LockError(f"{path}: {field}: not a usable skill folder name", path, field)
    try:
        entry = msgspec.convert(raw, LockEntry)
    except msgspec.ValidationError as exc:
        # msgspec says "... - at `$.digest`": put the lock's own path in front.
        text = str(exc)
        where = re.search(r"at `\$\.?(.*)`$", text)
        sub = where.group(1) if where else ""
        full = f"{field}.{sub}" if sub else field
        reason = text.split(" - at ")[0]
        raise LockError(f"{path}: {full}: {reason}", path, full) from None
    if not is_digest(entry.digest):
        raise LockError(
            f"{path}: {field}.digest: expected 'sha256:' and 64 lowercase hex digits",
            path,
            f"{field}.digest",
        )
    if entry.commit is not None and not _COMMIT.fullmatch(entry.commit):
        raise LockError(
            f"{path}: {field}.commit: expected a full lowercase hex commit id",
            path,
            f"{field}.commit",
        )
    if entry.path is not None and (
        entry.path.startswith("/") or ".." in entry.path.split("/") or "\\" in entry.path
    ):
        raise LockError(
            f"{path}: {field}.path: must be relative inside the source, without '..'",
            path,
            f"{field}.path",
        )
    return entry


def decode_lock(data: bytes, *, path: str) -> LockFile:
    """Decode the lock file ``path`` holding ``data``; raises :class:`LockError`."""
    try:
        raw = _RAW_DECODER.decode(data)
    except msgspec.ValidationError:
        raise LockError(f"{path}: expected a JSON object", path) from None
    except msgspec.DecodeError as exc:
        raise LockError(f"{path}: not valid JSON: {exc}", path) from None
    version = raw.get("version")
    if version != LOCK_VERSION:
        raise LockError(
            f"{path}: version: expected {LOCK_VERSION}, found {json.dumps(version)}",
            path,
            "version",
        )
    skills = raw.get("skills", {})
    if not isinstance(skills, dict):
        raise LockError(f"{path}: skills: expected an object", path, "skills")
    return LockFile(skills={name: _entry(path, name, value) for name, value in skills.items()})


def encode_lock(lock: LockFile) -> bytes:
    """The file's bytes: keys sorted, two-space indent, UTF-8, a trailing newline."""
    doc = {
        "version": lock.version,
        "skills": {
            name: {k: v for k, v in msgspec.to_builtins(entry).items() if v is not None}
            for name, entry in lock.skills.items()
        },
    }
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
