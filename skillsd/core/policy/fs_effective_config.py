"""The effective configuration of a working directory: the config files read, re-read only when
one changed (the file I/O that :mod:`skillsd.core.policy.config` leaves out).

Order matters: the user's config is read first because it may change the repository markers,
which decide where the project's ``.agents/skillsd.toml`` is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillsd.core import limits
from skillsd.core.discovery.fs_repo_roots import RepoRoots
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.bounded_read import NotRegularFile, read_regular_file
from skillsd.core.fs.file_version import StatKey, stat_key
from skillsd.core.policy.config import (
    DEFAULT_CONFIG,
    Config,
    anchor_extra_roots,
    layer_configs,
    parse_config_text,
    project_config_path,
    user_config_path,
)
from skillsd_protocol.errors import InvalidConfigData

__all__ = ["ConfigSource", "load_config", "read_config_file"]


class ConfigSource:
    """Finds the effective config for a cwd; re-reads a file only when its stat changed."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._files: dict[str, tuple[tuple[StatKey | None, ...], Config, list[str]]] = {}
        self._roots = RepoRoots(env)

    def paths_for(self, repo_root: str) -> list[str]:
        return [user_config_path(self._env), project_config_path(repo_root)]

    def load(
        self, paths: list[str], signature: tuple[StatKey | None, ...] | None = None
    ) -> tuple[Config, list[str]]:
        """Layered config of ``paths``; raises ``SkillsdError`` naming a bad file.
        ``signature``: each path's `stat_key`, when the caller took them just now."""
        if signature is None:
            signature = tuple(stat_key(p) for p in paths)
        key = "\0".join(paths)
        cached = self._files.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1], cached[2]
        config, sources = load_config(paths)
        self._files[key] = (signature, config, sources)
        return config, sources

    def user(self) -> Config:
        """The user's own config alone (where ``[trust]`` is read: workspace trust)."""
        return self.load([user_config_path(self._env)])[0]

    def for_cwd(self, cwd: str) -> tuple[Config, list[str], str]:
        """(config, sources, repo root): user config first (it may change the markers)."""
        user_path = user_config_path(self._env)
        user_key = stat_key(user_path)  # once for both layerings
        user_only, _ = self.load([user_path], (user_key,))
        repo_root = self._roots.find(cwd, user_only.discovery.markers)
        project_path = project_config_path(repo_root)
        config, sources = self.load([user_path, project_path], (user_key, stat_key(project_path)))
        return config, sources, repo_root


def read_config_file(path: str) -> dict[str, Any] | None:
    """The validated table of one config file, or None when it does not exist.

    A FIFO, device or socket in its place, or a file over ``MAX_CONFIG_FILE_BYTES``, is an
    ``invalid_config`` error naming it; the read never blocks.
    """
    try:
        read = read_regular_file(path, limits.MAX_CONFIG_FILE_BYTES)
        if read.over_cap:
            raise ValueError(f"larger than {limits.MAX_CONFIG_FILE_BYTES} bytes")
        # As a file opened in text mode reads it: universal newlines.
        text = read.data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise SkillsdError(
            f"{path}: cannot read config: {exc.strerror}", InvalidConfigData(path=path)
        ) from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise SkillsdError(
            f"{path}: cannot read config: {exc}", InvalidConfigData(path=path)
        ) from None
    return parse_config_text(text, path)


def load_config(paths: list[str]) -> tuple[Config, list[str]]:
    """Layer the config files that exist among ``paths`` (in order); returns the sources used."""
    tables = [
        (p, anchor_extra_roots(t, p)) for p in paths if (t := read_config_file(p)) is not None
    ]
    if not tables:
        return DEFAULT_CONFIG, []
    return layer_configs(tables), [p for p, _ in tables]
