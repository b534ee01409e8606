"""Where skills live: the repo root, the roots of each scope, and the recursive scan
(docs/embedding.md).

Two steps, kept apart so each is testable on its own:

- :func:`compute_roots` decides *where to look*. It takes the environment and the home directory
  as parameters; its only file-system access is the repo-marker lookup.
- :func:`scan` walks those roots breadth-first with ``os.scandir`` and reports every ``SKILL.md``
  found, deduplicated by real path and sorted (scope, nearer-to-cwd root, path), plus scan-level
  diagnostics and the roots that do not exist. It never parses a file and never raises for a
  problem on disk: unreadable or vanishing entries become diagnostics.

The scan is on the hot path for 10 000 skills, so it lists each directory exactly once, relies on
the type information ``scandir`` already has, stats each ``SKILL.md`` once (or not at all when the
caller will open every file anyway, see ``stat_files``), counts resource folders with the cheaper
``os.listdir``, and derives real paths from the parent's real path instead of calling
``realpath`` unless a symlink is involved.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter

from skillsd.core import limits
from skillsd.core.discovery.agent_folders import (
    COMMAND_FOLDER,
    ENV_VARIABLES,
    SKILL_FOLDERS,
    agents_in_order,
    env_folders,
    user_folder_path,
)
from skillsd.core.fs.file_version import StatKey
from skillsd.core.fs.fs_boundary import inside
from skillsd.core.fs.tree_walk import TreeWalk
from skillsd.core.policy.config import DEFAULT_CONFIG, Config
from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd.core.skill.host_fields import OPENAI_YAML, OPENAI_YAML_DIR
from skillsd_protocol import Diagnostic, ResourceCounts, Scope
from skillsd_protocol.model import SCOPE_ORDER, PluginInfo, RemoteInfo

__all__ = [
    "ENV_ROOT",
    "ENV_SKILLS_PATH",
    "REPO_ROOT_DIRS",
    "RESOURCE_DIRS",
    "SKILL_FILE",
    "FoundSkill",
    "Root",
    "RootPlan",
    "ScanResult",
    "compute_roots",
    "find_repo_root",
    "find_skill_file",
    "nearest_existing_ancestor",
    "scan",
    "scan_plan",
    "skill_from_listing",
]

#: Skill roots inside a directory, in priority order; all but the first are "compat roots"
#: (the table is :data:`skillsd.core.discovery.agent_folders.SKILL_FOLDERS`).
REPO_ROOT_DIRS = tuple(f.path for f in SKILL_FOLDERS if f.scope == "repo")
#: Conventional resource folders counted in ``SkillMetadata.resources``.
RESOURCE_DIRS = frozenset({"scripts", "references", "assets"})

ENV_ROOT = "SKILLSD_ROOT"
ENV_SKILLS_PATH = "AGENT_SKILLS_PATH"


@dataclass(frozen=True, slots=True)
class Root:
    """One directory to scan for skills.

    ``path`` is absolute and normalised but not resolved (it is what the user configured or what
    the repo chain produced). ``distance`` is how many levels above ``cwd`` the directory holding a
    repo root is (0 for roots at ``cwd``, and for every user and extra root). ``agents`` are the
    agents that read this folder by their own rules (empty for roots only skillsd reads).
    """

    path: str
    scope: Scope
    distance: int = 0
    agents: tuple[str, ...] = ()
    #: Only the project named it (a project config's ``roots.extra``, a plugin only the
    #: project's agent settings enable): its skills' grants need the repository to be trusted,
    #: as repo-scope skills' do (docs/permissions.md).
    from_project: bool = False
    #: The enabled plugin this folder belongs to (scope ``plugin``).
    plugin: PluginInfo | None = None
    #: Its skills are named ``plugin:skill`` (not so for Gemini CLI's extensions).
    namespaced: bool = False
    #: A real folder the scan stays in (a plugin's): a folder leading out of it is not read.
    within: str | None = None
    #: The skills server this folder holds the skills of (scope ``remote``, docs/remote.md).
    remote: RemoteInfo | None = None
    #: Its skills' ``allowed-tools`` may grant (the user marked the remote ``trusted``).
    remote_trusted: bool = False
    #: The remote's last refresh failed: its skills are its last verified listing.
    remote_stale: bool = False

    @property
    def order_key(self) -> tuple[int, int, str]:
        """Scope first, then nearer-to-cwd, then path: discovery's ordering."""
        return (SCOPE_ORDER[self.scope], self.distance, self.path)


