"""The model of each agent's listing against the real agent, captured now: the agent runs in
an empty network namespace (``unshare -rn``, only ``lo`` up) with its model endpoint pointed
at a recorder on loopback (``capture.py``), for each fixture of ``fixtures.py``; and the
profile proof: after ``skillsd profile --apply`` for a repository that needs 30 of 300
skills, the real Claude Code sends those 30 with their descriptions, and ``--reset`` leaves
``settings.local.json`` as it was, byte for byte.

Runs where ``SKILLSD_AGENTS_BIN`` names a folder holding ``claude`` (Claude Code 2.1.328)
and/or ``codex`` (0.171.0) and ``unshare`` works; skipped elsewhere (the stored captures are
checked without the agents by ``test_captured_listings.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.listing.agent_listing import CLAUDE_CODE_BUNDLED
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd.runtime.listing_requests import compute_listing
from tests.listing.capture import CAPTURED, strip_bundled
from tests.listing.compare import claude_differences
from tests.listing.fixtures import LOCAL, README, skill_name
from tests.listing.modelled import CODEX, STORED, modelled
from tests.support.cli import run_tree_cli as run_cli
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_user_config

pytestmark = [pytest.mark.slow, pytest.mark.process]

BIN = os.environ.get("SKILLSD_AGENTS_BIN", "")
ROOT = Path(__file__).resolve().parents[2]


def _offline() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    done = subprocess.run(
        ["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=30
    )
    return done.returncode == 0


def _need(command: str) -> None:
    if not BIN or not Path(BIN, command).exists():
        pytest.skip(f"{command} is not installed (set SKILLSD_AGENTS_BIN)")
    if not _offline():
        pytest.skip("no empty network namespace here (unshare -rn)")


def capture(agent: str, home: Path, project: Path) -> str:
    """The block the real agent sends for this tree, offline."""
    script = (
        f'ip link set lo up && exec "{sys.executable}" -m tests.listing.capture --one '
        f'{agent} "{BIN}" "{home}" "{project}"'
    )
    done = subprocess.run(
        ["unshare", "-rn", "sh", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("name", STORED)
def test_claude_code_sends_what_the_model_says(name: str, tmp_path: Path) -> None:
    _need("claude")
    # The model reads Claude Code's own text (its bundled skills) from the installed agent:
    # its text is then the whole block, byte for byte.
    result, home = modelled(name, tmp_path, path=BIN)
    assert result.agent_text, result.agent_text_why
    block = capture("claude-code", home, tmp_path / "project")
    assert result.text == block
    assert claude_differences(block, result) == []
    # And the stored capture is still what this Claude Code sends.
    stored = (CAPTURED / "claude-code" / f"{name}.txt").read_text()
    names = [b.name for b in CLAUDE_CODE_BUNDLED]
    assert strip_bundled(block, names).replace(str(tmp_path), "$FIXTURE") == stored


@pytest.mark.parametrize("name", CODEX)
def test_codex_sends_what_the_model_says(name: str, tmp_path: Path) -> None:
    """Codex writes its own skills into ``$CODEX_HOME/skills/.system`` when it starts: the
    model is computed after the capture, on the same tree, and must match byte for byte."""
    _need("codex")
    _result, home = modelled(name, tmp_path)
    block = capture("codex", home, tmp_path / "project")
    env = {"HOME": str(home), "PATH": BIN}
    config = Config(discovery=DiscoveryConfig(max_dirs=100_000))
    project = tmp_path / "project"
    plan = compute_roots(str(project), config, home=str(home), env=env)
    skills = build_catalog(plan, config).seen_by("codex")
    result = compute_listing(
        skills, "codex", str(project), home=str(home), env=env, context_window=None
    )
    # With Codex's own opening sentences read from the installed binary, the whole message.
    assert result.agent_text, result.agent_text_why
    assert result.text == block


def test_the_daemon_answers_the_block_the_agents_send(tmp_path: Path) -> None:
    """``skills.listing`` over the daemon's pipes, with the agents on its ``PATH``: Claude Code's
    and Codex's ``text`` are the blocks they send, byte for byte (fixture of 300 skills)."""
    _need("claude")
    _need("codex")
    _result, home = modelled("three-hundred", tmp_path)
    project = tmp_path / "project"
    codex_block = capture("codex", home, project)  # writes Codex's own skills first
    claude_block = capture("claude-code", home, project)
    environ = {
        **daemon_env({"tmp": tmp_path, "home": home}),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    daemon = StdioDaemon(environ=environ)
    try:
        client = Client(daemon, project)
        claude = client.ok("skills.listing", agent="claude-code")
        codex = client.ok("skills.listing", agent="codex")
    finally:
        daemon.close_stdin()
        daemon.wait()
    assert claude["agentText"] is True and claude["text"] == claude_block
    assert codex["agentText"] is True and codex["text"] == codex_block


def test_the_listing_reads_the_agent_the_users_config_names(tmp_path: Path) -> None:
    """``listing.claudeCodePath`` in the user's config finds Claude Code off ``PATH``; a
    repository's ``[listing]`` is ignored (it cannot choose a file for skillsd to read)."""
    _need("claude")
    tree = make_project(tmp_path)
    env = daemon_env(tree)
    assert shutil.which("claude", path=env.get("PATH", "")) is None
    (tree["project"] / ".agents" / "skillsd.toml").write_text(
        '[listing]\nclaudeCodePath = "/nonexistent/claude"\n'
    )
    write_user_config(tree, f'[listing]\nclaudeCodePath = "{BIN}/claude"\n')
    done = run_cli(tree, "listing", "--agent", "claude-code", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["agentText"] is True and "agentTextWhy" not in found
    # The bundled skills' lines close the text, in Claude Code's order.
    at = [("\n" + found["text"]).find(f"\n- {b.name}: ") for b in CLAUDE_CODE_BUNDLED]
    assert -1 not in at and at == sorted(at)
    assert found["usedChars"] == len(found["text"])
    write_user_config(tree, "")
    without = json.loads(run_cli(tree, "listing", "--agent", "claude-code", "--json").stdout)
    assert "agentText" not in without and "not found" in without["agentTextWhy"]
    assert "- security-review" not in without["text"]


def test_after_profile_apply_claude_code_shows_the_needed_skills(tmp_path: Path) -> None:
    _need("claude")
    _result, home = modelled("three-hundred", tmp_path)
    project = tmp_path / "project"
    (project / "README.md").write_text(README)
    (project / ".claude").mkdir()
    local = project / ".claude/settings.local.json"
    local.write_text(LOCAL)
    before = local.read_bytes()
    tree = {"tmp": tmp_path, "home": home, "project": project}
    needed = {skill_name(i) for i in range(0, 300, 10)}

    def full_in(block: str) -> set[str]:
        return {line[2:].split(": ", 1)[0] for line in block.split("\n") if ": " in line}

    assert len(needed & full_in(capture("claude-code", home, project))) < 30
    applied = run_cli(tree, "profile", "--apply", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"][0]["path"] == str(local)
    assert needed <= full_in(capture("claude-code", home, project))
    assert run_cli(tree, "profile", "--reset").returncode == 0
    assert local.read_bytes() == before
