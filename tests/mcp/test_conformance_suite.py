"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned with its lock
in tests/conformance/) run against ``skillsd mcp --http`` on both protocol versions the bridge
speaks, 2025-11-25 and 2026-07-28: every check of the scenarios below must pass, but for the
few named here that need the suite's own diagnostic tools and the known gaps.

Scenarios not run, and why (``conformance list --server`` names them all):

- the ones that drive the suite's own fixture server surface (``test_*`` tools and prompts,
  ``test://`` resources): ``tools-call-*``, ``prompts-get-*``, ``resources-read-text``,
  ``resources-read-binary``, ``resources-templates-read``, ``json-schema-2020-12``,
  ``server-sse-polling``, ``elicitation-sep1034-defaults``, ``elicitation-sep1330-enums`` and
  every ``input-required-result-*`` but ``-unsupported-methods``;
- ``logging-set-level`` and ``completion-complete``: this server declares neither capability;
- ``http-custom-header-server-validation``: it needs a tool with ``x-mcp-header`` parameters,
  and these tools have none;
- ``tasks-*``: an extension this server does not implement;
- a scenario outside a version's timeline (``server-initialize`` on 2026-07-28,
  ``server-stateless`` on 2025-11-25, ...). The skills extension's scenarios are on no timeline:
  they are forced onto each version.

The suite sends no ``Authorization`` header, so the server runs with ``--no-auth`` (loopback).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support.conformance import NODE20_SHIM, suite_installed
from tests.support.mcp_http import server

pytestmark = [pytest.mark.slow, pytest.mark.process, pytest.mark.xdist_group("serial")]


#: The skills extension's scenarios (no protocol timeline: run with ``--force``).
SKILLS = ["sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest"]
SCENARIOS = {
    "2025-11-25": [
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "tools-list",
        "resources-list",
        "resources-subscribe",
        "resources-unsubscribe",
        "prompts-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        *SKILLS,
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "resources-list",
        "prompts-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "sep-2164-resource-not-found",
        "input-required-result-unsupported-methods",
        *SKILLS,
    ],
}

#: Checks of the scenarios above that call the suite's diagnostic tools, which this server does
#: not have. A failure counts only when the suite marks it "Not testable"; the list-changed ones
#: end in a warning that no change arrived (the suite changes the lists through those tools).
NEEDS_SUITE_TOOLS = {
    "sep-2575-server-rejects-undeclared-capability": "test_missing_capability",
    "sep-2575-missing-capability-http-400": "test_missing_capability",
    "sep-2575-http-server-no-independent-requests-on-stream": "test_streaming_elicitation",
    "sep-2575-server-no-log-without-loglevel": "test_logging_tool",
    "sep-2575-server-sends-prompts-list-changed-on-subscription": "test_trigger_prompt_change",
    "sep-2575-server-sends-tools-list-changed-on-subscription": "test_trigger_tool_change",
}
#: Checks the suite itself skips on a version, as not defined there.
NOT_ON_VERSION = {
    ("2025-11-25", "sep-2640-skills-list-cache-attributes"),
    ("2025-11-25", "sep-2640-skills-get-cache-attributes"),
}
#: Known gaps, each a failure this test expects until it is fixed (then it fails: drop the entry).
KNOWN_GAPS = {
    # skills/list and skills/get give the frontmatter with every value a string
    # (`user-invocable: false` becomes "false"); the extension wants it as YAML parses it.
    "sep-2640-entry-frontmatter-identical": "frontmatter values are all strings",
}
OK = {"SUCCESS", "INFO"}


def _run(cli: Path, url: str, version: str, scenario: str, out: Path) -> list[dict[str, Any]]:
    """The checks of one scenario on one protocol version (its ``checks.json``)."""
    env = dict(os.environ)
    env["NODE_OPTIONS"] = f"{env.get('NODE_OPTIONS', '')} --import {NODE20_SHIM.as_uri()}".strip()
    command = [os.fspath(cli), "server", "--url", url, "--scenario", scenario]
    command += ["--spec-version", version]
    if scenario in SKILLS:
        command.append("--force")
    done = subprocess.run(
        [*command, "--output-dir", os.fspath(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    reports = list(out.glob("*/checks.json"))
    assert len(reports) == 1, f"{version} {scenario}: no report\n{done.stdout}\n{done.stderr}"
    checks: list[dict[str, Any]] = json.loads(reports[0].read_text())
    assert checks, f"{version} {scenario}: no checks"
    return checks


def test_the_official_conformance_suite_passes(tree: dict[str, Path]) -> None:
    cli = suite_installed()
    # The directory scenario descends into the first listed skill, api-conventions, the one skill
    # here without a subfolder: give it one.
    references = tree["project"] / ".claude" / "skills" / "api-conventions" / "references"
    references.mkdir()
    (references / "status-codes.md").write_text("- 404 for a resource that does not exist.\n")
    runs = [(v, s) for v, scenarios in SCENARIOS.items() for s in scenarios]
    with server(tree, "--no-auth") as (_proc, url), ThreadPoolExecutor(2) as pool:
        # Two at a time: the two CPUs, and scenarios of both versions sharing the server.
        reports = pool.map(lambda r: _run(cli, url, r[0], r[1], tree["tmp"] / "-".join(r)), runs)
        results = [(v, s, checks) for (v, s), checks in zip(runs, reports, strict=True)]
    failed: list[str] = []
    stale: list[str] = []
    passed = dict.fromkeys(SCENARIOS, 0)
    for version, scenario, checks in results:
        for check in checks:
            status, check_id = check["status"], check["id"]
            if (version, check_id) in NOT_ON_VERSION:
                continue
            if check_id in NEEDS_SUITE_TOOLS and (
                status == "WARNING" or (check.get("details") or {}).get("untestable")
            ):
                continue
            if check_id in KNOWN_GAPS:
                if status in OK:
                    stale.append(f"{version} {check_id} passes now: drop it from KNOWN_GAPS")
                continue
            if status in OK:
                passed[version] += status == "SUCCESS"
            else:
                said = check.get("errorMessage") or ""
                failed.append(f"{version} {scenario} {check_id}: {status} {said}")
    assert not failed, "conformance checks failed:\n" + "\n".join(failed)
    assert not stale, "\n".join(stale)
    assert all(n > 0 for n in passed.values()), passed
