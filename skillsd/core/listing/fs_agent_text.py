"""Reading the agents' own listing text out of the installed agent (docs/agents.md, "What each
agent shows its model"), by the recipes of :mod:`skillsd.core.listing.agent_text`.

The agent is found as its command on ``PATH`` (or a path given), followed to its npm package,
whose ``package.json`` names its version; Codex's package launches a native binary kept in a
platform package beside it, and that binary is what is read. The file is never run: it is read
as bytes through the bounded reader (a regular file, at most :data:`MAX_AGENT_FILE_BYTES`), in
windows, until every piece of the recipe is found, and the answer is kept per file version.
"""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass

from skillsd.core.fs.bounded_read import open_regular_file, read_at_most
from skillsd.core.fs.file_version import StatKey
from skillsd.core.fs.fs_boundary import decode_json, read_file
from skillsd.core.listing.agent_text import (
    AgentTextRecipe,
    Piece,
    assemble,
    digest,
    recipe_for,
)

__all__ = [
    "MAX_AGENT_FILE_BYTES",
    "AgentText",
    "InstalledAgent",
    "agent_text",
    "command_version",
    "find_installed",
    "read_pieces",
]

#: The largest agent file read (Claude Code 2.1.328's binary is 373 MB).
MAX_AGENT_FILE_BYTES = 1 << 30
#: How much of the file is read at once.
_WINDOW = 8 * 1024 * 1024
_MAX_PACKAGE_JSON = 64 * 1024
#: The npm packages of each agent, and the command that starts it.
_PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
_COMMANDS = {"claude-code": "claude", "codex": "codex"}


@dataclass(frozen=True, slots=True)
class InstalledAgent:
    """An installed agent: the file holding its text and its version (None: not known)."""

    agent: str
    path: str
    version: str | None


@dataclass(frozen=True, slots=True)
class AgentText:
    """The agent's own listing text, or why there is none (``why``)."""

    agent: str
    version: str | None = None
    path: str | None = None
    #: Claude Code: each bundled skill's description, by name.
    bundled: Mapping[str, str] | None = None
    #: Codex: the lines before its roots table.
    preamble: str | None = None
    why: str | None = None


