"""Skills that arrive inside agents' plugins (docs/agents.md, "Plugins"): where each agent keeps
its installed plugins, which are enabled, and the skills folders of each.

Read here, from small bounded files (an agent's registry and settings, a plugin's manifest):

- Claude Code: ``$CLAUDE_CONFIG_DIR/plugins/installed_plugins.json`` (``{"plugins": {"p@mkt":
  [{"installPath", "version"}]}}``), enabled by ``enabledPlugins`` in the user's
  ``settings.json``, else by the manifest's ``defaultEnabled``; the project's
  ``.claude/settings.json`` / ``settings.local.json`` may disable one, and enable one the user
  has not only once the repository is trusted (its skills' grants then need that trust too);
- Codex: ``$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/``, enabled by
  ``[plugins."p@mkt"] enabled = true`` in ``$CODEX_HOME/config.toml``;
- Copilot CLI: ``$COPILOT_HOME/installed-plugins/<marketplace>/<plugin>/`` (every installed one);
- Gemini CLI: ``~/.gemini/extensions/<extension>/`` (skills not namespaced);
- the vendor-neutral Agent Plugins layout that Goose installs: ``~/.agents/plugins/<plugin>/``.

A plugin's skills folders are its ``skills/`` plus the ``./`` paths its manifest's ``skills``
names; a plugin holding only a root ``SKILL.md`` is one skill. Nothing here follows a path out of
the plugin's folder: such a folder is reported and left out, and the scan is told to keep below
the plugin's real folder (:attr:`PluginSkills.within`). A file that exists but cannot be used
(not JSON, nested too deep, too large, not a regular file) is reported and ignored.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillsd.core import limits
from skillsd.core.discovery.agent_folders import expand_folder
from skillsd.core.fs.fs_boundary import decode_json, inside, read_file
from skillsd_protocol import Diagnostic
from skillsd_protocol.model import PluginInfo

__all__ = ["PluginFolders", "PluginSkills", "plugin_skill_folders"]

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
    #: Only a repository's settings enabled the plugin: its skills' grants need the repository
    #: to be trusted, as repo skills' do.
    from_project: bool = False
    #: The plugin's real folder: a folder below ``path`` leading out of it is not read.
    within: str | None = None


@dataclass(slots=True)
class PluginFolders:
    """The skills folders of the enabled plugins, and what was wrong on the way."""

    folders: list[PluginSkills] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def problem(self, code: str, path: str, message: str) -> None:
        self.diagnostics.append(
            Diagnostic(severity="warning", code=code, message=f"{path}: {message}", path=path)
        )


def _read(path: str, out: PluginFolders) -> bytes | None:
    """The bytes of ``path``; None (reported unless the file is simply not there) otherwise."""
    try:
        data, over = read_file(path, limits.MAX_CONFIG_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        out.problem("plugin.unreadable", path, f"{exc.strerror or exc}; ignored")
        return None
    except ValueError as exc:  # a NUL in a registry's installPath
        out.problem("plugin.unreadable", path, f"{exc}; ignored")
        return None
    if over:
        out.problem(
            "plugin.unreadable",
            path,
            f"larger than {limits.MAX_CONFIG_FILE_BYTES} bytes; ignored",
        )
        return None
    return data


def _read_json(path: str, out: PluginFolders) -> Any:
    data = _read(path, out)
    if data is None:
        return None
    try:
        return decode_json(data)
    except ValueError as exc:
        out.problem("plugin.unreadable", path, f"not usable JSON ({exc}); ignored")
        return None


def _read_toml(path: str, out: PluginFolders) -> dict[str, Any]:
    data = _read(path, out)
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # tomllib recurses on nested arrays
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        out.problem("plugin.unreadable", path, f"not usable TOML ({reason}); ignored")
        return {}


def _manifest(folder: str, locations: tuple[str, ...], out: PluginFolders) -> dict[str, Any]:
    for location in locations:
        data = _read_json(os.path.join(folder, location), out)
        if isinstance(data, dict):
            return data
    return {}


def _kept_inside(real_folder: str, path: str, out: PluginFolders) -> bool:
    """Whether ``path`` (a skills folder of the plugin) stays in the plugin's real folder;
    a folder leading out of it is reported."""
    if inside(real_folder, os.path.realpath(path)):
        return True
    how = "a symbolic link" if os.path.islink(path) else "a path"
    out.problem(
        "plugin.outside",
        path,
        f"{how} leading outside the plugin's folder {real_folder}; its skills are not read",
    )
    return False


def _skill_folders(
    folder: str,
    manifest: Mapping[str, Any],
    plugin: PluginInfo,
    out: PluginFolders,
    *,
    namespaced: bool = True,
    from_project: bool = False,
) -> None:
    """``skills/`` and the manifest's ``skills`` paths; a root SKILL.md alone is the plugin."""
    real = os.path.realpath(folder)
    named = manifest.get("skills")
    extra = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    paths = [os.path.join(folder, "skills")]
    paths += [os.path.normpath(os.path.join(folder, e)) for e in extra if isinstance(e, str)]
    found = [
        PluginSkills(p, plugin, namespaced, from_project, real)
        for p in dict.fromkeys(paths)
        if os.path.isdir(p) and _kept_inside(real, p, out)
    ]
    if not found and os.path.isfile(os.path.join(folder, "SKILL.md")):
        found.append(PluginSkills(folder, plugin, namespaced, from_project, real))
    out.folders += found


