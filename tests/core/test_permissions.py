"""Rule grammar, matching and the six-layer evaluation (docs/permissions.md)."""

from __future__ import annotations

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import parse_config_table, parse_config_text
from skillsd.core.policy.permissions import (
    PermissionsConfig,
    Policy,
    RuleError,
    evaluate,
    parse_rule,
    rule_problem,
    skill_load_rule,
    split_commands,
)
from skillsd.core.skill.validation import split_allowed_tools


def policy(**lists: object) -> Policy:
    return Policy.from_config(PermissionsConfig(**lists))  # type: ignore[arg-type]


# -- grammar ------------------------------------------------------------------------------


def test_allowed_tools_strings_split_outside_parentheses_only() -> None:
    rules = split_allowed_tools("Bash(git add:*) Read Bash(npm run test:*)")
    assert rules == ["Bash(git add:*)", "Read", "Bash(npm run test:*)"]
    assert [parse_rule(r).specifier for r in rules] == ["git add:*", None, "npm run test:*"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty rule"),
        ("   ", "empty rule"),
        ("Bash(", "must end with ')'"),
        ("Bash(git", "must end with ')'"),
        ("(git)", "no tool name"),
        ("Bash()", "empty specifier"),
        ("Bash(a))", "unbalanced"),
        ("Bash((a)", "unbalanced"),
        ("Read)", "tool name"),
        ("Web Fetch", "tool name"),
        ("Bash(:*)", "needs a command"),
    ],
)
def test_malformed_rules_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rule(text)
    assert fragment in str(info.value)
    assert rule_problem(text) == str(info.value)


def test_rule_keys_are_canonical_and_skill_is_an_alias() -> None:
    assert parse_rule("Skill(Release-Notes)").key == "skill_load(release-notes)"
    assert parse_rule("  BASH(git:*) ").key == "bash(git:*)"
    assert parse_rule("  BASH(git:*) ").text == "BASH(git:*)"
    assert parse_rule("Read").key == "read"
    assert rule_problem("mcp__github__*") is None
    assert skill_load_rule("pdf") == "skill_load(pdf)"


# -- matching -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "tool", "input", "expected"),
    [
        ("Bash(git:*)", "Bash", "git status", True),
        ("Bash(git:*)", "bash", "git", True),
        ("Bash(git:*)", "BASH", "  git   log -1 ", True),
        ("Bash(git:*)", "Bash", "gitk", False),
        ("Bash(git:*)", "Bash", "git status && rm -rf /", False),
        ("Bash(git:*)", "Bash", "git log $(rm -rf /)", False),
        ("Bash(git:*)", "Bash", "git add . && git commit -m 'a; b'", True),
        ("Bash(git:*)", "Bash", "GIT_PAGER=cat git log", True),
        ("Bash(git:*)", "Bash", None, False),
        ("Bash(git:*)", "Read", "git status", False),
        ("Bash(git push:*)", "Bash", "git push origin main", True),
        ("Bash(git push:*)", "Bash", "git pull", False),
        ("Bash(npm run *:*)", "Bash", "npm run build --prod", True),
        ("Read", "read", "/etc/passwd", True),
        ("Read", "read", None, True),
        ("Read(src/*)", "Read", "src/a/b.py", True),
        ("Read(src/*)", "Read", "docs/a.md", False),
        ("Read(*.md)", "Read", "README.md", True),
        ("skill_load", "skill_load", "anything", True),
        ("skill_load(release-*)", "skill_load", "release-notes", True),
        ("skill_load(release-*)", "Skill", "pdf-forms", False),
        ("Skill(pdf-forms)", "skill_load", "pdf-forms", True),
        ("skill_load(PDF-Forms)", "SKILL_LOAD", "pdf-forms", True),
        ("mcp__github__*", "mcp__github__create_issue", None, True),
        ("mcp__github__*", "mcp__gitlab__create_issue", None, False),
    ],
)
def test_matching(rule: str, tool: str, input: str | None, expected: bool) -> None:
    assert parse_rule(rule).matches(tool, input) is expected


