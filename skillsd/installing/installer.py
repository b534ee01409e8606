"""Installing, updating, removing and restoring skills, and scanning them: one synchronous
function per request, each returning the protocol's result Struct or raising ``SkillsdError``.

Every change follows one path: resolve the source -> fetch it into a temporary folder ->
copy each skill into staging (limits, no link leaving it) -> validate (lenient) -> scan ->
digest -> place every folder and link with one :class:`~skillsd.installing.transaction.Transaction`
whose commit point is the lock file's atomic write. All of it runs under the lock's install
lock, so two installs into one lock run one after the other. See ``docs/install-skills.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import msgspec

from skillsd.core.discovery.agent_folders import (
    AGENT_RULES,
    SKILL_FOLDERS,
    accepted_agent_names,
    agents_in_order,
    canonical_agent,
    user_folder_path,
)
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.fs.fs_boundary import OutsideRoot
from skillsd.core.install.fs_install_source import (
    FoundSkill,
    Source,
    SourceError,
    find_skills,
    parse_source,
    relative_source_text,
    select_skills,
)
from skillsd.core.install.fs_skill_digest import (
    FileChanges,
    TreeTooLarge,
    compare_files,
    digest_of_files,
    file_digests,
)
from skillsd.core.install.lock_file import LockEntry, LockFile, encode_lock
from skillsd.core.name_distance import closest_names
from skillsd.core.policy.config import LimitsConfig
from skillsd.core.policy.fs_effective_config import ConfigSource
from skillsd.core.skill.fs_security_scan import Finding, scan_skill
from skillsd.core.skill.fs_skillfile import SKILL_FILE, read_skill_file
from skillsd.installing.archive_fetch import ArchiveError, download, extract
from skillsd.installing.git_fetch import GitError, checkout, remote_commit
from skillsd.installing.lock_store import (
    InstallTarget,
    install_lock,
    load_manifest,
    read_lock,
    save_manifest,
    target_for,
)
from skillsd.installing.mcp_fetch import McpFetchError, fetch_mcp_skill
from skillsd.installing.skill_staging import copy_skill
from skillsd.installing.transaction import (
    Transaction,
    pause_point,
    recover,
    sweep_staging,
)
from skillsd_protocol.errors import (
    AlreadyExistsData,
    DigestMismatchData,
    InstallFailedData,
    InvalidSkillData,
    NotInstalledData,
    PathNotAllowedData,
)
from skillsd_protocol.install import (
    FileChanges as WireFileChanges,
)
from skillsd_protocol.install import (
    InstalledParams,
    InstalledResult,
    InstalledSkill,
    InstallParams,
    InstallResult,
    LockedSkill,
    RemoveParams,
    RemoveResult,
    RestoreParams,
    RestoreResult,
    ScanFinding,
    ScanResult,
    SkillUpdate,
    UpdateParams,
    UpdateResult,
)

__all__ = [
    "InstallContext",
    "install",
    "installed",
    "remove",
    "restore",
    "scan_path",
    "update",
]


_R = TypeVar("_R")


@dataclass(frozen=True)
class InstallContext:
    """What an operation runs with: the caller's cwd, environment and home, where progress
    lines go, and the per-skill limits (None: the user config's ``limits.maxInstallFiles`` and
    ``limits.maxInstallBytes``)."""

    cwd: str
    env: Mapping[str, str]
    home: str
    progress: Callable[[str], None] | None = None
    max_files: int | None = None
    max_bytes: int | None = None

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)


def _reporting_file_errors(fn: Callable[..., _R]) -> Callable[..., _R]:
    """A file system error while staging or placing (permissions, a full disk) becomes
    ``install_failed`` at step ``place``, naming the file; nothing was changed by then."""

    @functools.wraps(fn)
    def run(*args: object, **kwargs: object) -> _R:
        try:
            return fn(*args, **kwargs)
        except OutsideRoot as exc:
            raise _outside(exc) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise _failed("place", f"{where}{exc.strerror or exc}") from None

    return run


# -- helpers ------------------------------------------------------------------------------------


def _target(ctx: InstallContext, scope: str) -> InstallTarget:
    """Where ``scope`` installs, with the limits in effect (the config is read once here)."""
    if scope == "user":
        target = target_for("user", repo_root=ctx.home, home=ctx.home, env=ctx.env)
        try:
            bounds = ConfigSource(ctx.env).for_cwd(ctx.cwd)[0].limits
        except SkillsdError:
            # A broken config file is reported by the commands that use it; keep the defaults.
            bounds = LimitsConfig()
    else:
        config, _sources, repo_root = ConfigSource(ctx.env).for_cwd(ctx.cwd)
        target = target_for("repo", repo_root=repo_root, home=ctx.home, env=ctx.env)
        bounds = config.limits
    return dataclasses.replace(
        target,
        max_files=ctx.max_files or bounds.max_install_files,
        max_bytes=ctx.max_bytes or bounds.max_install_bytes,
        fetch_seconds=bounds.fetch_seconds,
    )


def _outside(exc: OutsideRoot) -> SkillsdError:
    return SkillsdError(
        f"{exc} (installs write only beneath their root, through no link leading out)",
        PathNotAllowedData(file=exc.path),
    )


def _writable(target: InstallTarget, path: str) -> str:
    """``path`` checked as a place this install may write (``path_not_allowed`` if not)."""
    try:
        return target.confine(path)
    except OutsideRoot as exc:
        raise _outside(exc) from None


def _confined(target: InstallTarget, path: str) -> str | None:
    """``path`` when this install may act on it, else None."""
    try:
        return target.confine(path)
    except OutsideRoot:
        return None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _failed(step: str, message: str, **data: object) -> SkillsdError:
    return SkillsdError(message, InstallFailedData(step=step, **data))  # type: ignore[arg-type]


def wire_findings(findings: list[Finding], skill: str) -> list[ScanFinding]:
    """The scan's findings of ``skill`` as the protocol carries them."""
    return [
        ScanFinding(
            code=f.code,
            severity=f.severity,
            file=f.file,
            message=f.message,
            line=f.line,
            skill=skill,
        )
        for f in findings
    ]


