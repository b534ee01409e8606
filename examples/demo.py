"""The demo behind `make demo`: skillsd on the bundled example project.

Part 1 uses the CLI (validate, list, search, prompt, run). Part 2 starts `skillsd serve` on
stdio and plays a scripted JSON-RPC session: initialize, list, search, load, load again (the
daemon answers with a short reminder instead of re-sending the body), prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "project"
HOME = HERE / "home"


def environment(state: str) -> dict[str, str]:
    """Point skillsd at the example project and the example user's home, nothing else."""
    env = dict(os.environ)
    env.update(
        SKILLSD_ROOT=str(PROJECT),
        HOME=str(HOME),
        SKILLSD_CONFIG=str(Path(state) / "config.toml"),
        XDG_STATE_HOME=str(Path(state) / "state"),
        XDG_CACHE_HOME=str(Path(state) / "cache"),
    )
    env.pop("AGENT_SKILLS_PATH", None)
    return env


def banner(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)


def cli(env: dict[str, str], *args: str) -> None:
    banner("skillsd " + " ".join(args))
    subprocess.run([sys.executable, "-m", "skillsd", *args], cwd=PROJECT, env=env, check=False)


class Session:
    """A JSON-RPC conversation with `skillsd serve` over its stdin/stdout."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillsd", "serve"],
            cwd=PROJECT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.next_id = 1

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        line = json.dumps(message)
        print(f"\n--> {line}")
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == message["id"]:
                break
        if "error" in reply:
            print(f"<-- error {reply['error']['code']}: {reply['error']['message']}")
            return None
        return reply["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def show(text: str, limit: int = 600) -> None:
    print("<-- " + (text if len(text) <= limit else text[:limit] + f"... [{len(text)} chars]"))


def rpc_demo(env: dict[str, str]) -> None:
    banner("JSON-RPC session with `skillsd serve` (stdio)")
    s = Session(env)
    info = s.call("initialize", {"clientInfo": {"name": "demo"}})
    show(f"{info['serverInfo']} protocol {info['protocolVersion']}")
    listed = s.call("skills.list")
    for skill in listed["skills"]:
        same = " (shares its name with another skill)" if skill.get("sameName") else ""
        print(f"    {skill['scope']:<5} {skill['name']}{same}")
    for error in listed["errors"]:
        print(f"    invalid: {error['path']}: {error['message']}")
    found = s.call("skills.search", {"query": "release notes"})
    for hit in found["results"]:
        print(f"    {hit['skill']['name']}: {hit['reason']} ({hit['score']:.2f})")
    # What a prompt hook asks before the model sees the user's request (docs/hooks.md).
    fit = s.call("skills.suggest", {"prompt": "please draft the notes for our next release"})
    for hit in fit["suggestions"]:
        verdict = "activates" if hit["activate"] else "below the threshold"
        print(f"    {hit['skill']['name']}: {hit['score']:.2f} ({verdict}): {hit['reasons']}")
    session = s.call("session.open", {"sessionId": "demo-conversation"})
    load = {"name": "changelog-check", "sessionId": session["sessionId"]}
    first = s.call("skills.load", load)
    show(first["content"])
    again = s.call("skills.load", load)
    show(f"alreadyLoaded={again['alreadyLoaded']}: {again['content']}")
    prompt = s.call("skills.prompt", {"format": "xml", "maxBytes": 1500})
    show(prompt["text"], limit=1400)
    print(f"    shown {prompt['shown']} of {prompt['total']}, truncated={prompt['truncated']}")
    s.call("shutdown")
    s.close()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="skillsd-demo-") as state:
        # Loads ask the user by default (docs/permissions.md); this host, like most, allows them
        # outright.
        (Path(state) / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
        env = environment(state)
        cli(env, "validate", str(PROJECT / ".agents" / "skills"))
        cli(env, "list")
        cli(env, "search", "pdf")
        cli(env, "prompt", "--format", "markdown")
        # A token budget chosen by relevance to the user's request (docs/embedding.md).
        cli(env, "prompt", "--tokens", "150", "--query", "fill in a PDF form", "--no-location")
        # A slash command, as Claude Code runs it: arguments substituted (docs/protocol.md).
        cli(env, "run")
        cli(env, "run", "/fix-issue", "42", "high priority")
        rpc_demo(env)
    next_steps()
    return 0


def next_steps() -> None:
    """How to run skillsd yourself: from this clone, and installed for daily use."""
    script = Path(sys.executable).with_name("skillsd")  # the venv's command (.venv/bin/skillsd)
    if script.exists():
        shown = os.path.relpath(script) if script.is_relative_to(Path.cwd()) else str(script)
        command = shown if "/" in shown else f"./{shown}"
    else:
        command = f"{sys.executable} -m skillsd"
    banner("Your turn")
    print(f"skillsd is installed in this clone only; from here, run it as {command}:")
    print(f"    {command} --help")
    print(f"    {command} list --cwd ~/src/your-project   # your own project's skills")
    print("For daily use, install the `skillsd` command and connect your agents to it:")
    print("    pipx install '.[mcp,tui]'   # then docs/install.md: one line per agent")


if __name__ == "__main__":
    sys.exit(main())
