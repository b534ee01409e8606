"""docs/install.md's agent lines work as printed: every document gives Claude Code the same one
line, the Gemini CLI trust line runs and keeps what the file held, the configuration snippets are
the JSON each agent reads, and, when the agents are installed (``SKILLSD_AGENTS_BIN``, see
tests/test_real_agents.py), Gemini CLI, Copilot CLI and opencode take them and connect."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import agent_host_env

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
BIN = os.environ.get("SKILLSD_AGENTS_BIN", "")
SKILLSD = str(Path(sys.executable).with_name("skillsd"))

#: The one Claude Code line every document gives.
CLAUDE = 'claude mcp add --scope user skillsd -- "$(command -v skillsd)" mcp'


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *ROOT.glob("clients/*/README.md")]


def _guide_line(agent: str) -> str:
    """The first code in the `one line` cell of the guide's table row for ``agent``."""
    row = re.search(rf"^\| {re.escape(agent)} \| [^`|]*`([^`]+)`", GUIDE, re.M)
    assert row is not None, agent
    return row.group(1)


def _trust_line() -> str:
    section = GUIDE.split("### Gemini CLI: trust the folder", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).strip()


def _env(home: Path, **extra: str) -> dict[str, str]:
    """An agent host's environment with this venv's ``skillsd`` and the agents first on PATH."""
    path = f"{Path(SKILLSD).parent}:{BIN}:{os.environ.get('PATH', '')}"
    return agent_host_env(home, **{"PATH": path, **extra})


def _sh(line: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", line], cwd=cwd, env=_env(home), capture_output=True, text=True, timeout=120
    )


def _needs(command: str) -> None:
    if not BIN or not Path(BIN, command).exists():
        pytest.skip(f"{command} is not installed (set SKILLSD_AGENTS_BIN)")


def test_every_document_gives_claude_code_the_same_line() -> None:
    found: dict[str, set[str]] = {}
    for doc in _documents():
        for line in re.findall(r"claude mcp add[^`\n]*", doc.read_text(encoding="utf-8")):
            if "--transport http" in line:
                continue  # the line for `skillsd mcp --http` (docs/mcp.md), another server
            found.setdefault(line.strip(), set()).add(doc.relative_to(ROOT).as_posix())
    assert set(found) == {CLAUDE}, found
    assert {"README.md", "docs/install.md", "docs/mcp.md"} <= found[CLAUDE]
    assert _guide_line("Claude Code") == CLAUDE


def test_the_guide_has_a_line_for_every_agent_the_readme_names() -> None:
    for agent in (
        "Claude Code",
        "Codex",
        "Gemini CLI",
        "Copilot CLI",
        "VS Code",
        "Cursor",
        "opencode",
    ):
        _guide_line(agent)
    assert _guide_line("Copilot CLI") == 'copilot mcp add skillsd -- "$(command -v skillsd)" mcp'


@pytest.mark.process
def test_the_claude_code_line_fills_in_the_installed_path(tmp_path: Path) -> None:
    # `claude` stands in as a script that prints its arguments, one a line.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "claude").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (fake / "claude").chmod(0o755)
    done = _sh(f'PATH="{fake}:$PATH"; {CLAUDE}', tmp_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "mcp",
        "add",
        "--scope",
        "user",
        "skillsd",
        "--",
        SKILLSD,
        "mcp",
    ]


@pytest.mark.process
def test_the_gemini_trust_line_runs_as_printed_and_keeps_other_entries(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    line = _trust_line()
    assert line.startswith("python3 -c ") and "TRUST_FOLDER" in line
    done = _sh(line, project, home)  # no ~/.gemini yet
    assert done.returncode == 0, done.stderr
    trusted = home / ".gemini" / "trustedFolders.json"
    assert json.loads(trusted.read_text()) == {str(project): "TRUST_FOLDER"}
    trusted.write_text(json.dumps({"/elsewhere": "DO_NOT_TRUST"}))
    assert _sh(line, project, home).returncode == 0
    assert json.loads(trusted.read_text()) == {
        "/elsewhere": "DO_NOT_TRUST",
        str(project): "TRUST_FOLDER",
    }


def _json_blocks() -> list[dict[str, object]]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", GUIDE, re.S)]


def test_the_configuration_snippets_are_each_agents_shape() -> None:
    blocks = _json_blocks()
    assert {
        "mcpServers": {"skillsd": {"command": "/home/you/.local/bin/skillsd", "args": ["mcp"]}}
    } in blocks
    opencode = {"type": "local", "command": ["/home/you/.local/bin/skillsd", "mcp"]}
    assert {"mcp": {"skillsd": opencode}} in blocks
    # The table's opencode cell is the same entry.
    cell = re.search(r"add `(.*?)` under `mcp`", GUIDE)
    assert cell is not None and json.loads("{" + cell.group(1) + "}") == {"skillsd": opencode}


def _project(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project


@pytest.mark.slow
@pytest.mark.process
def test_gemini_connects_only_after_the_trust_line(tmp_path: Path) -> None:
    _needs("gemini")
    home, project = _project(tmp_path)
    added = _sh(_guide_line("Gemini CLI").split("`")[0], project, home)
    assert added.returncode == 0, added.stderr
    listed = _sh("gemini mcp list 2>&1", project, home).stdout
    assert "disabled because this folder is untrusted" in listed, listed
    assert _sh(_trust_line(), project, home).returncode == 0
    listed = _sh("gemini mcp list 2>&1", project, home).stdout
    assert f"skillsd: {SKILLSD} mcp" in listed and "Connected" in listed, listed


@pytest.mark.slow
@pytest.mark.process
def test_copilot_line_writes_its_user_config(tmp_path: Path) -> None:
    _needs("copilot")
    home, project = _project(tmp_path)
    added = _sh(_guide_line("Copilot CLI"), project, home)
    assert added.returncode == 0, added.stdout + added.stderr
    config = json.loads((home / ".copilot" / "mcp-config.json").read_text())
    server = config["mcpServers"]["skillsd"]
    assert (server["type"], server["command"], server["args"]) == ("local", SKILLSD, ["mcp"])
    shown = _sh("copilot mcp get skillsd 2>&1", project, home).stdout
    assert f"Command: {SKILLSD} mcp" in shown and "Status: Enabled" in shown, shown


@pytest.mark.slow
@pytest.mark.process
def test_opencode_connects_with_the_guides_snippet(tmp_path: Path) -> None:
    _needs("opencode")
    home, project = _project(tmp_path)
    snippet = next(b for b in _json_blocks() if "mcp" in b)
    text = json.dumps(snippet).replace("/home/you/.local/bin/skillsd", SKILLSD)
    (project / "opencode.json").write_text(text)
    listed = _sh("opencode mcp list 2>&1", project, home).stdout
    assert "skillsd" in listed and "connected" in listed and SKILLSD in listed, listed
