"""Building a catalog: the cold build from a plan's scan, and the incremental refresh from file
events (the :class:`~skillsd.core.catalog.skill_catalog.Catalog` type itself is in
:mod:`skillsd.core.catalog.skill_catalog`).

:func:`build_catalog` scans the plan's roots (:mod:`skillsd.core.discovery.fs_roots`) and parses
each ``SKILL.md`` with :func:`skillsd.core.skill.fs_skillfile.read_skill_file`; given the previous
catalog it re-parses only the files whose :class:`StatKey` (mtime_ns, size, inode) changed, so an
editor's atomic save (a new inode) counts as a change while untouched files cost one ``stat``.
:func:`refresh_catalog` applies file events: an event inside a known skill directory re-lists that
directory alone; anything structural falls back to the full rescan.

Builds run with the cyclic garbage collector paused (:func:`_gc_paused`): a build allocates
hundreds of thousands of container objects that all outlive it, and none of them form cycles, so
every collection the allocations would trigger mid-build is wasted work (about 10 % of a cold
10 000-skill build). The young objects are examined once, by the first collection after it.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import msgspec

from skillsd.core.catalog.fs_copy_detection import copies_of
from skillsd.core.catalog.skill_catalog import (
    BuildStats,
    Catalog,
    _Entry,
    _is_disabled,
    _swap_in,
    skill_id,
)
from skillsd.core.discovery.fs_commands import CommandScan, scan_commands
from skillsd.core.discovery.fs_plugin_roots import plugin_skill_folders
from skillsd.core.discovery.fs_roots import (
    FoundSkill,
    Root,
    RootPlan,
    find_skill_file,
    scan_plan,
    skill_from_listing,
)
from skillsd.core.policy.config import DEFAULT_CONFIG, Config
from skillsd.core.remote.fs_remote_roots import (
    remote_grants_withheld,
    remote_stale_note,
    with_remote_roots,
)
from skillsd.core.skill.fs_skillfile import SKILL_FILE, ParsedSkillFile, read_skill_file
from skillsd_protocol import Diagnostic, SkillLoadError, SkillMetadata

__all__ = ["build_catalog", "refresh_catalog"]


#: Who paused the collector ("owner" -> a token), see :func:`_gc_paused`.
_GC_PAUSE: dict[str, object] = {}


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block, then restore the state it had before.

    Builds may run on several threads at once (the daemon builds in worker threads), and a plain
    save/disable/restore per build could observe another build's pause and leave the collector
    off for good. So only one holder at a time owns the pause: ``dict.setdefault`` is atomic, and
    the owner restores the collector *before* giving the ownership up, so the next owner always
    saves the real state. Builds that start while another one owns the pause (or nested builds)
    change nothing; they run with whatever state the owner set.
    """
    token = object()
    if _GC_PAUSE.setdefault("owner", token) is not token:
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        del _GC_PAUSE["owner"]


def _load_message(diagnostics: list[Diagnostic]) -> str:
    errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
    if not errors:
        return "invalid SKILL.md"
    extra = len(errors) - 1
    return errors[0].message + (f" (and {extra} more problem{'s' * (extra > 1)})" if extra else "")


