"""Permission rules and the six-layer policy (SPEC 7; seed 000's evaluation order). Pure.

A rule is ``Tool`` or ``Tool(specifier)``. Tool names compare case-insensitively and ``Skill``
is another name for ``skill_load``. A specifier is a glob (``*`` matches any run of characters)
matched against the whole input, or the command form ``cmd:*``: "the command ``cmd`` with any
arguments", matched per simple command of a shell line, so ``Bash(git:*)`` covers ``git status``
and ``git`` but neither ``gitk`` nor ``git status && rm -rf x``.

Layers, first match wins: ``finalDeny``, ``memory`` (remembered decisions: this session's, then
the persisted ``always`` ones), ``override``, ``deny``, ``allow`` (config rules, then the grants
of skills loaded in the session), ``default``. Grants sit in ``allow``, below both deny layers,
so a skill can never get past a deny.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

__all__ = [
    "SKILL_LOAD",
    "Check",
    "Decision",
    "Glob",
    "Layer",
    "PermissionsConfig",
    "Policy",
    "Rule",
    "RuleError",
    "evaluate",
    "parse_rule",
    "rule_problem",
    "skill_load_rule",
]

Decision = Literal["allow", "deny", "ask"]
Layer = Literal["finalDeny", "memory", "override", "deny", "allow", "default"]
#: Deny-like layers match a shell line if any of its commands matches; allow-like ones only if
#: every command does (so chaining cannot smuggle an unapproved command past an allow rule).
Polarity = Literal["any", "all"]

#: The tool skill loading is checked as; its input is the skill name.
SKILL_LOAD = "skill_load"
_ALIASES = {"skill": SKILL_LOAD}

_TOOL_NAME = re.compile(r"[A-Za-z0-9_*][A-Za-z0-9_.*-]*")
# Separators between simple commands in a shell line: control operators and the openers and
# closers of subshells and command substitutions (whose contents are commands too).
_SHELL_SEPARATORS = ("&&", "||", ";;", ";", "|", "&", "\n", "(", ")")
_ASSIGNMENT = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"])*\s+""")


class RuleError(ValueError):
    """A malformed rule; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule: ``text`` as written (stripped), ``key`` its canonical spelling
    (``Skill(X)`` -> ``skill_load(x)``, ``BASH`` -> ``bash``), under which decisions are kept."""

    text: str
    key: str
    tool: str
    specifier: str | None
    _tool_glob: Glob | None
    _spec_glob: Glob | None
    #: True for the command form ``cmd:*``.
    command: bool

    def matches(self, tool: str, input: str | None, polarity: Polarity = "all") -> bool:
        """Does the rule cover a call of ``tool`` with ``input``?"""
        name = canonical_tool(tool)
        if self._tool_glob is None:
            if name != self.tool:
                return False
        elif not self._tool_glob.fullmatch(name):
            return False
        spec = self._spec_glob
        if spec is None:
            return True
        if input is None:
            return False
        if self.tool == SKILL_LOAD:
            input = input.strip().lower()
        if not self.command:
            return spec.fullmatch(input)
        commands = split_commands(input)
        if not commands:
            return False
        hits = (spec.command_match(c) for c in commands)
        return any(hits) if polarity == "any" else all(hits)


def canonical_tool(tool: str) -> str:
    """Lowercased tool name with aliases applied (``Skill`` -> ``skill_load``)."""
    name = tool.strip().lower()
    return _ALIASES.get(name, name)


