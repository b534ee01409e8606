"""``skillsd completion bash|zsh|fish``: a shell completion script, made from the parser itself
so that a new command or option completes without anyone editing a script.

Fixed words (an argument's choices, agent names after ``--agent``) are written into the script;
skill names are not fixed, so the script asks ``skillsd __complete skills|installed`` (a hidden
entry point :func:`skillsd.cli.main` answers before any parser is built) for them."""

from __future__ import annotations

import argparse
import itertools
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["COMPLETE_COMMAND", "CommandWords", "command_words", "complete", "register", "script"]

SHELLS = ("bash", "zsh", "fish")
#: The hidden first word that asks for dynamic completions (never a command of the parser).
COMPLETE_COMMAND = "__complete"
#: Positional arguments completed with names only a running catalog or lock knows, by
#: (command, dest): ``skills`` the catalog's skill names, ``installed`` the lock's.
_DYNAMIC = {
    ("show", "ref"): "skills",
    ("enable", "skill"): "skills",
    ("disable", "skill"): "skills",
    ("update", "names"): "installed",
    ("remove", "name"): "installed",
}
#: Options naming an agent (their values complete with the agents' names).
_AGENT_DESTS = ("agent", "agents")


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
    """What completes after ``skillsd NAME``: its actions (``daemon status``) and options;
    ``values`` the fixed words of its arguments (``hook claude-code``), ``dynamic`` the kind of
    name ``skillsd __complete`` gives for them (``skills``, ``installed``), ``option_values`` the
    words after an option (``--agent codex``) and ``valued`` the options that take a value."""

    name: str
    help: str
    actions: tuple[str, ...]
    options: tuple[str, ...]
    values: tuple[str, ...] = ()
    dynamic: str = ""
    option_values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    valued: tuple[str, ...] = ()


def _agent_words() -> tuple[str, ...]:
    from skillsd.core.discovery.agent_folders import AGENTS

    return AGENTS


