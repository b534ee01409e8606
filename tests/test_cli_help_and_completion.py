"""Every subcommand explains itself (``--help`` with a line for each argument), and the shell
completion scripts complete commands, actions and options in the real shells."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillsd.cli import build_parser
from skillsd.cli.completion import command_words


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*path, name))
                found.extend(_commands(sub, (*path, name)))
    return found


def _parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def test_every_command_and_argument_has_help() -> None:
    commands = _commands(build_parser())
    assert ("daemon", "status") in commands and ("completion",) in commands
    missing = []
    for path in commands:
        parent = _parser_of(path[:-1])
        sub = next(a for a in parent._actions if isinstance(a, argparse._SubParsersAction))
        if not any(c.dest == path[-1] and c.help for c in sub._choices_actions):
            missing.append(" ".join(path))
        for action in _parser_of(path)._actions:
            if not action.help and not isinstance(action, argparse._SubParsersAction):
                missing.append(f"{' '.join(path)} {action.option_strings or action.dest}")
    assert not missing


@pytest.mark.process
def test_help_of_a_subcommand_prints_and_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", "daemon", "stop", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "--socket PATH  the daemon's socket" in done.stdout


def _script(shell: str, tmp_path: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", "completion", shell],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    path = tmp_path / f"skillsd.{shell}"
    path.write_text(done.stdout)
    return path


@pytest.mark.process
def test_bash_completes_commands_actions_and_options(tmp_path: Path) -> None:
    script = _script("bash", tmp_path)

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        program = (
            f"source {script}; COMP_WORDS=(skillsd {line}); COMP_CWORD={len(words)}; "
            '_skillsd; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        out = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
        return out.stdout.split()

    assert complete("da") == ["daemon"]
    assert complete("daemon", "s") == ["status", "stop"]
    assert complete("search", "--l") == ["--limit"]
    assert "--path" in complete("run", "--")
    # Every command the parser has is offered.
    assert set(complete("")) >= {c.name for c in command_words(build_parser())}


@pytest.mark.process
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_commands_actions_and_options(tmp_path: Path) -> None:
    script = _script("fish", tmp_path)

    def complete(line: str) -> list[str]:
        program = f"source {script}; complete -C '{line}'"
        out = subprocess.run(["fish", "-c", program], capture_output=True, text=True, check=True)
        return [row.split("\t")[0] for row in out.stdout.splitlines()]

    assert "daemon" in complete("skillsd da")
    assert complete("skillsd daemon st") == ["status", "stop"]
    assert "--limit" in complete("skillsd search --l")


@pytest.mark.process
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_loads(tmp_path: Path) -> None:
    script = _script("zsh", tmp_path)
    done = subprocess.run(
        [
            "zsh",
            "-f",
            "-c",
            f"autoload -U compinit && compinit -u && source {script} && print ${{_comps[skillsd]}}",
        ],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "_skillsd"
