"""Agent definitions: where they are found, how they parse, skill references, rendering."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from skillsd.core import limits
from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.fs_personas import (
    ResolvedSkill,
    agent_dirs,
    check_references,
    discover_agents,
    find_agent,
    read_agent_file,
    render_agent,
    resolve_agent_skills,
)
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import DEFAULT_CONFIG, Config, DiscoveryConfig
from skillsd.core.skill.fs_resources import list_skill_files, read_skill_file_content
from skillsd_protocol.messages import AgentDefinition


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, name: str, body: str = "Body.\n") -> Path:
    return write(root / name / "SKILL.md", f"---\nname: {name}\ndescription: {name} d\n---\n{body}")


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "pkg" / "web"
    sub.mkdir(parents=True)
    home = tmp_path / "home"
    return {"repo": repo, "sub": sub, "home": home, "tmp": tmp_path}


def dirs_for(p: dict[str, Path], config: Config = DEFAULT_CONFIG) -> list[str]:
    return agent_dirs(os.fspath(p["sub"]), config, home=os.fspath(p["home"]), env={})


def test_dirs_are_the_repo_chain_nearest_first_then_home(project: dict[str, Path]) -> None:
    expected = [
        project["sub"] / ".agents" / "agents",
        project["repo"] / "pkg" / ".agents" / "agents",
        project["repo"] / ".agents" / "agents",
        project["home"] / ".agents" / "agents",
    ]
    assert dirs_for(project) == [os.fspath(p) for p in expected]
    # discovery.auto chooses skill roots only; agents keep their places.
    no_auto = Config(discovery=DiscoveryConfig(auto=False))
    assert dirs_for(project, no_auto) == [os.fspath(p) for p in expected]
    # Markers decide where the chain stops, as for skills.
    only_hg = Config(discovery=DiscoveryConfig(markers=(".hg",)))
    assert dirs_for(project, only_hg)[0] == os.fspath(expected[0])
    assert len(dirs_for(project, only_hg)) == 2  # no marker found: the chain is cwd alone


def test_parses_lists_and_strings_and_keeps_the_body(tmp_path: Path) -> None:
    listed = write(
        tmp_path / "a.md",
        "---\nname: reviewer\ndescription: Reviews.\nmodel: sonnet\ntools: [Read, Grep]\n"
        "skills: [code-review, changelog-check]\ncolor: blue\n---\n\nYou review.\n",
    )
    agent = read_agent_file(os.fspath(listed))
    assert agent == AgentDefinition(
        name="reviewer",
        path=os.fspath(listed),
        skills=["code-review", "changelog-check"],
        description="Reviews.",
        model="sonnet",
        tools=["Read", "Grep"],
        body="\nYou review.\n",
    )
    strings = write(
        tmp_path / "b.md",
        "---\r\nname: ops\r\ntools: Read, Bash(git log:*)\r\nskills: deploy, deploy rollback\r\n"
        "---\r\nRun ops.\r\n",
    )
    agent = read_agent_file(os.fspath(strings))
    assert agent.tools == ["Read", "Bash(git log:*)"]
    assert agent.skills == ["deploy", "rollback"]  # duplicates dropped, order kept
    assert agent.body == "Run ops.\n" and agent.description is None
    bare = read_agent_file(os.fspath(write(tmp_path / "c.md", "---\nname: bare\n---\n")))
    assert bare.skills == [] and bare.tools is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("no frontmatter\n", "must start with a '---' line"),
        ("---\nname: x\n", "not closed"),
        ("---\ndescription: d\n---\n", "field 'name' is required"),
        ("---\nname: [a]\n---\n", "field 'name' is required"),
        ("---\nname: x\nskills:\n  k: v\n---\n", "field 'skills' must be a list"),
        ("---\nname: x\ntools: [[a]]\n---\n", "field 'tools' must be a list"),
        ("---\nname: x\nmodel: [a]\n---\n", "field 'model' must be a string"),
        ("---\nname: x\nname: y\n---\n", "duplicate"),
    ],
)
def test_bad_files_are_errors_naming_the_problem(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path / ".agents" / "agents" / "bad.md", text)
    agents, errors = discover_agents([os.fspath(path.parent)])
    assert agents == []
    assert [e.path for e in errors] == [os.fspath(path)]
    assert fragment in errors[0].message
    assert "SKILL.md" not in errors[0].message


def test_oversized_file_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "big.md", "---\nname: big\n---\n" + "x" * limits.MAX_AGENT_FILE_BYTES)
    _, errors = discover_agents([os.fspath(tmp_path)])
    assert errors[0].path == os.fspath(path) and "larger than" in errors[0].message


def test_nearest_definition_wins_and_same_dir_duplicates_are_errors(
    project: dict[str, Path],
) -> None:
    near = project["sub"] / ".agents" / "agents"
    far = project["repo"] / ".agents" / "agents"
    user = project["home"] / ".agents" / "agents"
    write(near / "r.md", "---\nname: reviewer\n---\nnear\n")
    write(far / "r.md", "---\nname: reviewer\n---\nfar\n")
    write(far / "other.md", "---\nname: planner\n---\nplan\n")
    write(user / "a.md", "---\nname: helper\n---\none\n")
    write(user / "b.md", "---\nname: helper\n---\ntwo\n")
    write(user / "notes.txt", "not an agent")
    (user / "dir.md").mkdir()
    agents, errors = discover_agents(dirs_for(project))
    assert [(a.name, a.body) for a in agents] == [
        ("reviewer", "near\n"),
        ("planner", "plan\n"),
        ("helper", "one\n"),
    ]
    assert [(e.path, "already defined by" in e.message) for e in errors] == [
        (os.fspath(user / "b.md"), True)
    ]


def test_find_agent_suggests_close_names() -> None:
    agents = [AgentDefinition(name="reviewer", path="/a.md", skills=[])]
    assert find_agent(agents, "reviewer") is agents[0]
    with pytest.raises(SkillsdError) as info:
        find_agent(agents, "reveiwer")
    assert info.value.kind == "agent_not_found"
    assert info.value.data.suggestions == ["reviewer"]


def catalog_of(p: dict[str, Path]) -> Catalog:
    skills = p["repo"] / ".agents" / "skills"
    skill(skills, "code-review", "Review the diff.\nSee references/checklist.md.\n")
    write(skills / "code-review" / "references" / "checklist.md", "- tests\n")
    skill(skills, "changelog-check", "Check CHANGELOG.md.\n")
    skill(skills / "a", "dup")
    skill(skills / "b", "dup")
    plan = compute_roots(os.fspath(p["sub"]), home=os.fspath(p["home"]), env={})
    return build_catalog(plan)


def test_skill_references_resolve_or_name_agent_and_skill(project: dict[str, Path]) -> None:
    catalog = catalog_of(project)

    def resolve(name: str):  # type: ignore[no-untyped-def]
        return catalog.resolve(name=name)

    good = AgentDefinition(name="reviewer", path="/r.md", skills=["code-review", "changelog-check"])
    assert [s.name for s in resolve_agent_skills(good, resolve)] == [
        "code-review",
        "changelog-check",
    ]
    typo = AgentDefinition(name="reviewer", path="/r.md", skills=["code-reveiw"])
    with pytest.raises(SkillsdError) as info:
        resolve_agent_skills(typo, resolve)
    assert info.value.kind == "unknown_skill_reference"
    assert "'reviewer'" in info.value.message and "'code-reveiw'" in info.value.message
    assert info.value.data.agent == "reviewer" and info.value.data.skill == "code-reveiw"
    assert info.value.data.suggestions == ["code-review"]
    shared = AgentDefinition(name="x", path="/x.md", skills=["dup"])
    with pytest.raises(SkillsdError) as info:
        resolve_agent_skills(shared, resolve)
    assert info.value.kind == "ambiguous_skill" and len(info.value.data.candidates) == 2
    # A disabled skill is not there for agents either.
    off = catalog.with_disabled({catalog.resolve(name="changelog-check").id})
    with pytest.raises(SkillsdError, match="disabled") as info:
        resolve_agent_skills(good, lambda n: off.resolve(name=n))
    assert info.value.kind == "unknown_skill_reference"
    errors = check_references([good, typo], resolve)
    assert [e.path for e in errors] == ["/r.md"] and "code-reveiw" in errors[0].message


def test_render_inlines_instructions_and_lists_resources(project: dict[str, Path]) -> None:
    catalog = catalog_of(project)
    agent = AgentDefinition(
        name="reviewer",
        path="/r.md",
        skills=["code-review", "changelog-check"],
        body="\nYou review pull requests.\n",
    )
    skills = resolve_agent_skills(agent, lambda n: catalog.resolve(name=n))
    resolved = [
        ResolvedSkill(s, read_skill_file_content(s.path).body, list_skill_files(s.dir))
        for s in skills
    ]
    text = render_agent(agent, resolved)
    assert text.startswith("You review pull requests.\n\n# Skills\n")
    review, changelog = text.index("## code-review"), text.index("## changelog-check")
    assert review < changelog
    section = text[review:changelog]
    assert "Review the diff.\nSee references/checklist.md." in section
    assert f"Skill directory: {skills[0].dir}" in section
    assert "- references/checklist.md" in section
    assert "Check CHANGELOG.md." in text[changelog:] and "Resources" not in text[changelog:]
    no_skills = msgspec.structs.replace(agent, skills=[])
    assert render_agent(no_skills, []) == "You review pull requests.\n"
