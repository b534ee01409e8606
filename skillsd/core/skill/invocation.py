"""A user's invocation of a skill or command (``docs/invocation.md``), as pure text work.

:func:`parse_command` splits what the user typed (``/name rest``) into the name and the raw
argument string; :func:`split_arguments` splits that string with POSIX shell rules (those of
``shlex`` in posix mode, in linear time); :func:`substitute` replaces the placeholders in one
left-to-right pass, refusing a result over a byte bound before building it;
:func:`find_dynamic_context` lists the ``!`cmd` `` and ```` ```! ```` blocks of a text with the
decision a caller-supplied policy callable gives each. :func:`invoke_body` does all of it, finding
the blocks in the skill's own text before substitution. Nothing here reads a file or runs a
command.

Choices where the spec is silent (matching Claude Code where it is known):

- ``$ARGUMENTS``, ``$N`` and ``$name`` are placeholders only when no word character follows
  (``$ARGUMENTSX``, ``$1st`` and ``$issue_id`` for a declared ``issue`` stay as they are);
- the raw argument string is what follows the command name, stripped of surrounding blanks;
- a trailing lone backslash is kept as a literal ``\\`` at the end of the last argument;
- inline dynamic context starts at the beginning of a line or after a blank; a ```` ```! ````
  fence must be closed (an unclosed one is plain text), and inline forms inside it are part of
  that block, not separate entries; ``start``/``end`` span the whole construct, markers
  included, so a host can splice a command's output in its place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillsd_protocol.messages import Decision, DynamicContext

__all__ = [
    "InvokedBody",
    "TooLarge",
    "find_dynamic_context",
    "invoke_body",
    "parse_command",
    "split_arguments",
    "substitute",
]

#: The policy for one dynamic-context command: ``permissions.check`` of ``Bash(command)``.
Decide = Callable[[str], Decision]

_SKILL_DIR_NAMES = frozenset({"SKILL_DIR", "CLAUDE_SKILL_DIR"})
_SESSION_NAMES = frozenset({"SESSION_ID", "CLAUDE_SESSION_ID"})
_FIXED = (
    r"\$\{(?P<braced>SKILL_DIR|CLAUDE_SKILL_DIR|SESSION_ID|CLAUDE_SESSION_ID)\}"
    r"|\$ARGUMENTS\[(?P<index>\d+)\]"
    r"|\$(?P<all>ARGUMENTS)(?!\w)"
    r"|\$(?P<digit>\d+)(?!\w)"
)
_FIXED_PATTERN = re.compile(_FIXED)

_INLINE = re.compile(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.MULTILINE)
_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,})!\s*$")


@dataclass(frozen=True, slots=True)
class InvokedBody:
    """A body after substitution: the text, the split arguments and its dynamic context."""

    body: str
    arguments: list[str]
    dynamic_context: list[DynamicContext]


def parse_command(text: str) -> tuple[str, str]:
    """``"/name rest…"`` -> ``("name", "rest…")``: the leading ``/`` is optional, the rest is
    stripped of surrounding blanks (``""`` when there is none)."""
    stripped = text.strip()
    if stripped.startswith("/"):
        stripped = stripped[1:]
    parts = stripped.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


#: One piece of an argument outside quotes: a run of plain characters, a backslash escape, a
#: quoted part, or blanks (which end an argument). POSIX shell rules as ``shlex`` has them in
#: posix mode with ``whitespace_split`` (blanks are space, tab, CR and LF; no comments).
_PIECE = re.compile(
    r"(?P<blank>[ \t\r\n]+)"
    r"|(?P<plain>[^ \t\r\n'\"\\]+)"
    r"|\\(?P<escaped>.)"
    r"|'(?P<single>[^']*)'"
    r"|\"(?P<double>(?:[^\"\\]++|\\.)*+)\"",
    re.DOTALL,
)
_QUOTING = re.compile(r"['\"\\]")
#: Only these are blanks to the shell rules (``str.split()`` would also cut at other Unicode
#: spaces): each becomes a space, every other character stays.
_BLANKS = {ord(c): " " for c in " \t\r\n"}
#: Inside double quotes a backslash escapes only ``"`` and itself.
_DOUBLE_ESCAPE = re.compile(r'\\(["\\])')


def split_arguments(raw: str) -> list[str]:
    """Split with POSIX shell rules (as ``shlex`` in posix mode: quotes removed, ``#`` not a
    comment) in time linear in ``raw``; an unbalanced quote makes the rest of the string one
    argument (its quote removed), and a trailing lone backslash stays a literal ``\\``."""
    if not _QUOTING.search(raw):
        # The common case, words and blanks only.
        return [word for word in raw.translate(_BLANKS).split(" ") if word]
    arguments: list[str] = []
    parts: list[str] = []
    started = False
    pos, size = 0, len(raw)
    while pos < size:
        match = _PIECE.match(raw, pos)
        if match is None:
            # An opening quote with no closing one, or a backslash at the very end.
            started = True
            parts.append(_unfinished(raw[pos:]))
            break
        pos = match.end()
        kind = match.lastgroup
        if kind == "blank":
            if started:
                arguments.append("".join(parts))
                parts, started = [], False
            continue
        started = True
        if kind == "double":
            parts.append(_DOUBLE_ESCAPE.sub(r"\1", match.group("double")))
        else:
            parts.append(match.group(kind or "plain"))
    if started:
        arguments.append("".join(parts))
    return arguments


def _unfinished(rest: str) -> str:
    """What an unterminated last piece contributes: the text after its opening quote (escapes
    applied inside double quotes), or a literal backslash for a backslash at the end."""
    if rest == "\\":
        return "\\"
    quote, inner = rest[0], rest[1:]
    if quote == "'":
        return inner
    if inner.endswith("\\") and (len(inner) - len(inner.rstrip("\\"))) % 2:
        return _DOUBLE_ESCAPE.sub(r"\1", inner[:-1]) + "\\"
    return _DOUBLE_ESCAPE.sub(r"\1", inner)


def _names_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    longest_first = sorted(set(names), key=lambda n: (-len(n), n))
    alternatives = "|".join(re.escape(n) for n in longest_first)
    return re.compile(rf"{_FIXED}|\$(?P<name>{alternatives})(?!\w)")


class _Substitution:
    """One placeholder pass over a body: what each placeholder becomes."""

    def __init__(
        self,
        raw_arguments: str,
        arguments: list[str],
        argument_names: Sequence[str],
        skill_dir: str,
        session_id: str | None,
    ) -> None:
        self.raw = raw_arguments
        self.arguments = arguments
        self.positions = {name: i for i, name in enumerate(argument_names)}
        self.skill_dir = skill_dir
        self.session_id = session_id or ""
        self.used = False

    def value(self, match: re.Match[str]) -> str:
        braced = match.group("braced")
        if braced is not None:
            return self.skill_dir if braced in _SKILL_DIR_NAMES else self.session_id
        self.used = True
        if match.group("all") is not None:
            return self.raw
        index = match.group("index") or match.group("digit")
        position = int(index) if index is not None else self.positions[match.group("name")]
        return self.arguments[position] if position < len(self.arguments) else ""


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def substitute(
    body: str,
    raw_arguments: str,
    *,
    argument_names: Sequence[str] = (),
    skill_dir: str = "",
    session_id: str | None = None,
    max_bytes: int | None = None,
) -> tuple[str, list[str]]:
    """Replace the placeholders (see ``docs/invocation.md``) in one pass; returns the text and
    the split arguments.

    Replaced text is never looked at again, so a ``$1`` inside an argument value stays as typed.
    When ``raw_arguments`` is not blank and no argument placeholder occurred, ``ARGUMENTS: raw``
    is appended after a blank line. With ``max_bytes``, a result larger than that (in UTF-8) is
    refused with :class:`TooLarge` before it is built.
    """
    text, arguments, _moved = _substitute(
        body,
        raw_arguments,
        argument_names=argument_names,
        skill_dir=skill_dir,
        session_id=session_id,
        max_bytes=max_bytes,
    )
    return text, arguments


def _substitute(
    body: str,
    raw_arguments: str,
    *,
    argument_names: Sequence[str],
    skill_dir: str,
    session_id: str | None,
    max_bytes: int | None,
    keep: Sequence[int] = (),
) -> tuple[str, list[str], list[int]]:
    """:func:`substitute`, also giving where each of ``keep`` (sorted offsets into ``body``,
    none inside a placeholder) lands in the result."""
    arguments = split_arguments(raw_arguments)
    pattern = _names_pattern(argument_names) or _FIXED_PATTERN
    if max_bytes is not None:
        # Counted before anything is built: a body of a million `$0` with a long argument
        # would otherwise take gigabytes first and be refused after.
        sizes = _Substitution(raw_arguments, arguments, argument_names, skill_dir, session_id)
        size = _utf8_size(body)
        cache: dict[str, int] = {}
        for match in pattern.finditer(body):
            value = sizes.value(match)
            grown = cache.get(value)
            if grown is None:
                grown = cache[value] = _utf8_size(value)
            size += grown - _utf8_size(match.group(0))
            if size > max_bytes:
                raise TooLarge(size, max_bytes)
        if raw_arguments.strip() and not sizes.used:
            size += _utf8_size(raw_arguments) + len("\n\nARGUMENTS: ")
        if size > max_bytes:
            raise TooLarge(size, max_bytes)
    values = _Substitution(raw_arguments, arguments, argument_names, skill_dir, session_id)
    marks = list(keep)
    moved: list[int] = []
    shift = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal shift
        while len(moved) < len(marks) and marks[len(moved)] <= match.start():
            moved.append(marks[len(moved)] + shift)
        value = values.value(match)
        shift += len(value) - (match.end() - match.start())
        return value

    text = pattern.sub(replace, body)
    moved += [mark + shift for mark in marks[len(moved) :]]
    if raw_arguments.strip() and not values.used:
        ending = "\n" if text.endswith("\n") else ""
        text = f"{text.rstrip(chr(10))}\n\nARGUMENTS: {raw_arguments}{ending}"
    return text, arguments, moved


class TooLarge(Exception):
    """A substitution whose result would be ``size`` bytes, over ``limit``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes is over the limit of {limit}")
        self.size = size
        self.limit = limit