def _wire_changes(changes: FileChanges) -> WireFileChanges:
    return WireFileChanges(added=changes.added, changed=changes.changed, removed=changes.removed)


def resolve_agents(agents: list[str] | None, target: InstallTarget) -> list[str]:
    """The agents an install links for: those named (each must be known; short names such as
    ``claude`` are taken as the canonical one), else the agents
    whose own folder (``.claude``, ``.cursor``, ...) already exists at the root, and Claude
    Code, which reads no shared folder."""
    if agents:
        named = [canonical_agent(a) for a in agents]
        unknown = [a for a, name in zip(agents, named, strict=True) if name is None]
        if unknown:
            raise SkillsdError(
                f"agents: unknown agent {unknown[0]!r} (accepted: {accepted_agent_names()})",
                InvalidParamsData(field="agents"),
            )
        return list(agents_in_order(name for name in named if name is not None))
    chosen = {"claude-code"}
    chosen.update(
        rules.name
        for rules in AGENT_RULES
        if rules.own and os.path.isdir(os.path.join(target.root, rules.own))
    )
    return list(agents_in_order(chosen))


@dataclass(frozen=True)
class _AgentFolder:
    absolute: str
    agents: tuple[str, ...]
    compat: bool


def _folders(target: InstallTarget) -> list[_AgentFolder]:
    found = []
    for folder in SKILL_FOLDERS:
        if folder.scope != target.scope or folder.system:
            continue
        if target.scope == "user":
            absolute = user_folder_path(folder, home=target.home, env=target.env)
        else:
            absolute = os.path.normpath(os.path.join(target.root, folder.path))
        found.append(_AgentFolder(absolute, tuple(folder.agents), folder.compat))
    return found


def agent_paths(target: InstallTarget, name: str, agents: list[str]) -> list[str]:
    """Where the named agents need a link to (or copy of) skill ``name``: one folder per agent
    that does not read the canonical folder, shared when agents share it."""
    folders = _folders(target)
    reads_canonical = {
        a for f in folders if os.path.normpath(f.absolute) == target.skills_dir for a in f.agents
    }
    paths: list[str] = []
    for agent in agents:
        if agent in reads_canonical:
            continue
        # The agent's own folder before compat folders it also reads.
        own = sorted((f for f in folders if agent in f.agents), key=lambda f: f.compat)
        if own:
            path = os.path.join(own[0].absolute, name)
            if path not in paths:
                paths.append(path)
    return paths


# -- adopting -----------------------------------------------------------------------------------


def _adopted_from(target: InstallTarget, tree: str, skill: FoundSkill) -> str | None:
    """Where a skill of a local source is adopted from: its folder sits in an agent's skills
    folder of this scope (``~/.claude/skills/pdf`` with ``--user``, ``.claude/skills/pdf`` in a
    repository) under its own name, or is the canonical folder itself (also through a link
    to it). The path is spelled as the install's own paths are, so it matches its links."""
    origin = os.path.normpath(os.path.join(tree, skill.rel))
    if os.path.basename(origin) != skill.name:
        return None
    canonical = target.canonical(skill.name)
    real = os.path.realpath(origin)
    if real == os.path.realpath(canonical):
        return canonical
    if os.path.islink(origin):
        return None
    parent = os.path.dirname(real)
    for folder in _folders(target):
        if os.path.realpath(folder.absolute) == parent:
            return os.path.join(folder.absolute, skill.name)
    return None


