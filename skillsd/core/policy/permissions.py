"""Permission rules and the six-layer policy, evaluated in the order docs/permissions.md gives.
Pure.

A rule is ``Tool`` or ``Tool(specifier)``. Tool names compare case-insensitively and ``Skill``
is another name for ``skill_load``. A specifier is a glob (``*`` matches any run of characters)
matched against the whole input, or the command form ``cmd:*``: "the command ``cmd`` with any
arguments", matched per simple command of a shell line, so ``Bash(git:*)`` covers ``git status``
and ``git`` but neither ``gitk`` nor ``git status && rm -rf x``.

Layers, first match wins: ``finalDeny``, ``memory`` (remembered decisions: this session's, then
the persisted ``always`` ones), ``override``, ``deny``, ``allow`` (config rules, then the grants
of skills loaded in the session), ``default``. Grants sit in ``allow``, below both deny layers,
so a skill can never get past a deny. A matched rule is always reported as its author wrote it.

Workspace trust (docs/permissions.md) is an input, as is each rule's origin: the user's config, the
project's ``.agents/skillsd.toml``, a skill's grant. A project config only tightens: its
``finalDeny`` and ``deny`` always apply, its ``defaultAction`` only when stricter, its
``override`` never, its ``allow`` only once the repository is trusted. The caller splits the
session's grants into those that count and those withheld (repo skills of an untrusted root).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import msgspec

__all__ = [
    "SKILL_LOAD",
    "Check",
    "Decision",
    "Glob",
    "IgnoredRule",
    "Layer",
    "PermissionsConfig",
    "Policy",
    "Rule",
    "RuleError",
    "evaluate",
    "parse_rule",
    "remember_rule",
    "rule_problem",
    "skill_load_rule",
]

Decision = Literal["allow", "deny", "ask"]
Layer = Literal["finalDeny", "memory", "override", "deny", "allow", "default"]
#: Deny-like layers match a shell line if any of its commands matches; allow-like ones only if
#: every command does (so chaining cannot smuggle an unapproved command past an allow rule).
Polarity = Literal["any", "all"]

_D = TypeVar("_D", bound=str)

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


#: How strict a default is: a project's ``defaultAction`` applies only when it ranks higher.
_STRICTNESS: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class IgnoredRule:
    """A project config entry the policy does not apply: ``key`` is where it was written
    (``permissions.allow``), ``until_trusted`` whether trusting the repository would apply it
    (``allow``) or nothing would (``override``, a looser ``defaultAction``)."""

    rule: str
    key: str
    until_trusted: bool


@dataclass(frozen=True, slots=True)
class Policy:
    """The configured rule lists, parsed, by origin: the user's config merged with what the
    project config may add (``finalDeny``, ``deny``, a stricter default); the project's
    ``allow`` apart, applied only when the repository is trusted."""

    final_deny: tuple[Rule, ...] = ()
    override: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    project_allow: tuple[Rule, ...] = ()
    default_action: Decision = "ask"
    #: What the project config asked for and the policy does not grant.
    ignored: tuple[IgnoredRule, ...] = ()

    @classmethod
    def from_config(
        cls, user: PermissionsConfig, project: PermissionsConfig | None = None
    ) -> Policy:
        """Parse the user's and the project's tables (their rules were validated when the
        files were read)."""
        project = project or PermissionsConfig(default_action=user.default_action)
        default: Decision = user.default_action
        ignored = [IgnoredRule(r, "permissions.allow", True) for r in project.allow]
        ignored += [IgnoredRule(r, "permissions.override", False) for r in project.override]
        wanted = project.default_action
        if _STRICTNESS[wanted] > _STRICTNESS[default]:
            default = wanted
        elif wanted != default:
            ignored.append(IgnoredRule(f"defaultAction = {wanted!r}", "permissions", False))
        return cls(
            final_deny=_parse_all((*user.final_deny, *project.final_deny)),
            override=_parse_all(user.override),
            deny=_parse_all((*user.deny, *project.deny)),
            allow=_parse_all(user.allow),
            project_allow=_parse_all(project.allow),
            default_action=default,
            ignored=tuple(ignored),
        )

    def ignored_now(self, trusted: bool) -> list[IgnoredRule]:
        """The project entries not applied for a repository that is (not) ``trusted``."""
        return [i for i in self.ignored if not (trusted and i.until_trusted)]


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of a check: ``rule`` is set for every layer but ``default``; ``withheld_by``
    names the untrusted repo skills whose grant would have allowed the call."""

    decision: Decision
    layer: Layer
    rule: str | None = None
    granted_by: tuple[str, ...] | None = None
    withheld_by: tuple[str, ...] | None = None


