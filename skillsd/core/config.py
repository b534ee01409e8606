"""The effective configuration: its types, defaults, parsing and layering (pure; no file I/O).

Files: the user's ``config.toml`` (``$SKILLSD_CONFIG`` overrides its path) and an optional
project ``.agents/skillsd.toml``; :mod:`skillsd.core.effective_config` reads them. Unknown keys
and wrong types make a file invalid.

Layering keeps the origin of what decides permissions (docs/permissions.md): the project file's
``[permissions]`` table is kept apart (``Config.project_permissions``) for the policy to apply
only what tightens, and its ``[trust]`` table is dropped (a repository cannot trust itself).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
import platformdirs

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.core.permissions import PermissionsConfig, Policy, policy_for, rule_problem
from skillsd.core.trust import TrustConfig
from skillsd_protocol.errors import InvalidConfigData

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_MARKERS",
    "PROJECT_CONFIG",
    "Config",
    "DiscoveryConfig",
    "LimitsConfig",
    "PromptConfig",
    "RootsConfig",
    "SearchConfig",
    "is_project_config",
    "layer_configs",
    "parse_config_table",
    "parse_config_text",
    "project_config_path",
    "user_config_path",
]

DEFAULT_MARKERS = (".git", ".jj", ".hg")


class _Table(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True, kw_only=True):
    pass


#: Numbers a config may hold (docs/security.md: out of range is an invalid config naming the key).
_Depth = Annotated[int, msgspec.Meta(ge=0, le=1_000)]
_Count = Annotated[int, msgspec.Meta(ge=1, le=10_000_000)]
_Bytes = Annotated[int, msgspec.Meta(ge=0, le=1 << 30)]
_Entries = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]


class DiscoveryConfig(_Table, frozen=True):
    auto: bool = True
    compat_roots: bool = True
    markers: tuple[str, ...] = DEFAULT_MARKERS
    max_depth: _Depth = limits.DEFAULT_MAX_DEPTH
    max_dirs: _Count = limits.DEFAULT_MAX_DIRS


class RootsConfig(_Table, frozen=True):
    extra: tuple[str, ...] = ()


class PromptConfig(_Table, frozen=True):
    max_entries: _Entries = limits.DEFAULT_PROMPT_MAX_ENTRIES
    max_bytes: _Bytes = limits.DEFAULT_PROMPT_MAX_BYTES
    format: Literal["xml", "codelia", "attributes", "markdown"] = "xml"


class SearchConfig(_Table, frozen=True):
    default_limit: _Count = limits.DEFAULT_SEARCH_LIMIT
    max_limit: _Count = limits.MAX_SEARCH_LIMIT


class LimitsConfig(_Table, frozen=True):
    """Bounds of a long-running process, from the user's config only (a repository's
    ``[limits]`` is ignored: it cannot raise what protects the user's daemon)."""

    #: Catalogs (distinct cwds) kept at once; the least recently used unlisted one goes.
    max_catalogs: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = limits.MAX_CATALOGS
    #: The largest reply skillsd builds (an invocation's rendered text, an MCP read).
    max_reply_bytes: Annotated[int, msgspec.Meta(ge=4096, le=1 << 30)] = limits.MAX_REPLY_BYTES
    #: Files and bytes one installed skill may hold (``skillsd add``, ``skills.install``).
    max_install_files: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = limits.INSTALL_MAX_FILES
    max_install_bytes: Annotated[int, msgspec.Meta(ge=1024, le=1 << 34)] = limits.INSTALL_MAX_BYTES


class Config(_Table, frozen=True):
    """The whole effective configuration; hashable, so it can key the catalog cache."""

    validation: Literal["strict", "lenient"] = "lenient"
    discovery: DiscoveryConfig = DiscoveryConfig()
    roots: RootsConfig = RootsConfig()
    prompt: PromptConfig = PromptConfig()
    search: SearchConfig = SearchConfig()
    permissions: PermissionsConfig = PermissionsConfig()
    trust: TrustConfig = TrustConfig()
    limits: LimitsConfig = LimitsConfig()
    #: The project file's ``[permissions]``, set by layering only (never read from a file); its
    #: ``defaultAction`` is the user's when the project sets none.
    project_permissions: PermissionsConfig | None = None
    #: The project file's ``roots.extra`` entries, set by layering only: their skills' grants
    #: are bound to the repository's trust like repo-scope skills' (docs/permissions.md).
    project_extra_roots: tuple[str, ...] = ()
    #: The project file's ``roots.extra`` entries outside its repository, set by layering only:
    #: ignored (a repository cannot widen what is scanned), each reported as a warning.
    ignored_extra_roots: tuple[str, ...] = ()

    @property
    def policy(self) -> Policy:
        """The permission policy of this config (the user's and the project's tables)."""
        return policy_for(self.permissions, self.project_permissions)