def _on_path(command: str, env: Mapping[str, str]) -> str | None:
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        if not folder:
            continue
        candidate = os.path.join(folder, command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _package_version(folder: str, name: str) -> str | None:
    with contextlib.suppress(OSError, ValueError):
        data, over = read_file(os.path.join(folder, "package.json"), _MAX_PACKAGE_JSON)
        found = decode_json(data) if not over else None
        if isinstance(found, dict) and found.get("name") == name:
            version = found.get("version")
            return version if isinstance(version, str) else None
    return None


def _package_of(path: str, name: str) -> tuple[str, str] | None:
    """(package folder, version) of the npm package ``name`` holding ``path`` (a few folders
    up), or None."""
    folder = os.path.dirname(path)
    for _ in range(4):
        version = _package_version(folder, name)
        if version is not None:
            return folder, version
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def _codex_platform() -> str | None:
    system = platform.system().lower()
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if arch is None or system not in ("linux", "darwin"):
        return None
    return f"{system}-{arch}"


def _codex_binary(package: str) -> str | None:
    """The native binary Codex's npm launcher starts: in the platform package beside it."""
    plat = _codex_platform()
    if plat is None:
        return None
    for base in (
        os.path.join(os.path.dirname(package), f"codex-{plat}"),
        os.path.join(package, "node_modules", "@openai", f"codex-{plat}"),
    ):
        vendor = os.path.join(base, "vendor")
        with contextlib.suppress(OSError):
            for triple in sorted(os.listdir(vendor))[:16]:
                binary = os.path.join(vendor, triple, "bin", "codex")
                if os.path.isfile(binary):
                    return binary
    return None


def find_installed(
    agent: str, env: Mapping[str, str], configured: str | None = None
) -> InstalledAgent | None:
    """The installed ``agent`` (``claude-code`` or ``codex``): ``configured`` or its command
    on ``PATH``; None when it is not found."""
    command = configured or _on_path(_COMMANDS[agent], env)
    if command is None:
        return None
    real = os.path.realpath(command)
    found = _package_of(real, _PACKAGES[agent])
    if found is None:
        return InstalledAgent(agent, real, None)
    package, version = found
    if agent == "codex":
        binary = _codex_binary(package)
        return InstalledAgent(agent, binary or real, version if binary else None)
    return InstalledAgent(agent, real, version)


def command_version(
    agent: str, env: Mapping[str, str], configured: str | None = None
) -> tuple[str, StatKey | None] | None:
    """What changes when the agent (``configured``, or its command on ``PATH``) is replaced or
    upgraded: its command's real path and that file's version, cheaply, for caches of what
    depends on its text."""
    command = configured or _on_path(_COMMANDS[agent], env)
    if command is None:
        return None
    real = os.path.realpath(command)
    try:
        return real, StatKey.of(os.stat(real))
    except OSError:
        return real, None


def read_pieces(
    path: str, pieces: tuple[Piece, ...], *, from_end: bool, max_bytes: int = MAX_AGENT_FILE_BYTES
) -> tuple[dict[Piece, bytes], StatKey]:
    """The bytes of each of ``pieces`` found in the file ``path`` (its marker there, the bytes
    around it hashing to its digest), read window by window (from the end first when
    ``from_end``) until all are found. Raises ``OSError`` (the bounded reader's, or a file
    larger than ``max_bytes``)."""
    fd, st = open_regular_file(path)
    try:
        size = st.st_size
        if size > max_bytes:
            raise OSError(f"{path}: larger than {max_bytes} bytes, not read")
        reach = max((max(abs(p.offset), p.length) + len(p.marker) for p in pieces), default=0)
        overlap = 2 * reach
        starts = list(range(0, max(size, 1), _WINDOW))
        if from_end:
            starts.reverse()
        found: dict[Piece, bytes] = {}
        by_marker: dict[bytes, list[Piece]] = {}
        for piece in pieces:
            by_marker.setdefault(piece.marker, []).append(piece)
        for start in starts:
            begin = max(0, start - overlap)
            os.lseek(fd, begin, os.SEEK_SET)
            window = read_at_most(fd, min(size, start + _WINDOW + overlap) - begin)
            for marker, wanted in by_marker.items():
                _match(window, marker, [p for p in wanted if p not in found], found)
            if len(found) == len(pieces):
                break
    finally:
        os.close(fd)
    return found, StatKey.of(st)


def _match(window: bytes, marker: bytes, wanted: list[Piece], found: dict[Piece, bytes]) -> None:
    if not wanted:
        return
    at = window.find(marker)
    while at >= 0 and wanted:
        for piece in list(wanted):
            start = at - piece.offset
            data = window[start : start + piece.length] if start >= 0 else b""
            if len(data) == piece.length and digest(data) == piece.sha256:
                found[piece] = data
                wanted.remove(piece)
        at = window.find(marker, at + 1)


#: Texts already read: one per (agent, file path), kept with the file's version. Requests run
#: in file-operation threads: each step is one dict operation (atomic), and two requests that
#: miss together both read the file and store the same answer.
_CACHE: dict[tuple[str, str], tuple[StatKey, AgentText]] = {}
_MAX_CACHED = 8


def _pieces(recipe: AgentTextRecipe) -> tuple[Piece, ...]:
    parts = [*recipe.preamble, *(p for b in recipe.bundled for p in b.parts)]
    return tuple(dict.fromkeys(p for p in parts if isinstance(p, Piece)))


def _read(installed: InstalledAgent, recipe: AgentTextRecipe) -> AgentText:
    base = AgentText(installed.agent, installed.version, installed.path)
    pieces = _pieces(recipe)
    try:
        found, _ = read_pieces(installed.path, pieces, from_end=recipe.from_end)
    except OSError as exc:
        return _why(base, f"{installed.path}: not read ({exc.strerror or exc})")
    bundled, preamble, missing = assemble(recipe, found)
    if missing:
        return _why(
            base,
            f"{installed.path}: {len(missing)} of the agent's own texts skillsd looks for in "
            f"version {installed.version} were not found in it ({', '.join(missing[:5])})",
        )
    return AgentText(installed.agent, installed.version, installed.path, bundled or None, preamble)


def _why(base: AgentText, why: str) -> AgentText:
    return AgentText(base.agent, base.version, base.path, why=why)


def agent_text(agent: str, env: Mapping[str, str], configured: str | None = None) -> AgentText:
    """The installed ``agent``'s own listing text (blocking: it may read a large file once per
    version of it), or why it is not known: the agent is not installed, its version is not one
    skillsd has a recipe for, or the file does not hold what the recipe looks for."""
    installed = find_installed(agent, env, configured)
    if installed is None:
        command = configured or _COMMANDS[agent]
        return AgentText(
            agent, why=f"{command}: not found on PATH, so the agent's own text is not known"
        )
    recipe = recipe_for(agent, installed.version)
    if recipe is None:
        known = installed.version or "unknown"
        return AgentText(
            agent,
            installed.version,
            installed.path,
            why=f"{installed.path}: version {known}, for which skillsd does not know where the "
            "agent's own text lies",
        )
    switched = [name for name in recipe.env_switches if env.get(name)]
    if switched:
        return AgentText(
            agent,
            installed.version,
            installed.path,
            why=f"{', '.join(switched)} is set: the agent's own text differs from the one "
            "skillsd knows",
        )
    try:
        key: StatKey | None = StatKey.of(os.stat(installed.path))
    except OSError:
        key = None
    cache_key = (agent, installed.path)
    hit = _CACHE.get(cache_key)
    if hit is not None and key is not None and hit[0] == key:
        return hit[1]
    text = _read(installed, recipe)
    if key is not None:
        if len(_CACHE) >= _MAX_CACHED:
            _CACHE.clear()  # more installs than that is rare: start again
        _CACHE[cache_key] = (key, text)
    return text
