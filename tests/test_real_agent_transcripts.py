"""``skillsd usage`` against a transcript the real Claude Code writes: Claude Code runs offline
with its model answered by a stand-in on a loopback port, which asks once for the Skill tool
(``{"skill": "pdf-forms"}``) and then ends the turn; the transcript Claude Code keeps in the
throwaway HOME must then count as one use of ``pdf-forms`` by ``claude-code``, and only when the
user's config allows reading transcripts.

Runs when ``SKILLSD_AGENTS_BIN`` names a folder holding ``claude`` (see
tests/test_real_agents.py), and is skipped otherwise.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.capture_server import BIN, stream_text

pytestmark = [pytest.mark.slow, pytest.mark.process]


class _Model(http.server.BaseHTTPRequestHandler):
    """Asks for the Skill tool while the conversation has no tool result, then ends the turn."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = json.loads(raw or b"{}")
        answered = any(
            isinstance(m.get("content"), list)
            and any(c.get("type") == "tool_result" for c in m["content"])
            for m in request.get("messages", [])
        )
        tools = {t.get("name") for t in request.get("tools", [])}
        if not request.get("stream"):
            kind = "application/json"
            body = json.dumps(
                {
                    "id": "msg_capture",
                    "type": "message",
                    "role": "assistant",
                    "model": "capture",
                    "content": [{"type": "text", "text": "ok"}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
            )
        elif "Skill" in tools and not answered:
            kind = "text/event-stream"
            use = {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Skill",
                "input": {"skill": "pdf-forms"},
            }
            body = stream_text([use], "tool_use")
        else:
            kind = "text/event-stream"
            body = stream_text([{"type": "text", "text": "done"}], "end_turn")
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_skillsd_usage_counts_the_skill_claude_code_used(tmp_path: Path) -> None:
    if not BIN or not Path(BIN, "claude").exists():
        pytest.skip("claude is not installed (set SKILLSD_AGENTS_BIN)")
    home, project = tmp_path / "home", tmp_path / "site_repo"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    skill = home / ".claude" / "skills" / "pdf-forms"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUse pdftk.\n"
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    base.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), NO_COLOR="1", CI="1")
    try:
        done = subprocess.run(
            [f"{BIN}/claude", "-p", "fill the pdf form", "--allowedTools", "Skill"],
            cwd=project,
            env={
                **base,
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
                "ANTHROPIC_API_KEY": "capture",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr[-2000:]
    config = tmp_path / "config.toml"
    env = {
        **base,
        "SKILLSD_CONFIG": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }

    def usage() -> dict[str, Any]:
        run = subprocess.run(
            [sys.executable, "-m", "skillsd", "usage", "--json"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        result: dict[str, Any] = json.loads(run.stdout)
        return result

    assert usage()["used"] == []  # not allowed yet: the transcript is not read
    config.write_text("[ledger]\nagentTranscripts = true\n")
    used = usage()["used"]
    assert [(u["name"], u["loads"], u["byAgent"]) for u in used] == [
        ("pdf-forms", 1, {"claude-code": 1})
    ]
