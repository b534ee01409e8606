"""The invocation's substitution rules, argument splitting and dynamic-context detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillsd.core.skill.frontmatter import locate_frontmatter
from skillsd.core.skill.invocation import (
    find_dynamic_context,
    invoke_body,
    parse_command,
    split_arguments,
    substitute,
)
from skillsd_protocol.messages import Decision
from tests.fixtures.host_project import SOURCE


def never(command: str) -> Decision:
    raise AssertionError(f"no dynamic context expected, got {command!r}")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("/fix-issue 123 high", ("fix-issue", "123 high")),
        ("fix-issue   123  ", ("fix-issue", "123")),
        ("  /deploy", ("deploy", "")),
        ("/frontend:component Button", ("frontend:component", "Button")),
        ("/", ("", "")),
        ("", ("", "")),
    ],
)
def test_parse_command(typed: str, expected: tuple[str, str]) -> None:
    assert parse_command(typed) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", []),
        ("   ", []),
        ("123 high", ["123", "high"]),
        ('"two words" next', ["two words", "next"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ('a"b c"d', ["ab cd"]),
        (r"escaped\ space", ["escaped space"]),
        ('""', [""]),
        ("# not a comment", ["#", "not", "a", "comment"]),
        # An unbalanced quote makes the rest one argument, its quote removed.
        ('a "b c', ["a", "b c"]),
        ("it's fine", ["its fine"]),
        ('x "y z" "w v', ["x", "y z", "w v"]),
        ("a \\", ["a", "\\"]),
    ],
)
def test_split_arguments(raw: str, expected: list[str]) -> None:
    assert split_arguments(raw) == expected


def test_arguments_whole_indexed_and_positional() -> None:
    text, args = substitute(
        "all=[$ARGUMENTS] first=$ARGUMENTS[0] second=$1 zero=$0 third=$ARGUMENTS[2] far=$9",
        '123 "high priority"',
    )
    assert args == ["123", "high priority"]
    assert text == 'all=[123 "high priority"] first=123 second=high priority zero=123 third= far='


def test_named_arguments_longest_first_and_undeclared_names_untouched() -> None:
    text, _ = substitute(
        "$issue/$issue_number/$issues/$priority/$HOME/$PATH/$other",
        "7 42",
        argument_names=["issue", "issue_number"],
    )
    # `$issues` is not `$issue` followed by text: the placeholder must end at a word boundary.
    assert text == "7/42/$issues/$priority/$HOME/$PATH/$other"


def test_placeholders_inside_argument_values_are_never_substituted_again() -> None:
    text, args = substitute(
        "A=$0 B=$1 C=$name all=$ARGUMENTS dir=${SKILL_DIR}",
        "'$1' '$ARGUMENTS ${SKILL_DIR} $name'",
        argument_names=["name"],
        skill_dir="/skills/x",
    )
    assert args == ["$1", "$ARGUMENTS ${SKILL_DIR} $name"]
    assert text == (
        "A=$1 B=$ARGUMENTS ${SKILL_DIR} $name C=$1 "
        "all='$1' '$ARGUMENTS ${SKILL_DIR} $name' dir=/skills/x"
    )


def test_skill_dir_and_session_id_in_both_spellings() -> None:
    body = "${SKILL_DIR} ${CLAUDE_SKILL_DIR} ${SESSION_ID} ${CLAUDE_SESSION_ID} $SKILL_DIR"
    text, _ = substitute(body, "", skill_dir="/abs/dir", session_id="s-1")
    assert text == "/abs/dir /abs/dir s-1 s-1 $SKILL_DIR"
    text, _ = substitute(body, "", skill_dir="/abs/dir")
    assert text == "/abs/dir /abs/dir   $SKILL_DIR"


def test_arguments_fallback_line() -> None:
    # Arguments given, no argument placeholder used: appended after a blank line.
    assert substitute("Do it.\n", "now please")[0] == "Do it.\n\nARGUMENTS: now please\n"
    assert substitute("Do it.", "x")[0] == "Do it.\n\nARGUMENTS: x"
    assert substitute("Dir ${SKILL_DIR}\n\n\n", "x", skill_dir="/d")[0] == (
        "Dir /d\n\nARGUMENTS: x\n"
    )
    # No arguments: nothing appended. A used placeholder (even out of range): nothing appended.
    assert substitute("Do it.\n", "  ")[0] == "Do it.\n"
    assert substitute("Use $5.\n", "a")[0] == "Use .\n"
    assert substitute("Use $who.\n", "a", argument_names=["who"])[0] == "Use a.\n"


def test_word_boundaries() -> None:
    text, _ = substitute("$ARGUMENTSX $1st $12 $ARGUMENTS[1]x", "a b")
    # `$12` is out of range (""); `$ARGUMENTS[1]` counts as used, so no fallback line.
    assert text == "$ARGUMENTSX $1st  bx"


def test_dynamic_context_inline_and_fenced_with_code_point_offsets() -> None:
    body = (
        "Ünïcödé 🙂 first: !`git status --short`\n"
        "not!`inline` and `!not either`\n"
        "```!\n"
        "git log -1\n"
        "git diff --stat\n"
        "```\n"
        "```bash\n!`still found`\n```\n"
        "```!\nunclosed fence\n"
    )
    decisions: dict[str, Decision] = {
        "git status --short": "allow",
        "git log -1\ngit diff --stat": "ask",
        "still found": "deny",
    }
    found = find_dynamic_context(body, decisions.__getitem__)
    assert [(d.command, d.decision) for d in found] == list(decisions.items())
    spans = [body[d.start : d.end] for d in found]
    assert spans == [
        "!`git status --short`",
        "```!\ngit log -1\ngit diff --stat\n```",
        "!`still found`",
    ]
    # Offsets are code points: the emoji before the first one counts as one.
    assert found[0].start == len("Ünïcödé 🙂 first: ")


def test_invoke_body_reports_offsets_into_the_substituted_text() -> None:
    body = "Deploy $ARGUMENTS[0]: !`./deploy.sh $0`\n"
    seen: list[str] = []

    def decide(command: str) -> Decision:
        seen.append(command)
        return "ask"

    result = invoke_body(body, "production-eu", decide=decide)
    assert result.body == "Deploy production-eu: !`./deploy.sh production-eu`\n"
    [ctx] = result.dynamic_context
    assert result.body[ctx.start : ctx.end] == "!`./deploy.sh production-eu`"
    assert seen == ["./deploy.sh production-eu"] and ctx.decision == "ask"
    assert result.arguments == ["production-eu"]
    # Only what the skill's own file holds is dynamic context: an argument that looks like
    # one is text, never reported (or run) as a command.
    injected = invoke_body("Echo $0", "'!`rm -rf x`'", decide=lambda command: "allow")
    assert injected.body == "Echo !`rm -rf x`"
    assert injected.dynamic_context == []
    fenced = invoke_body("Run:\n$ARGUMENTS\n", "```!\nrm -rf x\n```", decide=never)
    assert "rm -rf x" in fenced.body and fenced.dynamic_context == []
    # The file's own constructs after an argument keep their place in the longer text.
    shifted = invoke_body("$0 then !`date`", "a-much-longer-argument", decide=lambda c: "allow")
    [ctx] = shifted.dynamic_context
    assert shifted.body[ctx.start : ctx.end] == "!`date`" and ctx.command == "date"
    assert invoke_body("No context $0", "x", decide=never).dynamic_context == []


def _body(path: Path) -> str:
    data = path.read_bytes()
    located = locate_frontmatter(data, at_eof=True)
    assert located is not None
    return data[located.body_offset :].decode()


def test_fixture_fix_issue_skill() -> None:
    skill_dir = SOURCE / ".claude" / "skills" / "fix-issue"
    result = invoke_body(
        _body(skill_dir / "SKILL.md"),
        "1234 urgent",
        decide=lambda command: "ask",
        argument_names=["issue", "priority"],
        skill_dir=str(skill_dir),
        session_id="sess-9",
    )
    assert "Fix GitHub issue #1234 (priority: urgent)." in result.body
    assert "Keep $HOME and $PATH out of committed files." in result.body
    assert "Session: sess-9" in result.body
    assert "ARGUMENTS:" not in result.body
    [ctx] = result.dynamic_context
    assert ctx.command == "gh issue view 1234 --json title,body"
    assert result.body[ctx.start : ctx.end].startswith("```!\n")


def test_fixture_deploy_skill() -> None:
    skill_dir = SOURCE / ".claude" / "skills" / "deploy"
    result = invoke_body(
        _body(skill_dir / "SKILL.md"),
        "staging",
        decide=lambda command: "allow" if command.startswith("git status") else "ask",
        skill_dir=str(skill_dir),
    )
    assert "Deploy to staging (default: staging)." in result.body
    assert f"Run `{skill_dir}/scripts/deploy.sh staging`." in result.body
    assert [(d.command, d.decision) for d in result.dynamic_context] == [
        ("git branch --show-current", "ask"),
        ("git status --short", "allow"),
    ]


def _shlex_split(raw: str) -> list[str]:
    """What Python's ``shlex`` (posix, whitespace_split, no comments) makes of ``raw``, with
    the unfinished last token kept as the splitter keeps it."""
    import shlex

    lexer = shlex.shlex(raw, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    out: list[str] = []
    try:
        while (token := lexer.get_token()) is not None:
            out.append(token)
    except ValueError as exc:
        rest = lexer.token or ""
        out.append(rest + "\\" if "escaped" in str(exc) else rest)
    return out


@pytest.mark.slow  # 3000 generated cases
@given(st.text(alphabet=list("ab '\"\\\t\n\r\x0b\u00a0#"), max_size=14))
@settings(max_examples=3000, deadline=None)
def test_argument_splitting_is_the_shells_posix_rules(raw: str) -> None:
    assert split_arguments(raw) == _shlex_split(raw)


def test_argument_splitting_is_linear() -> None:
    # shlex builds a token a character at a time: a 1 MB word took 42 s with it. The splitter
    # matches whole runs, so these answer at once (the bench measures, tests do not time).
    word = "w" * 1_000_000
    assert split_arguments(f"\"{word}\" '{word}' {word}") == [word, word, word]
    assert split_arguments('"' + 'a\\"' * 1000) == ['a"' * 1000]