def _entry_for(found: FoundSkill, parsed: ParsedSkillFile, sid: str) -> _Entry:
    """The catalog's view of one parsed file: its listed metadata or its load error."""
    fields = parsed.fields
    if fields is None:
        error = SkillLoadError(
            path=found.path,
            message=_load_message(parsed.diagnostics),
            diagnostics=parsed.diagnostics,
        )
        return _Entry(found=found, id=sid, base=None, error=error)
    stat = parsed.stat or found.stat
    if stat is None:  # read_skill_file stats every file it could parse; this cannot happen
        raise AssertionError(f"{found.path}: accepted without a stat key")
    # An accepted skill lists warnings and info only; an error here would be a validator slip.
    shown = [
        msgspec.structs.replace(d, severity="warning") if d.severity == "error" else d
        for d in parsed.diagnostics
    ]
    base = SkillMetadata(
        id=sid,
        name=fields.name,
        description=fields.description,
        path=found.path,
        dir=found.dir,
        scope=found.root.scope,
        root=found.root.path,
        mtime_ms=stat.mtime_ns / 1_000_000,
        size=stat.size,
        enabled=True,
        resources=found.resources,
        diagnostics=shown,
        license=fields.license,
        compatibility=fields.compatibility,
        metadata=fields.metadata,
        allowed_tools=fields.allowed_tools,
        extra_fields=fields.extra_fields,
        invocation=fields.invocation,
        host=fields.host,
        agents=_agents_list(found.agents),
        plugin=found.root.plugin,
        remote=found.root.remote,
        qualified_name=_qualified(found.root, fields.name),
    )
    if found.root.remote is not None and not found.root.remote_trusted and fields.allowed_tools:
        base = remote_grants_withheld(base)
    if found.root.remote_stale:
        base = remote_stale_note(base)
    return _Entry(found=found, id=sid, base=base, error=None)


def _qualified(root: Root, name: str) -> str | None:
    if root.remote is not None:
        return f"{root.remote.name}:{name}"
    plugin = root.plugin
    return f"{plugin.name}:{name}" if plugin is not None and root.namespaced else None


#: One shared (read-only) ``agents`` list per combination: 10 000 skills hold a handful of lists.
_AGENT_LISTS: dict[tuple[str, ...], list[str]] = {}


def _agents_list(agents: tuple[str, ...]) -> list[str]:
    shared = _AGENT_LISTS.get(agents)
    if shared is None:
        shared = _AGENT_LISTS.setdefault(agents, list(agents))
    return shared


def _moved(entry: _Entry, found: FoundSkill) -> _Entry:
    """An unchanged file reached the same way, whose root or resource counts changed."""
    base = entry.base
    if base is not None:
        base = msgspec.structs.replace(
            base,
            scope=found.root.scope,
            root=found.root.path,
            resources=found.resources,
            agents=_agents_list(found.agents),
            plugin=found.root.plugin,
            remote=found.root.remote,
            qualified_name=_qualified(found.root, base.name),
        )
    return _Entry(found=found, id=entry.id, base=base, error=entry.error)


def _duplicate_warning(skill: SkillMetadata, others: list[SkillMetadata]) -> Diagnostic:
    return Diagnostic(
        severity="warning",
        code="name.duplicate",
        field="name",
        message=f"other skills are also named {skill.name!r}: "
        + ", ".join(s.path for s in others)
        + "; refer to this one by path or id",
        path=skill.path,
    )


def _content_of(skill_id: str, copies: dict[str, str]) -> str:
    """The id standing for a skill's content: the first skill with the same files."""
    return copies.get(skill_id, skill_id)


def _unopened(path: str, problems: list[Diagnostic]) -> Diagnostic:
    """The scan-level diagnostic for a listed SKILL.md that could not be opened."""
    problem = problems[0] if problems else None
    if problem is None or problem.code == "file.missing":
        code, message = "discovery.vanished", "file vanished during the scan"
    else:
        code, message = "discovery.unreadable", problem.message
    return Diagnostic(severity="warning", code=code, message=f"{path}: {message}", path=path)