def _adopting_agents(target: InstallTarget, origin: str) -> list[str]:
    """The agents that read the folder a skill is adopted from and not the canonical one:
    they get a link (recorded in the lock), so every agent that saw the skill still does."""
    folders = _folders(target)
    canonical_readers = {
        a for f in folders if os.path.normpath(f.absolute) == target.skills_dir for a in f.agents
    }
    at = os.path.dirname(origin)
    return [a for f in folders if f.absolute == at for a in f.agents if a not in canonical_readers]


# -- fetching -----------------------------------------------------------------------------------


@dataclass
class _Fetched:
    tree: str
    commit: str | None = None


def _fetch(
    source: Source, ref: str | None, ctx: InstallContext, target: InstallTarget, workdir: str
) -> _Fetched:
    try:
        if source.kind == "local":
            if ref is not None:
                raise _failed("resolve", "ref: a local folder has no branches, tags or commits")
            return _Fetched(source.location)
        if source.kind == "git":
            done = checkout(
                source.location,
                os.path.join(workdir, "repo"),
                ref=ref,
                env=ctx.env,
                progress=ctx.progress,
            )
            return _Fetched(done.path, done.commit)
        if source.kind == "mcp":
            if ref is not None:
                raise _failed("resolve", "ref: a skills server has no branches, tags or commits")
            tree = os.path.join(workdir, "tree")
            ctx.say(f"fetching {source.default_name} from {source.location}")
            fetch_mcp_skill(
                source.location,
                source.default_name,
                os.path.join(tree, source.default_name),
                ctx.env,
            )
            return _Fetched(tree)
        archive = source.location
        if source.remote:
            archive = os.path.join(workdir, "download")
            download(source.location, archive, deadline=target.fetch_seconds, progress=ctx.progress)
        ctx.say(f"extracting {os.path.basename(source.location)}")
        return _Fetched(extract(archive, os.path.join(workdir, "tree")))
    except GitError as exc:
        raise _failed("fetch", str(exc), source=source.text) from None
    except ArchiveError as exc:
        raise _failed("fetch", f"archive {exc}", source=source.text) from None
    except McpFetchError as exc:
        raise _failed("fetch", f"skills server: {exc}", source=source.text) from None


def _parse(text: str, base: str, home: str) -> Source:
    try:
        return parse_source(text, base=base, home=home)
    except SourceError as exc:
        raise SkillsdError(exc.message, InvalidParamsData(field=exc.field)) from None


def _lock_source_text(source: Source, target: InstallTarget) -> str:
    if source.remote or "://" in source.text:
        return source.text
    if target.scope == "repo":
        return relative_source_text(source.location, target.root)
    return source.location


def _source_base(target: InstallTarget) -> str:
    return target.root if target.scope == "repo" else target.home


# -- staging ------------------------------------------------------------------------------------


@dataclass
class _Staged:
    name: str
    path: str
    files: dict[str, str]
    digest: str
    findings: list[Finding] = field(default_factory=list)


def _stage(
    txn: Transaction,
    target: InstallTarget,
    name: str,
    src: str,
    ctx: InstallContext,
    *,
    force: bool,
    refuse_danger: bool = True,
) -> _Staged:
    """Copy, validate, scan and digest one skill into the staging folder of its destination.

    Validation errors refuse it unless ``force``; so do danger findings, unless ``force`` or
    not ``refuse_danger`` (the caller decides)."""
    dest = target.canonical(name)
    staged = txn.new_path(dest)
    ctx.say(f"copying {name}")
    max_files, max_bytes = target.max_files, target.max_bytes
    copy_skill(src, staged, max_files=max_files, max_bytes=max_bytes)
    skill_file = os.path.join(staged, SKILL_FILE)
    parsed = read_skill_file(skill_file, mode="lenient", dir_name=name)
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    if errors and not force:
        first = errors[0]
        where = f" [{first.field}]" if first.field else ""
        # The diagnostics name the skill's SKILL.md, not the staging folder.
        shown = [msgspec.structs.replace(d, path=f"{name}/{SKILL_FILE}") for d in errors]
        raise SkillsdError(
            f"{name}/{SKILL_FILE}{where}: {first.message} (force installs it anyway)",
            InvalidSkillData(path=f"{name}/{SKILL_FILE}", diagnostics=shown),
        )
    findings = scan_skill(staged)
    danger = [f for f in findings if f.severity == "danger"]
    if danger and not force and refuse_danger:
        first_danger = danger[0]
        at = f":{first_danger.line}" if first_danger.line else ""
        raise _failed(
            "scan",
            f"{name}/{first_danger.file}{at}: {first_danger.code}: {first_danger.message} "
            f"({len(danger)} danger finding{'s' if len(danger) > 1 else ''}; "
            "force installs it anyway)",
            skill=name,
            findings=wire_findings(danger, name),
        )
    try:
        files = file_digests(staged, max_files=max_files, max_bytes=max_bytes)
    except TreeTooLarge as exc:
        raise _failed("limits", str(exc), skill=name) from None
    return _Staged(name, staged, files, digest_of_files(files), findings)


