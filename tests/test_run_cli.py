"""`skillsd run` and the invocation marks of `skillsd list` (docs/protocol.md), as a user runs
them: real subprocesses on a copy of the Claude Code-style fixture project; `--json` matches the
daemon."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from skillsd_protocol.messages import CommandsResult, InvokeResult
from tests.fixtures.host_project import copy_host_project
from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env

pytestmark = pytest.mark.process


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    project = copy_host_project(tmp_path)
    return {"tmp": tmp_path, "project": project, "home": tmp_path / "home"}


def test_run_substitutes_shell_split_arguments(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "run", "/fix-issue", "42", "very high")
    assert out.returncode == 0, out.stderr
    assert "Fix GitHub issue #42 (priority: very high)." in out.stdout
    assert out.stdout.startswith('<skill_context name="fix-issue"')
    # Dynamic context is never run; stderr says what a host would run and the decision.
    assert "dynamic context (not run, ask): gh issue view 42 --json title,body" in out.stderr
    # Words the shell split come back quoted in $ARGUMENTS, so they split the same way again.
    review = run_tree_cli(tree, "run", "review", "naming", "and tests")
    assert review.stdout.rstrip().endswith("Focus on: naming 'and tests'")
    # One argument holding the whole command line is taken as typed.
    typed = run_tree_cli(tree, "run", '/review "as typed"')
    assert typed.stdout.rstrip().endswith('Focus on: "as typed"')


def test_run_json_is_the_daemon_result(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "run", "--json", "--format", "spec", "/deploy", "production")
    assert out.returncode == 0, out.stderr
    cli = msgspec.json.decode(out.stdout, type=InvokeResult)
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, tree["project"])
        wire = client.ok("skills.invoke", command="/deploy production", format="spec")
    finally:
        daemon.kill()
    assert msgspec.convert(wire, InvokeResult) == cli
    assert cli.arguments == ["production"]


def test_run_lists_commands_and_refuses_model_only(tree: dict[str, Path]) -> None:
    listing = run_tree_cli(tree, "run")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].startswith("/deploy [staging|production]")
    assert any(
        line.startswith("/frontend:component") and line.endswith("(.claude/commands)")
        for line in lines
    )
    names = [
        c.name
        for c in msgspec.json.decode(
            run_tree_cli(tree, "run", "--json").stdout, type=CommandsResult
        ).commands
    ]
    assert names == ["deploy", "fix-issue", "frontend:component", "release-notes", "review"]
    refused = run_tree_cli(tree, "run", "/api-conventions")
    assert refused.returncode == 2
    assert refused.stderr.startswith("skillsd run: skill 'api-conventions' is for the model only")
    unknown = run_tree_cli(tree, "run", "/fix-isue")
    assert unknown.returncode == 2 and "did you mean fix-issue?" in unknown.stderr


def test_list_marks_who_may_invoke_and_the_usage(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "list")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    line = {
        row.split()[0]: row for row in text.splitlines() if row.startswith("  ") and row.split()
    }
    assert "[user only]" in line["deploy"] and "[model only]" not in line["deploy"]
    assert "[model only]" in line["api-conventions"]
    assert "[user only]" in line["release-notes"]
    assert "only]" not in line["fix-issue"]
    assert "(usage: /deploy [staging|production])" in text
    assert "(usage: /fix-issue [issue-number] [priority])" in text
    assert os.fspath(tree["project"]) in text


def test_a_shared_name_is_picked_with_scope_path_or_id(tree: dict[str, Path]) -> None:
    """Two skills named ``fix-issue`` (the repository's and the user's): the plain name is refused
    with the spellings that pick one, and each of them runs that one."""
    user_review = tree["home"] / ".claude" / "skills" / "fix-issue"
    user_review.mkdir(parents=True)
    (user_review / "SKILL.md").write_text(
        "---\nname: fix-issue\ndescription: The user's own review.\n---\nMy review of $ARGUMENTS\n"
    )
    plain = run_tree_cli(tree, "run", "/fix-issue", "x")
    assert plain.returncode == 2
    assert "fix-issue@repo" in plain.stderr and "fix-issue@user" in plain.stderr
    mine = run_tree_cli(tree, "run", "/fix-issue@user", "the docs")
    assert mine.returncode == 0, mine.stderr
    assert "My review of 'the docs'" in mine.stdout
    by_path = run_tree_cli(tree, "run", "--path", os.fspath(user_review), "a", "b c")
    assert by_path.returncode == 0, by_path.stderr
    assert "My review of a 'b c'" in by_path.stdout
    listed = msgspec.json.decode(run_tree_cli(tree, "list", "--json").stdout)
    repo_id = next(
        s["id"] for s in listed["skills"] if s["name"] == "fix-issue" and s["scope"] == "repo"
    )
    by_id = run_tree_cli(tree, "run", "--id", repo_id, "7", "low")
    assert by_id.returncode == 0, by_id.stderr
    assert "Fix GitHub issue #7 (priority: low)." in by_id.stdout
    shown = run_tree_cli(tree, "show", "fix-issue@user")
    assert shown.returncode == 0 and "My review of" in shown.stdout
