"""The official MCP conformance suite's client scenarios for the skills extension, run against
``skillsd remote probe``: the suite starts a server that plays a skills server (its listing
honest, its files tampered with in the ``verify-*`` scenarios), runs the command with the
server's URL appended, and checks what the client read.

- ``sep-2640-client-no-prefetch``: listing reads no file;
- ``sep-2640-client-verify-digest`` / ``-size`` / ``-frontmatter``: with ``--load-all`` the client
  reads ``SKILL.md``, finds it does not match its entry and reads nothing further. The suite
  fails a client that never reads ``SKILL.md`` ("not testable"), so passing needs both the read
  and the refusal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.conformance import NODE20_SHIM, PACKAGE, suite_installed

pytestmark = [pytest.mark.slow, pytest.mark.process, pytest.mark.xdist_group("serial")]

PROBE = f"{Path(sys.executable).parent / 'skillsd'} remote probe"
SCENARIOS = {
    "sep-2640-client-no-prefetch": PROBE,
    "sep-2640-client-verify-digest": PROBE + " --load-all",
    "sep-2640-client-verify-size": PROBE + " --load-all",
    "sep-2640-client-verify-frontmatter": PROBE + " --load-all",
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_client_scenarios_of_the_skills_extension_pass(scenario: str, tmp_path: Path) -> None:
    cli = suite_installed()
    entry = cli.parent.parent / PACKAGE / "dist" / "index.js"
    env = dict(os.environ)
    env["NODE_OPTIONS"] = f"{env.get('NODE_OPTIONS', '')} --import {NODE20_SHIM.as_uri()}".strip()
    command = ["node", os.fspath(entry), "client", "--command", SCENARIOS[scenario]]
    command += ["--scenario", scenario, "--output-dir", os.fspath(tmp_path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    reports = list(tmp_path.glob("*/checks.json"))
    assert len(reports) == 1, f"{scenario}: no report\n{done.stdout}\n{done.stderr}"
    checks = json.loads(reports[0].read_text())
    assert checks, f"{scenario}: no checks"
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    said = "\n".join(f"{c['id']}: {c['status']} {c.get('errorMessage') or ''}" for c in failed)
    assert not failed, f"{scenario}:\n{said}\n{done.stdout}"
    # The probe said what it did: the listing, and for the tampered scenarios the refusal.
    output = "\n".join(p.read_text() for p in tmp_path.glob("*/stdout.txt"))
    assert "pdf-processing" in output
    if scenario != "sep-2640-client-no-prefetch":
        assert "refused pdf-processing: SKILL.md" in output
