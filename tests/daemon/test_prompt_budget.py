"""The context budget through a real ``skillsd serve``: token budgets, the description cap with
``whenToUse``, ``paths`` and active files, relevance to a query, byte-identical text and
``omitted``."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process

TOPICS = {
    "pdf-forms": "Fill and flatten PDF forms and list their fields.",
    "k8s-deploy": "Deploy services to a Kubernetes cluster with rolling updates.",
    "sql-tuning": "Tune slow SQL queries with indexes and query plans.",
    "release-notes": "Draft release notes from merged pull requests.",
    "css-grid": "Lay out pages with CSS grid and responsive breakpoints.",
    "git-bisect": "Find the commit that introduced a bug with git bisect.",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "config.toml").write_text("")
    skills = project / ".agents" / "skills"
    for name, description in TOPICS.items():
        write_skill(skills, name, description + " " + "More detail about it. " * 6)
    write_skill(
        skills,
        "api-conventions",
        "REST API conventions.",
        extra="when_to_use: When adding HTTP handlers.\npaths: src/api/**/*.py\n",
    )
    return project


@pytest.fixture
def client(project: Path) -> Iterator[Client]:
    tree = {"tmp": project.parent, "home": project.parent / "home"}
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        yield Client(daemon, project)
    finally:
        daemon.kill()


def prompt(client: Client, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = client.ok("skills.prompt", **params)
    return result


def described(text: str) -> list[str]:
    """Names whose entry carries a description, in the order printed."""
    names = []
    for block in text.split("<skill>")[1:]:
        name = block.split("<name>")[1].split("</name>")[0]
        if "<description>" in block:
            names.append(name)
    return names


def printed(text: str) -> list[str]:
    return [b.split("<name>")[1].split("</name>")[0] for b in text.split("<skill>")[1:]]


def test_tokens_and_context_window_percent_are_the_same_budget(client: Client) -> None:
    by_tokens = prompt(client, budget={"tokens": 300})
    by_window = prompt(client, budget={"contextWindow": 15000, "percent": 2})
    assert by_tokens == by_window
    assert by_tokens["tokens"] == math.ceil(by_tokens["bytes"] / 4) <= 300
    assert by_tokens["bytes"] <= 1200
    assert by_tokens["truncated"] is True
    # The text names what was left out and where to look.
    assert f"{len(by_tokens['omitted'])} more skills are not listed here" in by_tokens["text"]
    assert "skill_search" in by_tokens["text"]
    # A budget that fits everything: nothing omitted, no notice.
    roomy = prompt(client, budget={"tokens": 100_000})
    assert roomy["omitted"] == [] and roomy["truncated"] is False
    assert "skill_search" not in roomy["text"]
    # Without the new parameters, the result is as before.
    plain = prompt(client)
    assert "tokens" not in plain and "omitted" not in plain


def test_the_description_cap_includes_when_to_use(client: Client) -> None:
    text = prompt(client, maxDescriptionChars=1536)["text"]
    assert "REST API conventions. When adding HTTP handlers." in text
    capped = prompt(client, maxDescriptionChars=30)["text"]
    for block in capped.split("<description>")[1:]:
        assert len(block.split("</description>")[0]) <= 30
    assert "REST API conventions. When ad\u2026</description>" in capped  # 30 characters


def test_paths_filter_only_with_active_files(client: Client) -> None:
    assert "api-conventions" in printed(prompt(client, maxDescriptionChars=200)["text"])
    away = prompt(client, activeFiles=["README.md"])
    assert "api-conventions" not in printed(away["text"])
    assert "api-conventions" in away["omitted"]
    near = prompt(client, activeFiles=[os.path.join(client.cwd, "src/api/v1/users.py")])
    assert "api-conventions" in printed(near["text"])
    assert near["omitted"] == []
    # A matched skill comes first when the budget is tight.
    tight = prompt(client, activeFiles=["src/api/v1/users.py"], budget={"tokens": 160})
    assert described(tight["text"])[:1] == ["api-conventions"]


def test_relevance_chooses_who_keeps_a_description(client: Client) -> None:
    budget = {"tokens": 330}
    sql = prompt(client, budget=budget, query="slow SQL query plans")
    k8s = prompt(client, budget=budget, query="kubernetes rolling deploy")
    assert "sql-tuning" in described(sql["text"]) and "sql-tuning" not in sql["omitted"]
    assert "k8s-deploy" in described(k8s["text"]) and "k8s-deploy" not in k8s["omitted"]
    assert described(sql["text"]) != described(k8s["text"])
    # Whatever is kept is printed in catalog order.
    catalog = [s["name"] for s in client.ok("skills.list")["skills"]]
    for result in (sql, k8s):
        shown = printed(result["text"])
        assert shown == [n for n in catalog if n in shown]
        # omitted is exact: every model-visible skill not printed, in catalog order.
        assert result["omitted"] == [n for n in catalog if n not in shown]
        assert result["shown"] == len(shown) and result["total"] == len(catalog)


def test_an_unchanged_catalog_renders_byte_identical_text(client: Client) -> None:
    params = {"budget": {"tokens": 330}, "query": "release notes from pull requests"}
    first = prompt(client, **params)
    client.ok("skills.search", query="css")  # other work in between changes nothing
    prompt(client, budget={"tokens": 50}, query="git")
    again = prompt(client, **params)
    assert again["text"].encode() == first["text"].encode()
    assert again == first


def test_the_models_skills_list_uses_the_same_budget(project: Path) -> None:
    """One implementation: `tools.call skills_list` is the budgeted catalog within the config's
    prompt bytes, telling the model to search for what did not fit."""
    tree = {"tmp": project.parent, "home": project.parent / "home"}
    (project.parent / "config.toml").write_text("[prompt]\nmaxBytes = 700\n")
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, project)
        listed = client.ok("tools.call", name="skills_list", arguments={})
        text = listed["content"]
        assert len(text.encode()) <= 700
        assert "more skills are not listed here" in text and "skill_search" in text
        assert text.startswith("## Available skills")
    finally:
        daemon.kill()
