"""Property-based fuzzing of the permission rule parser, the matcher and the policy
(docs/permissions.md).

Rules come from the user's config and from skill authors (``allowed-tools``); inputs come from
clients. No rule or input makes parsing raise anything but `RuleError`, no pairing of the two
makes matching slow, and no grant a skill brings gets past a deny.
"""

from __future__ import annotations

import contextlib
import re
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from skillsd.core.policy.permissions import (
    Glob,
    Policy,
    RuleError,
    evaluate,
    parse_rule,
    split_commands,
)
from skillsd.core.skill.validation import split_allowed_tools
from tests.hardening.fuzzing import bounded, fuzz_settings

pytestmark = pytest.mark.slow  # hundreds of generated cases per test: seconds each

# -- strategies ----------------------------------------------------------------------------------

_RULE_CHARS = st.sampled_from([*"Bashrd_kil-*:() .\t\n\\'\"$;&|`", "é", "\x00", "\u2028"])
_ANY_RULE_TEXT = st.one_of(st.text(max_size=40), st.text(alphabet=_RULE_CHARS, max_size=25))
_TOOLS = st.sampled_from(["Bash", "bash", "Read", "skill_load", "Skill", "mcp__gh__x", "Edit"])
_COMMAND_WORDS = st.sampled_from(["git", "rm", "ls", "gitk", "python", "npm run", "echo"])
_ARGS = st.text(alphabet=string.ascii_lowercase + " -./*", max_size=8)


@st.composite
def valid_rules(draw: st.DrawFn) -> str:
    tool = draw(st.sampled_from(["Bash", "Read", "skill_load", "Skill", "mcp__*", "*", "Edit"]))
    form = draw(st.integers(0, 3))
    if form == 0:
        return tool
    if form == 1:
        return f"{tool}({draw(_COMMAND_WORDS)}:*)"
    spec = draw(st.text(alphabet="abgit*/.- ", min_size=1, max_size=6).filter(str.strip))
    return f"{tool}({spec})"


_INPUTS = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.builds(lambda w, a: f"{w} {a}".strip(), _COMMAND_WORDS, _ARGS),
    st.text(alphabet="abgit*/.- &|;$()`'\"\n", max_size=25),
)


def regex_of(pattern: str, command: bool) -> re.Pattern[str]:
    """The obvious translation of a glob to a regex: the oracle for small inputs only (it
    backtracks polynomially, which is why the matcher does not use it)."""
    glob = ".*".join(re.escape(p) for p in pattern.split("*"))
    return re.compile(rf"(?:{glob})(?:\s.*)?" if command else glob, re.DOTALL)


# -- the parser ----------------------------------------------------------------------------------


@fuzz_settings(500)
@given(_ANY_RULE_TEXT)
def test_parsing_any_text_gives_a_rule_or_a_rule_error(text: str) -> None:
    with bounded(seconds=5.0):
        try:
            rule = parse_rule(text)
        except RuleError as exc:
            assert str(exc)
            return
    assert rule.text == text.strip() and rule.tool == rule.tool.lower()
    # The canonical key is itself a rule with the same key: remembered decisions round-trip.
    again = parse_rule(rule.key)
    assert again.key == rule.key and again.tool == rule.tool
    assert (again.specifier, again.command) == (rule.specifier, rule.command)


@fuzz_settings(300)
@given(st.text(alphabet=_RULE_CHARS, max_size=40) | st.text(max_size=40))
def test_allowed_tools_splitting_never_raises(text: str) -> None:
    rules = split_allowed_tools(text)
    if rules is None:
        assert "(" in text or ")" in text  # only unbalanced parentheses are refused
        return
    assert all(r and r == r.strip() for r in rules)
    for rule in rules:
        with contextlib.suppress(RuleError):
            parse_rule(rule)


# -- the matcher ---------------------------------------------------------------------------------


@fuzz_settings(600)
@given(
    st.text(alphabet="ab* \n", max_size=8),
    st.text(alphabet="ab \n\t\u2028", max_size=14),
    st.booleans(),
)
def test_glob_matching_agrees_with_the_regex_oracle(pattern: str, text: str, command: bool) -> None:
    assume(pattern.count("*") <= 4)
    glob = Glob(pattern)
    expected = regex_of(pattern, command).fullmatch(text) is not None
    actual = glob.command_match(text) if command else glob.fullmatch(text)
    assert actual is expected, (pattern, text, command)


