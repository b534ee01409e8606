"""The catalog of one cwd: identity, collisions, ordering, refs (see docs/protocol.md).

A :class:`Catalog` is immutable once built (:mod:`skillsd.core.catalog.fs_catalog_build` builds and
refreshes it). :func:`diff_catalogs` gives ``skills.changed``'s ids.

Identity: a skill is keyed by the real path of its ``SKILL.md``; its ``id`` is the first 24 hex
digits of the SHA-256 of that path's file-system bytes (``os.fsencode``: UTF-8 on every platform
skillsd supports, with undecodable bytes of a POSIX name kept as they are).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar, get_args

import msgspec

from skillsd.core.catalog.agent_view import agent_precedence, agent_view, known_agent
from skillsd.core.discovery.fs_commands import CommandScan, command_list
from skillsd.core.discovery.fs_roots import (
    FoundSkill,
    Root,
    RootPlan,
    repo_chain,
)
from skillsd.core.errors import SkillsdError
from skillsd.core.name_distance import closest_names, normalize_name
from skillsd.core.policy.config import Config
from skillsd.core.skill.fs_skillfile import SKILL_FILE, Mode
from skillsd_protocol import Diagnostic, SkillLoadError, SkillMetadata
from skillsd_protocol.errors import (
    AmbiguousSkillData,
    InvalidSkillData,
    SkillCandidate,
    SkillNotFoundData,
)
from skillsd_protocol.messages import Command, ListResult
from skillsd_protocol.model import Scope

__all__ = [
    "BuildStats",
    "Catalog",
    "CatalogDiff",
    "diff_catalogs",
    "list_result",
    "normalize_name",
    "skill_id",
]


_T = TypeVar("_T")


def skill_id(real_path: str) -> str:
    """The stable id of the skill whose ``SKILL.md`` has this real path."""
    return hashlib.sha256(os.fsencode(real_path)).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What one build did: ``parsed`` files read with ``read_skill_file``, ``reused`` ones not."""

    parsed: int
    reused: int
    dirs_scanned: int


@dataclass(frozen=True, slots=True)
class CatalogDiff:
    """Ids added, removed and changed between two catalogs (``skills.changed``'s payload)."""

    added: list[str]
    removed: list[str]
    changed: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


@dataclass(frozen=True, slots=True)
class _Entry:
    """One found SKILL.md and what it became, kept for reuse while its stat key holds.

    ``base`` is the listed metadata before per-catalog decoration (enabled flag, ``sameName``);
    exactly one of ``base`` and ``error`` is set. The parse itself is not kept: everything reuse
    needs is in ``base``/``error`` and ``found.stat`` (a 10 000-skill daemon holds ~2 MB less).
    """

    found: FoundSkill
    id: str
    base: SkillMetadata | None
    error: SkillLoadError | None


