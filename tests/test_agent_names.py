"""An agent is named the way people type it (``claude``, ``gemini``, ``Claude Code``) wherever
skillsd takes an agent's name: ``--agent`` of ``list``, ``prompt`` and ``add``, the JSON-RPC
``agent``/``agents`` params and ``skillsd hook``; an unknown name lists the accepted ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillsd.core.discovery.agent_folders import AGENTS, canonical_agent
from tests.install.helpers import write_skill as write_install_skill
from tests.support.cli import run_cli, run_tree_cli
from tests.support.client import Client
from tests.support.env import git_user_env
from tests.support.skill_tree import write_skill


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("claude", "claude-code"),
        ("Claude Code", "claude-code"),
        ("gemini", "gemini-cli"),
        ("Gemini-CLI", "gemini-cli"),
        ("copilot", "copilot"),
        ("github-copilot", "copilot"),
        ("roo", "roo-code"),
        ("qwen", "qwen-code"),
        ("droid", "factory"),
        ("codex", "codex"),
        ("nobody", None),
    ],
)
def test_canonical_agent(typed: str, canonical: str | None) -> None:
    assert canonical_agent(typed) == canonical


def test_every_canonical_name_is_its_own() -> None:
    assert all(canonical_agent(name) == name for name in AGENTS)


@pytest.mark.process
def test_list_takes_the_short_names(tree: dict[str, Path]) -> None:
    write_skill(tree["project"] / ".claude" / "skills", "claude-only", "For Claude Code.")
    write_skill(tree["project"] / ".gemini" / "skills", "gemini-only", "For Gemini CLI.")
    claude = run_tree_cli(tree, "list", "--agent", "claude", "--json")
    assert claude.returncode == 0, claude.stderr
    assert "claude-only" in {s["name"] for s in json.loads(claude.stdout)["skills"]}
    gemini = run_tree_cli(tree, "list", "--agent", "gemini", "--json")
    assert gemini.returncode == 0, gemini.stderr
    assert "gemini-only" in {s["name"] for s in json.loads(gemini.stdout)["skills"]}


def test_an_unknown_agent_lists_the_accepted_names(client: Client) -> None:
    error = client.err("skills.list", agent="nobody")
    assert error["code"] == -32602 and error["data"]["field"] == "agent"
    assert "claude-code (claude)" in error["message"] and "gemini-cli (gemini)" in error["message"]
    # Over JSON-RPC too the short name is the agent.
    assert (
        client.ok("skills.list", agent="claude")["skills"]
        == client.ok("skills.list", agent="claude-code")["skills"]
    )


@pytest.mark.process
def test_add_takes_the_short_names_and_locks_the_canonical_ones(tmp_path: Path) -> None:
    env = git_user_env(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
    write_install_skill(tmp_path / "src" / "pdf")
    added = run_cli(
        "add",
        str(tmp_path / "src" / "pdf"),
        "--agent",
        "claude",
        "--agent",
        "gemini",
        cwd=project,
        env=env,
    )
    assert added.returncode == 0, added.stderr
    lock = json.loads((project / "skills-lock.json").read_text())
    assert lock["skills"]["pdf"]["agents"] == ["claude-code", "gemini-cli"]
    assert (project / ".claude" / "skills" / "pdf").is_symlink()
    refused = run_cli(
        "add", str(tmp_path / "src" / "pdf"), "--agent", "gemeni", cwd=project, env=env
    )
    assert refused.returncode == 2 and "gemini-cli (gemini)" in refused.stderr


@pytest.mark.process
@pytest.mark.parametrize(
    ("typed", "event"), [("claude", "UserPromptSubmit"), ("gemini-cli", "BeforeAgent")]
)
def test_hook_takes_the_names_skillsd_uses_elsewhere(typed: str, event: str) -> None:
    from skillsd.cli import build_parser
    from skillsd.cli.hook import EVENTS

    args = build_parser("hook").parse_args(["hook", typed])
    assert EVENTS[args.agent] == event
    refused = subprocess.run(
        [sys.executable, "-m", "skillsd", "hook", "cursor"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2 and "invalid choice" in refused.stderr
