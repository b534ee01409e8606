"""The effective configuration: its types, defaults, parsing and layering (pure; no file I/O).

Files: the user's ``config.toml`` (``$SKILLSD_CONFIG`` overrides its path) and an optional
project ``.agents/skillsd.toml``; :mod:`skillsd.core.policy.fs_effective_config` reads them. An
unknown key is ignored with a warning naming the closest known key; a wrong type or value makes the
file invalid, the error naming the file, the key and what is allowed.

Layering keeps the origin of what decides permissions (docs/permissions.md): the project file's
``[permissions]`` table is kept apart (``Config.project_permissions``) for the policy to apply
only what tightens, and its ``[trust]`` table is dropped (a repository cannot trust itself).
"""

from __future__ import annotations

import json
import os
import tomllib
import typing
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import msgspec
import platformdirs

from skillsd.core import limits
from skillsd.core.catalog import suggest as suggest_defaults
from skillsd.core.errors import SkillsdError
from skillsd.core.name_distance import closest_names
from skillsd.core.policy.permissions import PermissionsConfig, Policy, policy_for, rule_problem
from skillsd.core.policy.trust import TrustConfig
from skillsd_protocol.errors import InvalidConfigData

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_MARKERS",
    "PROJECT_CONFIG",
    "Config",
    "DiscoveryConfig",
    "LedgerConfig",
    "LimitsConfig",
    "ListingConfig",
    "ProfilesConfig",
    "PromptConfig",
    "RemoteConfig",
    "RootsConfig",
    "SearchConfig",
    "SuggestConfig",
    "config_keys",
    "describe_type",
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


class SuggestConfig(_Table, frozen=True):
    #: The score a suggestion needs to activate (``skills.suggest``, the prompt hooks).
    threshold: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = suggest_defaults.DEFAULT_THRESHOLD
    #: The score the best suggestion needs for candidates to be offered when none activates.
    candidate_threshold: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = (
        suggest_defaults.CANDIDATE_THRESHOLD
    )
    #: Whether the semantic stage adds what the request and each skill mean (their meaning
    #: vectors' similarity) to the word matches; off, suggestions are lexical only.
    semantic: bool = True


class ProfilesConfig(_Table, frozen=True):
    #: Skills a profile never takes a description from (``skills.profile.plan``).
    pinned: tuple[str, ...] = ()


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
    #: The whole of one download (an archive source), whatever the server's pace.
    fetch_seconds: Annotated[float, msgspec.Meta(gt=0, le=86_400)] = limits.INSTALL_FETCH_SECONDS


class LedgerConfig(_Table, frozen=True):
    """The local use ledger (docs/usage.md), from the user's config only: a repository can
    neither turn recording off nor let skillsd read the user's agent transcripts."""

    #: Record each load, invoke and suggestion skillsd serves, in the state directory.
    enabled: bool = True
    #: Also read Claude Code's own transcripts (``~/.claude/projects``) for ``skillsd usage``.
    agent_transcripts: bool = False
    #: Bytes each of the ledger's two files (the current one, the one before) may hold.
    max_bytes: Annotated[int, msgspec.Meta(ge=4096, le=1 << 30)] = limits.LEDGER_FILE_BYTES


class ListingConfig(_Table, frozen=True):
    """Where the agents are installed, for their own text in ``skills.listing`` (docs/agents.md),
    when not their command on ``PATH``; from the user's config only (a repository cannot point
    skillsd at a file to read)."""

    #: Claude Code's ``claude`` (or its npm package's file holding its source).
    claude_code_path: str | None = None
    #: Codex's ``codex`` (its npm launcher, or its native binary).
    codex_path: str | None = None

    def paths(self) -> dict[str, str]:
        """The configured paths by agent (``~`` expanded)."""
        found = {"claude-code": self.claude_code_path, "codex": self.codex_path}
        return {agent: os.path.expanduser(path) for agent, path in found.items() if path}


class RemoteConfig(_Table, frozen=True):
    """A skills server whose skills join the catalog (``[[remote]]``, docs/remote.md)."""

    #: How its skills are qualified (``<name>:<skill>``).
    name: Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
    #: Its MCP endpoint: https, or http on a loopback address.
    url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    #: A private file holding the bearer token it expects.
    token_file: str | None = None
    #: Whether its skills' ``allowed-tools`` may grant anything.
    trusted: bool = False
    #: Ask for its listing again at least this often, even when its ``ttlMs`` allows longer.
    refresh_seconds: Annotated[float, msgspec.Meta(gt=0, le=86_400)] | None = None