def _first(rules: Iterable[Rule], tool: str, input: str | None, polarity: Polarity) -> Rule | None:
    return next((r for r in rules if r.matches(tool, input, polarity)), None)


def evaluate(
    policy: Policy,
    tool: str,
    input: str | None = None,
    *,
    trusted: bool = False,
    session_memory: Mapping[str, Decision] | None = None,
    always: Mapping[str, Decision] | None = None,
    grants: Mapping[str, Sequence[str]] | None = None,
    withheld_grants: Mapping[str, Sequence[str]] | None = None,
) -> Check:
    """Decide one call of ``tool`` with ``input``.

    ``trusted`` is the trust of the request's repository: it decides whether the project's
    ``allow`` rules count. ``session_memory`` and ``always`` map rules (as written) to a
    remembered decision; for the same rule the session's entry (the more recent, local answer)
    wins, and among different matching remembered rules a deny beats an allow. ``grants`` maps
    a rule granted by loaded skills to those skills' names; ``withheld_grants`` the same for
    grants of skills from untrusted repositories, which allow nothing and are reported as
    ``withheld_by`` when the call falls to the default. Malformed remembered or granted rules
    are ignored: they were reported where they were written.
    """
    hit = _first(policy.final_deny, tool, input, "any")
    if hit is not None:
        return Check("deny", "finalDeny", hit.text)

    remembered = _by_key(always, session_memory)
    if remembered:
        allowed: Rule | None = None
        for rule, decision in remembered:
            if decision == "deny" and rule.matches(tool, input, "any"):
                return Check("deny", "memory", rule.text)
            if decision == "allow" and allowed is None and rule.matches(tool, input, "all"):
                allowed = rule
        if allowed is not None:
            return Check("allow", "memory", allowed.text)

    hit = _first(policy.override, tool, input, "all")
    if hit is not None:
        return Check("allow", "override", hit.text)
    hit = _first(policy.deny, tool, input, "any")
    if hit is not None:
        return Check("deny", "deny", hit.text)
    hit = _first(policy.allow, tool, input, "all")
    if hit is None and trusted:
        hit = _first(policy.project_allow, tool, input, "all")
    if hit is not None:
        return Check("allow", "allow", hit.text)
    matched = _granting(grants, tool, input)
    if matched is not None:
        return Check("allow", "allow", matched[0], matched[1])
    withheld = _granting(withheld_grants, tool, input)
    return Check(policy.default_action, "default", withheld_by=withheld and withheld[1])


def _granting(
    grants: Mapping[str, Sequence[str]] | None, tool: str, input: str | None
) -> tuple[str, tuple[str, ...]] | None:
    for text, names in (grants or {}).items():
        rule = _try_parse(text)
        if rule is not None and rule.matches(tool, input, "all"):
            return text, tuple(names)
    return None


def _by_key(*memories: Mapping[str, Decision] | None) -> list[tuple[Rule, Decision]]:
    """Remembered decisions, one per canonical rule; a later mapping wins for the same rule."""
    merged: dict[str, tuple[Rule, Decision]] = {}
    for memory in memories:
        for text, decision in (memory or {}).items():
            rule = _try_parse(text)
            if rule is not None:
                merged[rule.key] = (rule, decision)
    return list(merged.values())


def remember_rule(memory: dict[str, _D], rule: Rule, decision: _D) -> None:
    """Record ``decision`` for ``rule`` in ``memory`` under the rule as written, replacing an
    earlier decision for the same rule however it was spelled."""
    for text in [t for t in memory if (r := _try_parse(t)) is not None and r.key == rule.key]:
        del memory[text]
    memory[rule.text] = decision


def _try_parse(text: str) -> Rule | None:
    try:
        return parse_rule(text)
    except RuleError:
        return None


@functools.lru_cache(maxsize=64)
def policy_for(user: PermissionsConfig, project: PermissionsConfig | None = None) -> Policy:
    """The policy of a config's user and project ``[permissions]`` tables, parsed once per
    distinct pair (configs are few and immutable; every request checks against one)."""
    return Policy.from_config(user, project)