def _owned_link(target: InstallTarget, path: str, canonical: str, digest: str) -> bool:
    """Whether ``path`` is what an install of ours put there: a link to the canonical folder,
    or a copy with the locked digest (never anything reached through a link leading out)."""
    if _confined(target, path) is None:
        return False
    if os.path.islink(path):
        return os.path.realpath(path) == os.path.realpath(canonical)
    if os.path.isdir(path):
        files = _files_within(target, path)
        return files is not None and digest_of_files(files) == digest
    return False


def _files_within(target: InstallTarget, folder: str) -> dict[str, str] | None:
    """The per-file digests of ``folder`` when it is within the largest an install can be,
    else None (a tree of 5 GB or 300 000 folders is not hashed to find that out)."""
    try:
        return file_digests(folder, max_files=target.max_files, max_bytes=target.max_bytes)
    except (OSError, TreeTooLarge):
        return None


def _copy_into(target: InstallTarget, src: str, new: str) -> None:
    """An agent's copy of an installed skill: its files only, never what a link in it leads to."""
    copy_skill(src, new, max_files=target.max_files, max_bytes=target.max_bytes, links="skip")


def _place(
    txn: Transaction,
    target: InstallTarget,
    staged: _Staged,
    agents: list[str],
    mode: str,
    *,
    owned: LockEntry | None,
    force: bool,
    adopted: str | None = None,
) -> list[str]:
    """Plan the canonical folder and the agents' links or copies; returns the link paths.

    ``adopted``: the folder the skill is adopted from (staged from it): it is replaced by the
    agent's link, or taken away when no agent needs one there, without ``force``."""
    canonical = _writable(target, target.canonical(staged.name))
    # The lock owns the canonical folder it names: a folder (not a link or file put there).
    ours = owned is not None and os.path.isdir(canonical) and not os.path.islink(canonical)
    if os.path.lexists(canonical) and not force and not ours and adopted != canonical:
        raise SkillsdError(
            f"{canonical} already exists and the lock file does not own it (force replaces it)",
            AlreadyExistsData(skill=staged.name, path=canonical),
        )
    txn.put(canonical, staged.path)
    links = [_writable(target, link) for link in agent_paths(target, staged.name, agents)]
    for link in links:
        if link != adopted:
            _check_replaceable(target, staged.name, link, canonical, owned, force=force)
        new = txn.new_path(link, "link")
        linked = False
        if mode == "link":
            try:
                os.symlink(os.path.relpath(canonical, os.path.dirname(link)), new)
                linked = True
            except OSError:
                linked = False  # no links here (some filesystems): a copy instead
        if not linked:
            _copy_into(target, staged.path, new)
        txn.put(link, new)
    if adopted is not None and adopted != canonical and adopted not in links:
        # Every agent reading it reads the canonical folder too: moved, nothing left behind.
        txn.put(_writable(target, adopted), None)
    if owned is not None:
        for old in agent_paths(target, staged.name, owned.agents):
            if old not in links and _owned_link(target, old, canonical, owned.digest):
                txn.put(old, None)
    return links


def _check_replaceable(
    target: InstallTarget,
    name: str,
    link: str,
    canonical: str,
    owned: LockEntry | None,
    *,
    force: bool,
) -> None:
    """``already_exists`` unless what is at an agent's ``link`` path is ours to replace:
    nothing, a link to the canonical folder, or (for a locked skill) a copy with its digest.
    A folder of the user's own, or a copy they added files to, is never replaced unasked."""
    if force or not os.path.lexists(link):
        return
    if os.path.islink(link) and os.path.realpath(link) == os.path.realpath(canonical):
        return
    if owned is not None and _owned_link(target, link, canonical, owned.digest):
        return
    raise SkillsdError(
        f"{link} already exists and the lock file does not own it (force replaces it)",
        AlreadyExistsData(skill=name, path=link),
    )


def _skill_dir(tree: str, entry: LockEntry, name: str) -> str:
    """Where a locked skill sits in a fetched tree: its recorded path, else found by name."""
    folder = os.path.normpath(os.path.join(tree, entry.path or "."))
    if os.path.isfile(os.path.join(folder, SKILL_FILE)):
        return folder
    try:
        found = select_skills(find_skills(tree), [name])
    except SourceError as exc:
        raise _failed("resolve", f"{name}: {exc.message}", skill=name) from None
    return os.path.join(tree, found[0].rel)