@fuzz_settings(20)
@given(st.integers(2, 40), st.integers(500, 8000), st.sampled_from(["a", "ab", " "]))
def test_hostile_globs_cost_linear_time(stars: int, length: int, unit: str) -> None:
    """``*a*a*a...*b`` against ``aaaa...`` made the regex matcher backtrack for minutes (a
    skill's allowed-tools could stall every permission check of a session)."""
    specifier = "*" + "*".join([unit] * stars) + "*b"
    text = (unit * length)[:length]
    with bounded(seconds=5.0):
        for spec in (specifier, specifier + ":*"):
            rule = parse_rule(f"Bash({spec})")
            rule.matches("Bash", text)
            rule.matches("Bash", text + " x", "any")
        tool_glob = parse_rule(f"{'*a' * stars}*c")
        assert tool_glob.matches("a" * length, None) is False
        assert tool_glob.matches("a" * length + "c", None) is True


@fuzz_settings(400)
@given(valid_rules(), _TOOLS, _INPUTS, st.sampled_from(["any", "all"]))
def test_matching_never_raises(rule_text: str, tool: str, input: str | None, polarity: str) -> None:
    rule = parse_rule(rule_text)
    with bounded(seconds=5.0):
        hit = rule.matches(tool, input, polarity)  # type: ignore[arg-type]
    assert isinstance(hit, bool)
    if rule.specifier is not None and input is None:
        assert hit is False  # a specifier never matches a call without input


@fuzz_settings(400)
@given(st.text(max_size=60) | st.text(alphabet="ab=&|;()$`'\"\\ \n", max_size=40))
def test_split_commands_never_raises(line: str) -> None:
    with bounded(seconds=5.0):
        commands = split_commands(line)
    assert all(c and c == c.strip() for c in commands)


# -- the policy: skills cannot bypass a deny ----------------------------------------------------

_SEPARATORS = st.sampled_from([" && ", "; ", " | ", " || ", "\n", " & ", " $(", " `"])


@st.composite
def shell_lines(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A shell line chaining simple commands, and the first word of each command."""
    words = draw(st.lists(st.sampled_from(["git", "rm", "ls", "python"]), min_size=1, max_size=4))
    line = words[0] + " " + draw(_ARGS.filter(lambda a: "*" not in a))
    for word in words[1:]:
        line += draw(_SEPARATORS) + word + " " + draw(_ARGS.filter(lambda a: "*" not in a))
    return line, words


@fuzz_settings(300)
@given(
    st.lists(valid_rules(), max_size=2),
    st.lists(valid_rules(), max_size=2),
    st.lists(valid_rules(), max_size=2),
    st.lists(valid_rules(), max_size=2),
    st.dictionaries(valid_rules(), st.sampled_from(["allow", "deny"]), max_size=2),
    st.dictionaries(
        valid_rules() | _ANY_RULE_TEXT, st.lists(st.text(max_size=5), max_size=2), max_size=3
    ),
    _TOOLS,
    _INPUTS,
)
def test_skill_grants_only_ever_decide_what_nothing_else_did(
    final_deny: list[str],
    override: list[str],
    deny: list[str],
    allow: list[str],
    memory: dict[str, str],
    grants: dict[str, list[str]],
    tool: str,
    input: str | None,
) -> None:
    policy = Policy(
        final_deny=tuple(map(parse_rule, final_deny)),
        override=tuple(map(parse_rule, override)),
        deny=tuple(map(parse_rule, deny)),
        allow=tuple(map(parse_rule, allow)),
    )
    remembered = {parse_rule(k).key: v for k, v in memory.items()}
    without = evaluate(policy, tool, input, session_memory=remembered)  # type: ignore[arg-type]
    with_grants = evaluate(policy, tool, input, session_memory=remembered, grants=grants)  # type: ignore[arg-type]
    assert with_grants.decision in ("allow", "deny", "ask")
    assert (with_grants.rule is None) == (with_grants.layer == "default")
    if without.layer != "default":
        assert with_grants == without  # a deny, a memory, an override or config allow stands
    elif with_grants != without:
        assert (with_grants.decision, with_grants.layer) == ("allow", "allow")
        assert with_grants.granted_by == tuple(grants[with_grants.rule or ""])


@fuzz_settings(300)
@given(shell_lines(), st.sampled_from(["rm", "git", "python"]))
def test_chaining_never_smuggles_a_denied_command_past_a_grant(
    line_and_words: tuple[str, list[str]], denied: str
) -> None:
    line, words = line_and_words
    policy = Policy(deny=(parse_rule(f"Bash({denied}:*)"),))
    grants = {"Bash": ["evil-skill"], "Bash(*)": ["evil-skill"], "*": ["evil-skill"]}
    check = evaluate(policy, "Bash", line, grants=grants)
    if denied in words:
        assert (check.decision, check.layer) == ("deny", "deny"), line
    else:
        assert check.decision == "allow", line
    # An allow rule for one command covers a line only when every command is that command.
    allowed = evaluate(Policy(allow=(parse_rule("Bash(git:*)"),)), "Bash", line)
    assert (allowed.decision == "allow") == all(w == "git" for w in words), line