def test_deny_polarity_catches_any_command_of_a_line() -> None:
    rule = parse_rule("Bash(rm:*)")
    line = "git status && rm -rf build"
    assert rule.matches("Bash", line, "any") is True
    assert rule.matches("Bash", line, "all") is False
    assert rule.matches("Bash", 'X="a b" rm -rf /', "any") is True
    assert rule.matches("Bash", "echo `rm -rf /`", "any") is True
    assert rule.matches("Bash", "echo 'rm -rf /'", "any") is False


def test_split_commands_honours_quotes_and_substitutions() -> None:
    assert split_commands("a && b || c; d | e & f\ng") == ["a", "b", "c", "d", "e", "f", "g"]
    assert split_commands("git commit -m \"x; y\" && echo 'p | q'") == [
        'git commit -m "x; y"',
        "echo 'p | q'",
    ]
    assert split_commands('echo "$(whoami)"') == ['echo "', "whoami", '"']
    assert split_commands("A=1 B='x y' make") == ["make"]
    assert split_commands("   ") == []


# -- evaluation: the six layers in order ----------------------------------------------------


def test_no_configuration_asks_for_everything_including_skill_load() -> None:
    check = evaluate(Policy(), "skill_load", "pdf-forms")
    assert (check.decision, check.layer, check.rule, check.granted_by) == (
        "ask",
        "default",
        None,
        None,
    )
    assert evaluate(Policy(), "Bash", "ls").decision == "ask"


@pytest.mark.parametrize("action", ["allow", "ask", "deny"])
def test_default_action_is_configurable(action: str) -> None:
    check = evaluate(policy(default_action=action), "Read", "x")
    assert (check.decision, check.layer) == (action, "default")


def test_final_deny_beats_everything() -> None:
    p = policy(final_deny=("Bash(rm:*)",), override=("Bash",), allow=("Bash",))
    check = evaluate(
        p,
        "Bash",
        "rm -rf /",
        session_memory={"bash": "allow"},
        always={"bash(rm:*)": "allow"},
        grants={"Bash": ["cleanup"]},
    )
    assert (check.decision, check.layer, check.rule) == ("deny", "finalDeny", "Bash(rm:*)")


def test_memory_beats_override_deny_and_allow() -> None:
    p = policy(override=("Read",), deny=("Read",), allow=("Read",))
    denied = evaluate(p, "Read", "a", session_memory={"read": "deny"})
    assert (denied.decision, denied.layer, denied.rule) == ("deny", "memory", "read")
    p = policy(deny=("Bash(git push:*)",))
    allowed = evaluate(p, "Bash", "git push", always={"bash(git push:*)": "allow"})
    assert (allowed.decision, allowed.layer) == ("allow", "memory")


def test_session_answer_for_a_rule_wins_over_always_and_deny_wins_across_rules() -> None:
    both = evaluate(
        Policy(), "skill_load", "pdf", session_memory={"skill_load(pdf)": "allow"}, always={}
    )
    assert both.decision == "allow"
    same_rule = evaluate(
        Policy(),
        "skill_load",
        "pdf",
        session_memory={"skill_load(pdf)": "allow"},
        always={"skill_load(pdf)": "deny"},
    )
    assert same_rule.decision == "allow"
    across = evaluate(
        Policy(),
        "skill_load",
        "pdf",
        session_memory={"skill_load(pdf)": "allow"},
        always={"skill_load": "deny"},
    )
    assert (across.decision, across.rule) == ("deny", "skill_load")


def test_override_allows_where_deny_matches() -> None:
    p = policy(override=("Bash(git status:*)",), deny=("Bash(git:*)",))
    check = evaluate(p, "Bash", "git status")
    assert (check.decision, check.layer, check.rule) == ("allow", "override", "Bash(git status:*)")
    check = evaluate(p, "Bash", "git push")
    assert (check.decision, check.layer, check.rule) == ("deny", "deny", "Bash(git:*)")