def _entry_source(entry: LockEntry, target: InstallTarget, name: str) -> Source:
    try:
        return parse_source(entry.source, base=_source_base(target), home=target.home)
    except SourceError as exc:
        raise _failed(
            "resolve", f"{name}: {exc.message}", skill=name, source=entry.source
        ) from None


# -- install ------------------------------------------------------------------------------------


def _prepare(target: InstallTarget) -> LockFile:
    """Under the install lock: finish an interrupted change, clear stale staging, read."""
    recover(target)
    sweep_staging(target)
    return read_lock(target)


def _installed_skill(
    target: InstallTarget, name: str, entry: LockEntry, links: list[str]
) -> InstalledSkill:
    return InstalledSkill(
        name=name,
        path=target.canonical(name),
        source=entry.source,
        digest=entry.digest,
        commit=entry.commit,
        links=links,
    )


@_reporting_file_errors
def install(params: InstallParams, ctx: InstallContext) -> InstallResult:
    """``skills.install``: fetch, check and place the skills of a source, and lock them."""
    source = _parse(params.source, ctx.cwd, ctx.home)
    ref = params.ref or source.ref
    path = params.path or source.path
    target = _target(ctx, params.scope)
    agents = resolve_agents(params.agents, target)
    with install_lock(target):
        lock = _prepare(target)
        workdir = tempfile.mkdtemp(prefix="skillsd-fetch-")
        try:
            fetched = _fetch(source, ref, ctx, target, workdir)
            pause_point("fetched", ctx.env)
            try:
                found = find_skills(fetched.tree, path=path, default_name=source.default_name)
                if not found:
                    at = f" at {path}" if path else ""
                    raise SourceError(f"no {SKILL_FILE} found in {source.text}{at}")
                chosen = select_skills(found, params.names)
            except SourceError as exc:
                raise _failed("resolve", exc.message, source=source.text) from None
            txn = Transaction(target)
            try:
                result = _install_chosen(
                    txn, target, lock, chosen, fetched, source, ref, agents, params, ctx
                )
            except BaseException:
                txn.abandon()
                raise
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return result


def _install_chosen(
    txn: Transaction,
    target: InstallTarget,
    lock: LockFile,
    chosen: list[FoundSkill],
    fetched: _Fetched,
    source: Source,
    ref: str | None,
    agents: list[str],
    params: InstallParams,
    ctx: InstallContext,
) -> InstallResult:
    staged_all: list[tuple[_Staged, list[str], LockEntry]] = []
    findings: list[ScanFinding] = []
    skills = dict(lock.skills)
    source_text = _lock_source_text(source, target)
    for skill in chosen:
        owned = lock.skills.get(skill.name)
        src = os.path.normpath(os.path.join(fetched.tree, skill.rel))
        adopted = _adopted_from(target, fetched.tree, skill) if source.kind == "local" else None
        skill_source, skill_agents = source_text, agents
        if adopted is not None:
            # Its only copy becomes the canonical folder, so that is its source from now on:
            # restore finds it there, update records the edits made to it.
            canonical = target.canonical(skill.name)
            src = adopted if os.path.isdir(adopted) and not os.path.islink(adopted) else canonical
            skill_source = _lock_source_text(
                Source("local", canonical, relative_source_text(canonical, target.root)), target
            )
            skill_agents = list(agents_in_order([*agents, *_adopting_agents(target, adopted)]))
            ctx.say(f"adopting {adopted} as {canonical}")
        if owned is not None and owned.source != skill_source and not params.force:
            raise SkillsdError(
                f"{skill.name} is installed from {owned.source}; force replaces it with the "
                f"one from {skill_source}",
                AlreadyExistsData(skill=skill.name, path=target.canonical(skill.name)),
            )
        staged = _stage(txn, target, skill.name, src, ctx, force=params.force)
        links = _place(
            txn,
            target,
            staged,
            skill_agents,
            params.mode,
            owned=owned,
            force=params.force,
            adopted=adopted,
        )
        entry = LockEntry(
            source=skill_source,
            source_type=source.kind,
            digest=staged.digest,
            agents=skill_agents,
            mode=params.mode,
            installed_at=_now(),
            ref=ref,
            commit=fetched.commit,
            path=None if skill.rel == "." or adopted is not None else skill.rel,
        )
        skills[skill.name] = entry
        staged_all.append((staged, links, entry))
        findings.extend(wire_findings(staged.findings, skill.name))
    pause_point("staged", ctx.env)
    new_lock = LockFile(skills=dict(sorted(skills.items())))
    ctx.say(f"placing {len(staged_all)} skill{'s' if len(staged_all) != 1 else ''}")
    txn.commit(encode_lock(new_lock), ctx.env)
    for staged, _links, _entry in staged_all:
        save_manifest(target, staged.digest, staged.files)
    return InstallResult(
        installed=[
            _installed_skill(target, s.name, entry, links) for s, links, entry in staged_all
        ],
        findings=findings,
        lock=target.lock_path,
    )