@dataclass(frozen=True, slots=True)
class RootPlan:
    """Where one catalog looks: ``cwd``, the repo root found for it and the ordered roots."""

    cwd: str
    repo_root: str
    roots: tuple[Root, ...]
    #: Where legacy command files live (docs/protocol.md): the repo chain nearest first, then home.
    command_dirs: tuple[str, ...] = ()
    #: The home directory and the environment variables that move agents' folders, for what is
    #: resolved at build time (plugins) and for one agent's precedence. Empty without
    #: ``discovery.auto``.
    home: str = ""
    env: tuple[tuple[str, str], ...] = ()
    #: The skills folders of the agents' enabled plugins, found when the catalog is built.
    plugin_roots: tuple[Root, ...] = ()
    #: The repository root was trusted when ``plugin_roots`` were found (a plugin only the
    #: project's settings enable is read only then).
    trusted: bool = False
    #: The folders of the configured remotes' skills (scope ``remote``).
    remote_roots: tuple[Root, ...] = ()

    @property
    def all_roots(self) -> tuple[Root, ...]:
        """Every root a build scans: the plan's, its plugins' and its remotes'."""
        return (*self.roots, *self.plugin_roots, *self.remote_roots)


@dataclass(slots=True)
class FoundSkill:
    """A ``SKILL.md`` found by the scan (not parsed yet).

    ``path``/``dir`` are as reached from the root (symlinks not resolved); ``real_path`` is the
    real path of the ``SKILL.md`` (the skill's identity). ``stat`` follows symlinks; it is None
    only when the scan was asked not to stat files (``stat_files=False``), and then whoever reads
    the file fills it in.
    """

    path: str
    dir: str
    real_path: str
    root: Root
    stat: StatKey | None
    resources: ResourceCounts
    #: The stat key of ``agents/openai.yaml`` (docs/conformance.md) when the skill has one: part of
    #: what
    #: identifies a version of the skill, so editing that file re-parses it. Always taken (only
    #: skills holding an ``agents/`` folder pay the ``stat``).
    host_stat: StatKey | None = None
    #: The agents that find this file, over every root that reached it.
    agents: tuple[str, ...] = ()
    #: Which of the skill's folders that the catalog reads exist (``scripts``, ``references``,
    #: ``assets``, ``agents``): the watcher watches those beside the skill directory.
    subdirs: tuple[str, ...] = ()

    @property
    def order_key(self) -> tuple[int, int, str]:
        return (SCOPE_ORDER[self.root.scope], self.root.distance, self.path)


@dataclass(slots=True)
class ScanResult:
    """What :func:`scan` found: skills (deduplicated, ordered), diagnostics, missing roots."""

    skills: list[FoundSkill]
    diagnostics: list[Diagnostic]
    #: Roots that do not exist (the watcher watches their nearest existing ancestor).
    missing_roots: list[Root]
    #: Directories listed, over all roots (roots themselves included).
    dirs_scanned: int
    #: Real paths of the directories the scan listed, skill directories excluded (those are
    #: known from the skills): the walk the watcher repeats, not one directory more.
    walked: list[str] = field(default_factory=list)


# -- roots ------------------------------------------------------------------------------------


