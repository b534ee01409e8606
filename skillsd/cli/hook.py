"""``skillsd hook claude-code|codex|gemini``: a ready prompt hook (docs/hooks.md).

The agent runs it on every prompt the user submits (Claude Code's and Codex's
``UserPromptSubmit``, Gemini CLI's ``BeforeAgent``) with a JSON object on stdin holding
``prompt`` and ``cwd``. It asks the shared socket daemon (started if needed, as ``skillsd
proxy`` does) for ``skills.suggest`` and, only when a skill activates, prints the agent's
"add context" answer naming the skills and why. It never blocks or fails the user's prompt:
on any problem it prints nothing, says why on stderr and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import msgspec

from skillsd_protocol.messages import MAX_QUERY_CHARS, SuggestParams, SuggestResult

__all__ = ["EVENTS", "context_text", "hook_output", "register"]

#: The event each agent's hook answers, by the agent's name on the command line.
EVENTS = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
#: How long the hook waits for the daemon (the first suggestion may load the semantic model):
#: past it, the prompt goes on without suggestions. Agents give a hook 30 s or more.
_TIMEOUT_SECONDS = 10.0


def register(subparsers: Any) -> None:
    """Add ``hook``."""
    p = subparsers.add_parser(
        "hook",
        help="a prompt hook that adds the skills fitting each request to the agent's context",
        description="Read the agent's prompt-hook JSON on stdin; print context naming the "
        "skills that fit the prompt (only when one activates). Never fails the prompt.",
    )
    p.add_argument("agent", choices=tuple(EVENTS), help="the agent running the hook")
    p.add_argument("--socket", help="the daemon's socket (default: the shared daemon's)")
    p.set_defaults(func=_hook)


def context_text(suggestions: list[Any]) -> str:
    """What the model is told: the skills that fit, where they are and why."""
    lines = ["Skills that fit this request (skillsd): read each one's SKILL.md before you start."]
    for hit in suggestions:
        why = "; ".join(hit.reasons)
        name = hit.skill.qualified_name or hit.skill.name
        lines.append(f"- {name} ({hit.skill.path}): {hit.skill.description} [{why}]")
    return "\n".join(lines)


def hook_output(agent: str, suggestions: list[Any]) -> dict[str, Any] | None:
    """The agent's answer for the activated ``suggestions`` (None: say nothing)."""
    active = [s for s in suggestions if s.activate]
    if not active:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": EVENTS[agent],
            "additionalContext": context_text(active),
        }
    }


def _ask(socket_path: str | None, params: SuggestParams) -> SuggestResult:
    """``skills.suggest`` from the shared daemon: one blocking request when it is running (the
    hook's usual case, and the fast one), else through the client, which starts it."""
    from skillsd_client._local_socket import default_socket_path, request_once

    path = socket_path or default_socket_path()
    wire = msgspec.to_builtins(params)
    try:
        answer = request_once(path, "skills.suggest", wire, timeout=_TIMEOUT_SECONDS)
        return msgspec.convert(answer, SuggestResult)
    except (FileNotFoundError, ConnectionRefusedError):
        pass
    from skillsd.runtime.process_memory import prepare_daemon_process

    prepare_daemon_process()  # a Unix socket only: no OpenSSL to load
    from skillsd_client import Client

    with Client.connect_shared(path, timeout=_TIMEOUT_SECONDS) as client:
        return client.suggest(prompt=params.prompt, cwd=params.cwd)


def _hook(args: argparse.Namespace) -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
        prompt = event.get("prompt") if isinstance(event, dict) else None
        cwd = event.get("cwd") if isinstance(event, dict) else None
        if not isinstance(prompt, str) or not prompt.strip():
            return 0
        params = SuggestParams(
            prompt=prompt[:MAX_QUERY_CHARS], cwd=cwd if isinstance(cwd, str) else None
        )
        result = _ask(args.socket, params)
        output = hook_output(args.agent, result.suggestions)
        if output is not None:
            sys.stdout.write(json.dumps(output) + "\n")
    except Exception as exc:  # the user's prompt must go on whatever happens here
        print(f"skillsd hook: no suggestions ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 0
