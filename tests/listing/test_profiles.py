"""Profiles over the daemon's protocol (``skills.profile.plan|apply|reset``, the real framing
and dispatch), and the ``skillsd profile``/``listing``/``doctor`` commands as a user runs them:
the 300-skill case, where a repository about database migrations needs 30 of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.listing.fixtures import LOCAL, README, REPO_NEEDS, build, skill_name, write_skill
from tests.support.cli import run_tree_cli as run_cli
from tests.support.client import Client
from tests.support.env import daemon_env
from tests.support.in_process import InProcessDaemon


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    home, project = build("three-hundred", tmp_path)
    (project / "README.md").write_text(README)
    (project / ".claude").mkdir()
    (project / ".claude/settings.local.json").write_text(LOCAL)
    return {"tmp": tmp_path, "home": home, "project": project}


@pytest.fixture
def client(tree: dict[str, Path]) -> Iterator[Client]:
    daemon = InProcessDaemon(daemon_env(tree))
    try:
        yield Client(daemon, tree["project"])
    finally:
        daemon.kill()


def _needed(client: Client) -> set[str]:
    skills = client.ok("skills.list", agent="claude-code")["skills"]
    return {s["name"] for s in skills if REPO_NEEDS in s["description"]}


def _full(client: Client) -> set[str]:
    listing = client.ok("skills.listing", agent="claude-code")
    return {e["name"] for e in listing["entries"] if e["shown"] == "full" and not e.get("bundled")}


def test_apply_keeps_what_the_repository_needs_and_reset_restores_the_bytes(
    client: Client, tree: dict[str, Path]
) -> None:
    local = tree["project"] / ".claude/settings.local.json"
    before = local.read_bytes()
    needed = _needed(client)
    assert len(needed) == 30
    listing = client.ok("skills.listing", agent="claude-code")
    assert (listing["full"], listing["shown"]) == (79, 300)
    assert len(needed & _full(client)) < 30

    plan = client.ok("skills.profile.plan", agent="claude-code")["profiles"][0]
    assert plan["target"] == str(local) and plan["fullAfter"] >= 30
    assert local.read_bytes() == before  # a plan writes nothing

    applied = client.ok("skills.profile.apply", agent="claude-code")["applied"][0]
    assert needed <= _full(client)
    written = json.loads(local.read_text())
    assert written["permissions"] == {"allow": ["Bash(git status)"]}
    assert written["skillOverrides"]["alpha-0"] == "on"  # the user's key, untouched
    assert "alpha-0" not in applied["written"]
    assert not set(applied["written"]) & needed
    assert local.read_text().startswith('{\n    "permissions"')  # its indentation kept
    assert not (tree["project"] / ".claude/settings.json").exists()

    reset = client.ok("skills.profile.reset", agent="claude-code")["reset"][0]
    assert sorted(reset["removed"]) == sorted(applied["written"]) and not reset.get("left")
    assert local.read_bytes() == before


def test_a_key_the_user_changed_after_apply_is_left_and_named(
    client: Client, tree: dict[str, Path]
) -> None:
    local = tree["project"] / ".claude/settings.local.json"
    applied = client.ok("skills.profile.apply", agent="claude-code")["applied"][0]
    name = sorted(applied["written"])[0]
    data = json.loads(local.read_text())
    data["skillOverrides"][name] = "off"
    local.write_text(json.dumps(data, indent=4) + "\n")
    reset = client.ok("skills.profile.reset", agent="claude-code")["reset"][0]
    assert [left["name"] for left in reset["left"]] == [name]
    after = json.loads(local.read_text())["skillOverrides"]
    assert after == {"alpha-0": "on", name: "off"}


def test_apply_makes_the_local_file_and_reset_removes_it(
    client: Client, tree: dict[str, Path]
) -> None:
    local = tree["project"] / ".claude/settings.local.json"
    local.unlink()
    client.ok("skills.profile.apply", agent="claude-code")
    assert json.loads(local.read_text())["skillOverrides"]
    client.ok("skills.profile.reset", agent="claude-code")
    assert not local.exists()


def test_pins_keep_their_description(client: Client, tree: dict[str, Path]) -> None:
    (tree["tmp"] / "config.toml").write_text('[profiles]\npinned = ["zephyr-77"]\n')
    plan = client.ok("skills.profile.plan", agent="claude-code")["profiles"][0]
    pinned = [c for c in plan["choices"] if c.get("pinned")]
    assert [(c["name"], c["shown"]) for c in pinned] == [("zephyr-77", "full")]
    client.ok("skills.profile.apply", agent="claude-code")
    assert "zephyr-77" in _full(client)


def test_bad_params_name_the_field(client: Client) -> None:
    error = client.err("skills.listing", agent="claud-code")
    assert error["code"] == -32602 and error["data"]["field"] == "agent"
    error = client.err("skills.profile.plan", budgetFraction=2)
    assert error["data"]["field"] == "budgetFraction"
    error = client.err("skills.listing", agent="claude-code", contextWindow=0)
    assert error["data"]["field"] == "contextWindow"


def test_an_agent_not_modelled_says_so(client: Client) -> None:
    listing = client.ok("skills.listing", agent="gemini-cli")
    assert listing["modelled"] is False and "not modelled" in listing["why"]
    plan = client.ok("skills.profile.plan", agent="gemini-cli")["profiles"][0]
    assert plan["supported"] is False and "docs/agents.md" in plan["why"]


def _shown(plan: dict[str, object], *names: str) -> list[tuple[str, str]]:
    choices = plan["choices"]
    assert isinstance(choices, list)
    return [(c["name"], c["shown"]) for c in choices if c["name"] in names]


def test_a_skill_used_here_keeps_its_description_whatever_its_words(tmp_path: Path) -> None:
    """Two skills of nothing the repository mentions, both in full before the profile (first in
    Claude Code's order); the one loaded here keeps its description, the other does not; with
    the ledger turned off, neither."""
    home, project = build("three-hundred", tmp_path)
    (project / "README.md").write_text(README)
    used, unused = "aaa-watercolour", "aab-origami"
    write_skill(home / ".claude/skills", used, "Paints watercolour birds on handmade paper.")
    write_skill(home / ".claude/skills", unused, "Folds origami cranes from square sheets.")
    config = tmp_path / "config.toml"
    config.write_text('[permissions]\nallow = ["skill_load"]\n')
    tree = {"tmp": tmp_path, "home": home, "project": project}
    daemon = InProcessDaemon(daemon_env(tree))
    try:
        client = Client(daemon, project)
        needed = _needed(client)
        assert {used, unused} <= _full(client)
        plan = client.ok("skills.profile.plan", agent="claude-code")["profiles"][0]
        assert _shown(plan, used, unused) == [(used, "name-only"), (unused, "name-only")]

        client.ok("skills.load", name=used)
        plan = client.ok("skills.profile.plan", agent="claude-code")["profiles"][0]
        assert _shown(plan, used, unused) == [(used, "full"), (unused, "name-only")]
        [choice] = [c for c in plan["choices"] if c["name"] == used]
        assert choice["why"] == "used 1 time here"
        assert {n for n, shown in _shown(plan, *needed) if shown == "full"} == needed
        client.ok("skills.profile.apply", agent="claude-code")
        assert used in _full(client) and needed <= _full(client)
        assert unused not in _full(client)
        client.ok("skills.profile.reset", agent="claude-code")

        # Off: the ledger's counts are not read.
        config.write_text('[permissions]\nallow = ["skill_load"]\n[ledger]\nenabled = false\n')
        plan = client.ok("skills.profile.plan", agent="claude-code")["profiles"][0]
        assert _shown(plan, used, unused) == [(used, "name-only"), (unused, "name-only")]
    finally:
        daemon.kill()


@pytest.mark.process
def test_the_commands_as_a_user_runs_them(tree: dict[str, Path]) -> None:
    local = tree["project"] / ".claude/settings.local.json"
    before = local.read_bytes()
    doctor = run_cli(tree, "doctor", "--no-fail")
    assert "Claude Code shows 79 of 300 skills in full in this folder" in doctor.stdout
    table = run_cli(tree, "listing", "--agent", "claude-code")
    assert table.returncode == 0 and table.stdout.startswith("Claude Code: 79 of 300 skills")
    as_json = json.loads(run_cli(tree, "listing", "--agent", "claude", "--json").stdout)
    assert as_json["full"] == 79 and as_json["budgetChars"] == 30000
    assert run_cli(tree, "profile", "--agent", "claude-code").returncode == 0
    assert local.read_bytes() == before
    applied = run_cli(tree, "profile", "--apply")
    assert applied.returncode == 0 and f"into {local}" in applied.stdout
    after = json.loads(run_cli(tree, "listing", "--agent", "claude-code", "--json").stdout)
    full = {e["name"] for e in after["entries"] if e["shown"] == "full"}
    # The fixture's topics go round in tens: skills 0, 10, 20... are about migrations.
    assert {skill_name(i) for i in range(0, 300, 10)} <= full
    assert run_cli(tree, "profile", "--reset").returncode == 0
    assert local.read_bytes() == before


def test_a_claude_folder_linked_out_of_the_repository_is_neither_read_nor_written(
    client: Client, tree: dict[str, Path], tmp_path: Path
) -> None:
    """A repository whose ``.claude`` is a symlink to a folder elsewhere (another project, a
    folder of the user's) cannot make ``apply`` write a settings file there."""
    project = tree["project"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".claude/settings.local.json").unlink()
    (project / ".claude").rmdir()
    (project / ".claude").symlink_to(elsewhere, target_is_directory=True)
    error = client.err("skills.profile.apply", agent="claude-code")
    assert ".claude/settings.local.json" in error["message"], error
    assert list(elsewhere.iterdir()) == []