def _name(manifest: Mapping[str, Any], fallback: str) -> str:
    name = manifest.get("name")
    return name if isinstance(name, str) and name.strip() else fallback


def _version(manifest: Mapping[str, Any], fallback: str | None) -> str | None:
    version = manifest.get("version")
    return version if isinstance(version, str) and version else fallback


def _split(key: str) -> tuple[str, str | None]:
    plugin, at, marketplace = key.partition("@")
    return plugin, (marketplace or None) if at else None


def _enabled_plugins(path: str, out: PluginFolders) -> dict[str, bool]:
    data = _read_json(path, out)
    flags = data.get("enabledPlugins") if isinstance(data, dict) else None
    if not isinstance(flags, dict):
        return {}
    return {k: v for k, v in flags.items() if isinstance(v, bool)}


def _claude_code(
    home: str, env: Mapping[str, str], repo_root: str, trusted: bool, out: PluginFolders
) -> None:
    base = expand_folder("$CLAUDE_CONFIG_DIR", home=home, env=env)
    registry = _read_json(os.path.join(base, "plugins", "installed_plugins.json"), out)
    installed = registry.get("plugins") if isinstance(registry, dict) else None
    if not isinstance(installed, dict):
        return
    user = _enabled_plugins(os.path.join(base, "settings.json"), out)
    #: The project's word on a plugin and the file that said it (the local file wins).
    project: dict[str, tuple[bool, str]] = {}
    for name in ("settings.json", "settings.local.json"):
        where = os.path.join(repo_root, ".claude", name)
        project.update((k, (v, where)) for k, v in _enabled_plugins(where, out).items())
    for key, copies in installed.items():
        if not isinstance(key, str) or not isinstance(copies, list):
            continue
        for copy in copies:
            path = copy.get("installPath") if isinstance(copy, dict) else None
            if not isinstance(path, str) or not os.path.isdir(path):
                continue
            manifest = _manifest(path, _CLAUDE_MANIFESTS, out)
            users = user.get(key, manifest.get("defaultEnabled") is True)
            said, where = project.get(key, (None, ""))
            # A repository only tightens: it may disable a plugin; enabling one the user has
            # not is its own grant of skills (and their allowed-tools), so it needs trust.
            from_project = said is True and not users
            if said is False or not (users or from_project):
                continue
            if from_project and not trusted:
                out.problem(
                    "plugin.needs_trust",
                    where,
                    f"enables the plugin {key}, which your own settings do not; not loaded "
                    "until you trust the repository (`skillsd trust`)",
                )
                break
            name, marketplace = _split(key)
            version = copy.get("version")
            info = PluginInfo(
                name=_name(manifest, name),
                marketplace=marketplace,
                version=_version(manifest, version if isinstance(version, str) else None),
                agent="claude-code",
            )
            _skill_folders(path, manifest, info, out, from_project=from_project)
            break  # one installed copy per plugin is active


def _codex(home: str, env: Mapping[str, str], out: PluginFolders) -> None:
    base = expand_folder("$CODEX_HOME", home=home, env=env)
    table = _read_toml(os.path.join(base, "config.toml"), out).get("plugins")
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
        manifest = _manifest(path, _CODEX_MANIFESTS, out)
        info = PluginInfo(
            name=_name(manifest, name),
            marketplace=marketplace,
            version=_version(manifest, versions[-1]),
            agent="codex",
        )
        _skill_folders(path, manifest, info, out)


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []


def _installed_tree(
    folder: str,
    agent: str,
    manifests: tuple[str, ...],
    out: PluginFolders,
    *,
    marketplaces: bool,
    namespaced: bool,
) -> None:
    """Every plugin under ``folder`` (``<marketplace>/<plugin>`` or ``<plugin>``)."""
    groups = _subfolders(folder) if marketplaces else [""]
    for marketplace in groups:
        parent = os.path.join(folder, marketplace)
        for entry in _subfolders(parent):
            path = os.path.join(parent, entry)
            manifest = _manifest(path, manifests, out)
            info = PluginInfo(
                name=_name(manifest, entry),
                marketplace=(marketplace or None) if marketplace != "_direct" else None,
                version=_version(manifest, None),
                agent=agent,
            )
            _skill_folders(path, manifest, info, out, namespaced=namespaced)


def plugin_skill_folders(
    *, home: str, env: Mapping[str, str], repo_root: str, trusted: bool = False
) -> PluginFolders:
    """The skills folders of every enabled plugin of every agent, in a stable order.

    ``trusted`` is the workspace trust of ``repo_root``: without it, a plugin that only the
    repository's settings enable is left out (with a ``plugin.needs_trust`` diagnostic)."""
    out = PluginFolders()
    copilot = expand_folder("$COPILOT_HOME", home=home, env=env)
    gemini = expand_folder("$GEMINI_CLI_HOME/.gemini", home=home, env=env)
    _claude_code(home, env, repo_root, trusted, out)
    _codex(home, env, out)
    _installed_tree(
        os.path.join(copilot, "installed-plugins"),
        "copilot",
        _COPILOT_MANIFESTS,
        out,
        marketplaces=True,
        namespaced=True,
    )
    _installed_tree(
        os.path.join(gemini, "extensions"),
        "gemini-cli",
        _GEMINI_MANIFESTS,
        out,
        marketplaces=False,
        namespaced=False,
    )
    _installed_tree(
        os.path.join(home, ".agents", "plugins"),
        "goose",
        _OPEN_MANIFESTS,
        out,
        marketplaces=False,
        namespaced=True,
    )
    return out