# -- installed ----------------------------------------------------------------------------------


def _status(target: InstallTarget, name: str, entry: LockEntry) -> LockedSkill:
    canonical = target.canonical(name)
    status = "ok"
    files: list[str] = []
    broken: list[str] = []
    if (
        _confined(target, canonical) is None
        or not os.path.isdir(canonical)
        or os.path.islink(canonical)
    ):
        status = "missing"
    else:
        current = _files_within(target, canonical) or {}
        if digest_of_files(current) != entry.digest:
            status = "modified"
            recorded = load_manifest(target, entry.digest)
            if recorded is not None:
                files = compare_files(recorded, current).names()
        # A link must lead to the canonical folder; a copy (mode copy, or where links failed)
        # must hold the locked files.
        broken = [
            link
            for link in agent_paths(target, name, entry.agents)
            if not _owned_link(target, link, canonical, entry.digest)
        ]
        if broken and status == "ok":
            status = "links-broken"
    return LockedSkill(
        name=name,
        status=status,  # type: ignore[arg-type]
        path=canonical,
        source=entry.source,
        source_type=entry.source_type,
        digest=entry.digest,
        agents=entry.agents,
        mode=entry.mode,
        installed_at=entry.installed_at,
        ref=entry.ref,
        commit=entry.commit,
        files=files,
        broken_links=broken,
    )


@_reporting_file_errors
def installed(params: InstalledParams, ctx: InstallContext) -> InstalledResult:
    """``skills.installed``: every locked skill with its state on disk."""
    target = _target(ctx, params.scope)
    if os.path.exists(target.lock_path) or os.path.exists(target.journal_path):
        # Tidy what a killed install left, unless an install is running right now.
        with install_lock(target, wait=False) as held:
            if held:
                _prepare(target)
    lock = read_lock(target)
    return InstalledResult(
        skills=[_status(target, name, entry) for name, entry in sorted(lock.skills.items())],
        lock=target.lock_path,
    )


# -- update -------------------------------------------------------------------------------------


def _selected(lock: LockFile, names: list[str] | None) -> list[str]:
    if not names:
        return sorted(lock.skills)
    for name in names:
        if name not in lock.skills:
            raise _not_installed(name, lock)
    return list(dict.fromkeys(names))


def _not_installed(name: str, lock: LockFile) -> SkillsdError:
    suggestions = closest_names(name, list(lock.skills))
    hint = f" (did you mean {', '.join(suggestions)}?)" if suggestions else ""
    return SkillsdError(
        f"{name}: not installed by the lock file{hint}",
        NotInstalledData(skill=name, suggestions=suggestions),
    )


def _current_files(target: InstallTarget, name: str, entry: LockEntry) -> dict[str, str] | None:
    """The locked version's files: recorded, or read from disk when it is unmodified."""
    recorded = load_manifest(target, entry.digest)
    if recorded is not None:
        return recorded
    canonical = _confined(target, target.canonical(name))
    if canonical is None:
        return None
    on_disk = _files_within(target, canonical)
    return on_disk if on_disk is not None and digest_of_files(on_disk) == entry.digest else None


