"""Policy through a real ``skillsd serve``: permissions (every layer, grants, load gating,
remember), enable flags, persistence across restarts, agents, config errors and live reload."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import Client, Daemons
from tests.support.skill_tree import make_project, write_skill, write_user_config

pytestmark = pytest.mark.process


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    tree = make_project(tmp_path)
    write_skill(
        tree["skills"],
        "file-reader",
        "Read project files.",
        extra="allowed-tools:\n  - Read\n  - Bash(cat:*)\n",
    )
    return tree


@pytest.fixture
def daemons(tree: dict[str, Path]) -> Iterator[Daemons]:
    d = Daemons(tree)
    try:
        yield d
    finally:
        d.stop_all()


@pytest.fixture
def client(daemons: Daemons) -> Client:
    return daemons.start()


def check(client: Client, tool: str, input: str | None = None, **kw: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"tool": tool, **kw}
    if input is not None:
        params["input"] = input
    result: dict[str, Any] = client.ok("permissions.check", **params)
    return result


def decided(result: dict[str, Any]) -> tuple[str, str, str | None]:
    return result["decision"], result["layer"], result.get("rule")


# -- permissions --------------------------------------------------------------------------


def test_with_no_configuration_loading_asks_and_remember_answers(client: Client) -> None:
    assert check(client, "skill_load", "pdf-forms") == {"decision": "ask", "layer": "default"}
    assert decided(check(client, "Bash", "ls")) == ("ask", "default", None)

    required = client.err("skills.load", name="pdf-forms")
    assert required["code"] == 1005 and required["data"]["kind"] == "permission_required"
    assert required["data"]["rule"] == "skill_load(pdf-forms)"
    assert "permissions.remember" in required["message"]
    via_tool = client.ok("tools.call", name="skill_load", arguments={"name": "pdf-forms"})
    assert via_tool["isError"] is True
    assert via_tool["permission"] == {"decision": "ask", "rule": "skill_load(pdf-forms)"}
    assert "approval" in via_tool["content"]

    client.ok("session.open", sessionId="s1")
    client.ok("session.open", sessionId="s2")
    client.ok("permissions.remember", sessionId="s1", rule="Skill(pdf-forms)", decision="allow")
    remembered = check(client, "skill_load", "pdf-forms", sessionId="s1")
    # Reported as the user wrote it (matched case-insensitively).
    assert decided(remembered) == ("allow", "memory", "Skill(pdf-forms)")
    loaded = client.ok("skills.load", name="pdf-forms", sessionId="s1")
    assert loaded["alreadyLoaded"] is False and "Run scripts/fill.py." in loaded["body"]
    # Session memory is that session's only.
    assert check(client, "skill_load", "pdf-forms", sessionId="s2")["decision"] == "ask"
    assert client.err("skills.load", name="pdf-forms", sessionId="s2")["code"] == 1005
    assert check(client, "skill_load", "pdf-forms")["decision"] == "ask"

    bad = client.err("permissions.remember", sessionId="s1", rule="Bash(git", decision="allow")
    assert bad["code"] == -32602 and "`rule`" in bad["message"] and "')'" in bad["message"]
    ghost = client.err("permissions.remember", sessionId="ghost", rule="Read", decision="allow")
    assert ghost["data"]["kind"] == "session_not_found"


LAYERED = """
[permissions]
finalDeny = ["Bash(rm:*)"]
override = ["Bash(git status:*)", "Read(secrets/public.txt)"]
deny = ["Bash(git:*)", "Read(secrets/*)", "skill_load(release-*)"]
allow = ["skill_load", "Bash(rm -i:*)", "Bash(python:*)", "Read(secrets/*)"]
defaultAction = "ask"
"""


def test_every_layer_in_order(client: Client, tree: dict[str, Path]) -> None:
    write_user_config(tree, LAYERED)
    client.ok("trust.set", trusted=True)  # the repo skill's grants count (docs/permissions.md)
    client.ok("session.open", sessionId="s")
    client.ok("permissions.remember", sessionId="s", rule="Bash(git push:*)", decision="allow")
    client.ok("permissions.remember", sessionId="s", rule="Bash(rm:*)", decision="allow")
    client.ok("permissions.remember", sessionId="s", rule="Bash(git status:*)", decision="deny")
    client.ok("skills.load", name="pdf-forms", sessionId="s")  # grants Read, Bash(python:*)
    cases = [
        # finalDeny: above memory, override and allow alike.
        ("Bash", "rm -i x", ("deny", "finalDeny", "Bash(rm:*)")),
        ("Bash", "ls && rm -rf /", ("deny", "finalDeny", "Bash(rm:*)")),
        # memory: above override (git status) and deny (git push).
        ("Bash", "git status", ("deny", "memory", "Bash(git status:*)")),
        ("Bash", "git push origin", ("allow", "memory", "Bash(git push:*)")),
        # override: allows although a deny rule matches too.
        ("Read", "secrets/public.txt", ("allow", "override", "Read(secrets/public.txt)")),
        # deny: above allow and above the skill's grant of Read.
        ("Read", "secrets/key.pem", ("deny", "deny", "Read(secrets/*)")),
        ("Bash", "git log", ("deny", "deny", "Bash(git:*)")),
        ("skill_load", "release-notes", ("deny", "deny", "skill_load(release-*)")),
        # allow: config rule first, then grants.
        ("Bash", "python x.py", ("allow", "allow", "Bash(python:*)")),
        ("Read", "README.md", ("allow", "allow", "Read")),
        # default.
        ("Write", "README.md", ("ask", "default", None)),
    ]
    for tool, input, expected in cases:
        assert decided(check(client, tool, input, sessionId="s")) == expected, (tool, input)
    granted = check(client, "read", "README.md", sessionId="s")
    assert granted["grantedBy"] == ["pdf-forms"]
    config_rule = check(client, "Bash", "python x.py", sessionId="s")
    assert "grantedBy" not in config_rule
    # Without the session: no memory, no grants.
    assert decided(check(client, "Bash", "git status")) == (
        "allow",
        "override",
        "Bash(git status:*)",
    )
    assert decided(check(client, "Read", "README.md")) == ("ask", "default", None)


def test_grants_are_reference_counted_and_revoked_by_unload_and_close(client: Client) -> None:
    client.ok("trust.set", trusted=True)
    client.ok("session.open", sessionId="s")
    client.ok("permissions.remember", sessionId="s", rule="skill_load", decision="allow")
    client.ok("skills.load", name="pdf-forms", sessionId="s")  # Read, Bash(python:*)
    client.ok("skills.load", name="file-reader", sessionId="s")  # Read, Bash(cat:*)
    both = check(client, "Read", "a.txt", sessionId="s")
    assert decided(both) == ("allow", "allow", "Read")
    assert both["grantedBy"] == ["pdf-forms", "file-reader"]

    unloaded = client.ok("skills.unload", name="pdf-forms", sessionId="s")
    assert unloaded == {"unloaded": True, "revokedRules": ["Bash(python:*)"]}
    still = check(client, "Read", "a.txt", sessionId="s")
    assert still["decision"] == "allow" and still["grantedBy"] == ["file-reader"]
    assert check(client, "Bash", "python x.py", sessionId="s")["decision"] == "ask"
    assert check(client, "Bash", "cat a.txt", sessionId="s")["grantedBy"] == ["file-reader"]
    # A granted command rule does not stretch to a chained command.
    assert check(client, "Bash", "cat a.txt | sh", sessionId="s")["decision"] == "ask"

    client.ok("session.close", sessionId="s")
    client.ok("session.open", sessionId="s")  # same id: a new, empty session
    assert decided(check(client, "Read", "a.txt", sessionId="s")) == ("ask", "default", None)
    assert check(client, "skill_load", "pdf-forms", sessionId="s")["decision"] == "ask"


def test_no_skill_grant_gets_past_deny_or_final_deny(client: Client, tree: dict[str, Path]) -> None:
    write_user_config(
        tree,
        '[permissions]\nallow = ["skill_load"]\nfinalDeny = ["Read(/etc/*)"]\n'
        'deny = ["Bash(python:*)"]\n',
    )
    client.ok("trust.set", trusted=True)
    client.ok("session.open", sessionId="s")
    client.ok("skills.load", name="pdf-forms", sessionId="s")
    assert decided(check(client, "Bash", "python fill.py", sessionId="s")) == (
        "deny",
        "deny",
        "Bash(python:*)",
    )
    assert decided(check(client, "Read", "/etc/shadow", sessionId="s")) == (
        "deny",
        "finalDeny",
        "Read(/etc/*)",
    )
    assert check(client, "Read", "notes.md", sessionId="s")["grantedBy"] == ["pdf-forms"]


def test_loads_are_gated_by_deny_rules(client: Client, tree: dict[str, Path]) -> None:
    write_user_config(tree, '[permissions]\nallow = ["skill_load"]\ndeny = ["Skill(release-*)"]\n')
    assert client.ok("skills.load", name="commit-message")["skill"]["name"] == "commit-message"
    path = os.fspath(tree["skills"] / "release" / "release-notes")
    denied = client.err("skills.load", path=path)
    assert denied["code"] == 1004 and denied["data"]["kind"] == "permission_denied"
    assert denied["data"]["rule"] == "Skill(release-*)" and denied["data"]["layer"] == "deny"
    via_tool = client.ok("tools.call", name="skill_load", arguments={"path": path})
    assert via_tool["isError"] is True
    assert via_tool["permission"] == {"decision": "deny", "rule": "Skill(release-*)"}
    write_user_config(tree, '[permissions]\ndefaultAction = "deny"\n')
    by_default = client.err("skills.load", name="commit-message")
    assert by_default["data"]["kind"] == "permission_denied"
    assert by_default["data"]["layer"] == "default"
    assert "default action" in by_default["message"]


# -- persistence --------------------------------------------------------------------------


def test_always_decisions_and_enable_flags_survive_a_restart(
    daemons: Daemons, tree: dict[str, Path]
) -> None:
    first = daemons.start()
    first.ok("session.open", sessionId="s")
    first.ok("permissions.remember", sessionId="s", rule="Skill(pdf-forms)", decision="allow")
    first.ok(
        "permissions.remember",
        sessionId="s",
        rule="Bash(git push:*)",
        decision="deny",
        persist="always",
    )
    first.ok(
        "permissions.remember",
        sessionId="s",
        rule="skill_load(commit-message)",
        decision="allow",
        persist="always",
    )
    first.ok("skills.setEnabled", name="pdf-forms", enabled=False)
    # An `always` answer applies at once to every check, with or without a session.
    assert decided(check(first, "Bash", "git push")) == ("deny", "memory", "Bash(git push:*)")
    state = tree["tmp"] / "state" / "skillsd" / "state.json"
    saved = json.loads(state.read_text())
    assert saved["permissions"] == {
        "Bash(git push:*)": "deny",
        "skill_load(commit-message)": "allow",
    }
    assert saved["disabled"] == [os.fspath(tree["pdf"] / "SKILL.md")]
    first.daemon.kill()

    second = daemons.start()
    assert decided(check(second, "Bash", "git push -f")) == ("deny", "memory", "Bash(git push:*)")
    assert second.ok("skills.load", name="commit-message")["alreadyLoaded"] is False
    # The session-only answer died with the daemon.
    assert check(second, "skill_load", "pdf-forms")["decision"] == "ask"
    listed = {s["name"]: s["enabled"] for s in second.ok("skills.list")["skills"]}
    assert listed["pdf-forms"] is False and listed["commit-message"] is True


def test_state_file_changed_by_another_daemon_is_picked_up(daemons: Daemons) -> None:
    one, two = daemons.start(), daemons.start()
    assert {s["name"] for s in two.ok("skills.list")["skills"] if not s["enabled"]} == set()
    one.ok("skills.setEnabled", name="commit-message", enabled=False)
    assert {s["name"] for s in two.ok("skills.list")["skills"] if not s["enabled"]} == {
        "commit-message"
    }
    one.ok("session.open", sessionId="s")
    one.ok("permissions.remember", sessionId="s", rule="Read", decision="allow", persist="always")
    assert decided(check(two, "Read", "x")) == ("allow", "memory", "Read")


def test_a_failed_state_write_is_a_clear_error_and_changes_nothing(
    client: Client, tree: dict[str, Path]
) -> None:
    state_dir = tree["tmp"] / "state" / "skillsd"
    state_dir.parent.mkdir()
    state_dir.write_text("a file where the state directory should be")
    failed = client.err("skills.setEnabled", name="pdf-forms", enabled=False)
    assert failed["code"] == 1014 and failed["data"]["kind"] == "state_write_failed"
    assert "could not save state" in failed["message"]
    assert f"{state_dir} is not a directory" in failed["message"]
    assert all(s["enabled"] for s in client.ok("skills.list")["skills"])
    client.ok("session.open", sessionId="s")
    failed = client.err(
        "permissions.remember", sessionId="s", rule="Read", decision="allow", persist="always"
    )
    assert failed["data"]["kind"] == "state_write_failed"
    assert check(client, "Read", "x", sessionId="s")["decision"] == "ask"


def test_a_corrupt_state_file_is_reported_and_kept(client: Client, tree: dict[str, Path]) -> None:
    state = tree["tmp"] / "state" / "skillsd" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"version": 1, "disabled": [')
    diagnostics = client.ok("skills.list")["diagnostics"]
    problem = next(d for d in diagnostics if d["code"] == "state.unreadable")
    assert problem["path"] == os.fspath(state) and problem["severity"] == "error"
    refused = client.err("skills.setEnabled", name="pdf-forms", enabled=False)
    assert refused["data"]["kind"] == "state_unreadable" and "fix or remove" in refused["message"]
    assert state.read_text() == '{"version": 1, "disabled": ['


# -- enable/disable -----------------------------------------------------------------------


def test_set_enabled_user_hides_a_skill_everywhere_but_the_list(
    client: Client, tree: dict[str, Path]
) -> None:
    write_user_config(tree, '[permissions]\nallow = ["skill_load"]\n')
    generation = client.ok("skills.list")["generation"]
    result = client.ok("skills.setEnabled", name="pdf-forms", enabled=False)
    assert result["skill"]["name"] == "pdf-forms" and result["skill"]["enabled"] is False
    listed = client.ok("skills.list")
    assert listed["generation"] > generation
    assert [s["enabled"] for s in listed["skills"] if s["name"] == "pdf-forms"] == [False]
    enabled_only = client.ok("skills.list", includeDisabled=False)["skills"]
    assert "pdf-forms" not in {s["name"] for s in enabled_only}
    assert client.ok("skills.search", query="pdf-forms")["results"] == []
    assert "pdf-forms" not in client.ok("skills.prompt")["text"]
    assert client.ok("skills.mentions", text="use $pdf-forms")["mentions"] == []
    missing = client.err("skills.load", name="pdf-forms")
    assert missing["data"]["kind"] == "skill_not_found" and "disabled" in missing["message"]
    # Re-enabled by name: setEnabled resolves among disabled skills too.
    again = client.ok("skills.setEnabled", name="pdf-forms", enabled=True)
    assert again["skill"]["enabled"] is True
    assert client.ok("skills.search", query="pdf-forms")["results"][0]["reason"] == "exact_name"
    assert client.ok("skills.load", name="pdf-forms")["skill"]["enabled"] is True


def test_set_enabled_session_affects_only_that_session(client: Client) -> None:
    no_session = client.err("skills.setEnabled", name="pdf-forms", enabled=False, persist="session")
    assert no_session["code"] == -32602 and "sessionId" in no_session["message"]
    client.ok("session.open", sessionId="s")
    client.ok(
        "skills.setEnabled", name="pdf-forms", enabled=False, persist="session", sessionId="s"
    )
    mine = client.ok("skills.list", sessionId="s")["skills"]
    assert [s["enabled"] for s in mine if s["name"] == "pdf-forms"] == [False]
    assert client.ok("skills.search", query="pdf-forms", sessionId="s")["results"] == []
    assert client.err("skills.load", name="pdf-forms", sessionId="s")["data"]["kind"] == (
        "skill_not_found"
    )
    others = client.ok("skills.list")["skills"]
    assert [s["enabled"] for s in others if s["name"] == "pdf-forms"] == [True]
    assert client.ok("skills.search", query="pdf-forms")["results"] != []
    # A user-level change through the session ends the session's own override.
    client.ok("skills.setEnabled", name="pdf-forms", enabled=True, sessionId="s")
    assert client.ok("skills.search", query="pdf-forms", sessionId="s")["results"] != []


# -- agents -------------------------------------------------------------------------------


def write_agent(directory: Path, file: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file
    path.write_text(text, encoding="utf-8")
    return path


def test_agents_list_get_render_and_errors(client: Client, tree: dict[str, Path]) -> None:
    agents_dir = tree["project"] / ".agents" / "agents"
    reviewer = write_agent(
        agents_dir,
        "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews forms.\nmodel: sonnet\ntools: [Read]\n"
        "skills: [pdf-forms, commit-message]\n---\n\nYou review PDF form changes.\n",
    )
    typo = write_agent(agents_dir, "typo.md", "---\nname: typo\nskills: [pdf-form]\n---\nx\n")
    broken = write_agent(agents_dir, "broken.md", "no frontmatter here\n")
    write_agent(tree["home"] / ".agents" / "agents", "mine.md", "---\nname: mine\n---\nMy agent.\n")

    listed = client.ok("agents.list")
    assert [a["name"] for a in listed["agents"]] == ["reviewer", "typo", "mine"]
    assert listed["agents"][0]["tools"] == ["Read"] and listed["agents"][0]["model"] == "sonnet"
    errors = {e["path"]: e["message"] for e in listed["errors"]}
    assert set(errors) == {os.fspath(broken), os.fspath(typo)}
    assert "'pdf-form'" in errors[os.fspath(typo)]
    # Found from a subdirectory too: the repo chain.
    assert len(client.ok("agents.list", cwd=os.fspath(tree["sub"]))["agents"]) == 3

    got = client.ok("agents.get", name="reviewer")
    assert got["agent"]["path"] == os.fspath(reviewer)
    assert [(s["name"], s["scope"]) for s in got["skills"]] == [
        ("pdf-forms", "repo"),
        ("commit-message", "user"),
    ]
    assert "prompt" not in got
    rendered = client.ok("agents.get", name="reviewer", render=True)["prompt"]
    assert rendered.startswith("You review PDF form changes.")
    assert "## pdf-forms" in rendered and "Run scripts/fill.py." in rendered
    assert "- references/fields.md" in rendered and "- scripts/fill.py" in rendered
    assert "## commit-message" in rendered

    unknown = client.err("agents.get", name="typo")
    assert unknown["code"] == 1011 and unknown["data"]["kind"] == "unknown_skill_reference"
    assert unknown["data"]["agent"] == "typo" and unknown["data"]["skill"] == "pdf-form"
    assert unknown["data"]["suggestions"] == ["pdf-forms"]
    missing = client.err("agents.get", name="reviewr")
    assert missing["code"] == 1010 and missing["data"]["suggestions"] == ["reviewer"]

    # A deny rule on one of its skills holds for rendering too (approval is not needed).
    write_user_config(tree, '[permissions]\ndeny = ["skill_load(commit-*)"]\n')
    denied = client.err("agents.get", name="reviewer", render=True)
    assert denied["data"]["kind"] == "permission_denied" and denied["data"]["agent"] == "reviewer"
    assert client.ok("agents.get", name="reviewer")["skills"]  # resolving is not loading


# -- configuration ------------------------------------------------------------------------


def test_config_errors_name_file_key_and_reason(client: Client, tree: dict[str, Path]) -> None:
    config = tree["tmp"] / "config.toml"
    write_user_config(tree, '[permissions]\nallow = ["Read", "Bash(git"]\n')
    bad_rule = client.err("skills.list")
    assert os.fspath(config) in bad_rule["message"]
    assert "permissions.allow[1]" in bad_rule["message"] and "')'" in bad_rule["message"]
    assert client.err("permissions.check", tool="Read")["message"] == bad_rule["message"]
    write_user_config(tree, "[discovery]\nmaxDepth = 'deep'\n")
    wrong_type = client.err("skills.list")["message"]
    assert "discovery.maxDepth" in wrong_type and "Expected `int`" in wrong_type
    project_config = tree["project"] / ".agents" / "skillsd.toml"
    write_user_config(tree, "")
    # An unknown key is a warning in the catalog's diagnostics; the request goes on.
    project_config.write_text("[search]\nmaxLimt = 1\n")
    listed = client.ok("skills.list")
    (typo,) = [d for d in listed["diagnostics"] if d["code"] == "config.unknown_key"]
    assert typo["path"] == os.fspath(project_config)
    assert typo["message"] == "`search.maxLimt` is not a setting; did you mean `search.maxLimit`?"


def test_config_changes_apply_without_a_restart(client: Client, tree: dict[str, Path]) -> None:
    assert check(client, "skill_load", "pdf-forms")["decision"] == "ask"
    write_user_config(tree, '[permissions]\nallow = ["skill_load(pdf-*)"]\n')
    assert decided(check(client, "skill_load", "pdf-forms")) == (
        "allow",
        "allow",
        "skill_load(pdf-*)",
    )
    assert client.ok("skills.load", name="pdf-forms")["skill"]["name"] == "pdf-forms"
    # The project's file adds rules to the user's.
    project_config = tree["project"] / ".agents" / "skillsd.toml"
    project_config.write_text('[permissions]\ndeny = ["Skill(pdf-forms)"]\n')
    assert decided(check(client, "skill_load", "pdf-forms")) == (
        "deny",
        "deny",
        "Skill(pdf-forms)",
    )
    project_config.unlink()
    write_user_config(
        tree, '[discovery]\ncompatRoots = false\n[permissions]\ndefaultAction = "allow"\n'
    )
    assert decided(check(client, "skill_load", "pdf-forms")) == ("allow", "default", None)
    (tree["home"] / ".claude" / "skills").mkdir(parents=True)
    write_skill(tree["home"] / ".claude" / "skills", "legacy", "A .claude skill.")
    assert "legacy" not in {s["name"] for s in client.ok("skills.list")["skills"]}
    write_user_config(tree, "[discovery]\ncompatRoots = true\n")
    assert "legacy" in {s["name"] for s in client.ok("skills.list")["skills"]}
