"""Every agent's view of a catalog, plugin skills and identical copies (docs/agents.md), on real
file trees: the agents' own folder layouts, registries, settings and manifests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.errors import SkillsdError
from skillsd.runtime.catalog_requests import listing, render_prompt, slash_commands
from skillsd.runtime.invocation_requests import invocation_of
from skillsd.runtime.request_view import RequestView
from skillsd_protocol.messages import CommandsParams, InvokeParams, ListParams, PromptParams


def skill(
    folder: Path, name: str, description: str = "Does things.", body: str = "Body.\n"
) -> Path:
    folder = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8"
    )
    return folder


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    return {"project": project, "home": tmp_path / "home", "sub": project / "pkg"}


def catalog(place: dict[str, Path], cwd: Path | None = None, **env: str) -> Catalog:
    where = cwd or place["project"]
    where.mkdir(parents=True, exist_ok=True)
    plan = compute_roots(str(where), home=str(place["home"]), env=env)
    return build_catalog(plan)


def names(skills: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return sorted((s.qualified_name or s.name, s.scope) for s in skills)


def test_each_agent_sees_its_folders_and_decides_a_clash_its_way(place: dict[str, Path]) -> None:
    project, home = place["project"], place["home"]
    skill(project / ".claude/skills", "deploy", "The project's deploy.")
    skill(home / ".claude/skills", "deploy", "My own deploy.")
    skill(project / ".agents/skills", "lint", "The project's lint.")
    skill(home / ".agents/skills", "lint", "My own lint.")
    skill(project / ".gemini/skills", "only-gemini")
    cat = catalog(place)
    # Claude Code shows its model one skill of a name, the personal one; it does not read
    # .agents/skills at all.
    assert names(cat.seen_by("claude-code")) == [("deploy", "user")]
    # opencode keeps one: the project's.
    assert [s.scope for s in cat.seen_by("opencode") if s.name == "deploy"] == ["repo"]
    # Codex lists same-named skills from every scope.
    assert names(cat.seen_by("codex")) == [("lint", "repo"), ("lint", "user")]
    # Gemini CLI: workspace beats user; its own folder counts.
    assert names(cat.seen_by("gemini-cli")) == [("lint", "repo"), ("only-gemini", "repo")]
    # An unknown agent is a bad param that names the close ones.
    with pytest.raises(SkillsdError, match="did you mean claude-code"):
        cat.seen_by("claude-cod")


def test_an_agent_that_reads_the_cwd_only_misses_the_parents_skills(
    place: dict[str, Path],
) -> None:
    skill(place["project"] / ".agents/skills", "root-skill")
    cat = catalog(place, place["sub"])
    assert names(cat.seen_by("codex")) == [("root-skill", "repo")]  # walks up
    assert cat.seen_by("gemini-cli") == []  # reads <cwd>/.agents/skills only


def test_list_and_prompt_give_one_agents_view(place: dict[str, Path]) -> None:
    skill(place["project"] / ".claude/skills", "claude-thing", "For Claude.")
    skill(place["project"] / ".gemini/skills", "gemini-thing", "For Gemini.")
    view = RequestView(catalog(place))
    listed = listing(view, ListParams(agent="gemini-cli"))
    assert [s.name for s in listed.skills] == ["gemini-thing"]
    # Copilot reads .claude/skills too, but not .gemini/skills.
    listed = listing(view, ListParams(agent="copilot"))
    assert [s.name for s in listed.skills] == ["claude-thing"]
    prompt = render_prompt(view, PromptParams(agent="claude-code", format="markdown"))
    assert "claude-thing" in prompt.text and "gemini-thing" not in prompt.text


def _claude_plugin(place: dict[str, Path], *, enabled: bool | None) -> Path:
    home = place["home"]
    install = home / ".claude/plugins/cache/acme-market/tools/1.2.0"
    skill(install / "skills", "fmt", "Formats code.")
    (install / ".claude-plugin").mkdir(parents=True)
    (install / ".claude-plugin/plugin.json").write_text('{"name": "tools", "version": "1.2.0"}')
    registry = {"version": 2, "plugins": {"tools@acme-market": [{"installPath": str(install)}]}}
    (home / ".claude/plugins/installed_plugins.json").write_text(json.dumps(registry))
    if enabled is not None:
        settings = {"enabledPlugins": {"tools@acme-market": enabled}}
        (home / ".claude/settings.json").write_text(json.dumps(settings))
    return install


def test_an_enabled_claude_code_plugin_brings_its_namespaced_skills(
    place: dict[str, Path],
) -> None:
    _claude_plugin(place, enabled=True)
    skill(place["home"] / ".claude/skills", "fmt", "My own fmt.")
    cat = catalog(place)
    plugin_skill = next(s for s in cat.skills if s.scope == "plugin")
    assert plugin_skill.qualified_name == "tools:fmt" and plugin_skill.agents == ["claude-code"]
    assert plugin_skill.plugin is not None
    assert (plugin_skill.plugin.name, plugin_skill.plugin.marketplace) == ("tools", "acme-market")
    assert (plugin_skill.plugin.version, plugin_skill.plugin.agent) == ("1.2.0", "claude-code")
    # Namespaced: no clash with the user's own fmt, and both are what Claude Code sees.
    assert plugin_skill.same_name is None
    assert names(cat.seen_by("claude-code")) == [("fmt", "user"), ("tools:fmt", "plugin")]
    assert names(cat.seen_by("copilot")) == []
    assert cat.resolve(name="tools:fmt").id == plugin_skill.id
    # Its slash command is namespaced, and invoking it by that name runs it.
    view = RequestView(cat)
    commands = [c.name for c in slash_commands(view, CommandsParams()).commands]
    assert "tools:fmt" in commands and "fmt" in commands
    invoked = invocation_of(view, InvokeParams(command="/tools:fmt"))
    assert invoked.source.id == plugin_skill.id
    # The project's settings win over the user's: disabled there, it is gone.
    (place["project"] / ".claude").mkdir()
    (place["project"] / ".claude/settings.json").write_text(
        '{"enabledPlugins": {"tools@acme-market": false}}'
    )
    assert not [s for s in catalog(place).skills if s.scope == "plugin"]


def test_a_claude_code_plugin_not_enabled_is_left_out(place: dict[str, Path]) -> None:
    _claude_plugin(place, enabled=None)
    assert not [s for s in catalog(place).skills if s.scope == "plugin"]


def test_codex_copilot_gemini_and_open_plugins(place: dict[str, Path]) -> None:
    home = place["home"]
    codex = home / ".codex/plugins/cache/openai-curated/gmail/0.3.1"
    skill(codex / "skills", "inbox", "Reads mail.")
    (codex / ".codex-plugin").mkdir()
    (codex / ".codex-plugin/plugin.json").write_text('{"name": "gmail"}')
    (home / ".codex/config.toml").write_text('[plugins."gmail@openai-curated"]\nenabled = true\n')
    off = home / ".codex/plugins/cache/openai-curated/drive/1.0.0"
    skill(off / "skills", "files")
    copilot = home / ".copilot/installed-plugins/awesome/reviewer"
    skill(copilot / "skills", "review-pr")
    (copilot / "plugin.json").write_text('{"name": "reviewer"}')
    gemini = home / ".gemini/extensions/maps"
    skill(gemini / "skills", "directions")
    (gemini / "gemini-extension.json").write_text('{"name": "maps", "version": "2.0.0"}')
    neutral = home / ".agents/plugins/notes"
    skill(neutral / "skills", "jot")
    (neutral / "plugin.json").write_text(
        '{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "notes"}'
    )
    found = {
        (s.qualified_name or s.name): (s.plugin.agent if s.plugin else None, s.agents)
        for s in catalog(place).skills
        if s.scope == "plugin"
    }
    assert found == {
        "gmail:inbox": ("codex", ["codex"]),
        "reviewer:review-pr": ("copilot", ["copilot"]),
        "directions": ("gemini-cli", ["gemini-cli"]),  # Gemini CLI does not namespace
        "notes:jot": ("goose", ["goose"]),
    }


def test_a_manifest_path_leaving_the_plugin_is_ignored(place: dict[str, Path]) -> None:
    home = place["home"]
    outside = skill(home / "elsewhere", "secret-skill").parent
    plugin = home / ".agents/plugins/sneaky"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text(
        json.dumps({"name": "sneaky", "skills": ["../../elsewhere"]})
    )
    assert outside.is_dir()
    assert not [s for s in catalog(place).skills if s.scope == "plugin"]


def test_identical_copies_are_shown_once_in_prompts_and_commands(place: dict[str, Path]) -> None:
    project = place["project"]
    for folder in (".claude/skills", ".agents/skills"):
        skill(project / folder, "tidy", "Tidies imports.")
    cat = catalog(place)
    tidy = [s for s in cat.skills if s.name == "tidy"]
    assert len(tidy) == 2 and sum(s.copy_of is not None for s in tidy) == 1
    assert all(s.same_name is None for s in tidy)
    view = RequestView(cat)
    prompt = render_prompt(view, PromptParams(format="markdown"))
    assert (prompt.shown, prompt.total) == (1, 1)
    assert [c.name for c in slash_commands(view, CommandsParams()).commands].count("tidy") == 1
    # Each agent still sees the copy in its own folder.
    assert [s.name for s in cat.seen_by("claude-code")] == ["tidy"]


def test_agent_folder_variables_in_the_environment(place: dict[str, Path]) -> None:
    team = place["project"].parent / "team-skills"
    skill(team, "shared-review")
    cat = catalog(place, COPILOT_SKILLS_DIRS=os.fspath(team))
    (found,) = [s for s in cat.skills if s.name == "shared-review"]
    assert found.scope == "user" and found.agents == ["copilot"]