class Glob:
    """A specifier glob (``*`` matches any run of characters, newlines included).

    Matched by ordered substring search, not by a regex: a regex built from ``*a*a*a*b``
    backtracks polynomially on a long run of ``a`` (minutes for a few hundred characters), and
    the patterns come from skill authors' ``allowed-tools`` while the inputs come from clients.
    Here each segment is found once, left to right, so a match costs O(len(input) * segments).
    """

    __slots__ = ("_head", "_middle", "_star", "_tail", "_tail_then_space")

    def __init__(self, pattern: str) -> None:
        parts = pattern.split("*")
        self._star = len(parts) > 1
        self._head = parts[0]
        self._middle = tuple(p for p in parts[1:-1] if p)
        self._tail = parts[-1] if self._star else ""
        self._tail_then_space = re.compile(re.escape(self._tail) + r"\s")

    def _middle_end(self, text: str, start: int, stop: int) -> int:
        """Where the middle segments end when placed leftmost in ``text[start:stop]``, or -1.

        Leftmost placement leaves the most room for what follows, so it fails only when no
        placement can succeed."""
        pos = start
        for segment in self._middle:
            hit = text.find(segment, pos, stop)
            if hit < 0:
                return -1
            pos = hit + len(segment)
        return pos

    def fullmatch(self, text: str) -> bool:
        """Does the glob match all of ``text``?"""
        if not self._star:
            return text == self._head
        head, tail = self._head, self._tail
        if len(text) < len(head) + len(tail):
            return False
        if not (text.startswith(head) and text.endswith(tail)):
            return False
        return self._middle_end(text, len(head), len(text) - len(tail)) >= 0

    def command_match(self, text: str) -> bool:
        """The command form ``cmd:*``: the glob matches ``text``, or a prefix of it that is
        followed by whitespace (the arguments)."""
        if self.fullmatch(text):
            return True
        head = self._head
        if not text.startswith(head):
            return False
        if not self._star:
            return len(text) > len(head) and text[len(head)].isspace()
        end = self._middle_end(text, len(head), len(text))
        # The tail must sit at or after the middle's end and be followed by whitespace.
        return end >= 0 and self._tail_then_space.search(text, end) is not None


@functools.lru_cache(maxsize=4096)
def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raises :class:`RuleError` saying what is wrong."""
    stripped = text.strip()
    if not stripped:
        raise RuleError("empty rule")
    head, paren, rest = stripped.partition("(")
    tool_text = head.strip()
    if not _TOOL_NAME.fullmatch(tool_text):
        raise RuleError(
            f"rule {text!r}: tool name {tool_text!r} must be letters, digits, '_', '-', '.' "
            "(and '*' globs)"
            if tool_text
            else f"rule {text!r} has no tool name before '('"
        )
    tool = canonical_tool(tool_text)
    tool_glob = Glob(tool) if "*" in tool else None
    if not paren:
        if ")" in stripped:
            raise RuleError(f"rule {text!r} has ')' without '('")
        return Rule(stripped, tool, tool, None, tool_glob, None, command=False)
    if not rest.endswith(")"):
        raise RuleError(f"rule {text!r} must end with ')' closing its specifier")
    specifier = rest[:-1].strip()
    depth = 0
    for char in specifier:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
    if depth != 0:
        raise RuleError(f"rule {text!r} has unbalanced parentheses in its specifier")
    if not specifier:
        raise RuleError(f"rule {text!r} has an empty specifier; write just {tool_text!r}")
    if tool == SKILL_LOAD:
        specifier = specifier.lower()
    command = specifier.endswith(":*")
    if command:
        prefix = specifier[:-2].strip()
        if not prefix:
            raise RuleError(f"rule {text!r}: ':*' needs a command before it, as in 'git:*'")
        spec_glob = Glob(prefix)
    else:
        spec_glob = Glob(specifier)
    key = f"{tool}({specifier})"
    return Rule(stripped, key, tool, specifier, tool_glob, spec_glob, command=command)


def rule_problem(text: str) -> str | None:
    """Why ``text`` is not a valid rule, or None when it is."""
    try:
        parse_rule(text)
    except RuleError as exc:
        return str(exc)
    return None


def skill_load_rule(name: str) -> str:
    """The rule a user approves to load one skill: ``skill_load(name)``."""
    return f"{SKILL_LOAD}({name})"


def split_commands(line: str) -> list[str]:
    """The simple commands of a shell line, leading ``VAR=value`` assignments dropped.

    Quotes are honoured: single quotes hide everything; double quotes hide all but command
    substitutions, whose contents are commands again. Over-splitting is safe (allow needs every
    piece, deny any piece), so unusual quoting errs towards asking.
    """
    pieces: list[str] = []
    current: list[str] = []
    quote: str | None = None
    #: Quote states to return to when a ``$(...)`` or backtick substitution ends.
    outer: list[tuple[str, str | None]] = []

    def cut() -> None:
        pieces.append("".join(current))
        current.clear()

    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\" and quote != "'" and i + 1 < len(line):
            current.append(line[i : i + 2])
            i += 2
        elif quote == "'":
            quote = None if char == "'" else quote
            current.append(char)
            i += 1
        elif char in "'\"" and quote in (None, char):
            quote = None if quote == char else char
            current.append(char)
            i += 1
        elif line.startswith("$(", i) or (char == "`" and not (outer and outer[-1][0] == "`")):
            outer.append(("`" if char == "`" else ")", quote))
            quote = None
            cut()
            i += 1 if char == "`" else 2
        elif quote is None and outer and char == outer[-1][0]:
            quote = outer.pop()[1]
            cut()
            i += 1
        elif quote is None and (
            sep := next((s for s in _SHELL_SEPARATORS if line.startswith(s, i)), None)
        ):
            cut()
            i += len(sep)
        else:
            current.append(char)
            i += 1
    cut()
    commands = []
    for piece in pieces:
        command = piece.strip()
        while (m := _ASSIGNMENT.match(command)) is not None:
            command = command[m.end() :]
        if command:
            commands.append(command)
    return commands


def _parse_all(rules: Iterable[str]) -> tuple[Rule, ...]:
    return tuple(parse_rule(r) for r in rules)


class PermissionsConfig(
    msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True, kw_only=True
):
    """The config file's ``[permissions]`` table as written (rules unparsed); hashable, so the
    daemon keeps one parsed :class:`Policy` per distinct table."""

    final_deny: tuple[str, ...] = ()
    override: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    default_action: Literal["allow", "ask", "deny"] = "ask"


@dataclass(frozen=True, slots=True)
class Policy:
    """The configured rule lists (config ``[permissions]``), parsed."""

    final_deny: tuple[Rule, ...] = ()
    override: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    default_action: Decision = "ask"

    @classmethod
    def from_config(cls, config: PermissionsConfig) -> Policy:
        """Parse a config table (its rules were validated when the file was read)."""
        return cls(
            final_deny=_parse_all(config.final_deny),
            override=_parse_all(config.override),
            deny=_parse_all(config.deny),
            allow=_parse_all(config.allow),
            default_action=config.default_action,
        )


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of a check: ``rule`` is set for every layer but ``default``."""

    decision: Decision
    layer: Layer
    rule: str | None = None
    granted_by: tuple[str, ...] | None = None


