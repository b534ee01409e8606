"""Real git repositories, skill folders and an isolated environment for the install tests."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from skillsd.installing import InstallContext

SKILL = "---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def skill_text(name: str, body: str = "Do the thing.", description: str | None = None) -> str:
    return SKILL.format(name=name, description=description or f"The {name} skill.", body=body)


def write_skill(folder: Path, name: str | None = None, **files: str) -> Path:
    """A skill folder: SKILL.md (named after the folder unless ``name``) plus ``files`` by
    relative path (``.sh`` files executable)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_text(name or folder.name))
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.endswith(".sh"):
            path.chmod(0o755)
    return folder


def git(*args: str, cwd: Path, env: Mapping[str, str]) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=dict(env), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


@dataclass
class Origin:
    """A work tree whose commits are pushed to a bare repository served as ``file://``."""

    work: Path
    bare: Path
    env: Mapping[str, str]

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def commit(self, message: str = "change") -> str:
        git("add", "-A", cwd=self.work, env=self.env)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work, env=self.env)
        git("push", "-q", "--all", "origin", cwd=self.work, env=self.env)
        git("push", "-q", "--tags", "origin", cwd=self.work, env=self.env)
        return git("rev-parse", "HEAD", cwd=self.work, env=self.env)

    def tag(self, name: str) -> None:
        git("tag", name, cwd=self.work, env=self.env)
        git("push", "-q", "origin", name, cwd=self.work, env=self.env)


def make_origin(root: Path, env: Mapping[str, str]) -> Origin:
    work = root / "work"
    bare = root / "origin.git"
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=work, env=env)
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=root, env=env)
    git("remote", "add", "origin", str(bare), cwd=work, env=env)
    return Origin(work, bare, env)


def context(cwd: Path, env: Mapping[str, str], **kw: object) -> InstallContext:
    return InstallContext(cwd=str(cwd), env=env, home=env["HOME"], **kw)  # type: ignore[arg-type]


def tree_state(root: Path) -> dict[str, str]:
    """Every path under ``root`` (links as ``-> target``, files by content), for comparing a
    tree before and after."""
    state: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(current) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = "-> " + os.readlink(path)
                if name in dirs:
                    dirs.remove(name)
            elif path.is_file():
                state[rel] = path.read_text(errors="replace")
            else:
                state[rel] = "<dir>"
    return state