@_reporting_file_errors
def update(params: UpdateParams, ctx: InstallContext) -> UpdateResult:
    """``skills.update``: re-resolve each locked skill's source; apply unless ``check``."""
    target = _target(ctx, params.scope)
    with install_lock(target):
        lock = _prepare(target)
        names = _selected(lock, params.names)
        workdir = tempfile.mkdtemp(prefix="skillsd-update-")
        txn = Transaction(target)
        try:
            return _update(params, ctx, target, lock, names, workdir, txn)
        except BaseException:
            txn.abandon()
            raise
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def _update(
    params: UpdateParams,
    ctx: InstallContext,
    target: InstallTarget,
    lock: LockFile,
    names: list[str],
    workdir: str,
    txn: Transaction,
) -> UpdateResult:
    updates: list[SkillUpdate] = []
    findings: list[ScanFinding] = []
    skills = dict(lock.skills)
    fetched_by_source: dict[tuple[str, str | None], _Fetched] = {}
    # One ls-remote per source and ref, however many of its skills are locked.
    remote_by_source: dict[tuple[str, str | None], str | None] = {}
    staged_all: list[_Staged] = []
    for index, name in enumerate(names):
        entry = lock.skills[name]
        source = _entry_source(entry, target, name)
        key = (entry.source, entry.ref)
        if source.kind == "git":
            if key not in remote_by_source:
                try:
                    ctx.say(f"checking {entry.source}")
                    remote_by_source[key] = remote_commit(source.location, entry.ref, env=ctx.env)
                except GitError as exc:
                    raise _failed(
                        "fetch", f"{name}: {exc}", skill=name, source=entry.source
                    ) from None
            now = remote_by_source[key]
            if now is not None and now == entry.commit:
                continue
        fetched = fetched_by_source.get(key)
        if fetched is None:
            fetched = _fetch(source, entry.ref, ctx, target, _subdir(workdir, index))
            fetched_by_source[key] = fetched
        src = _skill_dir(fetched.tree, entry, name)
        staged = _stage(txn, target, name, src, ctx, force=params.force, refuse_danger=False)
        if staged.digest == entry.digest:
            if fetched.commit and fetched.commit != entry.commit and not params.check:
                skills[name] = _moved(entry, fetched.commit, entry.digest)
            shutil.rmtree(staged.path, ignore_errors=True)
            continue
        before = _current_files(target, name, entry)
        changes = compare_files(before or {}, staged.files)
        is_git = source.kind == "git"
        update_info = SkillUpdate(
            name=name,
            from_=(entry.commit or entry.digest) if is_git else entry.digest,
            to=(fetched.commit or staged.digest) if is_git else staged.digest,
            files=_wire_changes(changes),
        )
        updates.append(update_info)
        if params.check:
            update_info.skipped = "check"
            continue
        local = _status(target, name, entry)
        # An adopted skill's source is its canonical folder: its edits are what update records.
        if (
            local.status == "modified"
            and not params.force
            and not _self_sourced(source, target, name)
        ):
            shown = ", ".join(local.files) or "files unknown"
            update_info.skipped = f"modified locally ({shown}); force overwrites"
            continue
        danger = [f for f in staged.findings if f.severity == "danger"]
        if danger and not params.force:
            update_info.skipped = f"the scan found {len(danger)} danger findings; force installs"
            findings.extend(wire_findings(danger, name))
            continue
        _place(txn, target, staged, entry.agents, entry.mode, owned=entry, force=params.force)
        skills[name] = _moved(entry, fetched.commit, staged.digest)
        staged_all.append(staged)
        update_info.applied = True
        findings.extend(wire_findings(staged.findings, name))
    new_lock = LockFile(skills=dict(sorted(skills.items())))
    if not params.check and (staged_all or new_lock != lock):
        txn.commit(encode_lock(new_lock), ctx.env)
        for staged in staged_all:
            save_manifest(target, staged.digest, staged.files)
    else:
        txn.abandon()
    return UpdateResult(updates=updates, findings=findings, lock=target.lock_path)


def _self_sourced(source: Source, target: InstallTarget, name: str) -> bool:
    """Whether a locked skill's source is its own canonical folder (an adopted skill)."""
    return source.kind == "local" and os.path.realpath(source.location) == os.path.realpath(
        target.canonical(name)
    )


def _subdir(workdir: str, index: int) -> str:
    """A fresh folder for one source's fetch (a download is written into it)."""
    folder = os.path.join(workdir, str(index))
    os.makedirs(folder, exist_ok=True)
    return folder


def _moved(entry: LockEntry, commit: str | None, digest: str) -> LockEntry:
    return LockEntry(
        source=entry.source,
        source_type=entry.source_type,
        digest=digest,
        agents=entry.agents,
        mode=entry.mode,
        installed_at=_now(),
        ref=entry.ref,
        commit=commit,
        path=entry.path,
    )


# -- remove -------------------------------------------------------------------------------------


@_reporting_file_errors
def remove(params: RemoveParams, ctx: InstallContext) -> RemoveResult:
    """``skills.remove``: the skill, the links and copies its install made, its lock entry."""
    target = _target(ctx, params.scope)
    with install_lock(target):
        lock = _prepare(target)
        entry = lock.skills.get(params.name)
        if entry is None:
            raise _not_installed(params.name, lock)
        canonical = _writable(target, target.canonical(params.name))
        txn = Transaction(target)
        removed: list[str] = []
        try:
            for link in agent_paths(target, params.name, entry.agents):
                if os.path.lexists(link) and _owned_link(target, link, canonical, entry.digest):
                    txn.put(link, None)
                    removed.append(link)
            if os.path.lexists(canonical):
                txn.put(canonical, None)
                removed.insert(0, canonical)
            skills = {n: e for n, e in lock.skills.items() if n != params.name}
            txn.commit(encode_lock(LockFile(skills=skills)), ctx.env)
        except BaseException:
            txn.abandon()
            raise
    return RemoveResult(removed=removed, lock=target.lock_path)


# -- restore ------------------------------------------------------------------------------------


