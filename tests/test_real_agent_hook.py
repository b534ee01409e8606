"""``skillsd hook claude-code`` in the real Claude Code, offline (docs/hooks.md): the context its
model receives for a request that activates a skill, for one that only has a candidate, and for
an unrelated one. Runs when ``SKILLSD_AGENTS_BIN`` names a folder holding ``claude`` (as
tests/test_real_agents.py does); the model is a local server that records each request."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpora import CORPORA, needs_corpora
from tests.support.capture_server import BIN, Capture, CaptureServer, strings
from tests.support.daemons import shared_daemon_runtime

ROOT = Path(__file__).resolve().parents[1]
SKILLSD = ROOT / ".venv" / "bin" / "skillsd"
SKILLS = (
    "vercel-agent-skills/skills/deploy-to-vercel",
    "openai-skills/skills/.curated/gh-fix-ci",
    "openai-skills/skills/.curated/gh-address-comments",
    "anthropics-skills/skills/internal-comms",
)

pytestmark = [
    needs_corpora,
    pytest.mark.skipif(
        not BIN or not Path(BIN, "claude").exists() or not SKILLSD.exists(),
        reason="claude is not installed (set SKILLSD_AGENTS_BIN)",
    ),
]


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[dict[str, Path]]:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for rel in SKILLS:
        shutil.copytree(CORPORA / rel, home / ".claude" / "skills" / Path(rel).name)
    log = tmp_path / "hook.log"
    hook = f"sh -c '{SKILLSD} hook claude-code | tee -a {log}'"
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    with shared_daemon_runtime("sdc-") as runtime:
        yield {"home": home, "project": project, "log": log, "runtime": runtime}


def _ask(agent: dict[str, Path], prompt: str) -> tuple[str, list[str]]:
    """What the hook printed for ``prompt``, and the texts of the model's requests that hold
    skillsd's context."""
    server = CaptureServer(("127.0.0.1", 0), Capture)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    before = agent["log"].read_text() if agent["log"].exists() else ""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    env.update(
        HOME=str(agent["home"]),
        XDG_CONFIG_HOME=str(agent["home"] / ".config"),
        XDG_CACHE_HOME=str(agent["home"] / ".cache"),
        NO_COLOR="1",
        CI="1",
        SKILLSD_RUNTIME_DIR=str(agent["runtime"]),
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
        ANTHROPIC_API_KEY="capture",
    )
    try:
        subprocess.run(
            [f"{BIN}/claude", "-p", prompt],
            cwd=agent["project"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.shutdown()
        server.server_close()
    printed = (agent["log"].read_text() if agent["log"].exists() else "")[len(before) :]
    seen = [t for body in server.bodies for t in strings(body) if "(skillsd)" in t]
    return printed, seen


def test_claude_code_receives_activated_and_candidate_context(agent: dict[str, Path]) -> None:
    printed, seen = _ask(agent, "the GitHub Actions build on my PR is red")
    context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Skills that fit this request (skillsd): read each one's SKILL.md")
    assert "\n- gh-fix-ci (" in context
    assert seen and "UserPromptSubmit hook additional context: " + context in seen[0]

    printed, seen = _ask(agent, "host this site so the client can see it")
    context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Skills that may fit this request (skillsd): before you start")
    assert '\n- deploy-to-vercel: "Deploy applications and websites to Vercel.' in context
    assert seen and context in seen[0]

    printed, seen = _ask(agent, "what is the capital of Australia")
    assert printed == "" and seen == []
