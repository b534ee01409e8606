"""A realistic project tree for daemon tests: repo and user skills, resources, a collision."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.daemon.daemon_harness import env


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


def daemon_env(tree: dict[str, Path], **extra: str) -> dict[str, str]:
    """An environment isolating HOME, config and state inside the test's tree."""
    tmp = tree["tmp"]
    result = env(
        HOME=os.fspath(tree["home"]),
        SKILLSD_CONFIG=os.fspath(tmp / "config.toml"),
        XDG_STATE_HOME=os.fspath(tmp / "state"),
        XDG_CONFIG_HOME=os.fspath(tmp / "xdg-config"),
        **extra,
    )
    for var in ("SKILLSD_ROOT", "AGENT_SKILLS_PATH"):
        result.pop(var, None)
    return result


def run_cli(
    tree: dict[str, Path], *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``skillsd ARGS`` as a user runs it: a subprocess in ``cwd`` (default: the project) with
    the tree's isolated environment, output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "skillsd", *args],
        cwd=cwd or tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