# Complex by design: one pass over every parsed skill: ids, names, copies, errors.
def _assemble(  # noqa: C901
    plan: RootPlan,
    config: Config,
    found_skills: Iterable[FoundSkill],
    scan_diagnostics: list[Diagnostic],
    missing_roots: list[Root],
    dirs_scanned: int,
    disabled: frozenset[str],
    previous: Catalog | None,
    commands: CommandScan,
    walked: tuple[str, ...],
) -> Catalog:
    """Turn scan results into a catalog, reusing every parse (and listed entry) still valid.

    One pass over the found skills builds every index; it is the whole cost of a warm refresh,
    so the common case (an unchanged entry) is a dict lookup and an identity check.
    """
    mode = config.validation
    old_entries = previous._entries if previous is not None and previous.mode == mode else {}
    entries: dict[str, _Entry] = {}
    diagnostics = [*scan_diagnostics, *commands.diagnostics]
    parsed_count = reused_count = 0
    skills: list[SkillMetadata] = []
    errors: list[SkillLoadError] = []
    by_name: dict[str, list[SkillMetadata]] = {}
    by_real_path: dict[str, SkillMetadata] = {}
    real_path_of: dict[str, str] = {}
    errors_by_real_path: dict[str, SkillLoadError] = {}
    aliases: dict[str, str] = {}
    model_hidden: list[str] = []
    for found in found_skills:
        real = found.real_path
        old = old_entries.get(real)
        if old is not None and old.found is found:
            reused_count += 1
            entry = old
        elif (
            old is not None
            and old.found.stat == found.stat
            and old.found.host_stat == found.host_stat
            and old.found.path == found.path
            and old.found.dir == found.dir
            # A remote marked trusted (or no longer) changes what its skills may grant.
            and old.found.root.remote_trusted == found.root.remote_trusted
            and old.found.root.remote_stale == found.root.remote_stale
        ):
            reused_count += 1
            # Same file version: the parse stands; the entry too unless root/resources moved.
            entry = old if old.found == found else _moved(old, found)
        else:
            dir_name = os.path.basename(found.dir)
            parsed = read_skill_file(
                found.path, mode=mode, dir_name=dir_name, openai_yaml=found.host_stat is not None
            )
            parsed_count += 1
            if parsed.stat is None and parsed.fields is None:
                # Gone (or unopenable) between the listing and the read: a scan-level problem,
                # not a bad skill.
                diagnostics.append(_unopened(found.path, parsed.diagnostics))
                continue
            if found.stat is None:
                found.stat = parsed.stat  # a first build skips the scan's stat: fstat is enough
            entry = _entry_for(found, parsed, old.id if old is not None else skill_id(real))
        entries[real] = entry
        if found.path is not real and found.path != real:
            aliases[found.dir] = real
        base = entry.base
        if base is not None:
            skills.append(base)
            by_real_path[real] = base
            real_path_of[base.id] = real
            if not base.invocation.model:
                model_hidden.append(base.id)
            group = by_name.get(base.name)
            if group is None:
                by_name[base.name] = [base]
            else:
                group.append(base)
        elif entry.error is not None:
            errors.append(entry.error)
            errors_by_real_path[real] = entry.error

    # Copies only for skills that differ from their cached entry: duplicates and disabled ones.
    # A plugin's namespaced skills (plugin:skill) never clash with another name; a remote's
    # (remote:skill) do: a remote never silently shadows a local skill, nor the reverse.
    groups = [
        shared
        for group in by_name.values()
        if len(group) > 1
        and len(shared := [s for s in group if s.qualified_name is None or s.remote]) > 1
    ]
    copies = copies_of(groups)
    decorated: dict[str, SkillMetadata] = {}
    for group in groups:
        for skill in group:
            same = _content_of(skill.id, copies)
            others = [s for s in group if s is not skill and _content_of(s.id, copies) != same]
            changes: dict[str, object] = {}
            if skill.id in copies:
                changes["copy_of"] = copies[skill.id]
            if others:
                changes["same_name"] = [s.id for s in others]
                changes["diagnostics"] = [*skill.diagnostics, _duplicate_warning(skill, others)]
            if changes:
                decorated[skill.id] = msgspec.structs.replace(skill, **changes)
    if disabled:
        for skill in skills:
            if _is_disabled(skill, real_path_of[skill.id], disabled):
                current = decorated.get(skill.id, skill)
                decorated[skill.id] = msgspec.structs.replace(current, enabled=False)
    if decorated:
        skills, by_name, by_real_path = _swap_in(
            decorated, skills, by_name, by_real_path, real_path_of
        )

    generation = 1
    if previous is not None:
        unchanged = (
            previous.skills == skills
            and previous.errors == errors
            and previous.diagnostics == diagnostics
            and previous.commands.files == commands.files
        )
        generation = previous.generation + (0 if unchanged else 1)
    return Catalog(
        plan=plan,
        config=config,
        generation=generation,
        skills=skills,
        errors=errors,
        diagnostics=diagnostics,
        missing_roots=missing_roots,
        stats=BuildStats(parsed=parsed_count, reused=reused_count, dirs_scanned=dirs_scanned),
        disabled=disabled,
        by_id={s.id: s for s in skills},
        by_name=by_name,
        by_real_path=by_real_path,
        real_path_of=real_path_of,
        errors_by_real_path=errors_by_real_path,
        model_hidden=frozenset(model_hidden),
        commands=commands,
        walked=walked,
        _entries=entries,
        _scan_diagnostics=scan_diagnostics,
        _aliases=aliases,
    )