def find_repo_root(cwd: str, markers: Iterable[str], env: Mapping[str, str]) -> str:
    """``$SKILLSD_ROOT`` if set, else the nearest ancestor of ``cwd`` with a marker, else ``cwd``.

    ``cwd`` must be absolute. A relative ``$SKILLSD_ROOT`` is taken relative to ``cwd``.
    """
    forced = env.get(ENV_ROOT)
    if forced:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(forced)))
    markers = tuple(markers)
    current = cwd
    while True:
        if any(os.path.lexists(os.path.join(current, marker)) for marker in markers):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return cwd
        current = parent


def repo_chain(plan: RootPlan) -> list[str]:
    """The directories of a plan's repo chain, ``cwd`` first, up to the repo root."""
    return _chain(plan.repo_root, plan.cwd)


def _chain(repo_root: str, cwd: str) -> list[str]:
    """Directories from ``cwd`` up to ``repo_root`` (nearest first).

    When ``repo_root`` is not an ancestor of ``cwd`` (only possible with ``$SKILLSD_ROOT``), the
    user asked for that root explicitly, so it alone is the chain.
    """
    if cwd != repo_root and not cwd.startswith(repo_root.rstrip(os.sep) + os.sep):
        return [repo_root]
    chain = [cwd]
    current = cwd
    while current != repo_root:
        current = os.path.dirname(current)
        chain.append(current)
    return chain


def _expand(entry: str, *, base: str, home: str) -> str:
    # `~` expands with the given home (not os.environ) so the function stays pure.
    if entry == "~" or entry.startswith("~" + os.sep):
        entry = home + entry[1:]
    return os.path.normpath(os.path.join(base, entry))


def compute_roots(
    cwd: str,
    config: Config = DEFAULT_CONFIG,
    *,
    home: str,
    env: Mapping[str, str],
    client_extra_roots: Iterable[str] = (),
    repo_root: str | None = None,
) -> RootPlan:
    """The roots one catalog scans, in discovery's order; the same directory is listed once.

    ``cwd`` is made absolute (not resolved). The repo and user folders come from
    :data:`~skillsd.core.discovery.agent_folders.SKILL_FOLDERS` (compat ones only with
    ``discovery.compatRoots``). Extra roots come from ``$AGENT_SKILLS_PATH``
    (``os.pathsep``-separated, ``:`` on POSIX) and ``client_extra_roots``, whose relative entries
    are relative to ``cwd``, and config ``roots.extra``, whose relative entries are relative to
    the repo root (config files anchor theirs when read); a leading ``~`` means ``home``. A
    caller that already found the repo root (with the config's markers) passes it as
    ``repo_root``.
    """
    cwd = os.path.abspath(cwd)
    disc = config.discovery
    if repo_root is None:
        repo_root = find_repo_root(cwd, disc.markers, env)
    folders = [f for f in SKILL_FOLDERS if disc.compat_roots or not f.compat]
    roots: list[Root] = []
    command_dirs: list[str] = []
    if disc.auto:
        chain = _chain(repo_root, cwd)
        command_dirs = [os.path.join(d, COMMAND_FOLDER) for d in (*chain, home)]
        repo_folders = [f for f in folders if f.scope == "repo"]
        for distance, directory in enumerate(chain):
            # An agent that reads the working directory only does not see a parent's folder.
            roots.extend(
                Root(os.path.join(directory, f.path), "repo", distance, f.walkers)
                if distance
                else Root(os.path.join(directory, f.path), "repo", distance, f.agents)
                for f in repo_folders
            )
        roots.extend(
            Root(user_folder_path(f, home=home, env=env), "user", 0, f.agents)
            for f in folders
            if f.scope == "user"
        )
        if disc.compat_roots:
            roots.extend(
                Root(path, "user", 0, (agent,)) for path, agent in env_folders(env, home=home)
            )
    env_extras = [e for e in env.get(ENV_SKILLS_PATH, "").split(os.pathsep) if e.strip()]
    for entries, base in (
        (env_extras, cwd),
        (config.roots.extra, repo_root),
        (client_extra_roots, cwd),
    ):
        from_project = entries is config.roots.extra
        roots.extend(
            Root(
                _expand(e.strip(), base=base, home=home),
                "extra",
                from_project=from_project and e in config.project_extra_roots,
            )
            for e in entries
        )
    unique: dict[str, Root] = {}
    for root in sorted(roots, key=attrgetter("order_key")):
        kept = unique.get(root.path)
        if kept is None:
            unique[root.path] = root
            continue
        if kept.from_project and not root.from_project:
            # The user (or the host) names that folder too: it is theirs.
            kept = replace(kept, from_project=False)
        if root.agents and not set(root.agents) <= set(kept.agents):
            # One folder reached as two (e.g. $CODEX_HOME set to ~/.agents): all its readers.
            kept = replace(kept, agents=agents_in_order((*kept.agents, *root.agents)))
        unique[root.path] = kept
    moved = tuple((name, env[name]) for name in ENV_VARIABLES if env.get(name))
    return RootPlan(
        cwd=cwd,
        repo_root=repo_root,
        roots=tuple(unique.values()),
        command_dirs=tuple(dict.fromkeys(command_dirs)),
        home=home if disc.auto else "",
        env=moved,
    )