DEFAULT_CONFIG = Config()

#: The key layering fills in; a file that writes it is refused as if it were unknown.
_PROJECT_PERMISSIONS = "projectPermissions"
_PROJECT_EXTRA_ROOTS = "projectExtraRoots"
_IGNORED_EXTRA_ROOTS = "ignoredExtraRoots"
#: Keys only layering writes.
_LAYERING_KEYS = (_PROJECT_PERMISSIONS, _PROJECT_EXTRA_ROOTS, _IGNORED_EXTRA_ROOTS)
#: Discovery bounds a project file may only lower.
_LOWER_ONLY = ("maxDepth", "maxDirs")
_DEFAULT_DISCOVERY = {"maxDepth": limits.DEFAULT_MAX_DEPTH, "maxDirs": limits.DEFAULT_MAX_DIRS}

#: Permission rule lists add up across files instead of the later file replacing them.
_CONCATENATED = {
    (table, k)
    for table in ("permissions", "projectPermissions")
    for k in ("finalDeny", "override", "deny", "allow")
}


def parse_config_table(data: dict[str, Any], source: str, *, layered: bool = False) -> Config:
    """Validate one config table; errors name the file, the key path and the reason."""
    written = next((k for k in _LAYERING_KEYS if k in data), None)
    if not layered and written is not None:
        raise SkillsdError(
            f"{source}: invalid config: unknown key {written!r}", InvalidConfigData(path=source)
        )
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        raise SkillsdError(
            f"{source}: invalid config: {_describe(exc)}", InvalidConfigData(path=source)
        ) from None
    _check_rules(config.permissions, source)
    if config.project_permissions is not None:
        _check_rules(config.project_permissions, source)
    return config


def _check_rules(permissions: PermissionsConfig, source: str) -> None:
    for key in ("finalDeny", "override", "deny", "allow"):
        rules = getattr(permissions, _SNAKE[key])
        for index, rule in enumerate(rules):
            problem = rule_problem(rule)
            if problem is not None:
                raise SkillsdError(
                    f"{source}: invalid config: key 'permissions.{key}[{index}]': {problem}",
                    InvalidConfigData(path=source),
                )


_SNAKE = {"finalDeny": "final_deny", "override": "override", "deny": "deny", "allow": "allow"}


def parse_config_text(text: str, source: str) -> dict[str, Any]:
    """Parse TOML text and validate it; returns the raw table (for layering)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SkillsdError(
            f"{source}: invalid TOML: {exc}", InvalidConfigData(path=source)
        ) from None
    parse_config_table(data, source)
    return data


def layer_configs(tables: list[tuple[str, dict[str, Any]]]) -> Config:
    """Merge validated tables in order (later wins per key; permission lists concatenate).

    A project file's (:func:`is_project_config`) ``[permissions]`` goes to
    ``project_permissions``; its ``[trust]`` and ``[limits]`` are dropped; its ``roots.extra``
    entries outside the repository are set aside (``ignored_extra_roots``) and its discovery
    bounds only lower the user's: a repository cannot trust itself or widen what is scanned."""
    merged: dict[str, Any] = {}
    for source, table in tables:
        if is_project_config(source):
            table = dict(table)
            table.pop("trust", None)
            table.pop("limits", None)
            if "discovery" in table:
                wanted = dict(table["discovery"])
                for key in _LOWER_ONLY:
                    current = merged.get("discovery", {}).get(key, _DEFAULT_DISCOVERY[key])
                    if key in wanted and wanted[key] > current:
                        del wanted[key]
                table["discovery"] = wanted
            if table.get("roots", {}).get("extra"):
                inside, outside = _split_extra_roots(table["roots"]["extra"], source)
                table["roots"] = {**table["roots"], "extra": inside}
                if outside:
                    merged[_IGNORED_EXTRA_ROOTS] = [*merged.get(_IGNORED_EXTRA_ROOTS, []), *outside]
            if "permissions" in table:
                project = dict(table.pop("permissions"))
                # A project without a `defaultAction` has no opinion: it takes the user's.
                user_default = merged.get("permissions", {}).get("defaultAction", "ask")
                project.setdefault("defaultAction", user_default)
                table[_PROJECT_PERMISSIONS] = project
            extra = table.get("roots", {}).get("extra")
            if extra:
                table[_PROJECT_EXTRA_ROOTS] = list(extra)
        for key, value in table.items():
            if isinstance(value, dict):
                section = merged.setdefault(key, {})
                for sub, subvalue in value.items():
                    if (key, sub) in _CONCATENATED and sub in section:
                        section[sub] = [*section[sub], *subvalue]
                    else:
                        section[sub] = subvalue
            else:
                merged[key] = value
    sources = ", ".join(source for source, _ in tables) or "defaults"
    return parse_config_table(merged, sources, layered=True)


