"""Slash commands (docs/protocol.md): user-invocable skills plus Claude Code's legacy command files.

Command files are ``*.md`` under ``.claude/commands/`` in every directory of the repo chain
(nearest to ``cwd`` first, as skill discovery walks it) and under ``~/.claude/commands/``: a
plan's ``command_dirs`` (:func:`skillsd.core.discovery.fs_roots.compute_roots`). A file's
name is its stem; each folder above it inside the commands directory adds a ``folder:`` prefix
(``frontend/component.md`` is ``frontend:component``). The frontmatter is optional and parsed like
a skill's (all-strings YAML): ``description``, ``argument-hint``, ``arguments``,
``allowed-tools``, ``model`` and ``disable-model-invocation`` are read; a missing description is
the first non-empty line of the body. :func:`scan_commands` reads the files (bounded, regular files
only, problems as diagnostics); :func:`command_list` merges them with a catalog's skills.

Choices where the spec is silent (matching Claude Code where it is known):

- the same command name in two places: the first one found wins (repo chain nearest first, then
  the user's), the others get a ``command.duplicate`` warning;
- any enabled skill hides a command of its name, even one the user may not invoke (the name is
  the skill's: invoking it must not reach a different file);
- a heading line used as the description loses its ``#`` markers;
- a command file whose frontmatter does not parse is still a command (its whole text is the
  body) with a ``command.invalid_frontmatter`` warning.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from skillsd.core import limits
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.tree_walk import TreeWalk
from skillsd.core.skill.frontmatter import (
    FrontmatterError,
    decode_frontmatter,
    load_frontmatter,
    locate_frontmatter,
)
from skillsd.core.skill.host_fields import host_from_frontmatter
from skillsd.core.skill.validation import split_allowed_tools
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.messages import Command

__all__ = [
    "CommandFile",
    "CommandScan",
    "command_list",
    "read_command_file",
    "scan_commands",
    "skill_command",
]

_SUFFIX = ".md"


@dataclass(frozen=True, slots=True)
class CommandFile:
    """One legacy command file, read: its name, description and frontmatter fields."""

    name: str
    path: str
    description: str
    body: str
    argument_hint: str | None = None
    arguments: list[str] | None = None
    allowed_tools: list[str] | None = None
    model: str | None = None
    model_invocation: bool = True
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def as_command(self) -> Command:
        return Command(
            name=self.name,
            description=self.description,
            source="command",
            path=self.path,
            argument_hint=self.argument_hint,
            arguments=self.arguments,
        )


@dataclass(slots=True)
class CommandScan:
    """What :func:`scan_commands` found: files (first of each name), scan problems, and the
    folders it listed (to watch)."""

    files: list[CommandFile]
    diagnostics: list[Diagnostic]
    #: Real paths of the folders listed (what the watcher watches).
    walked: list[str] = field(default_factory=list)


def _warning(code: str, message: str, path: str, field_name: str | None = None) -> Diagnostic:
    return Diagnostic(severity="warning", code=code, message=message, path=path, field=field_name)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip()
        if text.startswith("#"):
            text = text.lstrip("#").strip()
        if text and text != "---":
            return text[: limits.MAX_DESCRIPTION_CHARS]
    return ""


def read_command_file(path: str, name: str) -> CommandFile | Diagnostic:
    """Read one command file (a diagnostic when it cannot be used at all)."""
    try:
        read = read_regular_file(path, limits.MAX_COMMAND_FILE_BYTES)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return _warning("command.unreadable", f"{path}: cannot read: {why}", path)
    if read.over_cap:
        return _warning(
            "command.too_large",
            f"{path}: more than {limits.MAX_COMMAND_FILE_BYTES} bytes; at most that many are read",
            path,
        )
    data = read.data
    diagnostics: list[Diagnostic] = []
    raw: dict[str, object] = {}
    body_bytes = data
    if data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
        try:
            located = locate_frontmatter(data, at_eof=True)
            if located is None:  # pragma: no cover - at_eof raises instead
                raise FrontmatterError("frontmatter.unclosed", "frontmatter not closed")
            raw = load_frontmatter(decode_frontmatter(data, located))
            body_bytes = data[located.body_offset :]
        except FrontmatterError as exc:
            message = exc.message.replace("SKILL.md", os.path.basename(path))
            diagnostics.append(
                _warning(
                    "command.invalid_frontmatter",
                    f"{path}: {message}; the whole file is used as the body",
                    path,
                )
            )
    body = body_bytes.decode("utf-8", errors="replace").replace("\r\n", "\n")
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        diagnostics.append(
            _warning(
                "host.invalid",
                f"{path}: field 'description' must be a string; the first body line is used",
                path,
                "description",
            )
        )
        description = None
    text = (description or "").strip() or _first_line(body)
    allowed: list[str] | None = None
    raw_tools = raw.get("allowed-tools")
    if isinstance(raw_tools, str):
        allowed = split_allowed_tools(raw_tools)
    elif isinstance(raw_tools, list) and all(isinstance(t, str) for t in raw_tools):
        allowed = [t.strip() for t in raw_tools if t.strip()]
    if raw_tools is not None and allowed is None:
        diagnostics.append(
            _warning(
                "host.invalid",
                f"{path}: field 'allowed-tools' must be a space-separated string or a list "
                "of strings; it grants nothing",
                path,
                "allowed-tools",
            )
        )
    reading = host_from_frontmatter(raw, path=path)
    diagnostics += reading.diagnostics
    values = reading.values
    return CommandFile(
        name=name,
        path=path,
        description=text,
        body=body,
        argument_hint=values.get("argument_hint"),
        arguments=values.get("arguments"),
        allowed_tools=allowed,
        model=values.get("model"),
        model_invocation=reading.model is not False,
        diagnostics=diagnostics,
    )


def _command_paths(
    directory: str, diagnostics: list[Diagnostic], walked: list[str]
) -> list[tuple[str, str]]:
    """``(name, path)`` of every ``*.md`` under ``directory``, breadth-first, by name within a
    folder; the folders listed go to ``walked`` (real paths)."""

    def unreadable(path: str, exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError):
            diagnostics.append(
                _warning("command.unreadable", f"{path}: cannot list: {exc.strerror}", path)
            )

    walk = TreeWalk(
        directory,
        max_depth=limits.MAX_COMMAND_DEPTH - 1,
        max_dirs=limits.MAX_COMMAND_DIRS,
        skip_hidden=True,
        on_error=unreadable,
    )
    found: list[tuple[str, str]] = []
    for folder in walk:
        walked.append(folder.real)
        rel = os.path.relpath(folder.path, directory)
        prefix = () if rel == os.curdir else tuple(rel.split(os.sep))
        for entry in sorted(folder.entries, key=lambda e: e.name):
            name = entry.name
            if name.startswith(".") or not name.endswith(_SUFFIX) or len(name) <= len(_SUFFIX):
                continue
            try:
                if entry.is_dir():
                    continue
            except OSError:
                continue
            found.append((":".join((*prefix, name[: -len(_SUFFIX)])), entry.path))
    if walk.dirs_hit:
        diagnostics.append(
            _warning(
                "command.max_dirs",
                f"{directory}: stopped after {limits.MAX_COMMAND_DIRS} folders",
                directory,
            )
        )
    diagnostics.extend(
        _warning("command.undecodable_name", f"{name}: the name is not UTF-8; skipped", name)
        for name in walk.undecodable
    )
    return found


def scan_commands(dirs: Iterable[str]) -> CommandScan:
    """Read every command file under ``dirs`` (in order; the first file of a name wins)."""
    files: dict[str, CommandFile] = {}
    diagnostics: list[Diagnostic] = []
    walked: list[str] = []
    for directory in dirs:
        for name, path in _command_paths(directory, diagnostics, walked):
            if name in files:
                diagnostics.append(
                    _warning(
                        "command.duplicate",
                        f"{path}: command /{name} is already defined by {files[name].path}; "
                        "this file is ignored",
                        path,
                    )
                )
                continue
            read = read_command_file(path, name)
            if isinstance(read, Diagnostic):
                diagnostics.append(read)
                continue
            files[name] = read
            diagnostics += read.diagnostics
    return CommandScan(files=list(files.values()), diagnostics=diagnostics, walked=walked)


def skill_command(skill: SkillMetadata) -> Command:
    """A user-invocable skill as a slash command (a plugin's namespaced: ``/plugin:skill``)."""
    host = skill.host
    return Command(
        name=skill.qualified_name or skill.name,
        description=skill.description,
        source="skill",
        path=skill.path,
        argument_hint=host.argument_hint if host else None,
        arguments=host.arguments if host else None,
        display_name=host.display_name if host else None,
        skill=skill.id,
    )


def command_list(skills: Sequence[SkillMetadata], files: Sequence[CommandFile]) -> list[Command]:
    """``skills.commands``: enabled user-invocable skills and the command files no enabled skill
    hides, sorted by name (then skills before files, then path)."""
    enabled = [s for s in skills if s.enabled]
    # A command file is hidden by a skill of its name; a plugin's namespaced skill hides none.
    taken = {s.name for s in enabled if s.qualified_name is None}
    commands = [skill_command(s) for s in enabled if s.invocation.user]
    commands += [f.as_command() for f in files if f.name not in taken]
    commands.sort(key=lambda c: (c.name, c.source != "skill", c.path))
    return commands
