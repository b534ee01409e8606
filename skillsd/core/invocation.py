"""A user's invocation of a skill or command (SPEC 14), as pure text work.

:func:`parse_command` splits what the user typed (``/name rest``) into the name and the raw
argument string; :func:`split_arguments` splits that string with POSIX shell rules (``shlex``);
:func:`substitute` replaces the placeholders of SPEC 14 in one left-to-right pass;
:func:`find_dynamic_context` lists the ``!`cmd` `` and ```` ```! ```` blocks of the result with
the decision a caller-supplied policy callable gives each. :func:`invoke_body` does all of it.
Nothing here reads a file or runs a command.

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
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillsd_protocol.messages import Decision, DynamicContext

__all__ = [
    "InvokedBody",
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


def split_arguments(raw: str) -> list[str]:
    """Split with POSIX shell rules (``shlex``, quotes removed, ``#`` not a comment); an
    unbalanced quote makes the rest of the string one argument (its quote removed)."""
    lexer = shlex.shlex(raw, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    arguments: list[str] = []
    try:
        while (token := lexer.get_token()) is not None:
            arguments.append(token)
    except ValueError as exc:
        # shlex keeps what it had gathered of the token it could not finish.
        rest = lexer.token or ""
        if "escaped" in str(exc):
            rest += "\\"
        arguments.append(rest)
    return arguments


def _names_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    longest_first = sorted(set(names), key=lambda n: (-len(n), n))
    alternatives = "|".join(re.escape(n) for n in longest_first)
    return re.compile(rf"{_FIXED}|\$(?P<name>{alternatives})(?!\w)")


def substitute(
    body: str,
    raw_arguments: str,
    *,
    argument_names: Sequence[str] = (),
    skill_dir: str = "",
    session_id: str | None = None,
) -> tuple[str, list[str]]:
    """Replace SPEC 14's placeholders in one pass; returns the text and the split arguments.

    Replaced text is never looked at again, so a ``$1`` inside an argument value stays as typed.
    When ``raw_arguments`` is not blank and no argument placeholder occurred, ``ARGUMENTS: raw``
    is appended after a blank line.
    """
    arguments = split_arguments(raw_arguments)
    positions = {name: i for i, name in enumerate(argument_names)}
    used = False

    def nth(index: int) -> str:
        return arguments[index] if index < len(arguments) else ""

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        braced = match.group("braced")
        if braced is not None:
            if braced in _SKILL_DIR_NAMES:
                return skill_dir
            return session_id or ""
        used = True
        if match.group("all") is not None:
            return raw_arguments
        index = match.group("index") or match.group("digit")
        if index is not None:
            return nth(int(index))
        return nth(positions[match.group("name")])

    pattern = _names_pattern(argument_names) or _FIXED_PATTERN
    text = pattern.sub(replace, body)
    if raw_arguments.strip() and not used:
        ending = "\n" if text.endswith("\n") else ""
        text = f"{text.rstrip(chr(10))}\n\nARGUMENTS: {raw_arguments}{ending}"
    return text, arguments


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


def find_dynamic_context(text: str, decide: Decide) -> list[DynamicContext]:
    """Every dynamic-context command in ``text``, in order, with ``decide(command)``.

    Offsets are code points (Python string indices) spanning the whole construct.
    """
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
    return [
        DynamicContext(command=command, start=start, end=end, decision=decide(command))
        for start, end, command in found
        if command.strip()
    ]


def invoke_body(
    body: str,
    raw_arguments: str,
    *,
    decide: Decide,
    argument_names: Sequence[str] = (),
    skill_dir: str = "",
    session_id: str | None = None,
) -> InvokedBody:
    """Substitute the placeholders of ``body``, then list its dynamic context (SPEC 14)."""
    text, arguments = substitute(
        body,
        raw_arguments,
        argument_names=argument_names,
        skill_dir=skill_dir,
        session_id=session_id,
    )
    return InvokedBody(
        body=text, arguments=arguments, dynamic_context=find_dynamic_context(text, decide)
    )
