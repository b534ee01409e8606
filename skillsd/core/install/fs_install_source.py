"""Where skills to install come from: the source string, and the skills found in a fetched tree.

:func:`parse_source` turns what a user typed (``./skills``, ``owner/repo``, a git URL, an archive)
into a :class:`Source`. :func:`find_skills` finds the skills of a fetched tree in the layouts
real collections use, without flags:

- a tree that is itself one skill (``SKILL.md`` at its top);
- a Claude Code marketplace (``.claude-plugin/marketplace.json``) or plugin
  (``.claude-plugin/plugin.json``): each plugin's ``skills`` paths, else its ``skills/`` folder;
- ``skills/<name>/SKILL.md`` (Anthropic's collection) and ``skills/.curated/<name>`` (OpenAI's;
  its ``.system`` and ``.experimental`` folders only when named with ``path``);
- the agents' own folders (``.agents/skills/<name>``, ``.claude/skills/<name>``, ...);
- else top-level ``<name>/SKILL.md`` folders, else a bounded search a few levels down.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from skillsd.core.discovery.agent_folders import SKILL_FOLDERS
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.fs_boundary import decode_json
from skillsd.core.install.lock_file import is_installable_name
from skillsd.core.skill.fs_skillfile import SKILL_FILE, read_skill_file

__all__ = [
    "ARCHIVE_SUFFIXES",
    "FoundSkill",
    "Source",
    "SourceError",
    "archive_suffix",
    "find_skills",
    "is_loopback_host",
    "parse_source",
    "relative_source_text",
    "select_skills",
]

SourceKind = Literal["git", "local", "archive", "mcp"]

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip", ".skill")
#: How deep the last-resort search for SKILL.md files goes below the tree's top.
_SEARCH_DEPTH = 4
#: Folders the last-resort search visits at most (a huge tree is not a skill collection).
_SEARCH_DIRS = 2000
#: The largest manifest (marketplace.json, plugin.json) read.
_MANIFEST_BYTES = 1024 * 1024
_SHORTHAND = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_SCP_LIKE = re.compile(r"[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)(.+)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


class SourceError(Exception):
    """A source string that names nothing installable (the message says why)."""

    def __init__(self, message: str, field: str = "source") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True, slots=True)
class Source:
    """A parsed source.

    ``location`` is what the fetcher uses (a URL for git and remote archives, an absolute path
    otherwise); ``text`` is what the lock records (a local path inside the lock's folder is kept
    relative, as ``./sub/dir``, so a teammate's clone finds it). ``ref``/``path`` come from a
    GitHub ``/tree/<ref>/<path>`` URL.
    """

    kind: SourceKind
    location: str
    text: str
    ref: str | None = None
    path: str | None = None
    remote: bool = False
    #: The name a tree that is itself one skill gets when its SKILL.md names none usable.
    default_name: str = ""


def archive_suffix(name: str) -> str | None:
    """The archive suffix ``name`` ends with (case-insensitive), or None."""
    lower = name.lower()
    return next((s for s in ARCHIVE_SUFFIXES if lower.endswith(s)), None)


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _repo_name(location: str) -> str:
    tail = location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    for suffix in (".git", *ARCHIVE_SUFFIXES):
        if tail.lower().endswith(suffix):
            tail = tail[: -len(suffix)]
    return tail


def relative_source_text(path: str, base: str) -> str:
    """``path`` as a lock records it: ``./sub/dir`` inside ``base``, else absolute."""
    rel = os.path.relpath(path, base)
    if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
        return path if rel != "." else "."
    return "./" + rel.replace(os.sep, "/")


def _parse_url(text: str) -> Source:
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme in ("mcp+https", "mcp+http"):
        return _parse_mcp(text)
    if scheme == "file":
        path = unquote(parts.path)
        if archive_suffix(path):
            return Source("archive", path, text, default_name=_repo_name(path))
        return Source("git", text, text, default_name=_repo_name(path))
    if scheme in ("ssh", "git+ssh"):
        return Source("git", text, text, remote=True, default_name=_repo_name(parts.path))
    if scheme not in ("https", "http"):
        raise SourceError(
            f"source {text!r}: {scheme}:// is not supported (use https://, ssh://, "
            "git@host:path, file:// or a local path)"
        )
    if scheme == "http" and not is_loopback_host(host):
        raise SourceError(
            f"source {text!r}: plain http:// is allowed only on a loopback address; use https://"
        )
    if parts.username or parts.password:
        raise SourceError(
            f"source {text!r}: credentials in a URL would be written to the lock file; "
            "use a git credential helper instead"
        )
    if archive_suffix(parts.path):
        return Source("archive", text, text, remote=True, default_name=_repo_name(parts.path))
    segments = [s for s in parts.path.split("/") if s]
    if host.lower() == "github.com" and len(segments) >= 4 and segments[2] == "tree":
        # A folder's address as the browser shows it: https://github.com/o/r/tree/<ref>/<path>.
        repo = f"https://github.com/{segments[0]}/{segments[1]}"
        sub = "/".join(segments[4:]) or None
        return Source(
            "git",
            repo,
            repo,
            ref=segments[3],
            path=sub,
            remote=True,
            default_name=segments[-1] if sub else segments[1],
        )
    return Source("git", text, text, remote=True, default_name=_repo_name(parts.path))


def _parse_mcp(text: str) -> Source:
    """``mcp+https://host/mcp#<skill>``: one skill of a skills server (docs/remote.md); plain
    ``mcp+http`` only on a loopback address."""
    url, _, skill = text[len("mcp+") :].partition("#")
    parts = urlsplit(url)
    if not skill or not is_installable_name(skill):
        raise SourceError(
            f"source {text!r}: name the skill after '#' (mcp+https://host/mcp#<skill>)"
        )
    if parts.scheme == "http" and not is_loopback_host(parts.hostname or ""):
        raise SourceError(
            f"source {text!r}: plain mcp+http:// is allowed only on a loopback address; "
            "use mcp+https://"
        )
    if parts.username or parts.password or not parts.hostname:
        raise SourceError(f"source {text!r}: not a skills server's address (no credentials)")
    return Source("mcp", url, text, path=skill, remote=True, default_name=skill)


def _is_git_repository(path: str) -> bool:
    """A working tree (``.git`` in it) or a bare repository (``HEAD``, ``objects/``, ``refs/``):
    a git source, read through its commits, not copied as a folder."""
    if os.path.lexists(os.path.join(path, ".git")):
        return True
    return (
        os.path.isfile(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def parse_source(text: str, *, base: str, home: str) -> Source:
    """Parse a source string; local paths are taken from ``base`` (the cwd, or the lock's
    folder when restoring). Raises :class:`SourceError`."""
    text = text.strip()
    if not text or "\0" in text:
        raise SourceError("source is empty" if not text else "source holds a NUL character")
    if _SCHEME.match(text):
        return _parse_url(text)
    scp = _SCP_LIKE.fullmatch(text)
    if scp and not os.path.exists(os.path.join(base, text)):
        return Source("git", text, text, remote=True, default_name=_repo_name(scp.group(1)))
    expanded = home + text[1:] if text == "~" or text.startswith("~/") else text
    path = os.path.normpath(os.path.join(base, expanded))
    if os.path.isdir(path):
        kind: SourceKind = "git" if _is_git_repository(path) else "local"
        return Source(kind, path, relative_source_text(path, base), default_name=_repo_name(path))
    if os.path.isfile(path):
        if archive_suffix(path) is None:
            raise SourceError(
                f"source {text!r} is a file but not an archive (.zip, .tar.gz, .tgz, .skill)"
            )
        return Source(
            "archive", path, relative_source_text(path, base), default_name=_repo_name(path)
        )
    if _SHORTHAND.fullmatch(text) and not text.startswith("."):
        url = f"https://github.com/{text}"
        return Source("git", url, text, remote=True, default_name=_repo_name(text))
    raise SourceError(f"source {text!r}: no such file or folder ({path})")


# -- skills in a fetched tree -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FoundSkill:
    """A skill found in a fetched tree: ``rel`` is its folder relative to the tree (POSIX, ``.``
    for the tree itself), ``name`` what it is installed as (its frontmatter ``name`` when that
    is a usable folder name, else its folder's name), ``dir_name`` its folder's own name."""

    name: str
    rel: str
    dir_name: str


def _is_skill(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, SKILL_FILE))


def _subskills(folder: str) -> list[str]:
    """Folders directly under ``folder`` holding a SKILL.md (hidden ones left out)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        os.path.join(folder, n)
        for n in names
        if not n.startswith(".") and _is_skill(os.path.join(folder, n))
    ]


def _inside(tree: str, path: str) -> bool:
    real_tree = os.path.realpath(tree)
    real = os.path.realpath(path)
    return real == real_tree or real.startswith(real_tree + os.sep)


def _read_json(tree: str, path: str) -> object:
    """A manifest's JSON; None when there is none. One that is there but is not usable JSON
    (nested past the limit included) is a :class:`SourceError` naming it within ``tree``:
    guessing past a broken manifest could install what it does not list."""
    try:
        read = read_regular_file(path, _MANIFEST_BYTES)
    except (OSError, ValueError):
        return None
    if read.over_cap:
        return None
    try:
        return decode_json(read.data)
    except ValueError as exc:
        shown = os.path.relpath(path, tree).replace(os.sep, "/")
        raise SourceError(f"{shown}: not usable JSON ({exc})") from None


def _manifest_paths(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _plugin_skills(tree: str, plugin_root: str, skills_field: object) -> list[str]:
    found: list[str] = []
    for entry in _manifest_paths(skills_field):
        folder = os.path.normpath(os.path.join(plugin_root, entry))
        if not _inside(tree, folder):
            continue
        found.extend([folder] if _is_skill(folder) else _subskills(folder))
    found.extend(_subskills(os.path.join(plugin_root, "skills")))
    return found


def _marketplace_skills(tree: str, base: str) -> list[str]:
    found: list[str] = []
    plugin_json = _read_json(tree, os.path.join(base, ".claude-plugin", "plugin.json"))
    if isinstance(plugin_json, dict):
        found.extend(_plugin_skills(tree, base, plugin_json.get("skills")))
    market = _read_json(tree, os.path.join(base, ".claude-plugin", "marketplace.json"))
    if not isinstance(market, dict) or not isinstance(market.get("plugins"), list):
        return found
    metadata = market.get("metadata")
    plugin_base = base
    if isinstance(metadata, dict) and isinstance(metadata.get("pluginRoot"), str):
        plugin_base = os.path.normpath(os.path.join(base, metadata["pluginRoot"]))
    for plugin in market["plugins"]:
        if not isinstance(plugin, dict):
            continue
        source = plugin.get("source", "./")
        if not isinstance(source, str):
            continue  # a plugin fetched from elsewhere (github, url): not in this tree
        root = os.path.normpath(os.path.join(plugin_base, source))
        if _inside(tree, root):
            found.extend(_plugin_skills(tree, root, plugin.get("skills")))
    return found


def _searched(base: str) -> list[str]:
    """SKILL.md folders up to a few levels below ``base`` (hidden folders left out)."""
    found: list[str] = []
    level = [base]
    visited = 0
    for _depth in range(_SEARCH_DEPTH):
        following: list[str] = []
        for folder in level:
            for child in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                path = os.path.join(folder, child)
                if child.startswith(".") or child == "node_modules" or os.path.islink(path):
                    continue
                if not os.path.isdir(path):
                    continue
                visited += 1
                if visited > _SEARCH_DIRS:
                    return found
                if _is_skill(path):
                    found.append(path)
                else:
                    following.append(path)
        level = following
    return found


def _skill_name(folder: str, fallback: str) -> str:
    parsed = read_skill_file(os.path.join(folder, SKILL_FILE), mode="lenient", openai_yaml=False)
    if parsed.fields is not None and is_installable_name(parsed.fields.name):
        return parsed.fields.name
    return fallback


def find_skills(tree: str, *, path: str | None = None, default_name: str = "") -> list[FoundSkill]:
    """The skills of the fetched tree ``tree`` (or of its subfolder ``path``), in the order
    found, each real folder once. Raises :class:`SourceError` for a ``path`` leaving the tree."""
    base = tree
    if path:
        if os.path.isabs(path) or ".." in path.replace("\\", "/").split("/"):
            raise SourceError(f"path {path!r} must be relative inside the source", "path")
        base = os.path.normpath(os.path.join(tree, path))
        if not _inside(tree, base):
            raise SourceError(f"path {path!r} leaves the source", "path")
        if not os.path.isdir(base):
            raise SourceError(f"path {path!r} is not a folder of the source", "path")
    if _is_skill(base):
        folders = [base]
    else:
        folders = _marketplace_skills(tree, base)
        folders += _subskills(os.path.join(base, "skills"))
        folders += _subskills(os.path.join(base, "skills", ".curated"))
        for agent_folder in SKILL_FOLDERS:
            if agent_folder.scope == "repo":
                folders += _subskills(os.path.join(base, agent_folder.path))
        if not folders:
            folders = _subskills(base) or _searched(base)
    found: list[FoundSkill] = []
    seen: set[str] = set()
    for folder in folders:
        real = os.path.realpath(folder)
        if real in seen or not _inside(tree, folder):
            continue
        seen.add(real)
        rel = os.path.relpath(folder, tree).replace(os.sep, "/")
        dir_name = os.path.basename(folder) if rel != "." else default_name
        name = _skill_name(folder, dir_name)
        found.append(FoundSkill(name=name, rel=rel, dir_name=dir_name))
    return found


def select_skills(found: list[FoundSkill], names: list[str] | None) -> list[FoundSkill]:
    """The skills ``names`` picks (by installed name or folder name; all when None or empty).

    Raises :class:`SourceError` for a name that matches nothing, naming what was found, and for
    two selected skills that would be installed under one name.
    """
    if names:
        chosen: list[FoundSkill] = []
        for wanted in names:
            matches = [s for s in found if wanted in (s.name, s.dir_name)]
            if not matches:
                available = ", ".join(sorted({s.name for s in found})) or "none"
                raise SourceError(
                    f"skill {wanted!r} is not in the source (found: {available})", "names"
                )
            chosen.extend(m for m in matches if m not in chosen)
    else:
        chosen = list(found)
    by_name: dict[str, FoundSkill] = {}
    for skill in chosen:
        if not is_installable_name(skill.name):
            raise SourceError(
                f"skill at {skill.rel!r} has no usable folder name ({skill.name!r})", "names"
            )
        other = by_name.get(skill.name)
        if other is not None:
            raise SourceError(
                f"two skills would be installed as {skill.name!r}: {other.rel} and {skill.rel}; "
                "pick one with path",
                "path",
            )
        by_name[skill.name] = skill
    return chosen