def nearest_existing_ancestor(path: str) -> str:
    """The closest existing directory at or above ``path`` (to watch for a root appearing)."""
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


# -- scan -------------------------------------------------------------------------------------


def _diag(code: str, message: str, path: str) -> Diagnostic:
    return Diagnostic(severity="warning", code=code, message=message, path=path)


def _listing_problem(path: str, exc: OSError) -> Diagnostic:
    """The diagnostic for a directory that could not be listed."""
    if isinstance(exc, FileNotFoundError):
        return _diag("discovery.vanished", f"{path}: directory vanished during the scan", path)
    reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    return _diag("discovery.unreadable", f"{path}: cannot list directory: {reason}", path)


def _list_dir(path: str, diagnostics: list[Diagnostic]) -> list[os.DirEntry[str]] | None:
    """All entries of a directory, or None (with a diagnostic) when it cannot be listed."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError as exc:
        diagnostics.append(_listing_problem(path, exc))
    return None


def _count_entries(path: str, diagnostics: list[Diagnostic]) -> int:
    """Non-hidden entries of a resource folder (0, with a diagnostic, if it cannot be listed)."""
    try:
        names = os.listdir(path)  # names are all a count needs: no DirEntry objects
    except OSError as exc:
        diagnostics.append(_listing_problem(path, exc))
        return 0
    return sum(1 for name in names if not name.startswith("."))


def skill_from_listing(
    directory: str,
    real_dir: str,
    entries: list[os.DirEntry[str]],
    md: os.DirEntry[str],
    root: Root,
    diagnostics: list[Diagnostic],
    *,
    stat: bool = True,
) -> FoundSkill | None:
    """Build a :class:`FoundSkill` from a skill directory's listing (None if SKILL.md vanished).

    Resource counts: non-hidden entries directly inside ``scripts/``, ``references/`` and
    ``assets/``; ``other`` = non-hidden top-level entries besides ``SKILL.md`` and those folders.
    With ``stat=False`` the ``SKILL.md`` is not stat'ed (``FoundSkill.stat`` is None).
    """
    key: StatKey | None = None
    if stat:
        try:
            st = md.stat()
        except FileNotFoundError:
            diagnostics.append(
                _diag("discovery.vanished", f"{md.path}: file vanished during the scan", md.path)
            )
            return None
        except OSError as exc:
            diagnostics.append(
                _diag("discovery.unreadable", f"{md.path}: cannot stat: {exc.strerror}", md.path)
            )
            return None
        key = StatKey.of(st)
    counts = {"scripts": 0, "references": 0, "assets": 0}
    other = 0
    host_key: StatKey | None = None
    subdirs: tuple[str, ...] = ()
    for entry in entries:
        name = entry.name
        if name == SKILL_FILE or name.startswith("."):
            continue
        if name in RESOURCE_DIRS and entry.is_dir():
            counts[name] = _count_entries(entry.path, diagnostics)
            subdirs = _SUBDIRS[(*subdirs, name)]
        else:
            other += 1
            if name == OPENAI_YAML_DIR and entry.is_dir():
                host_key = _host_file_key(os.path.join(directory, OPENAI_YAML))
                subdirs = _SUBDIRS[(*subdirs, name)]
    try:
        real_path = os.path.realpath(md.path) if md.is_symlink() else _join(real_dir, SKILL_FILE)
    except OSError:  # the link changed while being resolved
        diagnostics.append(
            _diag("discovery.vanished", f"{md.path}: file vanished during the scan", md.path)
        )
        return None
    if real_path == md.path:
        real_path = md.path  # one string, not two equal ones, for 10 000 skills
    return FoundSkill(
        path=md.path,
        dir=directory,
        real_path=real_path,
        root=root,
        stat=key,
        resources=ResourceCounts(other=other, **counts),
        host_stat=host_key,
        agents=root.agents,
        subdirs=subdirs,
    )


class _Interned(dict[tuple[str, ...], tuple[str, ...]]):
    """One tuple object per combination of skill subfolders (10 000 skills share a handful)."""

    def __missing__(self, key: tuple[str, ...]) -> tuple[str, ...]:
        self[key] = key
        return key


_SUBDIRS = _Interned()

#: Stands for a host file that exists but cannot be stat'ed: reading it reports why.
_UNSTATABLE = StatKey(-1, -1, -1)


def _host_file_key(path: str) -> StatKey | None:
    """The stat key of a skill's host file, None when there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return _UNSTATABLE
    return StatKey.of(st)