def build_catalog(
    plan: RootPlan,
    config: Config = DEFAULT_CONFIG,
    *,
    disabled: Collection[str] = frozenset(),
    previous: Catalog | None = None,
    trusted: bool = False,
) -> Catalog:
    """Scan ``plan``'s roots and build the catalog.

    With ``previous`` (built in the same validation mode), files whose stat key, reached path and
    directory are unchanged reuse the earlier parse (``stats.reused``); the rest are parsed
    (``stats.parsed``). The generation is 1 for a first build, else the previous one, plus 1 when
    skills, errors or diagnostics differ. ``disabled`` holds ids or skill dir/``SKILL.md`` paths.
    Pass the base catalog as ``previous``, not a :meth:`Catalog.with_overrides` view.
    ``trusted`` is the workspace trust of the plan's repository root: a plugin only the
    repository's settings enable is read only then.
    """
    # Without reusable parses every SKILL.md is opened and fstat'ed anyway: no stat in the scan.
    reusable = previous is not None and previous.mode == config.validation
    plan, plugin_problems = _with_plugins(plan, trusted)
    plan = with_remote_roots(plan, config, trusted)
    with _gc_paused():
        result = scan_plan(plan, config, stat_files=reusable)
        return _assemble(
            plan,
            config,
            result.skills,
            [*plugin_problems, *result.diagnostics, *_config_warnings(config)],
            result.missing_roots,
            result.dirs_scanned,
            frozenset(disabled),
            previous,
            scan_commands(plan.command_dirs),
            tuple(result.walked),
        )


def _config_warnings(config: Config) -> list[Diagnostic]:
    unknown = [
        Diagnostic(severity="warning", code="config.unknown_key", message=message, path=path)
        for path, message in config.unknown_keys
    ]
    return unknown + [
        Diagnostic(
            severity="warning",
            code="config.root_outside_repository",
            message=(
                f"roots.extra entry {entry!r} of the project config is outside the repository: "
                "ignored (only your own config and the client may add roots elsewhere)"
            ),
            field="roots.extra",
        )
        for entry in config.ignored_extra_roots
    ]


def refresh_catalog(previous: Catalog, changed_paths: Iterable[str]) -> Catalog:
    """Apply file-change events (absolute paths) to ``previous`` with as little I/O as possible.

    A path inside a known skill directory (as reached or real) re-lists only that directory: its
    ``SKILL.md`` is re-parsed if its stat key changed and its resource counts are recounted; a
    removed skill directory drops the skill. Anything else (a new or removed skill, a category
    folder, a root appearing, a ``SKILL.md`` deleted or retargeted) falls back to a full rescan
    with parse reuse, which is always correct. A path in a command folder re-reads the command
    files. Same config, plan and disabled set as ``previous``.
    """
    changed = {os.path.abspath(p) for p in changed_paths}
    if not changed:
        return previous
    with _gc_paused():
        return _refresh(previous, changed)


