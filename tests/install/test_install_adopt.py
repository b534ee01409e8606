"""Adopting a skill an agent already has: ``skillsd add ~/.claude/skills/pdf --user`` moves it
to the canonical folder, links it back where it was, links it for the agents named and locks
it, with no ``--force`` and no copy left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.install.helpers import skill_text, write_skill
from tests.support.cli import run_cli

pytestmark = pytest.mark.process


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _link_to(path: Path, folder: Path) -> bool:
    return path.is_symlink() and not os.path.isabs(os.readlink(path)) and path.resolve() == folder


def test_a_user_skill_of_claude_code_is_shared_with_codex(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home = Path(env["HOME"])
    origin = write_skill(home / ".claude" / "skills" / "pdf", **{"scripts/x.sh": "echo x\n"})
    before = _files(origin)
    added = run_cli(
        "add",
        "~/.claude/skills/pdf",
        "--user",
        "--agent",
        "codex",
        "--agent",
        "qwen",
        cwd=tmp_path,
        env=env,
    )
    assert added.returncode == 0, added.stderr
    canonical = home / ".agents" / "skills" / "pdf"
    assert canonical.is_dir() and not canonical.is_symlink() and _files(canonical) == before
    # Claude Code's folder keeps it, as a link; Codex reads ~/.agents/skills itself; Qwen
    # Code reads only its own folder, which gets a link.
    assert _link_to(home / ".claude" / "skills" / "pdf", canonical)
    assert _link_to(home / ".qwen" / "skills" / "pdf", canonical)
    listing = run_cli("installed", "--user", "--json", cwd=tmp_path, env=env)
    assert listing.returncode == 0, listing.stdout
    [skill] = json.loads(listing.stdout)["skills"]
    assert skill["status"] == "ok" and skill["source"] == str(canonical)
    assert skill["agents"] == ["claude-code", "codex", "qwen-code"]
    assert "ok" in run_cli("installed", "--user", cwd=tmp_path, env=env).stdout

    # Adding it again (through the link now) changes nothing and needs no force.
    again = run_cli("add", "~/.claude/skills/pdf", "--user", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    # Its source is the canonical folder: an edit is what update records, and restore puts
    # a lost link back.
    (canonical / "SKILL.md").write_text(skill_text("pdf", "Edited."))
    assert run_cli("installed", "--user", cwd=tmp_path, env=env).returncode == 1
    updated = run_cli("update", "--user", cwd=tmp_path, env=env)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    (home / ".qwen" / "skills" / "pdf").unlink()
    restored = run_cli("restore", "--user", cwd=tmp_path, env=env)
    assert restored.returncode == 0, restored.stderr
    assert run_cli("installed", "--user", cwd=tmp_path, env=env).returncode == 0
    # Removing it removes the canonical folder and every link.
    assert run_cli("remove", "pdf", "--user", cwd=tmp_path, env=env).returncode == 0
    assert not os.path.lexists(home / ".claude" / "skills" / "pdf")
    assert not canonical.exists()


def test_a_repository_skill_of_claude_code_is_adopted(project: Path, env: dict[str, str]) -> None:
    origin = write_skill(project / ".claude" / "skills" / "pdf", **{"ref.md": "# Ref\n"})
    before = _files(origin)
    added = run_cli("add", ".claude/skills/pdf", "--agent", "codex", cwd=project, env=env)
    assert added.returncode == 0, added.stderr
    canonical = project / ".agents" / "skills" / "pdf"
    assert _files(canonical) == before and not canonical.is_symlink()
    assert os.readlink(project / ".claude" / "skills" / "pdf") == "../../.agents/skills/pdf"
    lock = json.loads((project / "skills-lock.json").read_text())["skills"]["pdf"]
    assert lock["source"] == "./.agents/skills/pdf" and lock["agents"] == ["claude-code", "codex"]
    assert run_cli("installed", cwd=project, env=env).returncode == 0


def test_copy_mode_leaves_a_copy_where_it_was(project: Path, env: dict[str, str]) -> None:
    write_skill(project / ".claude" / "skills" / "pdf")
    added = run_cli("add", ".claude/skills/pdf", "--copy", cwd=project, env=env)
    assert added.returncode == 0, added.stderr
    back = project / ".claude" / "skills" / "pdf"
    assert back.is_dir() and not back.is_symlink()
    assert (project / ".agents" / "skills" / "pdf" / "SKILL.md").is_file()
    assert run_cli("installed", cwd=project, env=env).returncode == 0


def test_a_folder_only_canonical_readers_read_is_moved(tmp_path: Path, env: dict[str, str]) -> None:
    """Cursor reads ~/.agents/skills too: no link is needed where it was."""
    home = Path(env["HOME"])
    write_skill(home / ".cursor" / "skills" / "pdf")
    added = run_cli(
        "add", "~/.cursor/skills/pdf", "--user", "--agent", "cursor", cwd=tmp_path, env=env
    )
    assert added.returncode == 0, added.stderr
    assert not os.path.lexists(home / ".cursor" / "skills" / "pdf")
    assert (home / ".agents" / "skills" / "pdf" / "SKILL.md").is_file()
    assert run_cli("installed", "--user", cwd=tmp_path, env=env).returncode == 0


def test_another_skill_at_the_canonical_path_still_needs_force(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home = Path(env["HOME"])
    write_skill(home / ".claude" / "skills" / "pdf")
    theirs = write_skill(home / ".agents" / "skills" / "pdf", **{"other.md": "other\n"})
    refused = run_cli("add", "~/.claude/skills/pdf", "--user", cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "already exists" in refused.stderr
    assert (theirs / "other.md").exists() and (home / ".claude/skills/pdf/SKILL.md").is_file()
