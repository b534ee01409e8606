"""Completion of what commands take, in the real bash (fish when installed): ``show`` and
``enable`` complete the catalog's skill names, ``remove`` the lock's, ``hook`` and ``--agent``
the agents' names, through ``skillsd __complete``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import daemon_env

pytestmark = pytest.mark.process


def _env(tree: dict[str, Path]) -> dict[str, str]:
    env = daemon_env(tree)
    # The script runs the command the user typed (COMP_WORDS[0]): this environment's skillsd.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _script(shell: str, tmp_path: Path, env: dict[str, str]) -> Path:
    done = subprocess.run(
        ["skillsd", "completion", shell], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    path = tmp_path / f"skillsd.{shell}"
    path.write_text(done.stdout)
    return path


def test_bash_completes_skill_and_agent_names(tmp_path: Path, tree: dict[str, Path]) -> None:
    env = _env(tree)
    script = _script("bash", tmp_path, env)

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        program = (
            f"source {script}; COMP_WORDS=(skillsd {line}); COMP_CWORD={len(words)}; "
            '_skillsd; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        out = subprocess.run(
            ["bash", "-c", program],
            capture_output=True,
            text=True,
            check=True,
            cwd=tree["project"],
            env=env,
            timeout=60,
        )
        return sorted(out.stdout.split())

    assert complete("show", "") == ["commit-message", "pdf-forms", "release-notes"]
    assert complete("show", "re") == ["release-notes"]
    assert complete("disable", "p") == ["pdf-forms"]
    assert complete("hook", "") == ["claude-code", "codex", "gemini"]
    assert complete("list", "--agent", "ge") == ["gemini-cli"]
    assert complete("add", "x", "--agent", "cl") == ["claude-code", "cline"]
    assert complete("show", "--format", "m") == ["markdown"]
    assert "--json" in complete("show", "--")
    # An option that takes a path still completes files.
    assert complete("list", "--cwd", "packa") == ["packages"]
    # The lock's names for remove and update (none installed yet: nothing).
    assert complete("remove", "") == []
    lock = {
        "version": 1,
        "skills": {
            "pdf-forms": {
                "source": "./x",
                "sourceType": "local",
                "digest": "sha256:" + "0" * 64,
                "agents": [],
                "mode": "link",
                "installedAt": "2026-01-01T00:00:00Z",
            }
        },
    }
    (tree["project"] / "skills-lock.json").write_text(json.dumps(lock))
    assert complete("remove", "") == ["pdf-forms"]
    assert complete("update", "--user", "") == []


def test_complete_prints_nothing_on_a_problem(tree: dict[str, Path]) -> None:
    env = _env(tree)
    done = subprocess.run(
        ["skillsd", "__complete", "skills", "--cwd", str(tree["tmp"] / "nowhere")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert subprocess.run(["skillsd", "__complete", "x"], env=env).returncode == 2


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_skill_and_agent_names(tmp_path: Path, tree: dict[str, Path]) -> None:
    env = _env(tree)
    script = _script("fish", tmp_path, env)

    def complete(line: str) -> list[str]:
        out = subprocess.run(
            ["fish", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            check=True,
            cwd=tree["project"],
            env=env,
        )
        return sorted(row.split("\t")[0] for row in out.stdout.splitlines())

    assert "pdf-forms" in complete("skillsd show ")
    assert complete("skillsd hook ") == ["claude-code", "codex", "gemini"]
    assert "gemini-cli" in complete("skillsd list --agent ")


_ZSH_DRIVER = """
compdef() {{ : }}
source {script}
# compadd and _files only work inside a completion widget: stand-ins print what they get.
compadd() {{ if [[ $1 == -a ]]; then print -l ${{(P)2}}; else shift; print -l "$@"; fi }}
_files() {{ print FILES }}
words=(skillsd "$@"); CURRENT=$#words; PREFIX=${{words[-1]}}
_skillsd
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_skill_and_agent_names(tmp_path: Path, tree: dict[str, Path]) -> None:
    env = _env(tree)
    driver = tmp_path / "drive.zsh"
    driver.write_text(_ZSH_DRIVER.format(script=_script("zsh", tmp_path, env)))

    def complete(*words: str) -> list[str]:
        out = subprocess.run(
            ["zsh", "-f", str(driver), *words],
            capture_output=True,
            text=True,
            check=True,
            cwd=tree["project"],
            env=env,
            timeout=60,
        )
        return sorted(out.stdout.split())

    assert complete("show", "") == ["commit-message", "pdf-forms", "release-notes"]
    assert complete("hook", "") == ["claude-code", "codex", "gemini"]
    assert "gemini-cli" in complete("list", "--agent", "")
    assert complete("list", "--cwd", "") == ["FILES"]
