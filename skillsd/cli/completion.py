"""``skillsd completion bash|zsh|fish``: a shell completion script, made from the parser itself
so that a new command or option completes without anyone editing a script."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["CommandWords", "command_words", "register", "script"]

SHELLS = ("bash", "zsh", "fish")


def register(subparsers: Any) -> None:
    """Add ``completion``."""
    p = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for SHELL on stdout; docs/install.md says where "
        "to put it.",
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=_completion)


@dataclass(frozen=True, slots=True)
class CommandWords:
    """What completes after ``skillsd NAME``: its actions (``daemon status``) and options."""

    name: str
    help: str
    actions: tuple[str, ...]
    options: tuple[str, ...]


def command_words(parser: argparse.ArgumentParser) -> list[CommandWords]:
    """Every subcommand of ``parser`` with its help line, actions and option strings."""
    found = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            actions: list[str] = []
            options: list[str] = []
            for item in sub._actions:
                if isinstance(item, argparse._SubParsersAction):
                    actions.extend(item.choices)
                    for nested in item.choices.values():
                        options.extend(_options(nested))
                else:
                    options.extend(o for o in item.option_strings if o.startswith("--"))
            found.append(
                CommandWords(
                    name, helps.get(name, ""), tuple(actions), tuple(dict.fromkeys(options))
                )
            )
    return found


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


def script(shell: str, commands: list[CommandWords]) -> str:
    """The completion script for ``shell``."""
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](commands)


def _bash(commands: list[CommandWords]) -> str:
    names = " ".join(c.name for c in commands)
    cases = "\n".join(
        f"        {c.name}) actions={shlex.quote(' '.join(c.actions))}; "
        f"options={shlex.quote(' '.join(c.options))} ;;"
        for c in commands
    )
    return f"""# bash completion for skillsd (skillsd completion bash)
_skillsd() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} actions="" options=""
    if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
        return
    fi
    case ${{COMP_WORDS[1]}} in
{cases}
    esac
    if (( COMP_CWORD == 2 )) && [[ -n $actions ]]; then
        COMPREPLY=($(compgen -W "$actions" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _skillsd skillsd
"""


def _zsh_text(text: str) -> str:
    return text.replace("'", "'\\''")


def _zsh(commands: list[CommandWords]) -> str:
    described = "\n".join(f"        '{c.name}:{_zsh_text(c.help)}'" for c in commands)
    cases = "\n".join(
        f"        {c.name}) actions=({' '.join(c.actions)}); options=({' '.join(c.options)}) ;;"
        for c in commands
    )
    return f"""#compdef skillsd
# zsh completion for skillsd (skillsd completion zsh)
_skillsd() {{
    local -a commands actions options
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe -t commands 'skillsd command' commands
        return
    fi
    case $words[2] in
{cases}
    esac
    if (( CURRENT == 3 && ${{#actions}} )); then
        compadd -a actions
    elif [[ $PREFIX == -* ]]; then
        compadd -a options
    else
        _files
    fi
}}
compdef _skillsd skillsd
"""


def _fish(commands: list[CommandWords]) -> str:
    lines = [
        "# fish completion for skillsd (skillsd completion fish)",
        "complete -c skillsd -f",
    ]
    for c in commands:
        lines.append(
            f"complete -c skillsd -n __fish_use_subcommand -a {c.name} -d {shlex.quote(c.help)}"
        )
        seen = f"'__fish_seen_subcommand_from {c.name}'"
        for action in c.actions:
            lines.append(f"complete -c skillsd -n {seen} -a {action}")
        for option in c.options:
            lines.append(f"complete -c skillsd -n {seen} -l {option[2:]}")
        lines.append(f"complete -c skillsd -n {seen} -F")
    return "\n".join(lines) + "\n"


def _completion(args: argparse.Namespace) -> int:
    from skillsd.cli import build_parser

    sys.stdout.write(script(args.shell, command_words(build_parser())))
    return 0
