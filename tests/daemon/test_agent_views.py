"""``skills.list {agent}`` and ``skills.prompt {agent}`` over JSON-RPC (the real framing and
dispatch): one agent's view, and an unknown agent named in a -32602 error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.skill_tree import write_skill


def test_one_agents_view_over_the_wire(client: Client, tree: dict[str, Path]) -> None:
    write_skill(tree["project"] / ".claude" / "skills", "claude-only", "For Claude Code.")
    everything = {s["name"] for s in client.ok("skills.list")["skills"]}
    assert "claude-only" in everything and "pdf-forms" in everything
    claude = client.ok("skills.list", agent="claude-code")["skills"]
    assert [s["name"] for s in claude] == ["claude-only"]
    codex = {s["name"] for s in client.ok("skills.list", agent="codex")["skills"]}
    assert codex == everything - {"claude-only"}
    prompt = client.ok("skills.prompt", agent="claude-code", format="markdown")
    assert prompt["shown"] == 1 and "claude-only" in prompt["text"]
    error = client.err("skills.list", agent="claud-code")
    assert error["code"] == -32602 and "did you mean claude-code" in error["message"]
    assert error["data"]["field"] == "agent"


@pytest.mark.process
def test_claude_code_shows_its_model_the_personal_skill_of_a_name(
    client: Client, tree: dict[str, Path]
) -> None:
    """Claude Code reads a personal and a project skill of one name, but lists only the personal
    one to its model (its request, captured in tests/test_real_agents.py)."""
    personal = write_skill(tree["home"] / ".claude" / "skills", "deploy", "My own deploy.")
    project = write_skill(tree["project"] / ".claude" / "skills", "deploy", "The project's.")
    every = [s["path"] for s in client.ok("skills.list")["skills"] if s["name"] == "deploy"]
    assert sorted(every) == sorted(str(p / "SKILL.md") for p in (personal, project))
    claude = client.ok("skills.list", agent="claude-code")["skills"]
    assert [(s["name"], s["path"]) for s in claude] == [("deploy", str(personal / "SKILL.md"))]
    prompt = client.ok("skills.prompt", agent="claude-code", format="markdown")
    assert prompt["shown"] == 1
    assert "My own deploy." in prompt["text"] and "The project's." not in prompt["text"]
    doctor = run_tree_cli(tree, "doctor", "--agents", "--all", "--wide")
    assert doctor.returncode == 0, doctor.stderr
    lines = doctor.stdout.splitlines()
    start = lines.index("loaded but not shown to the model:") + 1
    hidden = lines[start : lines.index("", start)]
    # opencode and goose show the project's deploy and load the personal one: a line of theirs.
    assert (
        f"  deploy: claude-code loads it but shows {personal / 'SKILL.md'}  "
        f"({project / 'SKILL.md'})"
    ) in hidden
    row = next(line.split() for line in lines if line.startswith("deploy ") and "repo" in line)
    header = lines[0].split()
    assert row[header.index("claude-code")] == "hid"