def test_deny_beats_allow_and_every_skill_grant() -> None:
    p = policy(deny=("Bash(git push:*)",), allow=("Bash(git:*)",))
    grants = {"Bash(git:*)": ["git-workflow"], "Bash": ["shell"]}
    check = evaluate(p, "Bash", "git push --force", grants=grants)
    assert (check.decision, check.layer) == ("deny", "deny")
    # A chained command cannot hide the denied one from the deny rule.
    check = evaluate(p, "Bash", "git status; git push", grants=grants)
    assert (check.decision, check.layer) == ("deny", "deny")


def test_allow_reports_config_rule_or_granting_skills() -> None:
    p = policy(allow=("Read",))
    grants = {"Bash(git:*)": ["git-workflow", "release"], "Read": ["pdf"]}
    config_hit = evaluate(p, "Read", "x", grants=grants)
    assert (config_hit.layer, config_hit.rule, config_hit.granted_by) == ("allow", "Read", None)
    granted = evaluate(p, "Bash", "git log", grants=grants)
    assert (granted.decision, granted.layer, granted.rule, granted.granted_by) == (
        "allow",
        "allow",
        "Bash(git:*)",
        ("git-workflow", "release"),
    )
    # A malformed grant grants nothing (it is reported on the skill that holds it).
    assert evaluate(Policy(), "Bash", "ls", grants={"Bash(": ["bad"]}).decision == "ask"


# -- configuration ------------------------------------------------------------------------


def test_config_rejects_malformed_rules_naming_file_key_and_reason() -> None:
    with pytest.raises(SkillsdError) as info:
        parse_config_text('[permissions]\ndeny = ["Read", "Bash(git"]\n', "/p/config.toml")
    assert info.value.kind == "invalid_config"
    message = info.value.message
    assert "/p/config.toml" in message
    assert "permissions.deny[1]" in message
    assert "must end with ')'" in message


def test_config_accepts_every_layer_and_default_action() -> None:
    text = (
        "[permissions]\n"
        'finalDeny = ["Bash(rm:*)"]\noverride = ["Bash(git status:*)"]\n'
        'deny = ["Bash(git:*)"]\nallow = ["skill_load", "Skill(pdf)"]\ndefaultAction = "deny"\n'
    )
    parse_config_text(text, "c.toml")
    with pytest.raises(SkillsdError, match="defaultAction"):
        parse_config_text('[permissions]\ndefaultAction = "maybe"\n', "c.toml")


def test_the_worked_example_of_docs_permissions_md() -> None:
    table_data = parse_config_text(
        "[permissions]\n"
        'finalDeny = ["Bash(rm -rf:*)", "Read(/etc/shadow)"]\n'
        'override = ["Bash(git status:*)"]\n'
        'deny = ["Bash(git:*)", "skill_load(experimental-*)"]\n'
        'allow = ["skill_load", "Read"]\n',
        "config.toml",
    )
    p = Policy.from_config(parse_config_table(table_data, "config.toml").permissions)
    grants = {"Bash(git log:*)": ["release-notes"], "Bash(gh pr list:*)": ["release-notes"]}
    table = [
        ("Bash", "git status", ("allow", "override", "Bash(git status:*)")),
        ("Bash", "git log -5", ("deny", "deny", "Bash(git:*)")),
        ("Bash", "gh pr list", ("allow", "allow", "Bash(gh pr list:*)")),
        ("Bash", "gh pr list; curl x", ("ask", "default", None)),
        ("Bash", "make && rm -rf /", ("deny", "finalDeny", "Bash(rm -rf:*)")),
        ("skill_load", "experimental-ui", ("deny", "deny", "skill_load(experimental-*)")),
        ("Skill", "pdf-forms", ("allow", "allow", "skill_load")),
        ("Write", "notes.md", ("ask", "default", None)),
    ]
    for tool, input, expected in table:
        check = evaluate(p, tool, input, grants=grants)
        assert (check.decision, check.layer, check.rule) == expected, (tool, input)
    remembered = evaluate(p, "Bash", "git log -5", always={"bash(git log:*)": "allow"})
    assert (remembered.decision, remembered.layer) == ("allow", "memory")
