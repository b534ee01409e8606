"""skillsd's view of each agent against the agent itself: the real Claude Code, Codex, opencode,
Gemini CLI and Copilot CLI list what they discover in a fixture (a throwaway HOME, offline, no
login), and each list must equal ``skills.list {agent}`` for the fixture's skills. Claude Code's
request to its model, captured by a stand-in for the messages API on a loopback port, must list
the same skills: an agent's view is what its model is shown.

The agents are npm packages; this runs when ``SKILLSD_AGENTS_BIN`` names a folder holding
their commands (``npm install --prefix DIR @anthropic-ai/claude-code@2.1.328
@openai/codex@0.171.0 opencode-ai@1.18.33 @google/gemini-cli@0.61.0 @github/copilot@1.0.102``,
then ``DIR/node_modules/.bin``), and is skipped otherwise. The versions are the ones checked:
an unpinned install can take another Claude Code (2.1.197 once), whose listing differs. Each
agent's own bundled skills are left out of the comparison.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from tests.support.capture_server import BIN, Capture, CaptureServer, strings
from tests.support.env import agent_host_env

pytestmark = [pytest.mark.slow, pytest.mark.process]

#: (folder relative to the project or the home, skill name): one skill per agent's folder, and
#: one name in two places with different files.
PROJECT = {
    ".claude/skills": ["a-claude", "dup"],
    ".agents/skills": ["b-agents"],
    ".github/skills": ["c-github"],
    ".gemini/skills": ["d-gemini"],
    ".cursor/skills": ["e-cursor"],
    ".codex/skills": ["f-codex"],
    ".opencode/skills": ["g-opencode"],
}
HOME = {
    ".claude/skills": ["h-user-claude", "dup"],
    ".agents/skills": ["i-user-agents"],
    ".copilot/skills": ["j-user-copilot"],
    ".gemini/skills": ["k-user-gemini"],
    ".config/opencode/skills": ["l-user-opencode"],
}
NAMES = {name for table in (PROJECT, HOME) for names in table.values() for name in names}


def _write(base: Path, table: dict[str, list[str]], tag: str) -> None:
    for folder, names in table.items():
        for name in names:
            skill = base / folder / name
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: The {name} skill, {tag}.\n---\nBody.\n"
            )


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("agents")
    project, home = base / "project", base / "home"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _write(project, PROJECT, "the project's")
    _write(home, HOME, "the user's")
    # Gemini CLI reads a workspace's skills only in a folder the user trusts.
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini/trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    return {"project": project, "home": home}


def _run(
    command: list[str],
    fixture: dict[str, Path],
    *,
    stderr: bool = False,
    extra: dict[str, str] | None = None,
) -> str:
    done = subprocess.run(
        command,
        cwd=fixture["project"],
        env={**agent_host_env(fixture["home"]), **(extra or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + (done.stderr if stderr else "")


def _claude(fixture: dict[str, Path]) -> list[str]:
    out = _run(
        [f"{BIN}/claude", "-p", "--output-format", "stream-json", "--verbose", "hi"], fixture
    )
    for line in out.splitlines():
        event = json.loads(line)
        if event.get("type") == "system" and event.get("subtype") == "init":
            return list(event["skills"])
    raise AssertionError(f"no start-up event: {out[:500]}")


def _codex(fixture: dict[str, Path]) -> list[str]:
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "skillsd-test", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "skills/list",
            "params": {"cwds": [str(fixture["project"])]},
        },
    ]
    proc = subprocess.Popen(
        [f"{BIN}/codex", "app-server"],
        cwd=fixture["project"],
        env=agent_host_env(fixture["home"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if message.get("id") == 1:  # the rest only once initialize is answered
                while json.loads(proc.stdout.readline()).get("id") != 1:
                    pass
        for line in proc.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                assert "result" in reply, reply
                return [s["name"] for entry in reply["result"]["data"] for s in entry["skills"]]
    finally:
        proc.kill()
        proc.wait()
    raise AssertionError("codex app-server gave no skills/list answer")


def _opencode(fixture: dict[str, Path]) -> list[str]:
    return [s["name"] for s in json.loads(_run([f"{BIN}/opencode", "debug", "skill"], fixture))]


def _gemini(fixture: dict[str, Path]) -> list[str]:
    out = _run([f"{BIN}/gemini", "skills", "list"], fixture)
    return [line.split()[0] for line in out.splitlines() if line.endswith("[Enabled]")]


def _copilot(fixture: dict[str, Path]) -> list[str]:
    return [
        s["name"] for s in json.loads(_run([f"{BIN}/copilot", "skill", "list", "--json"], fixture))
    ]


AGENTS: dict[str, tuple[str, Callable[[dict[str, Path]], list[str]]]] = {
    "claude-code": ("claude", _claude),
    "codex": ("codex", _codex),
    "opencode": ("opencode", _opencode),
    "gemini-cli": ("gemini", _gemini),
    "copilot": ("copilot", _copilot),
}


@pytest.mark.parametrize("agent", list(AGENTS))
def test_skillsd_sees_what_the_agent_sees(agent: str, fixture: dict[str, Path]) -> None:
    command, listed_by = AGENTS[agent]
    if not BIN or not Path(BIN, command).exists():
        pytest.skip(f"{command} is not installed (set SKILLSD_AGENTS_BIN)")
    theirs = Counter(name for name in listed_by(fixture) if name in NAMES)
    env = {k: v for k, v in agent_host_env(fixture["home"]).items() if k != "PATH"}
    plan = compute_roots(str(fixture["project"]), home=str(fixture["home"]), env=env)
    ours = Counter(s.name for s in build_catalog(plan).seen_by(agent) if s.name in NAMES)
    assert ours == theirs


#: What precedes the skills listing in the request Claude Code sends its model.
LISTING = "The following skills are available for use with the Skill tool:\n\n"


def _claude_sends(fixture: dict[str, Path]) -> list[str]:
    """Every string of the requests ``claude -p hi`` sends its model (captured)."""
    server = CaptureServer(("127.0.0.1", 0), Capture)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        extra = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "capture"}
        _run([f"{BIN}/claude", "-p", "hi"], fixture, extra=extra)
    finally:
        server.shutdown()
        server.server_close()
    return [t for body in server.bodies for t in strings(body)]


def _claude_shows(fixture: dict[str, Path]) -> list[tuple[str, str]]:
    """(name, description) of each entry of the skills listing Claude Code sends its model."""
    sent = _claude_sends(fixture)
    for text in sent:
        if LISTING in text:
            block = text.split(LISTING, 1)[1].split("\n\n", 1)[0]
            entries = (line[2:].split(": ", 1) for line in block.splitlines())
            return [(entry[0], entry[-1]) for entry in entries]
    raise AssertionError(f"no skills listing in {len(sent)} captured string(s)")


def test_claude_code_shows_its_model_what_skills_list_says(fixture: dict[str, Path]) -> None:
    """One entry per name, the personal one (Claude Code 2.1.328 and later)."""
    if not BIN or not Path(BIN, "claude").exists():
        pytest.skip("claude is not installed (set SKILLSD_AGENTS_BIN)")
    shown = [(name, text) for name, text in _claude_shows(fixture) if name in NAMES]
    env = {k: v for k, v in agent_host_env(fixture["home"]).items() if k != "PATH"}
    plan = compute_roots(str(fixture["project"]), home=str(fixture["home"]), env=env)
    ours = [s for s in build_catalog(plan).seen_by("claude-code") if s.name in NAMES]
    assert sorted(shown) == sorted((s.name, s.description) for s in ours)
    assert ("dup", "The dup skill, the user's.") in shown


@pytest.mark.parametrize(
    ("command", "add", "connected"),
    [
        ("claude", ["mcp", "add", "--scope", "user", "skillsd", "--"], "✔ Connected"),
        ("gemini", ["mcp", "add", "--scope", "user", "skillsd"], "- Connected"),
    ],
)
def test_the_install_guides_mcp_line_connects(
    command: str, add: list[str], connected: str, tmp_path: Path, fixture: dict[str, Path]
) -> None:
    """docs/install.md's one line for the agent, then the agent's own health check of
    ``skillsd mcp``."""
    if not BIN or not Path(BIN, command).exists():
        pytest.skip(f"{command} is not installed (set SKILLSD_AGENTS_BIN)")
    guide = (Path(__file__).resolve().parents[1] / "docs" / "install.md").read_text()
    assert f'`{command} {" ".join(add)} "$(command -v skillsd)" mcp`' in guide
    skillsd = str(Path(sys.executable).with_name("skillsd"))
    home = {"home": tmp_path, "project": fixture["project"]}
    # Gemini CLI connects MCP servers only in a folder the user trusts.
    (tmp_path / ".gemini").mkdir()
    trusted = {str(fixture["project"]): "TRUST_FOLDER"}
    (tmp_path / ".gemini/trustedFolders.json").write_text(json.dumps(trusted))
    _run([f"{BIN}/{command}", *add, skillsd, "mcp"], home)
    listed = _run([f"{BIN}/{command}", "mcp", "list"], home, stderr=True)
    assert f"skillsd: {skillsd} mcp" in listed and connected in listed, listed


def test_claude_code_uses_the_http_server_over_several_workers(
    tmp_path: Path, fixture: dict[str, Path]
) -> None:
    """``skillsd mcp --http`` with four workers, added to Claude Code as docs/mcp.md says: its
    health check connects every time, and ``claude -p`` hands its model skillsd's tools."""
    if not BIN or not Path(BIN, "claude").exists():
        pytest.skip("claude is not installed (set SKILLSD_AGENTS_BIN)")
    token = "t" * 40
    home = {"home": tmp_path, "project": fixture["project"]}
    env = {**agent_host_env(fixture["home"]), "SKILLSD_MCP_TOKEN": token}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}", "--workers", "4"],
        cwd=fixture["project"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "no server"
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        add = ["mcp", "add", "--scope", "user", "--transport", "http", "skillsd", url]
        _run([f"{BIN}/claude", *add, "--header", f"Authorization: Bearer {token}"], home)
        for _ in range(5):
            listed = _run([f"{BIN}/claude", "mcp", "list"], home, stderr=True)
            assert f"skillsd: {url} (HTTP) - ✔ Connected" in listed, listed
        sent = _claude_sends(home)
        assert any("mcp__skillsd__skill_search" in t for t in sent), len(sent)
    finally:
        server.terminate()
        assert server.wait(10) == 0
