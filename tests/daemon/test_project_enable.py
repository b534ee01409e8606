"""skillsd's own enable flag per repository, through a real ``skillsd serve``, the CLI and
``skillsd mcp``: kept in the user's state file under the repository's root, never in the
repository; it wins over the user's own flag there and nowhere else."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_tree_cli as run_cli
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env
from tests.support.mcp_pipes import INIT, Server
from tests.support.skill_tree import make_project

pytestmark = pytest.mark.process


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    tree = make_project(tmp_path)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    tree["other"] = other
    return tree


@pytest.fixture
def daemon(tree: dict[str, Path]) -> Iterator[StdioDaemon]:
    started = StdioDaemon(environ=daemon_env(tree))
    try:
        yield started
    finally:
        started.kill()


def _enabled(client: Client, cwd: Path) -> dict[str, bool]:
    listed = client.ok("skills.list", cwd=os.fspath(cwd))["skills"]
    return {s["name"]: s["enabled"] for s in listed if s["scope"] == "user"}


def _files(root: Path) -> set[str]:
    return {os.fspath(p.relative_to(root)) for p in root.rglob("*")}


def _state(tree: dict[str, Path]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (tree["tmp"] / "state" / "skillsd" / "state.json").read_text()
    )
    return loaded


def test_a_project_flag_holds_in_its_repository_only_and_is_kept_outside_it(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    client = Client(daemon, tree["project"])
    before = _files(tree["project"])
    result = client.ok("skills.setEnabled", name="commit-message", enabled=False, persist="project")
    assert result["skill"]["enabled"] is False
    assert _enabled(client, tree["project"])["commit-message"] is False
    # A subfolder is the same repository; another repository is not affected.
    assert _enabled(client, tree["sub"])["commit-message"] is False
    assert _enabled(client, tree["other"])["commit-message"] is True
    # Left out of what the model sees here: search, prompt, load by name.
    hits = client.ok("skills.search", query="conventional commit message")["results"]
    assert "commit-message" not in {h["skill"]["name"] for h in hits}
    refused = client.err("skills.load", name="commit-message")
    assert "disabled" in refused["message"]
    # Nothing was written in the repository; the state file holds it under the real root.
    assert _files(tree["project"]) == before
    skill_md = os.path.realpath(tree["home"] / ".agents" / "skills" / "commit-message" / "SKILL.md")
    assert _state(tree)["projects"] == {os.path.realpath(tree["project"]): {skill_md: False}}
    assert _state(tree)["disabled"] == []


def test_scope_project_is_persist_project(tree: dict[str, Path], daemon: StdioDaemon) -> None:
    client = Client(daemon, tree["project"])
    result = client.ok("skills.setEnabled", name="commit-message", enabled=False, scope="project")
    assert result["skill"]["enabled"] is False
    assert _enabled(client, tree["project"])["commit-message"] is False
    assert _enabled(client, tree["other"])["commit-message"] is True
    skill_md = os.path.realpath(tree["home"] / ".agents" / "skills" / "commit-message" / "SKILL.md")
    assert _state(tree)["projects"] == {os.path.realpath(tree["project"]): {skill_md: False}}
    assert _state(tree)["disabled"] == []
    # Both given: they must agree (the default persist gives way to scope).
    client.ok(
        "skills.setEnabled", name="commit-message", enabled=True, scope="project", persist="project"
    )
    assert _enabled(client, tree["project"])["commit-message"] is True
    client.ok(
        "skills.setEnabled", name="release-notes@user", enabled=False, scope="user", persist="user"
    )
    assert _enabled(client, tree["other"])["release-notes"] is False
    error = client.err(
        "skills.setEnabled", name="commit-message", enabled=False, scope="user", persist="project"
    )
    assert error["code"] == -32602 and error["data"]["field"] == "scope"
    assert "persist" in error["message"]
    error = client.err("skills.setEnabled", name="commit-message", enabled=False, scope="session")
    assert error["data"]["field"] == "sessionId" and 'scope "session"' in error["message"]
    error = client.err("skills.setEnabled", name="commit-message", enabled=False, scope="repo")
    assert error["code"] == -32602 and "scope" in error["message"]
    assert _enabled(client, tree["project"])["commit-message"] is True


def test_a_project_flag_wins_over_the_users_own_flag_there(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    client = Client(daemon, tree["project"])
    client.ok("skills.setEnabled", name="commit-message", enabled=False)  # for the user
    assert _enabled(client, tree["project"])["commit-message"] is False
    # Enabled by name although the user disabled it: setEnabled resolves disabled skills too.
    client.ok("skills.setEnabled", name="commit-message", enabled=True, persist="project")
    assert _enabled(client, tree["project"])["commit-message"] is True
    assert _enabled(client, tree["other"])["commit-message"] is False
    # Found by name again: the load now only waits for the user's approval, as any load does.
    assert client.err("skills.load", name="commit-message")["data"]["kind"] == "permission_required"
    # A later user-wide change does not undo the project's choice.
    after = client.ok("skills.setEnabled", name="commit-message", enabled=False)
    assert after["skill"]["enabled"] is True
    assert _enabled(client, tree["other"])["commit-message"] is False


def test_a_repository_cannot_set_its_own_flags(tree: dict[str, Path], daemon: StdioDaemon) -> None:
    # A project file naming the flags is a config with an unknown key: ignored, never applied.
    (tree["project"] / ".agents" / "skillsd.toml").write_text(
        '[projects]\ndisabled = ["commit-message"]\n', encoding="utf-8"
    )
    client = Client(daemon, tree["project"])
    assert _enabled(client, tree["project"])["commit-message"] is True
    assert not (tree["tmp"] / "state" / "skillsd" / "state.json").exists()


def test_the_cli_sets_the_project_flag_and_every_face_applies_it(
    tree: dict[str, Path], daemon: StdioDaemon
) -> None:
    done = run_cli(tree, "disable", "--project", "commit-message")
    assert done.returncode == 0, done.stderr
    root = os.path.realpath(tree["project"])
    assert done.stdout.startswith(f"commit-message disabled in {root}: ")
    # The daemon that was already running sees it at its next request.
    client = Client(daemon, tree["project"])
    assert _enabled(client, tree["project"])["commit-message"] is False
    assert _enabled(client, tree["other"])["commit-message"] is True
    # The CLI's own listing, here and elsewhere.
    here = run_cli(tree, "list", "--json")
    assert {s["name"]: s["enabled"] for s in json.loads(here.stdout)["skills"]}[
        "commit-message"
    ] is False
    there = run_cli(tree, "list", "--json", cwd=tree["other"])
    assert {s["name"]: s["enabled"] for s in json.loads(there.stdout)["skills"]}[
        "commit-message"
    ] is True
    # A user-wide enable cannot override the project's flag, and says so.
    user = run_cli(tree, "enable", "commit-message")
    assert user.returncode == 0, user.stderr
    assert f"commit-message stays disabled in {root}, which has its own flag" in user.stdout
    assert "skillsd enable --project commit-message" in user.stdout
    # skillsd mcp: the model's load by name is refused there.
    server = Server(tree)
    try:
        server.send("initialize", INIT, rid=1)
        server.answer(1)
        server.send("notifications/initialized")
        server.send(
            "tools/call", {"name": "skill_load", "arguments": {"name": "commit-message"}}, rid=2
        )
        answer = server.answer(2)["result"]
        assert answer["isError"] is True
        assert "disabled" in answer["content"][0]["text"]
    finally:
        server.leave("eof")
    again = run_cli(tree, "enable", "--project", "commit-message", "--json")
    assert json.loads(again.stdout)["skill"]["enabled"] is True
    assert _enabled(client, tree["project"])["commit-message"] is True
