"""The skills Claude Code's model used, from Claude Code's own transcripts (docs/usage.md).

Claude Code 2.1 keeps one JSON Lines transcript per conversation in
``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``) ``/projects/<folder>/<session id>.jsonl``, where
``<folder>`` is the conversation's working directory with every character other than an ASCII
letter or digit replaced by ``-`` (``/home/me/src/site`` -> ``-home-me-src-site``). The model's
use of a skill is an ``assistant`` line whose ``message.content`` holds a block
``{"type": "tool_use", "name": "Skill", "input": {"skill": NAME}}``, with the line's
``timestamp``, ``cwd`` and ``sessionId``.

Read only when the user allows it (config ``ledger.agentTranscripts``), and bounded: the newest
``TRANSCRIPT_MAX_FILES`` files of the repository's folders, ``TRANSCRIPT_MAX_BYTES`` in all,
each through :mod:`~skillsd.core.fs.bounded_read` (regular files only) and read in chunks; a line
longer than ``TRANSCRIPT_LINE_BYTES`` (a whole system prompt) is skipped unread, and only lines
naming the Skill tool are decoded.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import msgspec

from skillsd.core import limits
from skillsd.core.fs.bounded_read import open_regular_file
from skillsd.core.listing.use_ledger import Event

__all__ = ["AGENT", "TranscriptUses", "project_folder", "transcript_uses"]

#: The agent name transcript uses are counted under.
AGENT = "claude-code"
_NOT_KEPT = re.compile(r"[^A-Za-z0-9]")
_CHUNK = 1024 * 1024
#: What a line must hold to be decoded at all.
_NEEDLES = (b'"Skill"', b'"tool_use"')


class _SkillInput(msgspec.Struct):
    skill: str | None = None


class _Block(msgspec.Struct):
    type: str = ""
    name: str | None = None
    input: _SkillInput | None = None


class _Message(msgspec.Struct):
    content: list[_Block] | str | None = None


class _Line(msgspec.Struct, rename={"session_id": "sessionId"}):
    type: str = ""
    timestamp: str | None = None
    cwd: str | None = None
    session_id: str | None = None
    message: _Message | None = None


_DECODER = msgspec.json.Decoder(_Line)


@dataclass
class TranscriptUses:
    """The uses found, the files read, and what could not be read."""

    events: list[Event] = field(default_factory=list)
    files: int = 0
    problems: list[str] = field(default_factory=list)


def project_folder(path: str) -> str:
    """The name of Claude Code's transcript folder for the working directory ``path``."""
    return _NOT_KEPT.sub("-", path)


def _config_dir(home: str, env: Mapping[str, str]) -> str:
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")


def _inside(cwd: str, repo: str) -> bool:
    return cwd == repo or cwd.startswith(repo.rstrip(os.sep) + os.sep)


def transcript_uses(
    repo: str,
    *,
    home: str,
    env: Mapping[str, str],
    since: float | None = None,
) -> TranscriptUses:
    """The Skill tool uses of Claude Code's conversations in the repository at the real root
    ``repo`` (or a folder beneath it), at or after ``since``."""
    found = TranscriptUses()
    projects = os.path.join(_config_dir(home, env), "projects")
    prefix = project_folder(repo)
    try:
        folders = [
            os.path.join(projects, name)
            for name in os.listdir(projects)
            if name == prefix or name.startswith(prefix + "-")
        ]
    except FileNotFoundError:
        return found
    except OSError as exc:
        found.problems.append(f"{projects}: cannot list ({exc.strerror or exc})")
        return found
    files: list[tuple[float, str]] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                        mtime = entry.stat(follow_symlinks=False).st_mtime
                        if since is None or mtime >= since:
                            files.append((mtime, entry.path))
        except OSError as exc:
            found.problems.append(f"{folder}: cannot list ({exc.strerror or exc})")
    files.sort(reverse=True)
    if len(files) > limits.TRANSCRIPT_MAX_FILES:
        found.problems.append(
            f"{len(files) - limits.TRANSCRIPT_MAX_FILES} older Claude Code transcripts not read "
            f"(at most {limits.TRANSCRIPT_MAX_FILES})"
        )
    budget = limits.TRANSCRIPT_MAX_BYTES
    for _mtime, path in files[: limits.TRANSCRIPT_MAX_FILES]:
        if budget <= 0:
            found.problems.append(
                f"Claude Code transcripts: stopped after {limits.TRANSCRIPT_MAX_BYTES} bytes"
            )
            break
        try:
            budget -= _read(path, repo, since, budget, found)
        except OSError as exc:
            found.problems.append(f"{path}: cannot read ({exc.strerror or exc})")
        found.files += 1
    return found


def _read(path: str, repo: str, since: float | None, budget: int, found: TranscriptUses) -> int:
    """Add the uses in one transcript; the bytes read."""
    fd, _st = open_regular_file(path, follow_links=False)
    read = 0
    try:
        pending = b""  # the start of a line the next chunk ends
        skipping = False  # inside a line longer than the cap: drop it up to its end
        while read < budget:
            chunk = os.read(fd, min(_CHUNK, budget - read))
            if not chunk:
                break
            read += len(chunk)
            end = chunk.rfind(b"\n")
            if end < 0:
                if not skipping:
                    pending += chunk
                    if len(pending) > limits.TRANSCRIPT_LINE_BYTES:
                        pending, skipping = b"", True
                continue
            block, pending = pending + chunk[:end], chunk[end + 1 :]
            if skipping:
                cut = block.find(b"\n")
                block = b"" if cut < 0 else block[cut + 1 :]
                skipping = False
            # Most of a transcript holds no Skill use: its lines are not even split.
            if all(needle in block for needle in _NEEDLES):
                for line in block.split(b"\n"):
                    _line(line, repo, since, found)
            if len(pending) > limits.TRANSCRIPT_LINE_BYTES:
                pending, skipping = b"", True
        if pending and not skipping:
            _line(pending, repo, since, found)
    finally:
        os.close(fd)
    return read


def _line(line: bytes, repo: str, since: float | None, found: TranscriptUses) -> None:
    if len(line) > limits.TRANSCRIPT_LINE_BYTES or not all(n in line for n in _NEEDLES):
        return
    try:
        entry = _DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return  # another shape of line, or a torn one: not a use
    if entry.type != "assistant" or entry.message is None or entry.timestamp is None:
        return
    if entry.cwd is None or not _inside(entry.cwd, repo):
        return
    try:
        at = datetime.datetime.fromisoformat(entry.timestamp).timestamp()
    except ValueError:
        return
    if since is not None and at < since:
        return
    for name in _skills(entry.message):
        found.events.append(Event(at, "load", name, AGENT, entry.session_id))


def _skills(message: _Message) -> Iterator[str]:
    if not isinstance(message.content, list):
        return
    for block in message.content:
        skill = block.input.skill if block.input is not None else None
        if block.type == "tool_use" and block.name == "Skill" and skill:
            yield skill[:256]
