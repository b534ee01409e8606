"""A realistic project tree for daemon tests: repo and user skills, resources, a collision."""

from __future__ import annotations

import os
from pathlib import Path


def write_skill(
    root: Path, name: str, description: str, *, extra: str = "", body: str = "Do the thing.\n"
) -> Path:
    """Write ``root/name/SKILL.md`` and return the skill directory."""
    skill = root / name
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {os.path.basename(name)}\ndescription: {description}\n{extra}---\n\n{body}",
        encoding="utf-8",
    )
    return skill


def make_project(tmp: Path) -> dict[str, Path]:
    """Build the tree; returns the interesting paths."""
    project = tmp / "project"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    pdf = write_skill(
        skills,
        "pdf-forms",
        "Fill and inspect PDF forms.",
        extra="metadata:\n  tags: pdf,forms\nallowed-tools: Read Bash(python:*)\n",
        body="# PDF\nRun scripts/fill.py.\n",
    )
    (pdf / "references").mkdir()
    (pdf / "references" / "fields.md").write_text("# Fields\nf1: name\n", encoding="utf-8")
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "fill.py").write_text("print('fill')\n", encoding="utf-8")
    (pdf / "assets").mkdir()
    (pdf / "assets" / "logo.bin").write_bytes(bytes(range(256)))
    secret = tmp / "secret.txt"
    secret.write_text("top secret", encoding="utf-8")
    (pdf / "escape.txt").symlink_to(secret)
    write_skill(skills / "release", "release-notes", "Draft release notes from merged PRs.")
    bad = skills / "broken"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Broken\n---\nno description\n", encoding="utf-8")
    home = tmp / "home"
    user_skills = home / ".agents" / "skills"
    write_skill(user_skills, "commit-message", "Write a conventional commit message.")
    write_skill(user_skills, "release-notes", "The user's own release notes helper.")
    sub = project / "packages" / "web"
    sub.mkdir(parents=True)
    return {"project": project, "skills": skills, "pdf": pdf, "home": home, "sub": sub, "tmp": tmp}


def write_user_config(tree: dict[str, Path], text: str) -> None:
    """The user config of a test tree (``SKILLSD_CONFIG`` of ``daemon_env``)."""
    (tree["tmp"] / "config.toml").write_text(text, encoding="utf-8")
