"""``skills.list {agent}`` and ``skills.prompt {agent}`` over JSON-RPC (the real framing and
dispatch): one agent's view, and an unknown agent named in a -32602 error."""

from __future__ import annotations

from pathlib import Path

from tests.daemon.skill_tree import write_skill
from tests.daemon.test_skill_methods import Client


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
