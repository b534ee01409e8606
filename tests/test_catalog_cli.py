"""`skillsd list|search|show|prompt|schema` as a user runs them (real subprocesses)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillsd_protocol.schema import render_schema
from tests.support.cli import run_tree_cli

pytestmark = pytest.mark.process


def test_list_human_and_json(tree: dict[str, Path]) -> None:
    human = run_tree_cli(tree, "list")
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines()[0] == "repo:"
    assert "pdf-forms" in human.stdout and "user:" in human.stdout
    assert "invalid: " in human.stdout and "broken" in human.stdout
    assert human.stdout.rstrip().endswith(
        # pdf-forms links out of its folder: the scan says it did not follow the link.
        "4 skills (2 with warnings, 1 with scan warnings); 1 left out as invalid "
        "(1 name.not_lowercase); "
        "see why with `skillsd doctor` or `skillsd validate PATH`"
    )
    data = json.loads(run_tree_cli(tree, "list", "--json").stdout)
    assert [s["name"] for s in data["skills"]] == [
        "pdf-forms",
        "release-notes",
        "commit-message",
        "release-notes",
    ]
    assert data["root"] == os.fspath(tree["project"]) and len(data["errors"]) == 1
    user = json.loads(run_tree_cli(tree, "list", "--json", "--scope", "user").stdout)
    assert {s["scope"] for s in user["skills"]} == {"user"}


def test_list_with_cwd_and_extra_root(tree: dict[str, Path], tmp_path: Path) -> None:
    extra = tmp_path / "extra-skill"
    extra.mkdir()
    (extra / "SKILL.md").write_text("---\nname: extra-skill\ndescription: An extra one.\n---\n")
    out = run_tree_cli(
        tree, "list", "--json", "--cwd", os.fspath(tree["sub"]), "--extra-root", os.fspath(extra)
    )
    data = json.loads(out.stdout)
    assert data["cwd"] == os.fspath(tree["sub"])
    assert ("extra-skill", "extra") in {(s["name"], s["scope"]) for s in data["skills"]}


def test_search(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "search", "pdf")
    assert out.returncode == 0 and out.stdout.splitlines()[0].startswith(" 1. pdf-forms  [prefix")
    data = json.loads(run_tree_cli(tree, "search", "notes", "--json", "--limit", "1").stdout)
    assert data["count"] == 2 and data["truncated"] is True and len(data["results"]) == 1


def test_show_formats_and_errors(tree: dict[str, Path]) -> None:
    codelia = run_tree_cli(tree, "show", "pdf-forms")
    assert codelia.returncode == 0 and codelia.stdout.startswith('<skill_context name="pdf-forms"')
    markdown = run_tree_cli(tree, "show", os.fspath(tree["pdf"]), "--format", "markdown")
    assert markdown.stdout.startswith("# Skill Activated: pdf-forms")
    assert "- References: yes" in markdown.stdout
    ambiguous = run_tree_cli(tree, "show", "release-notes")
    assert ambiguous.returncode == 2 and "2 skills are named 'release-notes'" in ambiguous.stderr
    missing = run_tree_cli(tree, "show", "pdf-form")
    assert missing.returncode == 2 and "pdf-form" in missing.stderr


def test_prompt(tree: dict[str, Path]) -> None:
    xml = run_tree_cli(tree, "prompt")
    assert xml.stdout.startswith("<available_skills>") and xml.stdout.count("<skill>") == 4
    md = run_tree_cli(tree, "prompt", "--format", "markdown", "--no-location")
    assert "- pdf-forms: Fill and inspect PDF forms." in md.stdout and "SKILL.md" not in md.stdout
    tight = json.loads(run_tree_cli(tree, "prompt", "--json", "--max-bytes", "300").stdout)
    assert tight["truncated"] is True and tight["bytes"] <= 300
    # One agent's view: Claude Code reads none of the .agents/skills folders the tree uses.
    claude = json.loads(run_tree_cli(tree, "prompt", "--json", "--agent", "claude-code").stdout)
    codex = json.loads(run_tree_cli(tree, "prompt", "--json", "--agent", "codex").stdout)
    assert (claude["shown"], codex["shown"]) == (0, 4)
    listed = run_tree_cli(tree, "list", "--agent", "codex")
    assert listed.returncode == 0 and "pdf-forms" in listed.stdout


def test_invalid_config_is_reported_not_a_traceback(tree: dict[str, Path]) -> None:
    (tree["tmp"] / "config.toml").write_text("[discovery]\nmaxDepth = 'deep'\n")
    out = run_tree_cli(tree, "list")
    assert out.returncode == 2
    assert "config.toml" in out.stderr and "discovery.maxDepth" in out.stderr
    assert "Traceback" not in out.stderr


def test_schema_prints_the_checked_in_schema(tree: dict[str, Path]) -> None:
    assert run_tree_cli(tree, "schema").stdout == render_schema()