class Config(_Table, frozen=True):
    """The whole effective configuration; hashable, so it can key the catalog cache."""

    validation: Literal["strict", "lenient"] = "lenient"
    discovery: DiscoveryConfig = DiscoveryConfig()
    roots: RootsConfig = RootsConfig()
    prompt: PromptConfig = PromptConfig()
    search: SearchConfig = SearchConfig()
    suggest: SuggestConfig = SuggestConfig()
    profiles: ProfilesConfig = ProfilesConfig()
    permissions: PermissionsConfig = PermissionsConfig()
    trust: TrustConfig = TrustConfig()
    limits: LimitsConfig = LimitsConfig()
    ledger: LedgerConfig = LedgerConfig()
    listing: ListingConfig = ListingConfig()
    remote: tuple[RemoteConfig, ...] = ()
    #: The project file's ``[[remote]]`` entries, set by layering only: used only when the
    #: repository is trusted (a repository cannot add a remote on its own).
    project_remotes: tuple[RemoteConfig, ...] = ()
    #: The project file's ``[permissions]``, set by layering only (never read from a file); its
    #: ``defaultAction`` is the user's when the project sets none.
    project_permissions: PermissionsConfig | None = None
    #: The project file's ``roots.extra`` entries, set by layering only: their skills' grants
    #: are bound to the repository's trust like repo-scope skills' (docs/permissions.md).
    project_extra_roots: tuple[str, ...] = ()
    #: The project file's ``roots.extra`` entries outside its repository, set by layering only:
    #: ignored (a repository cannot widen what is scanned), each reported as a warning.
    ignored_extra_roots: tuple[str, ...] = ()
    #: (file, warning) for each unknown key a file wrote (set by parsing only): it is ignored.
    unknown_keys: tuple[tuple[str, str], ...] = ()

    @property
    def policy(self) -> Policy:
        """The permission policy of this config (the user's and the project's tables)."""
        return policy_for(self.permissions, self.project_permissions)


DEFAULT_CONFIG = Config()

#: The keys parsing and layering fill in, which no file may set (a file writing one is told
#: the key is unknown, like any other).
_PROJECT_PERMISSIONS = "projectPermissions"
_PROJECT_EXTRA_ROOTS = "projectExtraRoots"
_IGNORED_EXTRA_ROOTS = "ignoredExtraRoots"
_UNKNOWN_KEYS = "unknownKeys"
_PROJECT_REMOTES = "projectRemotes"
_INTERNAL_KEYS = frozenset(
    (
        _PROJECT_PERMISSIONS,
        _PROJECT_EXTRA_ROOTS,
        _IGNORED_EXTRA_ROOTS,
        _UNKNOWN_KEYS,
        _PROJECT_REMOTES,
    )
)
#: Discovery bounds a project file may only lower.
_LOWER_ONLY = ("maxDepth", "maxDirs")
_DEFAULT_DISCOVERY = {"maxDepth": limits.DEFAULT_MAX_DEPTH, "maxDirs": limits.DEFAULT_MAX_DIRS}

#: Permission rule lists add up across files instead of the later file replacing them.
_CONCATENATED = {
    (table, k)
    for table in ("permissions", "projectPermissions")
    for k in ("finalDeny", "override", "deny", "allow")
}


def config_keys() -> Iterator[tuple[str, Any, Any]]:
    """(key path as written, its type, its default) for every key a file may set, in
    declaration order: the one list behind unknown-key warnings and ``docs/config.md``."""
    for field in msgspec.structs.fields(Config):
        if field.encode_name in _INTERNAL_KEYS:
            continue
        value = getattr(DEFAULT_CONFIG, field.name)
        if isinstance(value, msgspec.Struct):
            for sub in msgspec.structs.fields(type(value)):
                key = f"{field.encode_name}.{sub.encode_name}"
                yield key, sub.type, getattr(value, sub.name)
        else:
            yield field.encode_name, field.type, value


