"""Remote skills in a catalog: scope, qualified names, grants, trust of a project's remotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.policy.config import Config, RemoteConfig, layer_configs, parse_config_text
from skillsd.core.remote.fs_remote_roots import (
    remote_skills_dir,
    remotes_in_effect,
    stub_skill_file,
)
from skillsd_protocol import SkillMetadata

TEAM = RemoteConfig(name="team", url="https://skills.acme.dev/mcp")


def _listed(cache: Path, name: str, frontmatter: dict[str, object]) -> None:
    folder = Path(remote_skills_dir("team", str(cache / "skillsd" / "remotes"))) / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(stub_skill_file(frontmatter, "team"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    frontmatter: dict[str, object] = {
        "name": "deploy",
        "description": "Ship it.",
        "allowed-tools": "Bash(git *)",
    }
    _listed(tmp_path / "cache", "deploy", frontmatter)
    _listed(tmp_path / "cache", "review", {"name": "review", "description": "The team's review."})
    mine = project / ".agents" / "skills" / "review"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: review\ndescription: My review.\n---\nBody\n")
    return project


def _catalog(project: Path, config: Config, tmp: Path) -> dict[tuple[str, str], SkillMetadata]:
    home = tmp / "home"
    plan = compute_roots(str(project), config, home=str(home), env={"HOME": str(home)})
    catalog = build_catalog(plan, config)
    return {(s.scope, s.name): s for s in catalog.skills}


def test_remote_skills_are_qualified_and_grant_nothing_unless_trusted(
    project: Path, tmp_path: Path
) -> None:
    skills = _catalog(project, Config(remote=(TEAM,)), tmp_path)
    deploy = skills[("remote", "deploy")]
    assert deploy.qualified_name == "team:deploy"
    assert deploy.remote is not None
    assert deploy.remote.name == "team" and deploy.remote.url == TEAM.url
    assert deploy.allowed_tools is None
    assert any(d.code == "remote.grants_withheld" for d in deploy.diagnostics)
    trusted = RemoteConfig(name="team", url=TEAM.url, trusted=True)
    granted = _catalog(project, Config(remote=(trusted,)), tmp_path)[("remote", "deploy")]
    assert granted.allowed_tools == ["Bash(git *)"]


def test_a_remote_skill_never_silently_shadows_a_local_one(project: Path, tmp_path: Path) -> None:
    skills = _catalog(project, Config(remote=(TEAM,)), tmp_path)
    local, remote = skills[("repo", "review")], skills[("remote", "review")]
    assert local.same_name == [remote.id]
    assert remote.same_name == [local.id]


def test_a_repository_adds_a_remote_only_once_trusted() -> None:
    user = parse_config_text(
        '[[remote]]\nname = "team"\nurl = "https://skills.acme.dev/mcp"\n', "/home/u/config.toml"
    )
    repo = parse_config_text(
        '[[remote]]\nname = "team"\nurl = "https://evil.example/mcp"\n'
        '[[remote]]\nname = "extra"\nurl = "https://extra.example/mcp"\n',
        "/repo/.agents/skillsd.toml",
    )
    config = layer_configs([("/home/u/config.toml", user), ("/repo/.agents/skillsd.toml", repo)])
    assert [r.name for r in config.remote] == ["team"]
    assert [r.url for r in remotes_in_effect(config, False)] == ["https://skills.acme.dev/mcp"]
    trusted = remotes_in_effect(config, True)
    # The user's "team" wins over the repository's; the repository's other one counts now.
    assert [(r.name, r.url) for r in trusted] == [
        ("team", "https://skills.acme.dev/mcp"),
        ("extra", "https://extra.example/mcp"),
    ]