def _split_extra_roots(entries: list[str], source: str) -> tuple[list[str], list[str]]:
    """A project file's ``roots.extra`` split into the entries inside its repository and the
    ones that resolve outside it (``~``, absolute paths elsewhere, ``..`` or a link out)."""
    repo = os.path.realpath(extra_roots_base(source))
    inside, outside = [], []
    for entry in entries:
        path = os.path.realpath(os.path.join(repo, entry)) if not entry.startswith("~") else ""
        if path == repo or path.startswith(repo.rstrip(os.sep) + os.sep):
            inside.append(entry)
        else:
            outside.append(entry)
    return inside, outside


def _describe(exc: msgspec.ValidationError) -> str:
    # msgspec says "... - at `$.discovery.maxDepth`"; turn the $-path into a TOML key.
    message = str(exc)
    if " - at `$." in message:
        reason, _, where = message.partition(" - at `$.")
        return f"key '{where.rstrip('`')}': {reason}"
    if message.startswith("Object contains unknown field"):
        return f"unknown key {message.split('`')[1]!r}" + (
            f" in [{message.split('`$.')[1].rstrip('`')}]" if "`$." in message else ""
        )
    return message


PROJECT_CONFIG = (".agents", "skillsd.toml")


def user_config_path(env: Mapping[str, str]) -> str:
    """``$SKILLSD_CONFIG`` or ``config.toml`` in the platform's user config dir."""
    explicit = env.get("SKILLSD_CONFIG")
    if explicit:
        return explicit
    return os.path.join(platformdirs.user_config_dir("skillsd"), "config.toml")


def project_config_path(repo_root: str) -> str:
    """The project's optional config file under the repository root."""
    return os.path.join(repo_root, *PROJECT_CONFIG)


def is_project_config(path: str) -> bool:
    """Is ``path`` a project's ``.agents/skillsd.toml`` (rather than the user's config)?"""
    directory = os.path.dirname(os.path.abspath(path))
    return (
        os.path.basename(path) == PROJECT_CONFIG[1]
        and os.path.basename(directory) == PROJECT_CONFIG[0]
    )


def extra_roots_base(path: str) -> str:
    """Where relative ``roots.extra`` entries of the config file ``path`` start from: the
    repository root for a project file, else the file's own directory (never the process cwd)."""
    directory = os.path.dirname(os.path.abspath(path))
    return os.path.dirname(directory) if is_project_config(path) else directory


def anchor_extra_roots(table: dict[str, Any], path: str) -> dict[str, Any]:
    """``table`` with its relative ``roots.extra`` entries made absolute (see above)."""
    roots = table.get("roots")
    if not isinstance(roots, dict) or not roots.get("extra"):
        return table
    base = extra_roots_base(path)
    anchored = [
        e if os.path.isabs(e) or e == "~" or e.startswith("~" + os.sep) else os.path.join(base, e)
        for e in roots["extra"]
    ]
    return {**table, "roots": {**roots, "extra": anchored}}