def _in_commands(path: str, command_dirs: tuple[str, ...]) -> bool:
    """Whether ``path`` is a command folder or inside one."""
    return any(path == d or path.startswith(d + os.sep) for d in command_dirs)


def _refresh(previous: Catalog, changed: set[str]) -> Catalog:
    commands = previous.commands
    command_dirs = previous.plan.command_dirs
    in_commands = {p for p in changed if _in_commands(p, command_dirs)}
    if in_commands:
        commands = scan_commands(command_dirs)
        changed = changed - in_commands
    # Anything else (``.claude`` itself appearing, say) goes the skills' way: a path no skill
    # owns is a full rescan, which reads the command folders again too.
    dirty: dict[str, FoundSkill] = {}
    for path in changed:
        skill = _owning_skill(path, previous)
        if skill is None:
            return _full_rebuild(previous)
        dirty[skill.real_path] = skill

    diagnostics: list[Diagnostic] = []
    replaced: dict[str, FoundSkill | None] = {}
    for real, old in dirty.items():
        try:
            with os.scandir(old.dir) as it:
                listing = list(it)
        except FileNotFoundError:
            replaced[real] = None  # the whole skill directory is gone
            continue
        except OSError:
            return _full_rebuild(previous)  # let the full scan report why
        md = find_skill_file(listing, diagnostics)
        if md is None:
            return _full_rebuild(previous)  # no longer a skill: its subfolders may hold skills
        new = skill_from_listing(
            old.dir, os.path.realpath(old.dir), listing, md, old.root, diagnostics
        )
        if new is not None and new.real_path != real:
            return _full_rebuild(previous)  # identity moved: dedupe must be redone
        if new is not None:
            new.agents = old.agents  # same file reached the same ways: the same readers
        replaced[real] = new

    dirty_dirs = tuple(f.dir + os.sep for f in dirty.values())
    kept = [
        d
        for d in previous._scan_diagnostics
        if d.path is None or not (d.path + os.sep).startswith(dirty_dirs)
    ]
    found = (replaced.get(real, e.found) for real, e in previous._entries.items())
    return _assemble(
        previous.plan,
        previous.config,
        [f for f in found if f is not None],
        kept + diagnostics,
        previous.missing_roots,
        len(dirty),
        previous.disabled,
        previous,
        commands,
        previous.walked,
    )


def _owning_skill(path: str, catalog: Catalog) -> FoundSkill | None:
    """The known skill whose directory (as reached or real) holds ``path`` or is it, if any."""
    entries, aliases = catalog._entries, catalog._aliases
    current = path
    while True:
        entry = entries.get(os.path.join(current, SKILL_FILE))
        if entry is None and current in aliases:
            entry = entries.get(aliases[current])
        if entry is not None:
            return entry.found
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _with_plugins(plan: RootPlan, trusted: bool) -> tuple[RootPlan, list[Diagnostic]]:
    """``plan`` with the skills folders of the agents' enabled plugins as they are now (read at
    every full build: a plugin enabled or removed shows at the next one), and the problems of
    the files read to find them."""
    if not plan.home:
        return (plan if plan.trusted == trusted else replace(plan, trusted=trusted)), []
    found = plugin_skill_folders(
        home=plan.home, env=dict(plan.env), repo_root=plan.repo_root, trusted=trusted
    )
    roots = tuple(
        Root(
            f.path,
            "plugin",
            0,
            (f.plugin.agent,),
            from_project=f.from_project,
            plugin=f.plugin,
            namespaced=f.namespaced,
            within=f.within,
        )
        for f in found.folders
    )
    if roots != plan.plugin_roots or trusted != plan.trusted:
        plan = replace(plan, plugin_roots=roots, trusted=trusted)
    return plan, found.diagnostics


def _full_rebuild(previous: Catalog) -> Catalog:
    return build_catalog(
        previous.plan,
        previous.config,
        disabled=previous.disabled,
        previous=previous,
        trusted=previous.plan.trusted,
    )