@_reporting_file_errors
def restore(params: RestoreParams, ctx: InstallContext) -> RestoreResult:
    """``skills.restore``: every locked skill as locked (at its commit, with its digest), or
    nothing: a digest that differs refuses the whole restore, naming the files."""
    target = _target(ctx, params.scope)
    with install_lock(target):
        lock = _prepare(target)
        workdir = tempfile.mkdtemp(prefix="skillsd-restore-")
        txn = Transaction(target)
        try:
            result = _restore(params, ctx, target, lock, workdir, txn)
        except BaseException:
            txn.abandon()
            raise
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return result


def _restore(
    params: RestoreParams,
    ctx: InstallContext,
    target: InstallTarget,
    lock: LockFile,
    workdir: str,
    txn: Transaction,
) -> RestoreResult:
    restored: list[InstalledSkill] = []
    unchanged: list[str] = []
    findings: list[ScanFinding] = []
    staged_all: list[_Staged] = []
    fetched_by_source: dict[tuple[str, str | None], _Fetched] = {}
    for index, (name, entry) in enumerate(sorted(lock.skills.items())):
        state = _status(target, name, entry)
        if state.status == "ok":
            unchanged.append(name)
            continue
        if state.status == "links-broken":
            links = _relink(txn, target, name, entry, force=params.force)
            restored.append(_installed_skill(target, name, entry, links))
            continue
        if state.status == "modified" and not params.force:
            shown = ", ".join(state.files) or "files unknown"
            raise SkillsdError(
                f"{name}: modified locally ({shown}); force replaces it with the locked version",
                DigestMismatchData(skill=name, expected=entry.digest, files=state.files),
            )
        source = _entry_source(entry, target, name)
        revision = entry.commit or entry.ref
        key = (entry.source, revision)
        fetched = fetched_by_source.get(key)
        if fetched is None:
            fetched = _fetch(source, revision, ctx, target, _subdir(workdir, index))
            fetched_by_source[key] = fetched
        src = _skill_dir(fetched.tree, entry, name)
        staged = _stage(txn, target, name, src, ctx, force=params.force)
        if staged.digest != entry.digest:
            before = _current_files(target, name, entry)
            files = compare_files(before, staged.files).names() if before is not None else []
            shown = ", ".join(files) if files else "files unknown on this machine"
            raise SkillsdError(
                f"{name}: the source no longer has the locked digest ({shown}); "
                f"expected {entry.digest}, found {staged.digest}",
                DigestMismatchData(
                    skill=name, expected=entry.digest, actual=staged.digest, files=files
                ),
            )
        links = _place(
            txn, target, staged, entry.agents, entry.mode, owned=entry, force=params.force
        )
        staged_all.append(staged)
        restored.append(_installed_skill(target, name, entry, links))
        findings.extend(wire_findings(staged.findings, name))
    if restored:
        pause_point("staged", ctx.env)
        txn.commit(encode_lock(lock), ctx.env)
        for staged in staged_all:
            save_manifest(target, staged.digest, staged.files)
    else:
        txn.abandon()
    return RestoreResult(
        restored=restored, unchanged=unchanged, findings=findings, lock=target.lock_path
    )


def _relink(
    txn: Transaction, target: InstallTarget, name: str, entry: LockEntry, *, force: bool
) -> list[str]:
    """Plan the agents' links (or copies) of an intact canonical folder again: only where
    nothing is, or with ``force``; a copy takes the folder's files, never a link's target."""
    canonical = _writable(target, target.canonical(name))
    links = [_writable(target, link) for link in agent_paths(target, name, entry.agents)]
    for link in links:
        if _owned_link(target, link, canonical, entry.digest):
            continue
        _check_replaceable(target, name, link, canonical, None, force=force)
        new = txn.new_path(link, "link")
        try:
            if entry.mode != "link":
                raise OSError("copy")
            os.symlink(os.path.relpath(canonical, os.path.dirname(link)), new)
        except OSError:
            _copy_into(target, canonical, new)
        txn.put(link, new)
    return links


# -- scan ---------------------------------------------------------------------------------------


def scan_path(path: str) -> ScanResult:
    """``skills.scan {path}``: a skill folder, or every skill found in a tree."""
    if not os.path.isdir(path):
        raise SkillsdError(f"path: {path} is not a folder", InvalidParamsData(field="path"))
    if os.path.isfile(os.path.join(path, SKILL_FILE)):
        skills = [(os.path.basename(os.path.abspath(path)), path)]
    else:
        found = find_skills(path, default_name=os.path.basename(os.path.abspath(path)))
        skills = [(s.name, os.path.join(path, s.rel)) for s in found]
        if not skills:
            raise SkillsdError(
                f"path: no {SKILL_FILE} found in {path}", InvalidParamsData(field="path")
            )
    findings: list[ScanFinding] = []
    for name, folder in skills:
        findings.extend(wire_findings(scan_skill(folder), name))
    return ScanResult(findings=findings)
