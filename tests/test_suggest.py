"""``skills.suggest``, ``skillsd suggest``, ``skillsd hook`` and ``skillsd eval`` (docs/hooks.md)
on real trees: the CLI and the hook as a user's agent runs them, the method over JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemon.daemon_harness import daemon_pids, kill_pid
from tests.daemon.skill_tree import run_cli, write_skill
from tests.daemon.test_skill_methods import Client
from tests.test_embedding_doc import isolated_env

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "project"


def test_suggest_ranks_activates_and_says_why(client: Client, tree: dict[str, Path]) -> None:
    result = client.ok("skills.suggest", prompt="please fill in the PDF form fields for me")
    first = result["suggestions"][0]
    assert first["skill"]["name"] == "pdf-forms" and first["activate"] is True
    assert 0.4 <= first["score"] <= 1 and first["loaded"] is False
    assert any(r.startswith("description: fill") for r in first["reasons"])
    assert result["threshold"] == 0.5 and result["candidateThreshold"] == 0.36
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
    out = run_cli(tree, "suggest", "draft release notes from the merged PRs")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1. release-notes  ")
    assert "(activates)" in out.stdout.splitlines()[0]
    assert out.stdout.rstrip().endswith(
        "threshold 0.50 (config suggest.threshold); candidates from 0.36"
        " (suggest.candidateThreshold)"
    )


@pytest.fixture
def shared(tmp_path: Path) -> dict[str, str]:
    """The examples' environment with a short runtime dir for the shared daemon the hook
    starts (killed after)."""
    runtime = Path("/tmp") / f"sdh-{os.getpid()}-{tmp_path.name[-6:]}"
    runtime.mkdir(mode=0o700)
    env = {**isolated_env(tmp_path), "SKILLSD_RUNTIME_DIR": str(runtime)}
    yield env
    for pid in daemon_pids(runtime / "skillsd.sock"):
        kill_pid(pid)


def _hook(agent: str, stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillsd", "hook", agent],
        input=stdin,
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.process
def test_the_hook_adds_context_only_when_a_skill_activates(shared: dict[str, str]) -> None:
    event = {
        "session_id": "abc",
        "cwd": str(EXAMPLE),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "draft the release notes for v2.1",
    }
    done = _hook("claude-code", json.dumps(event), shared)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "- release-notes (" in output["additionalContext"]
    gemini = _hook("gemini", json.dumps({**event, "hook_event_name": "BeforeAgent"}), shared)
    assert json.loads(gemini.stdout)["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    quiet = _hook("codex", json.dumps({**event, "prompt": "what time is it in Tokyo"}), shared)
    assert quiet.returncode == 0 and quiet.stdout == ""
    # Nothing can fail the user's prompt: bad input is a line on stderr and exit 0.
    broken = _hook("claude-code", "not json", shared)
    assert broken.returncode == 0 and broken.stdout == "" and "skillsd hook:" in broken.stderr


@pytest.mark.process
def test_eval_reports_precision_recall_and_the_rival_that_won(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
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
    out = run_cli(tree, "eval")
    assert out.returncode == 2
    assert "evals/triggers.json: entry 0 needs a non-empty `query` and a boolean" in out.stderr


def test_the_semantic_stage_lifts_a_request_that_shares_no_word(
    client: Client, tree: dict[str, Path]
) -> None:
    """With the extra ``skillsd[semantic]`` (in the test extra), a paraphrase the skill's words
    do not cover still ranks it, saying why ("meaning"); unrelated requests stay quiet."""
    pytest.importorskip("wordllama")
    write_skill(tree["skills"], "deploy-site", "Deploy applications and websites to production.")
    result = client.ok("skills.suggest", prompt="ship my web app live")
    names = [s["skill"]["name"] for s in result["suggestions"]]
    assert "deploy-site" in names
    hit = result["suggestions"][names.index("deploy-site")]
    assert any(r.startswith("meaning: ") for r in hit["reasons"])
    quiet = client.ok("skills.suggest", prompt="what is the capital of Australia")
    assert not any(s["activate"] for s in quiet["suggestions"])


def test_the_fusion_adds_meaning_above_its_floor_only() -> None:
    from skillsd.core.suggest import SEMANTIC_FLOOR, SEMANTIC_WEIGHT, SuggestIndex
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
