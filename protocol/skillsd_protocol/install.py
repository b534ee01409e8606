"""Params and results of installing, updating and removing skills, the lock and the scan
(``skills.install``, ``skills.installed``, ``skills.update``, ``skills.remove``,
``skills.restore``, ``skills.scan``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from skillsd_protocol.messages import Params, PathText, RefParams
from skillsd_protocol.model import Wire

__all__ = [
    "FileChanges",
    "InstallMode",
    "InstallParams",
    "InstallResult",
    "InstallScope",
    "InstalledParams",
    "InstalledResult",
    "InstalledSkill",
    "InstalledStatus",
    "LockedSkill",
    "RemoveParams",
    "RemoveResult",
    "RestoreParams",
    "RestoreResult",
    "ScanFinding",
    "ScanParams",
    "ScanResult",
    "ScanSeverity",
    "SkillUpdate",
    "UpdateParams",
    "UpdateResult",
]

InstallScope = Literal["repo", "user"]
InstallMode = Literal["link", "copy"]
ScanSeverity = Literal["info", "warning", "danger"]
InstalledStatus = Literal["ok", "modified", "missing", "links-broken"]
SourceType = Literal["git", "local", "archive", "mcp"]


class ScanFinding(Wire, kw_only=True):
    """What the static scan saw: ``file`` relative to the skill folder, ``skill`` its name when
    several skills were scanned."""

    code: str
    severity: ScanSeverity
    file: str
    message: str
    line: int | None = None
    skill: str | None = None


class InstallParams(Params, kw_only=True):
    """``source``: a local folder, a git URL or local repository, ``owner/repo``, or an archive
    (``.zip``, ``.tar.gz``, ``.skill``); ``names`` picks skills (default all found)."""

    source: PathText
    ref: PathText | None = None
    path: PathText | None = None
    names: list[PathText] | None = None
    scope: InstallScope = "repo"
    agents: list[PathText] | None = None
    mode: InstallMode = "link"
    force: bool = False
    cwd: PathText | None = None


class InstalledSkill(Wire, kw_only=True):
    """One skill an install placed: its canonical folder, and the agents' links or copies."""

    name: str
    path: str
    source: str
    digest: str
    commit: str | None = None
    links: list[str] = msgspec.field(default_factory=list)


class InstallResult(Wire, kw_only=True):
    """What was installed, what the scan found, and the lock file written."""

    installed: list[InstalledSkill]
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    lock: str = ""


class InstalledParams(Params, kw_only=True):
    cwd: PathText | None = None
    scope: InstallScope = "repo"


class LockedSkill(Wire, kw_only=True):
    """A skill of the lock with its state on disk: ``files`` names what no longer matches the
    digest (``modified``; empty when this machine has no record of the installed files),
    ``brokenLinks`` the agents' links or copies that are gone or wrong."""

    name: str
    status: InstalledStatus
    path: str
    source: str
    source_type: SourceType
    digest: str
    agents: list[str] = msgspec.field(default_factory=list)
    mode: InstallMode = "link"
    installed_at: str = ""
    ref: str | None = None
    commit: str | None = None
    files: list[str] = msgspec.field(default_factory=list)
    broken_links: list[str] = msgspec.field(default_factory=list)


class InstalledResult(Wire, kw_only=True):
    skills: list[LockedSkill]
    lock: str = ""


class UpdateParams(Params, kw_only=True):
    """``names``: which locked skills (default all); ``check`` only reports."""

    names: list[PathText] | None = None
    check: bool = False
    force: bool = False
    cwd: PathText | None = None
    scope: InstallScope = "repo"


class FileChanges(Wire, kw_only=True):
    added: list[str] = msgspec.field(default_factory=list)
    changed: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)


class SkillUpdate(Wire, kw_only=True):
    """A locked skill whose source moved on: ``from``/``to`` are commits (git) or digests,
    ``applied`` whether it was installed, ``skipped`` why not (check mode, local edits)."""

    name: str
    from_: str = msgspec.field(name="from")
    to: str
    files: FileChanges
    applied: bool = False
    skipped: str | None = None


class UpdateResult(Wire, kw_only=True):
    updates: list[SkillUpdate]
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    lock: str = ""


class RemoveParams(Params, kw_only=True):
    name: PathText
    cwd: PathText | None = None
    scope: InstallScope = "repo"


class RemoveResult(Wire, kw_only=True):
    """The folders, links and copies removed."""

    removed: list[str]
    lock: str = ""


class RestoreParams(Params, kw_only=True):
    cwd: PathText | None = None
    scope: InstallScope = "repo"
    force: bool = False


class RestoreResult(Wire, kw_only=True):
    """``restored``: skills placed again; ``unchanged``: names already as locked."""

    restored: list[InstalledSkill]
    unchanged: list[str] = msgspec.field(default_factory=list)
    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    lock: str = ""


class ScanParams(RefParams, kw_only=True):
    """A skill of the catalog (``id``/``name``), or ``path``: a skill folder or a tree holding
    skills."""

    cwd: PathText | None = None


class ScanResult(Wire, kw_only=True):
    findings: list[ScanFinding]