def _first(rules: Iterable[Rule], tool: str, input: str | None, polarity: Polarity) -> Rule | None:
    return next((r for r in rules if r.matches(tool, input, polarity)), None)


def evaluate(
    policy: Policy,
    tool: str,
    input: str | None = None,
    *,
    session_memory: Mapping[str, Decision] | None = None,
    always: Mapping[str, Decision] | None = None,
    grants: Mapping[str, Sequence[str]] | None = None,
) -> Check:
    """Decide one call of ``tool`` with ``input``.

    ``session_memory`` and ``always`` map canonical rule text to a remembered decision; for the
    same rule the session's entry (the more recent, local answer) wins, and among different
    matching remembered rules a deny beats an allow. ``grants`` maps a rule granted by loaded
    skills to those skills' names. Malformed remembered or granted rules are ignored: they were
    reported where they were written.
    """
    hit = _first(policy.final_deny, tool, input, "any")
    if hit is not None:
        return Check("deny", "finalDeny", hit.text)

    remembered = {**(always or {}), **(session_memory or {})}
    if remembered:
        allowed: Rule | None = None
        for text, decision in remembered.items():
            rule = _try_parse(text)
            if rule is None:
                continue
            if decision == "deny" and rule.matches(tool, input, "any"):
                return Check("deny", "memory", rule.key)
            if decision == "allow" and allowed is None and rule.matches(tool, input, "all"):
                allowed = rule
        if allowed is not None:
            return Check("allow", "memory", allowed.key)

    hit = _first(policy.override, tool, input, "all")
    if hit is not None:
        return Check("allow", "override", hit.text)
    hit = _first(policy.deny, tool, input, "any")
    if hit is not None:
        return Check("deny", "deny", hit.text)
    hit = _first(policy.allow, tool, input, "all")
    if hit is not None:
        return Check("allow", "allow", hit.text)
    for text, names in (grants or {}).items():
        rule = _try_parse(text)
        if rule is not None and rule.matches(tool, input, "all"):
            return Check("allow", "allow", text, tuple(names))
    return Check(policy.default_action, "default")


def _try_parse(text: str) -> Rule | None:
    try:
        return parse_rule(text)
    except RuleError:
        return None