def _join(real_dir: str, name: str) -> str:
    return real_dir + name if real_dir.endswith(os.sep) else real_dir + os.sep + name


def find_skill_file(
    entries: list[os.DirEntry[str]], diagnostics: list[Diagnostic]
) -> os.DirEntry[str] | None:
    """The listing's ``SKILL.md`` if it is a file (a diagnostic when it is something else)."""
    for entry in entries:
        if entry.name == SKILL_FILE:
            if entry.is_file():
                return entry
            diagnostics.append(
                _diag(
                    "discovery.not_a_file",
                    f"{entry.path}: not a regular file (a directory or a broken symlink)",
                    entry.path,
                )
            )
            return None
    return None


def _outside(path: str, within: str) -> Diagnostic:
    return _diag(
        "plugin.outside",
        f"{path}: a symbolic link leading outside the plugin's folder {within}; not read",
        path,
    )


def _scan_root(
    root: Root,
    real_root: str,
    entries: list[os.DirEntry[str]],
    *,
    max_depth: int,
    max_dirs: int,
    stat_files: bool,
    found: list[FoundSkill],
    diagnostics: list[Diagnostic],
    walked: list[str],
) -> int:
    """Breadth-first scan of one existing root; returns how many directories were listed."""
    walk = TreeWalk(
        root.path,
        max_depth=max_depth,
        max_dirs=max_dirs,
        on_error=lambda path, exc: diagnostics.append(_listing_problem(path, exc)),
        root_entries=entries,
        real_root=real_root,
    )
    within = root.within
    for directory in walk:
        if within is not None and not inside(within, directory.real):
            directory.descend = False
            diagnostics.append(_outside(directory.path, within))
            continue
        md = find_skill_file(directory.entries, diagnostics)
        if (
            md is not None
            and within is not None
            and md.is_symlink()
            and not inside(within, os.path.realpath(md.path))
        ):
            directory.descend = False
            diagnostics.append(_outside(md.path, within))
            continue
        if md is not None:
            directory.descend = False  # a skill directory is never descended into
            skill = skill_from_listing(
                directory.path,
                directory.real,
                directory.entries,
                md,
                root,
                diagnostics,
                stat=stat_files,
            )
            if skill is not None:
                found.append(skill)
            continue
        walked.append(directory.real)
    for name in walk.undecodable:
        diagnostics.append(
            _diag(
                "discovery.undecodable_name",
                f"{name}: the name is not UTF-8 (shown with \\xNN for such bytes); skipped",
                name,
            )
        )
    if walk.depth_hit:
        diagnostics.append(
            _diag(
                "discovery.max_depth",
                f"{root.path}: directories deeper than {max_depth} levels were not scanned "
                "(discovery.maxDepth)",
                root.path,
            )
        )
    if walk.dirs_hit:
        diagnostics.append(
            _diag(
                "discovery.max_dirs",
                f"{root.path}: stopped after {max_dirs} directories; the rest was not scanned "
                "(discovery.maxDirs)",
                root.path,
            )
        )
    return walk.listed + 1