def command_words(parser: argparse.ArgumentParser) -> list[CommandWords]:
    """Every subcommand of ``parser`` with its help line, actions, options and the words its
    arguments take."""
    found = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            actions: list[str] = []
            options: list[str] = []
            values: list[str] = []
            dynamic = ""
            option_values: dict[str, tuple[str, ...]] = {}
            valued: list[str] = []
            for item in sub._actions:
                if isinstance(item, argparse._SubParsersAction):
                    actions.extend(item.choices)
                    for nested in item.choices.values():
                        options.extend(_options(nested))
                    continue
                long = [o for o in item.option_strings if o.startswith("--")]
                options.extend(long)
                words = tuple(map(str, item.choices or ()))
                if item.dest in _AGENT_DESTS and long:
                    words = _agent_words()
                if not item.option_strings:
                    values.extend(words)
                    dynamic = dynamic or _DYNAMIC.get((name, item.dest), "")
                elif item.nargs != 0:
                    valued.extend(long)
                    if words:
                        option_values.update(dict.fromkeys(long, words))
            found.append(
                CommandWords(
                    name,
                    helps.get(name, ""),
                    tuple(actions),
                    tuple(dict.fromkeys(options)),
                    tuple(values),
                    dynamic,
                    tuple(option_values.items()),
                    tuple(valued),
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
        f"options={shlex.quote(' '.join(c.options))}; "
        f"values={shlex.quote(' '.join(c.values))}; dynamic={shlex.quote(c.dynamic)}; "
        f"valued={shlex.quote(' '.join(c.valued))} ;;"
        for c in commands
    )
    option_cases = "\n".join(
        f"        {shlex.quote(f'{c.name} {option}')}) words={shlex.quote(' '.join(words))} ;;"
        for c in commands
        for option, words in c.option_values
    )
    return f"""# bash completion for skillsd (skillsd completion bash)
_skillsd() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local actions="" options="" values="" dynamic="" valued="" words=""
    if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
        return
    fi
    case ${{COMP_WORDS[1]}} in
{cases}
    esac
    case "${{COMP_WORDS[1]}} $prev" in
{option_cases}
    esac
    if [[ -n $words ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    elif [[ $prev == --* && " $valued " == *" $prev "* ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    elif (( COMP_CWORD == 2 )) && [[ -n $actions ]]; then
        COMPREPLY=($(compgen -W "$actions" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ -n $values ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
    elif [[ -n $dynamic ]]; then
        local IFS=$'\\n'
        COMPREPLY=($(compgen -W "$("${{COMP_WORDS[0]}}" {COMPLETE_COMMAND} "$dynamic" \\
            "${{COMP_WORDS[@]:1:COMP_CWORD-1}}" 2>/dev/null)" -- "$cur"))
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
        f"        {c.name}) actions=({' '.join(c.actions)}); options=({' '.join(c.options)}); "
        f"values=({' '.join(c.values)}); dynamic={shlex.quote(c.dynamic)}; "
        f"valued=({' '.join(c.valued)}) ;;"
        for c in commands
    )
    option_cases = "\n".join(
        f"        {shlex.quote(f'{c.name} {option}')}) optwords=({' '.join(words)}) ;;"
        for c in commands
        for option, words in c.option_values
    )
    return f"""#compdef skillsd
# zsh completion for skillsd (skillsd completion zsh)
_skillsd() {{
    local -a commands actions options values valued optwords
    local dynamic=""
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
    case "$words[2] $words[CURRENT-1]" in
{option_cases}
    esac
    if (( ${{#optwords}} )); then
        compadd -a optwords
    elif [[ $words[CURRENT-1] == --* ]] && (( ${{valued[(Ie)$words[CURRENT-1]]}} )); then
        _files
    elif (( CURRENT == 3 && ${{#actions}} )); then
        compadd -a actions
    elif [[ $PREFIX == -* ]]; then
        compadd -a options
    elif (( ${{#values}} )); then
        compadd -a values
    elif [[ -n $dynamic ]]; then
        local asked="$($words[1] {COMPLETE_COMMAND} $dynamic ${{words[2,CURRENT-1]}} 2>/dev/null)"
        compadd -- ${{(f)asked}}
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
        "function __skillsd_complete",
        "    set -l words (commandline -opc)",
        f"    $words[1] {COMPLETE_COMMAND} $argv[1] $words[2..-1] 2>/dev/null",
        "end",
    ]
    for c in commands:
        lines.append(
            f"complete -c skillsd -n __fish_use_subcommand -a {c.name} -d {shlex.quote(c.help)}"
        )
        seen = f"'__fish_seen_subcommand_from {c.name}'"
        for action in c.actions:
            lines.append(f"complete -c skillsd -n {seen} -a {action}")
        option_values = dict(c.option_values)
        for option in c.options:
            words = option_values.get(option)
            if words:
                quoted = shlex.quote(" ".join(words))
                lines.append(f"complete -c skillsd -n {seen} -l {option[2:]} -x -a {quoted}")
            elif option in c.valued:
                lines.append(f"complete -c skillsd -n {seen} -l {option[2:]} -r")
            else:
                lines.append(f"complete -c skillsd -n {seen} -l {option[2:]}")
        if c.values:
            lines.append(f"complete -c skillsd -n {seen} -a {shlex.quote(' '.join(c.values))}")
        elif c.dynamic:
            lines.append(f"complete -c skillsd -n {seen} -a '(__skillsd_complete {c.dynamic})'")
        else:
            lines.append(f"complete -c skillsd -n {seen} -F")
    return "\n".join(lines) + "\n"


def _completion(args: argparse.Namespace) -> int:
    from skillsd.cli import build_parser

    sys.stdout.write(script(args.shell, command_words(build_parser())))
    return 0


def _scope_words(words: list[str]) -> tuple[str, bool]:
    """The ``--cwd`` and ``--user`` of a command line being completed (loosely: it may be
    half typed)."""
    cwd = os.getcwd()
    for before, word in itertools.pairwise(words):
        if before == "--cwd":
            cwd = os.path.abspath(os.path.expanduser(word))
    return cwd, "--user" in words


def complete(words: list[str]) -> int:
    """``skillsd __complete KIND [WORDS...]``: the names of ``KIND`` one a line for a shell's
    completion (``skills``: the catalog's here; ``installed``: the lock's, ``--user`` among
    ``WORDS`` for the user's). Prints nothing on any problem: a completion never errors."""
    kind, rest = (words[0], words[1:]) if words else ("", [])
    cwd, user = _scope_words(rest)
    env, home = os.environ, os.path.expanduser("~")
    try:
        if kind == "skills":
            from skillsd.cli.in_process import catalog_in

            catalog = catalog_in(os.path.realpath(cwd))
            names = [s.qualified_name or s.name for s in catalog.skills]
        elif kind == "installed":
            from skillsd.core.policy.fs_effective_config import ConfigSource
            from skillsd.installing.lock_store import read_lock, target_for

            root = home if user else ConfigSource(env).for_cwd(cwd)[2]
            target = target_for("user" if user else "repo", repo_root=root, home=home, env=env)
            names = list(read_lock(target).skills)
        else:
            return 2
    except Exception:  # a half-typed line, a broken config: offer nothing, say nothing
        return 0
    sys.stdout.write("".join(f"{n}\n" for n in sorted(set(names)) if "\n" not in n))
    return 0