def describe_type(annotation: Any) -> str:
    """A config type as a user reads it: ``integer, 0 to 1000``, ``"xml" | "markdown"``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Annotated:
        meta = next((a for a in args[1:] if isinstance(a, msgspec.Meta)), None)
        text = describe_type(args[0])
        if meta is not None and (meta.ge is not None or meta.le is not None):
            low = "" if meta.ge is None else str(meta.ge)
            high = "" if meta.le is None else str(meta.le)
            text += f", {low} to {high}"
        return text
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin is tuple:
        if isinstance(args[0], type) and issubclass(args[0], msgspec.Struct):
            keys = ", ".join(f.encode_name for f in msgspec.structs.fields(args[0]))
            return f"array of tables ({keys})"
        return f"list of {describe_type(args[0])}"
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
        annotation, str(annotation)
    )


def _known_keys() -> dict[str, Any]:
    keys: dict[str, Any] = {}
    for key, annotation, _ in config_keys():
        keys[key] = annotation
        table, _, _ = key.rpartition(".")
        if table:
            keys.setdefault(table, dict)
    return keys


def _leaf_paths(value: Any, prefix: str) -> Iterator[str]:
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            yield from _leaf_paths(sub, f"{prefix}.{key}")
    else:
        yield prefix


def split_unknown_keys(
    data: dict[str, Any], source: str
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """``data`` without the keys no config has, and one warning for each ("`promt.maxBytes`
    is not a setting; did you mean `prompt.maxBytes`?"): a typo costs a warning, not every
    command."""
    known = _known_keys()
    by_lower = {key.lower(): key for key in known if known[key] is not dict}
    clean: dict[str, Any] = {}
    warnings: list[tuple[str, str]] = []
    for key, value in data.items():
        if key in known and known[key] is dict and isinstance(value, dict):
            table = {}
            for sub, subvalue in value.items():
                if f"{key}.{sub}" in known:
                    table[sub] = subvalue
                else:
                    warnings.extend(
                        _unknown(p, by_lower, source) for p in _leaf_paths(subvalue, f"{key}.{sub}")
                    )
            clean[key] = table
        elif key in known:
            clean[key] = value
        else:
            warnings.extend(_unknown(p, by_lower, source) for p in _leaf_paths(value, key))
    return clean, warnings


def _unknown(path: str, by_lower: dict[str, str], source: str) -> tuple[str, str]:
    close = closest_names(path.lower(), by_lower, limit=1)
    hint = f"; did you mean `{by_lower[close[0]]}`?" if close else " (ignored)"
    return source, f"`{path}` is not a setting{hint}"


# msgspec works a Struct type's decoding information out on first use and caches it on the
# type; two threads doing that at once for one type can crash the process (msgspec 0.22,
# seen with two catalog lookups parsing config files). Building a decoder works it out now,
# at import, under the import lock.
msgspec.json.Decoder(Config)


def parse_config_table(data: dict[str, Any], source: str) -> Config:
    """Validate one config table; errors name the file, the key path and what is allowed."""
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        raise SkillsdError(
            f"{source}: invalid config: {_describe(exc)}", InvalidConfigData(path=source)
        ) from None
    _check_rules(config.permissions, source)
    for remotes in (config.remote, config.project_remotes):
        names = [r.name for r in remotes]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise SkillsdError(
                f"{source}: invalid config: key 'remote': the name {twice[0]!r} is given twice",
                InvalidConfigData(path=source),
            )
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
    """Parse TOML text and validate it; returns the table for layering, its unknown keys left
    out and reported under ``unknownKeys``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SkillsdError(
            f"{source}: invalid TOML: {exc}", InvalidConfigData(path=source)
        ) from None
    data, warnings = split_unknown_keys(data, source)
    if warnings:
        data[_UNKNOWN_KEYS] = warnings
    parse_config_table(data, source)
    return data


def layer_configs(tables: list[tuple[str, dict[str, Any]]]) -> Config:
    """Merge validated tables in order (later wins per key; permission lists concatenate).

    A project file's (:func:`is_project_config`) ``[permissions]`` goes to
    ``project_permissions``; its ``[trust]``, ``[limits]`` and ``[ledger]`` are dropped; its
    ``roots.extra`` entries outside the repository are set aside (``ignored_extra_roots``) and
    its discovery bounds only lower the user's: a repository cannot trust itself or widen what
    is scanned."""
    merged: dict[str, Any] = {}
    for source, table in tables:
        if is_project_config(source):
            table = _project_table(table, source, merged)
        for key, value in table.items():
            if isinstance(value, dict):
                section = merged.setdefault(key, {})
                for sub, subvalue in value.items():
                    if (key, sub) in _CONCATENATED and sub in section:
                        section[sub] = [*section[sub], *subvalue]
                    else:
                        section[sub] = subvalue
            elif key == _UNKNOWN_KEYS:
                merged[key] = [*merged.get(key, []), *value]
            else:
                merged[key] = value
    sources = ", ".join(source for source, _ in tables) or "defaults"
    return parse_config_table(merged, sources)


def _project_table(table: dict[str, Any], source: str, merged: dict[str, Any]) -> dict[str, Any]:
    """A project file's table as :func:`layer_configs` layers it over ``merged`` (what the
    files before it set): what a repository may not decide dropped or set aside."""
    table = dict(table)
    table.pop("trust", None)
    table.pop("limits", None)
    table.pop("ledger", None)
    table.pop("listing", None)  # a repository cannot choose a file for skillsd to read
    if "remote" in table:
        table[_PROJECT_REMOTES] = table.pop("remote")
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
    return table


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
        key = where.rstrip("`")
        annotation = _known_keys().get(key.partition("[")[0])
        allowed = "" if annotation in (None, dict) else f" (allowed: {describe_type(annotation)})"
        return f"key '{key}': {reason}{allowed}"
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
