"""Skills that arrive inside agents' plugins (docs/agents.md, "Plugins"): where each agent keeps
its installed plugins, which are enabled, and the skills folders of each.

Read here, from small bounded files (an agent's registry and settings, a plugin's manifest):

- Claude Code: ``$CLAUDE_CONFIG_DIR/plugins/installed_plugins.json`` (``{"plugins": {"p@mkt":
  [{"installPath", "version"}]}}``), enabled by ``enabledPlugins`` in the user's
  ``settings.json`` and the project's ``.claude/settings.json`` / ``settings.local.json`` (the
  project's word wins), else by the manifest's ``defaultEnabled``;
- Codex: ``$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/``, enabled by
  ``[plugins."p@mkt"] enabled = true`` in ``$CODEX_HOME/config.toml``;
- Copilot CLI: ``$COPILOT_HOME/installed-plugins/<marketplace>/<plugin>/`` (every installed one);
- Gemini CLI: ``~/.gemini/extensions/<extension>/`` (skills not namespaced);
- the vendor-neutral Agent Plugins layout that Goose installs: ``~/.agents/plugins/<plugin>/``.

A plugin's skills folders are its ``skills/`` plus the ``./`` paths its manifest's ``skills``
names; a plugin holding only a root ``SKILL.md`` is one skill. Nothing here follows a path out of
the plugin's folder.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skillsd.core import limits
from skillsd.core.agent_folders import expand_folder
from skillsd.core.bounded_read import read_regular_file
from skillsd_protocol.model import PluginInfo

__all__ = ["PluginSkills", "plugin_skill_folders"]

#: Manifest locations, in the order each agent looks.
_CLAUDE_MANIFESTS = (".claude-plugin/plugin.json",)
_CODEX_MANIFESTS = (".codex-plugin/plugin.json", ".claude-plugin/plugin.json")
_COPILOT_MANIFESTS = (
    ".plugin/plugin.json",
    "plugin.json",
    ".github/plugin/plugin.json",
    ".claude-plugin/plugin.json",
)
_OPEN_MANIFESTS = (".goose-plugin/plugin.json", ".plugin/plugin.json", "plugin.json")
_GEMINI_MANIFESTS = ("gemini-extension.json",)


@dataclass(frozen=True, slots=True)
class PluginSkills:
    """One skills folder of an enabled plugin (or the plugin folder itself, for a plugin that
    is one skill)."""

    path: str
    plugin: PluginInfo
    #: Its skills are named ``plugin:skill`` (every agent but Gemini CLI namespaces them).
    namespaced: bool = True


def _read_json(path: str) -> Any:
    try:
        read = read_regular_file(path, limits.MAX_CONFIG_FILE_BYTES)
        if read.over_cap:
            return None
        return json.loads(read.data)
    except (OSError, ValueError):
        return None


def _read_toml(path: str) -> dict[str, Any]:
    try:
        read = read_regular_file(path, limits.MAX_CONFIG_FILE_BYTES)
        if read.over_cap:
            return {}
        return tomllib.loads(read.data.decode("utf-8"))
    except (OSError, ValueError):
        return {}


def _manifest(folder: str, locations: tuple[str, ...]) -> dict[str, Any]:
    for location in locations:
        data = _read_json(os.path.join(folder, location))
        if isinstance(data, dict):
            return data
    return {}


def _inside(folder: str, relative: str) -> str | None:
    """``relative`` (a manifest's ``./`` path) under ``folder``, or None when it leaves it."""
    base = os.path.realpath(folder)
    target = os.path.realpath(os.path.join(folder, relative))
    if target == base or target.startswith(base + os.sep):
        return os.path.normpath(os.path.join(folder, relative))
    return None


def _skill_folders(
    folder: str, manifest: Mapping[str, Any], plugin: PluginInfo
) -> list[PluginSkills]:
    """``skills/`` and the manifest's ``skills`` paths; a root SKILL.md alone is the plugin."""
    named = manifest.get("skills")
    extra = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    paths = [os.path.join(folder, "skills")]
    paths += [p for entry in extra if isinstance(entry, str) and (p := _inside(folder, entry))]
    found = [PluginSkills(p, plugin) for p in dict.fromkeys(paths) if os.path.isdir(p)]
    if not found and os.path.isfile(os.path.join(folder, "SKILL.md")):
        found.append(PluginSkills(folder, plugin))
    return found


def _name(manifest: Mapping[str, Any], fallback: str) -> str:
    name = manifest.get("name")
    return name if isinstance(name, str) and name.strip() else fallback


def _version(manifest: Mapping[str, Any], fallback: str | None) -> str | None:
    version = manifest.get("version")
    return version if isinstance(version, str) and version else fallback


def _split(key: str) -> tuple[str, str | None]:
    plugin, at, marketplace = key.partition("@")
    return plugin, (marketplace or None) if at else None


def _claude_code(home: str, env: Mapping[str, str], repo_root: str) -> Iterator[PluginSkills]:
    base = expand_folder("$CLAUDE_CONFIG_DIR", home=home, env=env)
    registry = _read_json(os.path.join(base, "plugins", "installed_plugins.json"))
    installed = registry.get("plugins") if isinstance(registry, dict) else None
    if not isinstance(installed, dict):
        return
    enabled: dict[str, bool] = {}
    for settings in (
        os.path.join(base, "settings.json"),
        os.path.join(repo_root, ".claude", "settings.json"),
        os.path.join(repo_root, ".claude", "settings.local.json"),
    ):
        data = _read_json(settings)
        flags = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(flags, dict):
            enabled.update({k: v for k, v in flags.items() if isinstance(v, bool)})
    for key, copies in installed.items():
        if not isinstance(key, str) or not isinstance(copies, list):
            continue
        for copy in copies:
            path = copy.get("installPath") if isinstance(copy, dict) else None
            if not isinstance(path, str) or not os.path.isdir(path):
                continue
            manifest = _manifest(path, _CLAUDE_MANIFESTS)
            on = enabled.get(key, manifest.get("defaultEnabled") is True)
            if not on:
                continue
            name, marketplace = _split(key)
            version = copy.get("version")
            info = PluginInfo(
                name=_name(manifest, name),
                marketplace=marketplace,
                version=_version(manifest, version if isinstance(version, str) else None),
                agent="claude-code",
            )
            yield from _skill_folders(path, manifest, info)
            break  # one installed copy per plugin is active


def _codex(home: str, env: Mapping[str, str]) -> Iterator[PluginSkills]:
    base = expand_folder("$CODEX_HOME", home=home, env=env)
    table = _read_toml(os.path.join(base, "config.toml")).get("plugins")
    if not isinstance(table, dict):
        return
    for key, settings in sorted(table.items()):
        if not (isinstance(settings, dict) and settings.get("enabled") is True):
            continue
        name, marketplace = _split(key)
        folder = os.path.join(base, "plugins", "cache", marketplace or "", name)
        versions = _subfolders(folder)
        if not versions:
            continue
        path = os.path.join(folder, versions[-1])
        manifest = _manifest(path, _CODEX_MANIFESTS)
        info = PluginInfo(
            name=_name(manifest, name),
            marketplace=marketplace,
            version=_version(manifest, versions[-1]),
            agent="codex",
        )
        yield from _skill_folders(path, manifest, info)


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []


def _installed_tree(
    folder: str, agent: str, manifests: tuple[str, ...], *, marketplaces: bool, namespaced: bool
) -> Iterator[PluginSkills]:
    """Every plugin under ``folder`` (``<marketplace>/<plugin>`` or ``<plugin>``)."""
    groups = _subfolders(folder) if marketplaces else [""]
    for marketplace in groups:
        parent = os.path.join(folder, marketplace)
        for entry in _subfolders(parent):
            path = os.path.join(parent, entry)
            manifest = _manifest(path, manifests)
            info = PluginInfo(
                name=_name(manifest, entry),
                marketplace=(marketplace or None) if marketplace != "_direct" else None,
                version=_version(manifest, None),
                agent=agent,
            )
            for found in _skill_folders(path, manifest, info):
                yield PluginSkills(found.path, info, namespaced)


def plugin_skill_folders(
    *, home: str, env: Mapping[str, str], repo_root: str
) -> list[PluginSkills]:
    """The skills folders of every enabled plugin of every agent, in a stable order."""
    copilot = expand_folder("$COPILOT_HOME", home=home, env=env)
    gemini = expand_folder("$GEMINI_CLI_HOME/.gemini", home=home, env=env)
    return [
        *_claude_code(home, env, repo_root),
        *_codex(home, env),
        *_installed_tree(
            os.path.join(copilot, "installed-plugins"),
            "copilot",
            _COPILOT_MANIFESTS,
            marketplaces=True,
            namespaced=True,
        ),
        *_installed_tree(
            os.path.join(gemini, "extensions"),
            "gemini-cli",
            _GEMINI_MANIFESTS,
            marketplaces=False,
            namespaced=False,
        ),
        *_installed_tree(
            os.path.join(home, ".agents", "plugins"),
            "goose",
            _OPEN_MANIFESTS,
            marketplaces=False,
            namespaced=True,
        ),
    ]
