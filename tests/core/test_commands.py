"""Claude Code legacy commands and the slash-command list (docs/protocol.md)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from skillsd.core.discovery.fs_commands import (
    command_list,
    read_command_file,
    scan_commands,
)
from skillsd_protocol import Diagnostic
from tests.fixtures.host_project import copy_host_project, host_catalog


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_host_project(tmp_path)


def test_command_dirs_walk_the_repo_chain_then_home(project: Path) -> None:
    sub = project / "packages" / "web"
    sub.mkdir(parents=True)
    catalog = host_catalog(sub)
    home = os.fspath(sub.parent / "home")  # host_catalog's home: beside the cwd
    assert list(catalog.plan.command_dirs) == [
        os.fspath(sub / ".claude" / "commands"),
        os.fspath(project / "packages" / ".claude" / "commands"),
        os.fspath(project / ".claude" / "commands"),
        os.path.join(home, ".claude", "commands"),
    ]


def test_fixture_commands_namespacing_shadowing_and_order(project: Path) -> None:
    catalog = host_catalog(project)
    scan = scan_commands(catalog.plan.command_dirs)
    assert scan.diagnostics == []
    files = {f.name: f for f in scan.files}
    assert sorted(files) == ["deploy", "frontend:component", "review"]
    review = files["review"]
    assert review.description == "Review the staged changes for bugs and style problems."
    assert (review.argument_hint, review.allowed_tools) == ("[focus]", ["Bash(git diff:*)"])
    assert review.body.startswith("\nReview the staged changes")
    # No frontmatter: the first non-empty body line (heading markers dropped) describes it.
    component = files["frontend:component"]
    assert component.description == "Create a React component following the design system"
    assert component.body.endswith("Create a component named $1 in src/components.\n")

    commands = command_list(catalog.skills, scan.files)
    listed = [(c.name, c.source) for c in commands]
    # Sorted by name; the deploy skill hides deploy.md; api-conventions is model-only.
    assert listed == [
        ("deploy", "skill"),
        ("fix-issue", "skill"),
        ("frontend:component", "command"),
        ("release-notes", "skill"),
        ("review", "command"),
    ]
    by_name = {c.name: c for c in commands}
    skills = {s.name: s for s in catalog.skills}
    fix = by_name["fix-issue"]
    assert fix.skill == skills["fix-issue"].id and fix.path == skills["fix-issue"].path
    assert fix.argument_hint == "[issue-number] [priority]"
    assert fix.arguments == ["issue", "priority"]
    assert by_name["release-notes"].display_name == "Release Notes"
    assert by_name["review"].skill is None
    assert by_name["review"].path == os.fspath(project / ".claude" / "commands" / "review.md")
    encoded = msgspec.json.decode(msgspec.json.encode(by_name["review"]))
    assert encoded == {
        "name": "review",
        "description": "Review the staged changes for bugs and style problems.",
        "source": "command",
        "path": by_name["review"].path,
        "argumentHint": "[focus]",
    }


def test_disabled_skills_neither_list_nor_hide(project: Path) -> None:
    catalog = host_catalog(project)
    deploy = next(s for s in catalog.skills if s.name == "deploy")
    catalog = catalog.with_overrides({deploy.id: False})
    scan = scan_commands([os.fspath(project / ".claude" / "commands")])
    commands = {(c.name, c.source) for c in command_list(catalog.skills, scan.files)}
    assert ("deploy", "command") in commands and ("deploy", "skill") not in commands


def test_nearest_definition_wins_and_others_are_reported(tmp_path: Path) -> None:
    near = tmp_path / "near"
    far = tmp_path / "far"
    for base, text in ((near, "Near one.\n"), (far, "Far one.\n")):
        base.mkdir()
        (base / "same.md").write_text(text)
    (far / "nested" / "deeper").mkdir(parents=True)
    (far / "nested" / "deeper" / "x.md").write_text("---\ndescription: Deep.\n---\nbody\n")
    (far / "notes.txt").write_text("not a command")
    (far / ".hidden.md").write_text("hidden")
    (far / ".md").write_text("no stem")
    scan = scan_commands([os.fspath(near), os.fspath(far), os.fspath(tmp_path / "missing")])
    files = {f.name: f for f in scan.files}
    assert sorted(files) == ["nested:deeper:x", "same"]
    assert files["same"].description == "Near one."
    assert files["nested:deeper:x"].description == "Deep."
    [dup] = scan.diagnostics
    assert dup.code == "command.duplicate" and dup.path == os.fspath(far / "same.md")


def test_frontmatter_fields_and_problems(tmp_path: Path) -> None:
    path = tmp_path / "ship.md"
    path.write_text(
        "---\n"
        "description: Ship it.\n"
        "argument-hint: '[version]'\n"
        "arguments: [version]\n"
        "allowed-tools: Bash(git tag:*), Read\n"
        "model: haiku\n"
        "disable-model-invocation: true\n"
        "---\n"
        "Tag $version.\n"
    )
    command = read_command_file(os.fspath(path), "ship")
    assert not isinstance(command, Diagnostic)
    assert command.arguments == ["version"] and command.argument_hint == "[version]"
    assert command.allowed_tools == ["Bash(git tag:*)", "Read"]
    assert (command.model, command.model_invocation) == ("haiku", False)
    assert command.diagnostics == []

    path.write_text("---\ndescription: [unclosed\n---\nFallback line.\n")
    broken = read_command_file(os.fspath(path), "ship")
    assert not isinstance(broken, Diagnostic)
    [d] = broken.diagnostics
    assert d.code == "command.invalid_frontmatter" and "ship.md" in d.message
    assert broken.description == "description: [unclosed"

    path.write_text("---\ndescription: ok\ndisable-model-invocation: sometimes\n---\nx\n")
    bad = read_command_file(os.fspath(path), "ship")
    assert not isinstance(bad, Diagnostic)
    [d] = bad.diagnostics
    assert (d.code, d.field) == ("host.invalid", "disable-model-invocation")
    assert bad.model_invocation is True


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    scan = scan_commands([os.fspath(tmp_path)])
    assert scan.files == []
    [d] = scan.diagnostics
    assert d.code == "command.unreadable" and "not a regular file" in d.message
