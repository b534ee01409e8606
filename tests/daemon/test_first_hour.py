"""Issue 14 through a real ``skillsd serve``: every real skill listed by default, every agent's
folder read with ``agents[]``, ``$CODEX_HOME``, relative ``roots.extra`` from a subfolder, a new
broken skill announced, word-form search, a blank query refused, disabled skills findable."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpora import CORPORA, KNOWN_INVALID, needs_corpora
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    from tests.support.env import daemon_env

    return daemon_env({"tmp": tmp, "home": tmp / "home"}, **extra)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return root


@contextlib.contextmanager
def _daemon(tmp: Path, cwd: Path, **extra: str) -> Iterator[Client]:
    daemon = StdioDaemon(environ=_env(tmp, **extra))
    try:
        yield Client(daemon, cwd)
    finally:
        daemon.kill()


@pytest.fixture
def client(tmp_path: Path, project: Path) -> Iterator[Client]:
    with _daemon(tmp_path, project) as started:
        yield started


@needs_corpora
def test_every_real_skill_is_listed_with_default_settings(client: Client) -> None:
    listing = client.ok("skills.list", extraRoots=[os.fspath(CORPORA)])
    assert listing["errors"] == []
    assert len(listing["skills"]) == 30
    by_dir = {str(Path(s["dir"]).relative_to(CORPORA)): s for s in listing["skills"]}
    for rel, code in KNOWN_INVALID.items():
        warnings = [d["code"] for d in by_dir[rel]["diagnostics"] if d["severity"] == "warning"]
        assert code in warnings, (rel, warnings)
    warned = {
        rel
        for rel, s in by_dir.items()
        if any(d["code"] in {"name.mismatch", "description.too_long"} for d in s["diagnostics"])
    }
    assert warned == set(KNOWN_INVALID)
    # Authors still get the strict verdict by default.
    strict = client.ok("skills.validate", path=os.fspath(CORPORA / "anthropics-skills/template"))
    assert strict["valid"] is False


def test_every_agent_folder_is_read_and_each_skill_names_its_agents(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    dot_agents = ("codex", "opencode", "copilot", "cursor", "gemini-cli", "windsurf", "goose")
    # What each folder's skill says of its readers, from the working directory (the project),
    # and from a subfolder, where only the agents that walk up to the repository root see the
    # project's folders.
    expected = {
        "repo-agents": (
            (*dot_agents, "amp", "cline", "roo-code", "openclaw", "junie"),
            ("codex", "opencode", "copilot"),
        ),
        "repo-agent": (("factory",), ()),
        "repo-claude": (
            ("claude-code", "opencode", "copilot", "cursor", "goose", "cline"),
            ("claude-code", "opencode", "copilot"),
        ),
        "repo-codex": (("codex", "cursor"), ("codex",)),
        "repo-opencode": (("opencode",), ("opencode",)),
        "repo-github": (("copilot",), ("copilot",)),
        "repo-gemini": (("gemini-cli",), ()),
        "user-agents": ((*dot_agents, "cline", "roo-code", "openclaw"),) * 2,
        "user-agent": ((), ()),
        "user-claude": (("claude-code", "opencode", "cursor", "goose"),) * 2,
        "user-codex": (("codex", "cursor"),) * 2,
        "user-opencode": (("opencode",),) * 2,
        "user-copilot": (("copilot",),) * 2,
    }
    folders = {
        "repo-agents": project / ".agents/skills",
        "repo-agent": project / ".agent/skills",
        "repo-claude": project / ".claude/skills",
        "repo-codex": project / ".codex/skills",
        "repo-opencode": project / ".opencode/skills",
        "repo-github": project / ".github/skills",
        "repo-gemini": project / ".gemini/skills",
        "user-agents": home / ".agents/skills",
        "user-agent": home / ".agent/skills",
        "user-claude": home / ".claude/skills",
        "user-codex": home / ".codex/skills",
        # opencode's user folder is in the XDG config home (the test's is in tmp_path).
        "user-opencode": tmp_path / "xdg-config/opencode/skills",
        "user-copilot": home / ".copilot/skills",
    }
    for name, folder in folders.items():
        write_skill(folder, name, f"The {name} skill.")
    # One skill reached through two folders (a symlink) is one skill that both sets of agents see.
    shared = write_skill(project / ".agents/skills", "shared", "Shared by link.")
    (project / ".claude/skills/shared").symlink_to(shared)
    sub = project / "pkg"
    sub.mkdir()
    for at, cwd in enumerate((project, sub)):  # the repo folders count from a subfolder too
        with _daemon(tmp_path, cwd) as client:
            skills = {s["name"]: s for s in client.ok("skills.list")["skills"]}
        assert set(skills) == {*expected, "shared"}
        for name, agents in expected.items():
            assert tuple(skills[name].get("agents", [])) == agents[at], (name, cwd)
            assert skills[name]["scope"] == name.split("-")[0]
        assert skills["shared"]["agents"][:4] == ["claude-code", "codex", "opencode", "copilot"]


def test_codex_home_replaces_the_default_codex_folder(tmp_path: Path, project: Path) -> None:
    codex_home = tmp_path / "codex-home"
    write_skill(codex_home / "skills", "from-codex-home", "Lives in $CODEX_HOME/skills.")
    write_skill(tmp_path / "home/.codex/skills", "from-dot-codex", "Lives in ~/.codex/skills.")
    with _daemon(tmp_path, project, CODEX_HOME=os.fspath(codex_home)) as client:
        skills = {s["name"]: s for s in client.ok("skills.list")["skills"]}
    assert set(skills) == {"from-codex-home", "from-dot-codex"}
    assert skills["from-codex-home"]["scope"] == "user"
    assert skills["from-codex-home"]["agents"] == ["codex"]
    # Codex no longer reads ~/.codex/skills; Cursor still does, by its own rules.
    assert skills["from-dot-codex"]["agents"] == ["cursor"]


def test_relative_extra_roots_resolve_from_the_repo_root_not_the_cwd(
    tmp_path: Path, project: Path
) -> None:
    write_skill(project / "tools/skills", "team-tool", "A team skill kept outside .agents.")
    (project / ".agents").mkdir()
    (project / ".agents/skillsd.toml").write_text('[roots]\nextra = ["tools/skills"]\n')
    # The user config's relative entries start at the user config file's directory.
    (tmp_path / "mine").mkdir()
    write_skill(tmp_path / "mine", "my-own", "Next to my config file.")
    (tmp_path / "config.toml").write_text('[roots]\nextra = ["mine"]\n')
    deep = project / "packages/web/src"
    deep.mkdir(parents=True)
    with _daemon(tmp_path, deep) as client:
        for cwd in (deep, project):
            listed = client.ok("skills.list", cwd=os.fspath(cwd))["skills"]
            skills = {s["name"]: s for s in listed}
            assert skills["team-tool"]["dir"] == os.fspath(project / "tools/skills/team-tool")
            assert skills["team-tool"]["scope"] == "extra"
        # Without a project file, the user's own entry applies (a project's replaces it).
        other = tmp_path / "other"
        (other / ".git").mkdir(parents=True)
        (other / "sub").mkdir()
        listed = client.ok("skills.list", cwd=os.fspath(other / "sub"))["skills"]
        assert [s["dir"] for s in listed] == [os.fspath(tmp_path / "mine/my-own")]


def test_a_new_broken_skill_is_announced(client: Client, project: Path) -> None:
    skills = project / ".agents/skills"
    write_skill(skills, "good", "A good skill.")
    first = client.ok("skills.list")
    assert first["errors"] == []
    broken = skills / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    note = client.wait_note("skills.changed")["params"]
    assert note["generation"] > first["generation"]
    assert (note["added"], note["removed"], note["changed"]) == ([], [], [])
    after = client.ok("skills.list")
    assert [e["path"] for e in after["errors"]] == [os.fspath(broken / "SKILL.md")]
    assert after["generation"] == note["generation"]


def test_search_matches_word_forms_and_refuses_a_blank_query(client: Client, project: Path) -> None:
    skills = project / ".agents/skills"
    write_skill(skills, "db-tools", "Write and review database migrations safely.")
    write_skill(skills, "ship-it", "Deploying the app to staging and production.")
    write_skill(skills, "tagged", "Unrelated words.", extra="metadata:\n  tags: Releases\n")
    for query, name in (
        ("migration", "db-tools"),
        ("migrate the schema", "db-tools"),
        ("deploy", "ship-it"),
        ("deployment stages", "ship-it"),
        ("release", "tagged"),
        ("db-tols", "db-tools"),  # still typo-tolerant on names
    ):
        hits = client.ok("skills.search", query=query)["results"]
        assert hits and hits[0]["skill"]["name"] == name, (query, hits)
    for blank in ("", "   "):
        error = client.err("skills.search", query=blank)
        assert error["code"] == -32602
        assert "query" in error["message"]
    called = client.ok("tools.call", name="skill_search", arguments={"query": " "})
    assert called["isError"] is True and "query" in called["content"]


def test_disabled_skills_can_be_found_to_enable_them_again(client: Client, project: Path) -> None:
    write_skill(project / ".agents/skills", "quiet", "A skill the user switched off.")
    client.ok("skills.setEnabled", name="quiet", enabled=False)
    assert client.ok("skills.search", query="quiet")["results"] == []
    hits = client.ok("skills.search", query="quiet", includeDisabled=True)["results"]
    assert [(h["skill"]["name"], h["skill"]["enabled"]) for h in hits] == [("quiet", False)]
    session = client.ok("session.open")["sessionId"]
    client.ok("skills.setEnabled", name="quiet", enabled=True)
    client.ok(
        "skills.setEnabled", name="quiet", enabled=False, persist="session", sessionId=session
    )
    hits = client.ok("skills.search", query="quiet", includeDisabled=True, sessionId=session)
    assert [h["skill"]["enabled"] for h in hits["results"]] == [False]