@dataclass(frozen=True, slots=True, eq=False)
class Catalog:
    """The skills, load errors and scan diagnostics found for one cwd, with lookup indexes.

    Treat every list and skill in it as read-only: builds and views share them.
    """

    plan: RootPlan
    config: Config
    generation: int
    skills: list[SkillMetadata]
    errors: list[SkillLoadError]
    diagnostics: list[Diagnostic]
    #: Roots that do not exist yet (watch their nearest existing ancestor).
    missing_roots: list[Root]
    stats: BuildStats
    #: The user-level disabled set (ids, or paths of skill dirs / SKILL.md files) it was built with.
    disabled: frozenset[str]
    by_id: dict[str, SkillMetadata]
    by_name: dict[str, list[SkillMetadata]]
    #: Real path of a SKILL.md -> its skill.
    by_real_path: dict[str, SkillMetadata]
    real_path_of: dict[str, str]
    errors_by_real_path: dict[str, SkillLoadError]
    #: Ids of the skills the model must not see (``invocation.model`` false, the host fields).
    model_hidden: frozenset[str]
    #: Claude Code's legacy command files of the plan's ``command_dirs`` (docs/protocol.md), first
    #: of
    #: each name; their problems are in ``diagnostics`` too.
    commands: CommandScan
    #: Real paths of the folders the scan listed that are not skill directories (roots,
    #: category folders): with the skills' own folders, what the watcher watches.
    walked: tuple[str, ...]
    #: Real path -> entry, in catalog order (errors included).
    _entries: dict[str, _Entry] = field(repr=False)
    _scan_diagnostics: list[Diagnostic] = field(repr=False)
    #: Skill dir as reached -> real path of its SKILL.md, only where the two differ (symlinks).
    _aliases: dict[str, str] = field(repr=False)
    #: Answers derived from this exact catalog (a copy with other flags starts empty).
    _derived: dict[str, object] = field(default_factory=dict, repr=False)

    @property
    def mode(self) -> Mode:
        return self.config.validation

    @property
    def cwd(self) -> str:
        return self.plan.cwd

    @property
    def repo_root(self) -> str:
        """The repository root the ``repo`` scope was computed from (a skill's own ``root`` is
        the folder it was found under, its source root)."""
        return self.plan.repo_root

    @property
    def roots(self) -> tuple[Root, ...]:
        """Every root the build scanned, the plugins' included."""
        return self.plan.all_roots

    def get(self, skill_id: str) -> SkillMetadata | None:
        return self.by_id.get(skill_id)

    def skill_dirs(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Each skill's real directory (valid and invalid skills) and the subfolders the catalog
        reads there (``scripts``, ``references``, ``assets``, ``agents``)."""
        for real, entry in self._entries.items():
            found = entry.found
            if found.path == real:
                yield found.dir, found.subdirs
            else:  # reached through a symlink (the folder or the SKILL.md itself)
                yield os.path.realpath(found.dir), found.subdirs

    def watches_like(self, other: Catalog) -> bool:
        """Whether this catalog is watched exactly like ``other``: the same folders walked and
        the same skill folders (a refresh that only re-read files)."""
        if (
            self.walked is not other.walked
            or self.commands.walked != other.commands.walked
            or self._entries.keys() != other._entries.keys()
        ):
            return False
        theirs = other._entries
        return all(
            entry is theirs[real] or entry.found.subdirs == theirs[real].found.subdirs
            for real, entry in self._entries.items()
        )

    def derived(self, key: str, build: Callable[[], _T]) -> _T:
        """``build()``, once per catalog under ``key``: for answers derived from this exact
        catalog that many requests share (treat them as read-only, like the rest)."""
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]  # type: ignore[return-value]

    def slash_commands(self) -> list[Command]:
        """``skills.commands``: enabled user-invocable skills and the command files no enabled
        skill hides, sorted by name (built on each call: the daemon keeps its encoded answer)."""
        return command_list(without_copies(self.skills), self.commands.files)

    def seen_by(self, agent: str) -> list[SkillMetadata]:
        """What ``agent`` discovers here, a name clash decided as that agent decides it
        (``skills.list {agent}``); an unknown agent is a bad ``agent`` param."""
        rules = known_agent(agent)
        plan = self.plan
        precedence = agent_precedence(
            rules, chain=repo_chain(plan), home=plan.home, env=dict(plan.env)
        )
        return agent_view(self.skills, rules, precedence)

    def grants_need_trust(self, skill: SkillMetadata) -> bool:
        """Whether ``skill``'s ``allowed-tools`` count only while the repository is trusted: it
        is a repo-scope skill, or it comes from a root only the project named (a project
        config's ``roots.extra``, a plugin only the project's agent settings enable;
        docs/permissions.md)."""
        if skill.scope == "repo":
            return True
        plan = self.plan
        roots = {"extra": plan.roots, "plugin": plan.plugin_roots}.get(skill.scope, ())
        return any(r.from_project and r.path == skill.root for r in roots)

    # -- enabled state ------------------------------------------------------------------------

    def with_disabled(self, disabled: Collection[str]) -> Catalog:
        """This catalog under a new user-level disabled set; a flipped flag grows the generation."""
        disabled = frozenset(disabled)
        flags = {s.id: not _is_disabled(s, self.real_path_of[s.id], disabled) for s in self.skills}
        return self._with_flags(flags, bump=True, disabled=disabled)

    def with_overrides(self, overrides: Mapping[str, bool]) -> Catalog:
        """A view with per-session enable flags (id -> enabled) on top of the user state.

        Returns ``self`` when no override changes anything, so a session without overrides costs
        nothing; otherwise only the overridden skills are copied. The generation is unchanged.
        """
        return self._with_flags(overrides, bump=False, disabled=self.disabled)

    def _with_flags(
        self, flags: Mapping[str, bool], *, bump: bool, disabled: frozenset[str]
    ) -> Catalog:
        replaced: dict[str, SkillMetadata] = {}
        for sid, enabled in flags.items():
            skill = self.by_id.get(sid)
            if skill is not None and skill.enabled != enabled:
                replaced[sid] = msgspec.structs.replace(skill, enabled=enabled)
        if not replaced:
            return self if disabled == self.disabled else _replace(self, disabled=disabled)
        by_id = dict(self.by_id)
        by_id.update(replaced)
        skills, by_name, by_real_path = _swap_in(
            replaced, self.skills, self.by_name, self.by_real_path, self.real_path_of
        )
        return _replace(
            self,
            generation=self.generation + 1 if bump else self.generation,
            skills=skills,
            disabled=disabled,
            by_id=by_id,
            by_name=by_name,
            by_real_path=by_real_path,
        )

    # -- refs ---------------------------------------------------------------------------------

    def resolve(
        self,
        *,
        path: str | None = None,
        id: str | None = None,
        name: str | None = None,
        include_disabled: bool = False,
    ) -> SkillMetadata:
        """Resolve a skill ref, ``path`` > ``id`` > ``name`` (only the first one given is used).

        ``path`` is the skill dir or its ``SKILL.md``, relative paths against the catalog's cwd;
        it and ``id`` find disabled skills too. A ``name`` must match exactly one enabled skill
        (any skill with ``include_disabled``, as ``skills.setEnabled`` needs). Raises
        ``SkillsdError`` ``skill_not_found`` (``suggestions``), ``ambiguous_skill``
        (``candidates``) or ``invalid_skill`` (a path to a skill that failed validation).
        """
        if path is not None:
            return self._resolve_path(path)
        if id is not None:
            skill = self.by_id.get(id)
            if skill is None:
                raise SkillsdError(f"no skill with id {id!r}", SkillNotFoundData(suggestions=[]))
            return skill
        if name is not None:
            return self._resolve_name(name, include_disabled)
        raise SkillsdError(
            "no skill reference given: pass path, id or name", SkillNotFoundData(suggestions=[])
        )

    def _resolve_path(self, path: str) -> SkillMetadata:
        absolute = os.path.join(self.plan.cwd, os.path.expanduser(path))
        try:
            real = os.path.realpath(absolute)
        except OSError:  # a link on the way changed while being resolved: no skill there
            real = absolute
        candidates = (real, os.path.join(real, SKILL_FILE))
        for candidate in candidates:
            skill = self.by_real_path.get(candidate)
            if skill is not None:
                return skill
        for candidate in candidates:
            error = self.errors_by_real_path.get(candidate)
            if error is not None:
                raise SkillsdError(
                    f"skill at {path!r} is invalid: {error.message}",
                    InvalidSkillData(path=error.path, diagnostics=error.diagnostics),
                )
        stem = os.path.basename(
            real if os.path.basename(real) != SKILL_FILE else os.path.dirname(real)
        )
        where = path if real == path else f"{path!r} ({real})"
        raise SkillsdError(
            f"no skill at {where}",
            SkillNotFoundData(suggestions=closest_names(stem, self._names(include_disabled=True))),
        )

    def named(self, name: str) -> list[SkillMetadata]:
        """The skills called ``name`` (enabled or not), ``name@scope`` (``@repo``, ``@user``,
        ``@plugin``, ``@extra``: the spelling MCP prompts use for a shared name, and how a person
        picks one), or a plugin's ``plugin:skill``."""
        wanted = normalize_name(name)
        same = self.by_name.get(wanted)
        if same is not None:
            return same
        plain, at, scope = wanted.rpartition("@")
        if at and scope in SCOPES:
            return [s for s in self.by_name.get(plain, []) if s.scope == scope]
        _plugin, colon, skill = wanted.rpartition(":")
        if colon:
            return [s for s in self.by_name.get(skill, []) if s.qualified_name == wanted]
        return []

    def _resolve_name(self, name: str, include_disabled: bool) -> SkillMetadata:
        wanted = normalize_name(name)
        same = self.named(wanted)
        usable = same if include_disabled else [s for s in same if s.enabled]
        if len(usable) == 1:
            return usable[0]
        if len(usable) > 1:
            raise SkillsdError(
                f"{len(usable)} skills are named {name!r}: {_pick_one(usable)}",
                AmbiguousSkillData(
                    candidates=[SkillCandidate(id=s.id, path=s.path, scope=s.scope) for s in usable]
                ),
            )
        suggestions = closest_names(wanted, self._names(include_disabled))
        if same:
            message = f"skill {name!r} is disabled (turn it on with `skillsd enable {name}`)"
        else:
            message = f"no skill named {name!r}"
            if suggestions:
                message += f"; did you mean {', '.join(suggestions)}?"
        raise SkillsdError(message, SkillNotFoundData(suggestions=suggestions))

    def _names(self, include_disabled: bool) -> list[str]:
        if include_disabled:
            return list(self.by_name)
        return [n for n, group in self.by_name.items() if any(s.enabled for s in group)]


#: The scopes a ``name@scope`` may name.
SCOPES = frozenset(get_args(Scope))


def without_copies(skills: list[SkillMetadata]) -> list[SkillMetadata]:
    """``skills`` without the identical copies of a skill also in the list (shown once)."""
    ids = {s.id for s in skills if s.copy_of is None}
    return [s for s in skills if s.copy_of is None or s.copy_of not in ids]


def _pick_one(skills: list[SkillMetadata]) -> str:
    """How to name one of several same-named skills: ``name@scope`` where the scopes differ,
    else its path or id."""
    scopes = [s.scope for s in skills]
    if len(set(scopes)) == len(scopes):
        spellings = ", ".join(f"{s.name}@{s.scope} ({s.path})" for s in skills)
        return f"name one as {spellings}, or pass its path or id"
    paths = ", ".join(s.path for s in skills)
    return f"pass the path or id of one ({paths})"


def _replace(catalog: Catalog, **changes: object) -> Catalog:
    return replace(catalog, **changes, _derived={})  # type: ignore[arg-type]


def _swap_in(
    replaced: Mapping[str, SkillMetadata],
    skills: list[SkillMetadata],
    by_name: dict[str, list[SkillMetadata]],
    by_real_path: dict[str, SkillMetadata],
    real_path_of: Mapping[str, str],
) -> tuple[list[SkillMetadata], dict[str, list[SkillMetadata]], dict[str, SkillMetadata]]:
    """``skills`` and its name and real-path indexes with each skill of ``replaced`` (id -> new
    version) in place of the old one; the arguments are left as they are (views share them)."""
    by_name = dict(by_name)
    for skill in replaced.values():
        by_name[skill.name] = [replaced.get(s.id, s) for s in by_name[skill.name]]
    by_real_path = dict(by_real_path)
    for sid, skill in replaced.items():
        by_real_path[real_path_of[sid]] = skill
    return [replaced.get(s.id, s) for s in skills], by_name, by_real_path


def _is_disabled(skill: SkillMetadata, real_path: str, disabled: frozenset[str]) -> bool:
    if not disabled:
        return False
    return (
        skill.id in disabled
        or skill.path in disabled
        or skill.dir in disabled
        or real_path in disabled
        or os.path.dirname(real_path) in disabled
    )


def diff_catalogs(old: Catalog | None, new: Catalog) -> CatalogDiff:
    """Ids added, removed and changed (any listed field differs) from ``old`` to ``new``."""
    before = old.by_id if old is not None else {}
    after = new.by_id
    return CatalogDiff(
        added=[s.id for s in new.skills if s.id not in before],
        removed=[s.id for s in (old.skills if old is not None else []) if s.id not in after],
        changed=[s.id for s in new.skills if s.id in before and before[s.id] != s],
    )


def list_result(
    catalog: Catalog,
    *,
    scope: str | None = None,
    include_disabled: bool = True,
    agent: str | None = None,
) -> ListResult:
    """The catalog as ``skills.list`` (and ``skillsd list --json``) report it; with ``agent``,
    that agent's view."""
    skills = catalog.skills if agent is None else catalog.seen_by(agent)
    if scope is not None or not include_disabled:
        skills = [
            s
            for s in skills
            if (scope is None or s.scope == scope) and (include_disabled or s.enabled)
        ]
    return ListResult(
        cwd=catalog.cwd,
        repo_root=catalog.repo_root,
        root=catalog.repo_root,
        generation=catalog.generation,
        skills=skills,
        errors=catalog.errors,
        diagnostics=catalog.diagnostics,
    )