def scan(
    roots: Iterable[Root],
    *,
    max_depth: int = limits.DEFAULT_MAX_DEPTH,
    max_dirs: int = limits.DEFAULT_MAX_DIRS,
    stat_files: bool = True,
) -> ScanResult:
    """Find every ``SKILL.md`` under ``roots`` (see the module docstring for the rules).

    An extra root that holds a ``SKILL.md`` (or is the path of one) is that one skill. Roots that
    resolve to a directory already scanned are skipped. The same file reached twice is kept once,
    for the first reach in catalog order (scope, nearer-to-cwd, path). ``stat_files=False`` skips
    the ``stat`` of each ``SKILL.md`` (``FoundSkill.stat`` is None): for a caller that opens and
    ``fstat``s every file right after, such as a first catalog build.
    """
    found: list[FoundSkill] = []
    diagnostics: list[Diagnostic] = []
    missing: list[Root] = []
    #: Real path of a scanned root -> the root that scanned it.
    scanned_real: dict[str, Root] = {}
    #: Path of a scanned root -> agents of other roots that are the same directory (a symlink).
    alias_agents: dict[str, tuple[str, ...]] = {}
    dirs = 0
    walked: list[str] = []
    for root in sorted(roots, key=attrgetter("order_key")):
        path = root.path
        if os.path.basename(path) == SKILL_FILE and os.path.isfile(path):
            # A root given as the SKILL.md itself: scan its directory as a one-skill root.
            root = Root(os.path.dirname(path), root.scope, root.distance)
            path = root.path
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except FileNotFoundError:
            missing.append(root)
            continue
        except OSError:
            _list_dir(path, diagnostics)  # records the reason as a diagnostic
            continue
        real_root = os.path.realpath(path)
        scanned_by = scanned_real.get(real_root)
        if scanned_by is not None:
            if root.agents:
                alias_agents[scanned_by.path] = (
                    *alias_agents.get(scanned_by.path, ()),
                    *root.agents,
                )
            continue
        scanned_real[real_root] = root
        dirs += _scan_root(
            root,
            real_root,
            entries,
            max_depth=max_depth,
            max_dirs=max_dirs,
            stat_files=stat_files,
            found=found,
            diagnostics=diagnostics,
            walked=walked,
        )
    found.sort(key=attrgetter("order_key"))
    unique: dict[str, FoundSkill] = {}
    for skill in found:
        aliases = alias_agents.get(skill.root.path, ())
        first = unique.get(skill.real_path)
        if first is None:
            unique[skill.real_path] = skill
            first = skill
        elif not skill.agents and not aliases:
            continue
        if aliases or first is not skill:
            # Every agent that reaches the file sees the skill, whichever root reached it first.
            first.agents = agents_in_order((*first.agents, *skill.agents, *aliases))
    return ScanResult(
        skills=list(unique.values()),
        diagnostics=diagnostics,
        missing_roots=missing,
        dirs_scanned=dirs,
        walked=walked,
    )


def scan_plan(
    plan: RootPlan, config: Config = DEFAULT_CONFIG, *, stat_files: bool = True
) -> ScanResult:
    """:func:`scan` over a plan's roots with the config's depth and directory limits."""
    return scan(
        plan.all_roots,
        max_depth=config.discovery.max_depth,
        max_dirs=config.discovery.max_dirs,
        stat_files=stat_files,
    )
