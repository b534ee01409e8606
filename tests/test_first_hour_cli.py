"""Issue 14 through the real CLI: ``--version``, ``enable``/``disable``, ``doctor --agents``, the
``list`` summary of what was left out, word-form search and a blank query."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillsd import __version__
from tests.corpora import CORPORA, needs_corpora
from tests.support.cli import run_tree_cli
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process


def test_version(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"skillsd {__version__} (protocol 1.0)"


def test_disable_then_enable_by_name(tree: dict[str, Path]) -> None:
    off = run_tree_cli(tree, "disable", "commit-message")
    assert off.returncode == 0, off.stderr
    assert off.stdout.startswith("commit-message disabled for you: ")
    listed = json.loads(run_tree_cli(tree, "list", "--json").stdout)
    flags = {s["name"]: s["enabled"] for s in listed["skills"] if s["name"] != "release-notes"}
    assert flags == {"pdf-forms": True, "commit-message": False}
    assert "[disabled]" in run_tree_cli(tree, "list").stdout
    # The user's search and show still find a disabled skill, marked, with the way back.
    found = run_tree_cli(tree, "search", "commit").stdout
    assert "commit-message" in found
    assert "commit-message is disabled: `skillsd enable commit-message`" in found
    shown = run_tree_cli(tree, "show", "commit-message")
    assert shown.returncode == 0 and "conventional commit" in shown.stdout
    assert "`skillsd enable commit-message` turns it back on" in shown.stderr
    on = run_tree_cli(tree, "enable", "commit-message", "--json")
    assert on.returncode == 0, on.stderr
    assert json.loads(on.stdout)["skill"]["enabled"] is True
    assert "[disabled]" not in run_tree_cli(tree, "list").stdout
    again = run_tree_cli(tree, "enable", "commit-message")
    assert "(it already was)" in again.stdout
    # By path, from a subfolder.
    pdf = run_tree_cli(tree, "disable", os.fspath(tree["pdf"]), cwd=tree["sub"])
    assert pdf.returncode == 0, pdf.stderr
    assert "pdf-forms disabled" in pdf.stdout


def test_enable_refuses_unknown_and_ambiguous_names(tree: dict[str, Path]) -> None:
    unknown = run_tree_cli(tree, "disable", "comit-message")
    assert unknown.returncode == 2
    assert "commit-message" in unknown.stderr  # the suggestion
    ambiguous = run_tree_cli(tree, "disable", "release-notes")
    assert ambiguous.returncode == 2
    assert "release-notes@repo" in ambiguous.stderr and "release-notes@user" in ambiguous.stderr
    assert run_tree_cli(tree, "disable", "release-notes@user").returncode == 0


def test_doctor_agents_prints_the_matrix_and_who_misses_what(tree: dict[str, Path]) -> None:
    write_skill(tree["project"] / ".claude" / "skills", "claude-only", "For Claude Code.")
    out = run_tree_cli(tree, "doctor", "--agents", "--all", "--wide")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    header = lines[0].split()
    assert header[:6] == ["skill", "scope", "claude-code", "codex", "opencode", "copilot"]
    assert {"cursor", "gemini-cli", "windsurf", "goose", "cline", "roo-code", "kiro"} <= set(header)
    rows = {
        line.split()[0]: dict(zip(header[1:], line.split()[1:], strict=True))
        for line in lines[1 : lines.index("")]
    }
    assert rows["claude-only"]["claude-code"] == "yes" and rows["claude-only"]["codex"] == "-"
    assert rows["pdf-forms"]["claude-code"] == "-" and rows["pdf-forms"]["codex"] == "yes"
    assert rows["pdf-forms"]["gemini-cli"] == "yes"
    assert "claude-only: not found by codex" in out.stdout
    assert "pdf-forms: not found by claude-code" in out.stdout
    data = json.loads(run_tree_cli(tree, "doctor", "--agents", "--all", "--json").stdout)
    assert data["agents"][:4] == ["claude-code", "codex", "opencode", "copilot"]
    by_name = {r["name"]: r for r in data["skills"]}
    assert "codex" in by_name["claude-only"]["missedBy"]
    assert by_name["commit-message"]["agents"][:3] == ["codex", "opencode", "copilot"]
    assert "$CODEX_HOME/skills" in data["folders"]["codex"]


@needs_corpora
def test_list_summary_says_what_was_left_out_and_how_to_keep_it(tree: dict[str, Path]) -> None:
    lenient = run_tree_cli(tree, "list", "--scope", "extra", "--extra-root", os.fspath(CORPORA))
    assert lenient.returncode == 0, lenient.stderr
    summary = lenient.stdout.splitlines()[-1]
    assert summary.startswith("30 skills (8 with warnings, 4 with scan warnings); 1 left out")
    (tree["tmp"] / "config.toml").write_text('validation = "strict"\n')
    strict = run_tree_cli(tree, "list", "--scope", "extra", "--extra-root", os.fspath(CORPORA))
    summary = strict.stdout.splitlines()[-1]
    # The same 24 skills-ref accepts; the project's own broken skill is the 7th left out.
    assert summary.startswith(
        "24 skills (2 with warnings, 3 with scan warnings); 7 left out as invalid ("
    )
    assert "5 name.mismatch" in summary and "1 description.too_long" in summary
    assert 'validation = "lenient" in the config would keep 6' in summary
    assert summary.endswith("see why with `skillsd doctor` or `skillsd validate PATH`")
    # doctor says the same, next to each left-out skill's reason.
    doctor = run_tree_cli(tree, "doctor", "--extra-root", os.fspath(CORPORA))
    assert doctor.returncode == 0, doctor.stderr
    assert 'validation = "lenient" in the config would keep 6' in doctor.stdout
    assert "[skill.invalid] field 'name' ('vercel-composition-patterns')" in doctor.stdout


def test_search_word_forms_and_blank_query(tree: dict[str, Path]) -> None:
    write_skill(tree["skills"], "db", "Plan and apply database migrations.")
    hit = run_tree_cli(tree, "search", "migration")
    assert hit.returncode == 0, hit.stderr
    assert hit.stdout.splitlines()[0].split()[1] == "db"
    blank = run_tree_cli(tree, "search", "  ")
    assert blank.returncode == 2
    assert "query is empty" in blank.stderr
