"""Slash commands and user invocation (docs/protocol.md) through a real ``skillsd serve``: the
command list
(skills and ``.claude/commands`` files, namespacing, shadowing, live updates), every
substitution rule, dynamic context with its decisions, the session record and the refusals."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.host_project import copy_host_project
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env

pytestmark = pytest.mark.process

SESSION = "inv-1"
NOT_USER_INVOCABLE = 1015
PERMISSION_DENIED = 1004


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_host_project(tmp_path)


@pytest.fixture
def start(project: Path) -> Iterator[Callable[[str], Client]]:
    """Start a daemon whose user config is ``config`` (TOML)."""
    daemons: list[StdioDaemon] = []

    def run(config: str = "") -> Client:
        tmp = project.parent
        (tmp / "config.toml").write_text(config)
        daemon = StdioDaemon(environ=daemon_env({"tmp": tmp, "home": tmp / "home"}))
        daemons.append(daemon)
        return Client(daemon, project)

    yield run
    for daemon in daemons:
        daemon.kill()


@pytest.fixture
def client(start: Callable[[str], Client]) -> Client:
    return start("")


def invoke(client: Client, command: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = client.ok("skills.invoke", command=command, **params)
    return result


def test_commands_list_skills_and_files_with_namespacing_and_shadowing(client: Client) -> None:
    commands = client.ok("skills.commands")["commands"]
    assert [(c["name"], c["source"]) for c in commands] == [
        ("deploy", "skill"),  # hides .claude/commands/deploy.md
        ("fix-issue", "skill"),
        ("frontend:component", "command"),
        ("release-notes", "skill"),  # model-disabled: still the user's command
        ("review", "command"),
    ]
    by_name = {c["name"]: c for c in commands}
    assert by_name["deploy"]["argumentHint"] == "[staging|production]"
    assert by_name["fix-issue"]["arguments"] == ["issue", "priority"]
    assert by_name["release-notes"]["displayName"] == "Release Notes"
    component = by_name["frontend:component"]
    assert component["description"] == "Create a React component following the design system"
    assert component["path"] == os.fspath(
        Path(client.cwd, ".claude", "commands", "frontend", "component.md")
    )
    assert "skill" not in component
    skill_ids = {s["name"]: s["id"] for s in client.ok("skills.list")["skills"]}
    assert by_name["deploy"]["skill"] == skill_ids["deploy"]


def test_named_and_indexed_arguments_session_and_skill_dir(client: Client, project: Path) -> None:
    client.ok("session.open", sessionId=SESSION)
    result = invoke(client, '/fix-issue 42 "very high"', sessionId=SESSION)
    assert result["arguments"] == ["42", "very high"]
    body = result["body"]
    assert "Fix GitHub issue #42 (priority: very high)." in body
    assert "`gh issue view 42`" in body
    # $HOME and $PATH are not declared names: left as written.
    assert "Keep $HOME and $PATH out of committed files." in body
    assert f"Session: {SESSION}" in body
    assert "ARGUMENTS:" not in body  # placeholders were used
    assert result["skill"]["name"] == "fix-issue"
    assert "command" not in result

    deploy = invoke(client, "deploy production", sessionId=SESSION)
    skill_dir = os.fspath(project / ".claude" / "skills" / "deploy")
    assert "Deploy to production (default: staging)." in deploy["body"]
    assert f"Run `{skill_dir}/scripts/deploy.sh production`." in deploy["body"]


def test_quotes_unbalanced_out_of_range_and_no_resubstitution(client: Client) -> None:
    unbalanced = invoke(client, "/fix-issue 7 'half open")
    assert unbalanced["arguments"] == ["7", "half open"]
    missing = invoke(client, "/fix-issue")
    assert missing["arguments"] == []
    assert "Fix GitHub issue # (priority: )." in missing["body"]
    # A placeholder inside an argument's value is text: it is never substituted again.
    nested = invoke(client, "/fix-issue '$priority' '$ARGUMENTS ${CLAUDE_SESSION_ID}'")
    assert (
        "Fix GitHub issue #$priority (priority: $ARGUMENTS ${CLAUDE_SESSION_ID})."
        in (nested["body"])
    )
    # Without a session, the session placeholder is empty.
    assert nested["body"].rstrip().endswith("Session:")
    out_of_range = invoke(client, "/frontend:component")
    assert "Create a component named  in src/components." in out_of_range["body"]


def test_arguments_fallback_and_raw_argument_string(client: Client) -> None:
    # review.md uses $ARGUMENTS: the raw string as typed, quotes and all.
    review = invoke(client, '/review  security "and naming" ')
    assert review["body"].rstrip().endswith('Focus on: security "and naming"')
    assert review["arguments"] == ["security", "and naming"]
    assert review["command"]["name"] == "review" and "skill" not in review
    assert review["content"] == review["body"]  # a command file is the user's message itself
    # A body without placeholders gets the arguments appended after a blank line.
    notes = client.ok("skills.invoke", name="release-notes", arguments="v2.0 --draft")
    assert notes["body"].endswith("\n\nARGUMENTS: v2.0 --draft\n")
    assert notes["arguments"] == ["v2.0", "--draft"]
    # No arguments: nothing appended.
    bare = client.ok("skills.invoke", name="release-notes")
    assert "ARGUMENTS:" not in bare["body"]


def test_dynamic_context_offsets_and_decisions(start: Callable[[str], Client]) -> None:
    client = start('[permissions]\nallow = ["Bash(git branch:*)"]\ndeny = ["Bash(git status:*)"]\n')
    result = invoke(client, "/deploy staging")
    body = result["body"]
    found = result["dynamicContext"]
    assert [(d["command"], d["decision"]) for d in found] == [
        ("git branch --show-current", "allow"),
        ("git status --short", "deny"),
    ]
    for entry in found:
        # Offsets are code points into the substituted body and span the whole construct.
        assert body[entry["start"] : entry["end"]] == f"!`{entry['command']}`"
    fenced = invoke(client, "/fix-issue 9")["dynamicContext"]
    assert [d["command"] for d in fenced] == ["gh issue view 9 --json title,body"]
    assert fenced[0]["decision"] == "ask"  # the default action


def test_invocation_is_recorded_like_a_load_and_always_sends_the_body(
    start: Callable[[str], Client], project: Path
) -> None:
    client = start('[permissions]\nallow = ["skill_load"]\n')
    client.ok("session.open", sessionId=SESSION)
    first = invoke(client, "/deploy staging", sessionId=SESSION)
    # The repository is not trusted: the skill's grants are withheld, in the reply and session.
    assert first["grants"] == []
    assert first["withheldGrants"] == ["Bash(git status:*)", "Bash(./scripts/deploy.sh:*)"]
    again = invoke(client, "/deploy production", sessionId=SESSION)
    assert "Deploy to production" in again["body"]  # no reload reminder for an invocation
    session = client.ok("context.inspect", sessionId=SESSION)["session"]
    assert [s["name"] for s in session["loaded"]] == ["deploy"]
    assert {g["rule"] for g in session["withheldGrants"]} == set(first["withheldGrants"])
    # A load after the invocation is a reminder: the session has this version.
    loaded = client.ok("skills.load", name="deploy", sessionId=SESSION)
    assert loaded["alreadyLoaded"] is True

    client.ok("trust.set", trusted=True)
    trusted = invoke(client, "/review", sessionId=SESSION)
    assert trusted["grants"] == ["Bash(git diff:*)"] and trusted["withheldGrants"] == []
    grants = client.ok("context.inspect", sessionId=SESSION)["session"]["grants"]
    assert {(g["rule"], tuple(g["grantedBy"])) for g in grants} >= {
        ("Bash(git diff:*)", ("review",)),
        ("Bash(git status:*)", ("deploy",)),
    }
    check = client.ok("permissions.check", tool="Bash", input="git diff HEAD", sessionId=SESSION)
    assert check["decision"] == "allow"


def test_refusals(start: Callable[[str], Client]) -> None:
    client = start('[permissions]\ndeny = ["skill_load(deploy)"]\n')
    denied = client.err("skills.invoke", command="/deploy staging")
    assert denied["code"] == PERMISSION_DENIED
    assert denied["data"]["kind"] == "permission_denied"
    assert "invoking skill 'deploy' is denied" in denied["message"]
    # `ask` (the default action) does not apply: the user acts directly.
    assert invoke(client, "/fix-issue 1")["skill"]["name"] == "fix-issue"
    model_only = client.err("skills.invoke", command="/api-conventions")
    assert model_only["code"] == NOT_USER_INVOCABLE
    assert model_only["data"] == {
        "kind": "not_user_invocable",
        "skill": "api-conventions",
        "path": model_only["data"]["path"],
    }
    unknown = client.err("skills.invoke", command="/reveiw now")
    assert unknown["data"]["kind"] == "skill_not_found"
    assert unknown["data"]["suggestions"] == ["review"]
    blank = client.err("skills.invoke", command="  / ")
    assert blank["code"] == -32602
    # The daemon keeps serving.
    assert client.ok("skills.commands")["commands"]


def test_a_new_command_file_is_announced_and_listed(client: Client, project: Path) -> None:
    before = {c["name"] for c in client.ok("skills.commands")["commands"]}
    assert "ops:rollback" not in before
    folder = project / ".claude" / "commands" / "ops"
    folder.mkdir()
    (folder / "rollback.md").write_text("Roll back the last deploy of $ARGUMENTS.\n")
    note = client.wait_note("skills.changed")["params"]
    assert note["cwd"] == os.fspath(project)
    after = {c["name"]: c for c in client.ok("skills.commands")["commands"]}
    assert after["ops:rollback"]["description"] == "Roll back the last deploy of $ARGUMENTS."
    body = invoke(client, "/ops:rollback prod")["body"]
    assert body == "Roll back the last deploy of prod.\n"
    # Deleting it is a change too.
    (folder / "rollback.md").unlink()
    client.wait_note("skills.changed")
    assert "ops:rollback" not in {c["name"] for c in client.ok("skills.commands")["commands"]}