def _fenced_blocks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, command)`` of each closed ```` ```! ```` block."""
    blocks: list[tuple[int, int, str]] = []
    lines = text.splitlines(keepends=True)
    offset = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _FENCE_OPEN.match(line.rstrip("\r\n"))
        if opened is None:
            offset += len(line)
            i += 1
            continue
        fence = opened.group("fence")
        start = offset
        inner_offset = offset + len(line)
        inner: list[str] = []
        j = i + 1
        end_offset = inner_offset
        closed = False
        while j < len(lines):
            candidate = lines[j]
            bare = candidate.rstrip("\r\n")
            if bare.strip().startswith(fence) and not bare.strip().strip("`"):
                closed = True
                end = end_offset + len(bare)
                break
            inner.append(candidate)
            end_offset += len(candidate)
            j += 1
        if not closed:
            offset += len(line)
            i += 1
            continue
        command = "".join(inner).rstrip("\r\n")
        blocks.append((start, end, command))
        offset = end_offset + len(lines[j])
        i = j + 1
    return blocks


def _constructs(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, command)`` of every dynamic-context construct of ``text``, in order."""
    found: list[tuple[int, int, str]] = _fenced_blocks(text)
    spans = [(start, end) for start, end, _ in found]
    for match in _INLINE.finditer(text):
        start, end = match.span()
        if any(s <= start < e for s, e in spans):
            continue
        command = match.group(1).strip()
        if command:
            found.append((start, end, command))
    found.sort()
    return [(start, end, command) for start, end, command in found if command.strip()]


def find_dynamic_context(text: str, decide: Decide) -> list[DynamicContext]:
    """Every dynamic-context command in ``text``, in order, with ``decide(command)``.

    Offsets are code points (Python string indices) spanning the whole construct.
    """
    return [
        DynamicContext(command=command, start=start, end=end, decision=decide(command))
        for start, end, command in _constructs(text)
    ]


def _command_in(construct: str) -> str:
    """The command of a construct as it reads after substitution (inline or fenced)."""
    if construct.startswith("!`"):
        return construct[2:-1].strip()
    lines = construct.splitlines()
    return "\n".join(lines[1:-1]).rstrip("\r\n")


def invoke_body(
    body: str,
    raw_arguments: str,
    *,
    decide: Decide,
    argument_names: Sequence[str] = (),
    skill_dir: str = "",
    session_id: str | None = None,
    max_bytes: int | None = None,
) -> InvokedBody:
    """Substitute the placeholders of ``body`` and list its dynamic context.

    Only dynamic context written in the skill's own text counts: the constructs are found in
    ``body`` before substitution and followed to where they land, so an argument holding
    ``!`cmd` `` is never reported (or run) as a command. A construct's command is reported as it
    reads after substitution (what the host would run, with its decision)."""
    found = _constructs(body)
    bounds = sorted({offset for start, end, _ in found for offset in (start, end)})
    text, arguments, moved = _substitute(
        body,
        raw_arguments,
        argument_names=argument_names,
        skill_dir=skill_dir,
        session_id=session_id,
        max_bytes=max_bytes,
        keep=bounds,
    )
    where = dict(zip(bounds, moved, strict=True))
    dynamic: list[DynamicContext] = []
    for start, end, _written in found:
        new_start, new_end = where[start], where[end]
        command = _command_in(text[new_start:new_end])
        if command.strip():
            dynamic.append(
                DynamicContext(
                    command=command, start=new_start, end=new_end, decision=decide(command)
                )
            )
    return InvokedBody(body=text, arguments=arguments, dynamic_context=dynamic)
