"""Host fields (docs/conformance.md) from the frontmatter and from agents/openai.yaml, through the
catalog."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillsd.core import limits
from skillsd.core.catalog.catalog_prompt import render_catalog, render_catalog_within
from skillsd.core.catalog.fs_catalog_build import build_catalog, refresh_catalog
from skillsd.core.skill.fs_openai_yaml import read_openai_yaml
from skillsd.core.skill.host_fields import FRONTMATTER_FIELDS, host_from_frontmatter
from skillsd.core.skill.validation import validate_fields
from skillsd_protocol import HostDependency, SkillMetadata
from tests.fixtures.host_project import copy_host_project, host_catalog


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_host_project(tmp_path)


def by_name(skills: list[SkillMetadata]) -> dict[str, SkillMetadata]:
    return {s.name: s for s in skills}


def codes(skill: SkillMetadata) -> list[tuple[str, str | None]]:
    return [(d.code, d.field) for d in skill.diagnostics]


def test_fixture_skills_carry_their_host_fields(project: Path) -> None:
    catalog = host_catalog(project)
    assert catalog.errors == []
    skills = by_name(catalog.skills)
    deploy, fix, notes, api = (
        skills["deploy"],
        skills["fix-issue"],
        skills["release-notes"],
        skills["api-conventions"],
    )
    assert (deploy.invocation.model, deploy.invocation.user) == (False, True)
    assert deploy.host is not None
    assert (deploy.host.argument_hint, deploy.host.context) == ("[staging|production]", "fork")
    assert fix.invocation.model and fix.invocation.user
    assert fix.host is not None
    assert fix.host.arguments == ["issue", "priority"]
    assert (fix.host.model, fix.host.effort) == ("sonnet", "high")
    assert (api.invocation.model, api.invocation.user) == (True, False)
    assert api.host is not None
    assert api.host.paths == ["src/api/**/*.py", "docs/api/*.md"]
    assert api.host.when_to_use == "When adding or changing HTTP handlers under src/api."
    # Every recognised frontmatter key is a `field.host` warning, kept verbatim.
    assert codes(api) == [
        ("field.host", "when_to_use"),
        ("field.host", "paths"),
        ("field.host", "user-invocable"),
    ]
    assert api.extra_fields == {
        "when_to_use": "When adding or changing HTTP handlers under src/api.",
        "paths": "src/api/**/*.py, docs/api/*.md",
        "user-invocable": "false",
    }
    # openai.yaml: UI fields, the implicit-invocation policy, dependencies; no frontmatter keys.
    assert notes.extra_fields is None
    assert (notes.invocation.model, notes.invocation.user) == (False, True)
    assert notes.host is not None
    assert notes.host.display_name == "Release Notes"
    assert notes.host.short_description == "Draft notes from merged PRs"
    assert notes.host.icon_small == "./assets/icon-small.svg"
    assert notes.host.icon_large is None  # leaves the skill dir: dropped with a warning
    assert notes.host.brand_color == "#2563EB"
    assert notes.host.default_prompt == (
        "Use $release-notes to draft the notes for the next release."
    )
    assert notes.host.dependencies == [
        HostDependency(
            type="mcp",
            value="github",
            description="GitHub MCP server",
            transport="streamable_http",
            url="https://api.githubcopilot.com/mcp/",
        )
    ]
    yaml_path = os.path.join(notes.dir, "agents", "openai.yaml")
    [warning] = notes.diagnostics
    assert (warning.code, warning.field, warning.path) == (
        "host.icon_outside",
        "interface.icon_large",
        yaml_path,
    )
    assert catalog.model_hidden == {deploy.id, notes.id}


def test_host_fields_keep_the_strict_verdict_and_unknown_fields_stay_unknown() -> None:
    raw = {
        "name": "demo",
        "description": "A demo.",
        "disable-model-invocation": "TRUE",
        "hooks": "x",
    }
    fields, diagnostics = validate_fields(raw, path="/s/demo/SKILL.md", dir_name="demo")
    assert fields is not None and fields.invocation.model is False
    assert [(d.severity, d.code, d.field) for d in diagnostics] == [
        ("warning", "field.host", "disable-model-invocation"),
        ("warning", "field.unknown", "hooks"),
    ]
    # No error in strict mode: the verdict is decided by warnings as skills-ref's is.
    assert all(d.severity == "warning" for d in diagnostics)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("disable-model-invocation", "true", (False, True)),
        ("disable-model-invocation", "False", (True, True)),
        ("user-invocable", "FALSE", (True, False)),
        ("user-invocable", "True", (True, True)),
    ],
)
def test_booleans_in_any_case(key: str, value: str, expected: tuple[bool, bool]) -> None:
    reading = host_from_frontmatter({key: value}, path="/s/x/SKILL.md")
    invocation = reading.invocation()
    assert (invocation.model, invocation.user) == expected
    assert reading.diagnostics == []


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("disable-model-invocation", "yes", "must be true or false, not 'yes'"),
        ("user-invocable", ["false"], "must be true or false, not a list"),
        ("argument-hint", {"a": "b"}, "must be a string, not a mapping"),
        ("arguments", {"a": "b"}, "must be a list of strings or a space-separated string"),
        ("arguments", "issue 2nd", "bad: '2nd'"),
        ("arguments", "a a", "repeated: a"),
        ("paths", [["nested"]], "must be a list of strings or a comma-separated string"),
        ("context", "thread", "must be one of fork, not 'thread'"),
        ("model", ["a"], "must be a string, not a list"),
    ],
)
def test_bad_values_warn_with_file_and_field_and_apply_the_default(
    key: str, value: object, why: str
) -> None:
    path = "/s/x/SKILL.md"
    reading = host_from_frontmatter({key: value}, path=path)
    [d] = reading.diagnostics
    assert (d.severity, d.code, d.field, d.path) == ("warning", "host.invalid", key, path)
    assert why in d.message and path in d.message and repr(key) in d.message
    invocation = reading.invocation()
    assert (invocation.model, invocation.user) == (True, True)
    assert reading.host() is None


def test_list_and_string_forms() -> None:
    reading = host_from_frontmatter(
        {"arguments": ["issue", " branch "], "paths": "a/*.py ,, b/**"}, path=None
    )
    host = reading.host()
    assert host is not None
    assert host.arguments == ["issue", "branch"]
    assert host.paths == ["a/*.py", "b/**"]
    assert set(FRONTMATTER_FIELDS) >= {"arguments", "paths", "when_to_use", "agent"}


def write_yaml(skill_dir: Path, text: str | bytes) -> Path:
    (skill_dir / "agents").mkdir(parents=True, exist_ok=True)
    path = skill_dir / "agents" / "openai.yaml"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


@pytest.mark.parametrize(
    ("text", "code", "why"),
    [
        ("interface: [unclosed\n", "openai_yaml.invalid", "invalid YAML"),
        ("- a\n- b\n", "openai_yaml.invalid", "must be a YAML mapping, not a list"),
        (b"\xff\xfe bad", "openai_yaml.invalid", "not valid UTF-8"),
        ("[" * 3000 + "]" * 3000, "openai_yaml.invalid", "nests deeper than"),
        ("policy: strict\n", "host.invalid", "field 'policy' must be a mapping"),
        (
            "policy:\n  allow_implicit_invocation: maybe\n",
            "host.invalid",
            "must be true or false, not 'maybe'",
        ),
        ("interface:\n  display_name: 12\n", "host.invalid", "must be a string, not a int"),
        (
            "interface:\n  icon_small: /etc/passwd\n",
            "host.icon_outside",
            "must be relative to the skill directory",
        ),
        ("dependencies:\n  tools:\n    - type: mcp\n", "host.invalid", "needs both 'type'"),
        ("dependencies:\n  tools: github\n", "host.invalid", "must be a list of tool mappings"),
    ],
)
def test_bad_openai_yaml_is_a_warning_naming_the_file(
    tmp_path: Path, text: str | bytes, code: str, why: str
) -> None:
    path = write_yaml(tmp_path, text)
    reading = read_openai_yaml(os.fspath(tmp_path))
    [d] = reading.diagnostics
    assert (d.severity, d.code, d.path) == ("warning", code, os.fspath(path))
    assert why in d.message and os.fspath(path) in d.message
    assert reading.model is None and reading.values == {}


def test_openai_yaml_booleans_and_limits(tmp_path: Path) -> None:
    write_yaml(tmp_path, "policy:\n  allow_implicit_invocation: 'False'\n")
    assert read_openai_yaml(os.fspath(tmp_path)).model is False
    write_yaml(tmp_path, "policy:\n  allow_implicit_invocation: true\n")
    assert read_openai_yaml(os.fspath(tmp_path)).model is True
    write_yaml(tmp_path, "")  # an empty file says nothing
    assert read_openai_yaml(os.fspath(tmp_path)).diagnostics == []
    at_limit = "# " + "x" * (limits.MAX_OPENAI_YAML_BYTES - 3) + "\n"
    write_yaml(tmp_path, at_limit)
    assert read_openai_yaml(os.fspath(tmp_path)).diagnostics == []
    write_yaml(tmp_path, at_limit + "\n")
    [d] = read_openai_yaml(os.fspath(tmp_path)).diagnostics
    assert d.code == "openai_yaml.too_large"


def test_openai_yaml_must_be_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    os.mkfifo(tmp_path / "agents" / "openai.yaml")
    started = time.monotonic()
    [d] = read_openai_yaml(os.fspath(tmp_path)).diagnostics
    assert time.monotonic() - started < 2  # never blocks on the FIFO
    assert d.code == "openai_yaml.unreadable" and "not a regular file" in d.message


def test_icon_symlink_escaping_the_skill_dir_is_dropped(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (tmp_path / "secret.png").write_bytes(b"x")
    (skill / "icon.png").symlink_to(tmp_path / "secret.png")
    write_yaml(skill, "interface:\n  icon_small: icon.png\n  icon_large: ./inside.png\n")
    reading = read_openai_yaml(os.fspath(skill))
    assert reading.values == {"icon_large": "./inside.png"}
    [d] = reading.diagnostics
    assert (d.code, d.field) == ("host.icon_outside", "interface.icon_small")


def test_frontmatter_and_openai_yaml_together(project: Path) -> None:
    skill_dir = project / ".claude" / "skills" / "fix-issue"
    write_yaml(skill_dir, "interface:\n  display_name: Fix Issue\n")
    fix = by_name(host_catalog(project).skills)["fix-issue"]
    assert fix.host is not None
    assert (fix.host.display_name, fix.host.arguments) == ("Fix Issue", ["issue", "priority"])
    assert fix.invocation.model is True


def test_an_openai_yaml_edit_re_parses_its_skill(project: Path) -> None:
    catalog = host_catalog(project)
    notes = by_name(catalog.skills)["release-notes"]
    yaml_path = Path(notes.dir) / "agents" / "openai.yaml"
    text = yaml_path.read_text().replace("allow_implicit_invocation: false", "{}")
    yaml_path.write_text(text.replace('"Release Notes"', '"Notes"'))
    refreshed = refresh_catalog(catalog, [os.fspath(yaml_path)])
    after = by_name(refreshed.skills)["release-notes"]
    assert after.host is not None and after.host.display_name == "Notes"
    assert after.invocation.model is True
    assert refreshed.stats.parsed == 1
    assert refreshed.generation == catalog.generation + 1
    assert notes.id not in refreshed.model_hidden
    # Creating the file where there was none (agents/ already there or not) counts too.
    api_dir = project / ".claude" / "skills" / "api-conventions"
    created = write_yaml(api_dir, "interface:\n  display_name: API\n")
    again = refresh_catalog(refreshed, [os.fspath(created)])
    api = by_name(again.skills)["api-conventions"]
    assert api.host is not None and api.host.display_name == "API"
    # A full rebuild with reuse re-parses nothing when nothing changed.
    rebuilt = build_catalog(again.plan, again.config, previous=again)
    assert rebuilt.stats.parsed == 0 and rebuilt.generation == again.generation


def test_the_model_does_not_see_user_only_skills(project: Path) -> None:
    catalog = host_catalog(project)
    prompt = render_catalog(catalog.skills)
    assert prompt.total == 2  # fix-issue and api-conventions
    assert "deploy" not in prompt.text and "release-notes" not in prompt.text
    # whenToUse is appended to the description where the model reads it.
    assert (
        "REST API design conventions for this service. When adding or changing HTTP handlers"
        in prompt.text
    )
    within = render_catalog_within(catalog.skills, format="markdown", max_bytes=None)
    text = within.text
    assert "fix-issue" in text and "deploy" not in text and "release-notes" not in text
    assert within.omitted == []
