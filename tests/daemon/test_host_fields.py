"""Host fields (docs/conformance.md) through a real ``skillsd serve``: what the user and the model
each see, and an ``agents/openai.yaml`` edit announced by ``skills.changed``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.host_project import copy_host_project
from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env

pytestmark = pytest.mark.process


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
    return copy_host_project(tmp_path)


@pytest.fixture
def client(project: Path) -> Iterator[Client]:
    tmp = project.parent
    daemon = StdioDaemon(environ=daemon_env({"tmp": tmp, "home": tmp / "home"}))
    try:
        yield Client(daemon, project)
    finally:
        daemon.kill()


def listed(client: Client) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in client.ok("skills.list")["skills"]}


def test_list_carries_invocation_always_and_host_keys_only_when_present(client: Client) -> None:
    skills = listed(client)
    assert {name: s["invocation"] for name, s in skills.items()} == {
        "api-conventions": {"model": True, "user": False},
        "deploy": {"model": False, "user": True},
        "fix-issue": {"model": True, "user": True},
        "release-notes": {"model": False, "user": True},
    }
    assert skills["deploy"]["host"] == {"argumentHint": "[staging|production]", "context": "fork"}
    assert skills["api-conventions"]["host"] == {
        "whenToUse": "When adding or changing HTTP handlers under src/api.",
        "paths": ["src/api/**/*.py", "docs/api/*.md"],
    }
    notes = skills["release-notes"]
    assert notes["host"]["displayName"] == "Release Notes"
    assert "iconLarge" not in notes["host"]
    assert notes["host"]["dependencies"][0]["value"] == "github"
    assert [d["code"] for d in notes["diagnostics"]] == ["host.icon_outside"]
    assert {d["code"] for d in skills["deploy"]["diagnostics"]} == {"field.host"}


def test_model_and_user_visibility_matrix(client: Client) -> None:
    # The model's views: prompt, tools.call skill_search / skills_list / skill_load.
    prompt = client.ok("skills.prompt")
    assert prompt["total"] == 2
    assert "fix-issue" in prompt["text"] and "api-conventions" in prompt["text"]
    assert "deploy" not in prompt["text"] and "release-notes" not in prompt["text"]
    assert "When adding or changing HTTP handlers" in prompt["text"]

    found = client.ok("tools.call", name="skill_search", arguments={"query": "deploy release"})
    assert found["isError"] is False
    assert "deploy" not in found["content"] and "release-notes" not in found["content"]
    for query in ("deploy", "release-notes"):
        hidden = client.ok("tools.call", name="skill_search", arguments={"query": query})
        assert "No skills match" in hidden["content"]
    everything = client.ok("tools.call", name="skills_list", arguments={})
    assert "fix-issue" in everything["content"] and "deploy" not in everything["content"]

    refused = client.ok("tools.call", name="skill_load", arguments={"name": "deploy"})
    assert refused["isError"] is True
    assert "only be invoked by the user" in refused["content"]
    assert "/deploy" in refused["content"]
    assert "permission" not in refused
    loaded = client.ok("tools.call", name="skill_load", arguments={"name": "api-conventions"})
    assert loaded["isError"] is False and "problem+json" in loaded["content"]

    # The user's views: list, search and mentions keep every skill.
    results = client.ok("skills.search", query="deploy")["results"]
    assert results[0]["skill"]["name"] == "deploy"
    assert results[0]["reason"] == "exact_name"
    mentions = client.ok("skills.mentions", text="run $deploy then $release-notes")
    assert [m["skill"]["name"] for m in mentions["mentions"]] == ["deploy", "release-notes"]


def test_an_openai_yaml_edit_is_a_change_of_its_skill(client: Client, project: Path) -> None:
    before = listed(client)["release-notes"]
    assert before["invocation"]["model"] is False
    yaml_path = project / ".agents" / "skills" / "release-notes" / "agents" / "openai.yaml"
    text = yaml_path.read_text().replace("allow_implicit_invocation: false", "{}")
    staged = yaml_path.with_name(".openai.yaml.tmp")
    staged.write_text(text.replace('"Release Notes"', '"Notes"'))
    os.replace(staged, yaml_path)  # an editor's atomic save
    note = client.wait_note("skills.changed")["params"]
    assert note["changed"] == [before["id"]] and note["added"] == note["removed"] == []
    after = listed(client)["release-notes"]
    assert after["invocation"] == {"model": True, "user": True}
    assert after["host"]["displayName"] == "Notes"
    # Now visible to the model.
    assert "release-notes" in client.ok("skills.prompt")["text"]
    # Removing the file is a change too.
    yaml_path.unlink()
    note = client.wait_note("skills.changed")["params"]
    assert note["changed"] == [before["id"]]
    assert "host" not in listed(client)["release-notes"]
