"""The effective configuration of a working directory, re-read only when a file changed.

Order matters: the user's config is read first because it may change the repository markers,
which decide where the project's ``.agents/skillsd.toml`` is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from skillsd.core.config import Config, load_config, project_config_path, user_config_path
from skillsd.core.discovery import find_repo_root


class ConfigSource:
    """Finds the effective config for a cwd; re-reads a file only when its stat changed."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._files: dict[str, tuple[tuple[_Signature, ...], Config, list[str]]] = {}

    def paths_for(self, repo_root: str) -> list[str]:
        return [user_config_path(self._env), project_config_path(repo_root)]

    def load(self, paths: list[str]) -> tuple[Config, list[str]]:
        """Layered config of ``paths``; raises ``SkillsdError`` naming a bad file."""
        signature = tuple(_stat_signature(p) for p in paths)
        key = "\0".join(paths)
        cached = self._files.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1], cached[2]
        config, sources = load_config(paths)
        self._files[key] = (signature, config, sources)
        return config, sources

    def for_cwd(self, cwd: str) -> tuple[Config, list[str], str]:
        """(config, sources, repo root): user config first (it may change the markers)."""
        user_only, _ = self.load([user_config_path(self._env)])
        repo_root = find_repo_root(cwd, user_only.discovery.markers, self._env)
        config, sources = self.load(self.paths_for(repo_root))
        return config, sources, repo_root


_Signature = tuple[int, int, int] | None


def _stat_signature(path: str) -> _Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
