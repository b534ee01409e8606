"""``skills.suggest``, ``skillsd suggest``, ``skillsd hook`` and ``skillsd eval`` (docs/hooks.md)
on real trees: the CLI and the hook as a user's agent runs them, the method over JSON-RPC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.suggest import CANDIDATE_THRESHOLD, DEFAULT_THRESHOLD
from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.env import example_user_env
from tests.support.hooks import EXAMPLE, run_hook
from tests.support.skill_tree import write_skill

ROOT = Path(__file__).resolve().parents[1]


def test_suggest_ranks_activates_and_says_why(client: Client, tree: dict[str, Path]) -> None:
    result = client.ok("skills.suggest", prompt="please fill in the PDF form fields for me")
    first = result["suggestions"][0]
    assert first["skill"]["name"] == "pdf-forms" and first["activate"] is True
    assert 0.4 <= first["score"] <= 1 and first["loaded"] is False
    assert any(r.startswith("description: fill") for r in first["reasons"])
    assert result["threshold"] == DEFAULT_THRESHOLD
    assert result["candidateThreshold"] == CANDIDATE_THRESHOLD
    assert first["candidate"] is False  # a skill activates: no candidates
    # A request no skill covers activates nothing.
    unrelated = client.ok("skills.suggest", prompt="what is the capital of Australia")
    assert not any(s["activate"] for s in unrelated["suggestions"])
    # Naming a skill is enough; a skill the session loaded is reported, not activated again.
    client.ok("session.open", sessionId="chat")
    client.ok("skills.load", name="commit-message", sessionId="chat")
    named = client.ok("skills.suggest", prompt="use commit-message", sessionId="chat")
    hit = named["suggestions"][0]
    assert hit["skill"]["name"] == "commit-message" and hit["score"] >= 0.9
    assert hit["loaded"] is True and hit["activate"] is False
    assert client.err("skills.suggest", prompt="  ")["data"]["field"] == "prompt"


def test_active_files_lift_a_skill_whose_paths_match(client: Client, tree: dict[str, Path]) -> None:
    write_skill(
        tree["skills"], "sql-style", "House style for queries.", extra="paths: '**/*.sql'\n"
    )
    plain = client.ok("skills.suggest", prompt="tidy up the style of this query")
    with_file = client.ok(
        "skills.suggest", prompt="tidy up the style of this query", activeFiles=["db/report.sql"]
    )
    score = {s["skill"]["name"]: s["score"] for s in plain["suggestions"]}["sql-style"]
    lifted = {s["skill"]["name"]: s for s in with_file["suggestions"]}["sql-style"]
    assert lifted["score"] == pytest.approx(score + 0.15)
    assert "paths: **/*.sql matches db/report.sql" in lifted["reasons"]


@pytest.mark.process
def test_the_cli_prints_score_activation_and_reasons(tree: dict[str, Path]) -> None:
    out = run_tree_cli(tree, "suggest", "draft release notes from the merged PRs")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1. release-notes  ")
    assert "(activates)" in out.stdout.splitlines()[0]
    assert out.stdout.rstrip().endswith(
        f"threshold {DEFAULT_THRESHOLD:.2f} (config suggest.threshold); candidates from"
        f" {CANDIDATE_THRESHOLD:.2f} (suggest.candidateThreshold), one 0.15 ahead of the rest"
        " from 0.30"
    )


@pytest.mark.process
def test_the_hook_adds_context_only_when_a_skill_activates(hook_env: dict[str, str]) -> None:
    event = {
        "session_id": "abc",
        "cwd": str(EXAMPLE),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "draft the release notes for v2.1",
    }
    done = run_hook("claude-code", json.dumps(event), hook_env)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "- release-notes (" in output["additionalContext"]
    gemini = run_hook("gemini", json.dumps({**event, "hook_event_name": "BeforeAgent"}), hook_env)
    assert json.loads(gemini.stdout)["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    quiet = run_hook("codex", json.dumps({**event, "prompt": "what time is it in Tokyo"}), hook_env)
    assert quiet.returncode == 0 and quiet.stdout == ""
    # Nothing can fail the user's prompt: bad input is a line on stderr and exit 0.
    broken = run_hook("claude-code", "not json", hook_env)
    assert broken.returncode == 0 and broken.stdout == "" and "skillsd hook:" in broken.stderr


@pytest.mark.process
def test_eval_reports_precision_recall_and_the_rival_that_won(tmp_path: Path) -> None:
    env = example_user_env(tmp_path)
    ok = subprocess.run(
        [sys.executable, "-m", "skillsd", "eval"],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert (
        "release-notes: precision 1.00, recall 1.00 (with candidates 1.00) over 5 queries: ok"
        in ok.stdout
    )
    # A skill whose cases ask for what a rival covers better fails, naming the rival.
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    write_skill(skills, "deploy-docs", "Publish the documentation site.")
    write_skill(skills, "deploy-app", "Deploy the application to production servers.")
    (skills / "deploy-docs" / "evals").mkdir()
    cases = [
        {"query": "deploy the application to production", "should_trigger": True},
        {"query": "publish the documentation site", "should_trigger": True},
    ]
    (skills / "deploy-docs" / "evals" / "triggers.json").write_text(json.dumps(cases))
    failed = subprocess.run(
        [sys.executable, "-m", "skillsd", "eval", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1, failed.stderr
    (result,) = json.loads(failed.stdout)
    assert (result["name"], result["recall"], result["passed"]) == ("deploy-docs", 0.5, False)
    (miss,) = result["misfires"]
    assert miss["winner"] == "deploy-app" and miss["shouldTrigger"] is True


@pytest.mark.process
def test_a_malformed_triggers_file_names_the_file_and_entry(tree: dict[str, Path]) -> None:
    evals = tree["pdf"] / "evals"
    evals.mkdir()
    (evals / "triggers.json").write_text('[{"query": "x"}]')
    out = run_tree_cli(tree, "eval")
    assert out.returncode == 2
    assert "evals/triggers.json: entry 0 needs a non-empty `query` and a boolean" in out.stderr


def test_the_semantic_stage_lifts_a_request_that_shares_no_word(
    client: Client, tree: dict[str, Path]
) -> None:
    """By default the semantic stage runs: a paraphrase the skill's words do not cover still
    ranks it, saying why ("meaning"); unrelated requests stay quiet."""
    write_skill(tree["skills"], "deploy-site", "Deploy applications and websites to production.")
    result = client.ok("skills.suggest", prompt="ship my web app live")
    names = [s["skill"]["name"] for s in result["suggestions"]]
    assert "deploy-site" in names
    hit = result["suggestions"][names.index("deploy-site")]
    assert any(r.startswith("meaning: ") for r in hit["reasons"])
    quiet = client.ok("skills.suggest", prompt="what is the capital of Australia")
    assert not any(s["activate"] or s["candidate"] for s in quiet["suggestions"])


@pytest.mark.process
def test_the_semantic_stage_can_be_turned_off(tree: dict[str, Path]) -> None:
    """``suggest.semantic = false``: the same request is matched on its words alone, and
    ``doctor`` says the stage is off."""
    write_skill(tree["skills"], "deploy-site", "Deploy applications and websites to production.")
    request = "ship my web app live"
    on = json.loads(run_tree_cli(tree, "suggest", "--json", request).stdout)
    (tree["tmp"] / "config.toml").write_text("[suggest]\nsemantic = false\n")
    off = json.loads(run_tree_cli(tree, "suggest", "--json", request).stdout)

    def reasons(result: dict[str, Any]) -> list[str]:
        hits = [s for s in result["suggestions"] if s["skill"]["name"] == "deploy-site"]
        return [r for s in hits for r in s["reasons"]]

    assert any(r.startswith("meaning: ") for r in reasons(on))
    assert not any(r.startswith("meaning: ") for r in reasons(off))
    doctor = json.loads(run_tree_cli(tree, "doctor", "--json").stdout)
    assert doctor["suggestStages"] == ["lexical", "semantic: off (suggest.semantic = false)"]


def test_the_fusion_adds_meaning_above_its_floor_only() -> None:
    from skillsd.core.catalog.suggest import SEMANTIC_FLOOR, SEMANTIC_WEIGHT, SuggestIndex
    from skillsd_protocol import ResourceCounts, SkillMetadata

    def skill(name: str, description: str) -> SkillMetadata:
        return SkillMetadata(
            id=name,
            name=name,
            description=description,
            path=f"/s/{name}/SKILL.md",
            dir=f"/s/{name}",
            scope="user",
            root="/s",
            mtime_ms=0,
            size=1,
            enabled=True,
            resources=ResourceCounts(scripts=0, references=0, assets=0, other=0),
            diagnostics=[],
        )

    index = SuggestIndex([skill("alpha", "Reads ledgers."), skill("beta", "Plots charts.")])
    ranked = index.rank("something unrelated", similarity=[SEMANTIC_FLOOR + 0.5, SEMANTIC_FLOOR])
    assert [r.skill.name for r in ranked] == ["alpha"]
    assert ranked[0].score == pytest.approx(SEMANTIC_WEIGHT * 0.5, abs=1e-4)
    assert ranked[0].matched == {"meaning": [f"{SEMANTIC_FLOOR + 0.5:.2f}"]}
