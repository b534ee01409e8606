"""``skillsd add mcp+http://…/mcp#<skill>``: a skill of a skills server installed into the lock
(``sourceType: "mcp"``, its digest pinned), and ``skillsd update`` following the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.remote.fake_skills_server import FakeServer, entry, serving
from tests.remote.loopback import team_token
from tests.support import daemons as h
from tests.support.mcp_http import TOKEN

pytestmark = [pytest.mark.process]

DEPLOY = b"---\nname: deploy\ndescription: Ship the service to production.\n---\n\nRun it.\n"


def _serve(fake: FakeServer, files: dict[str, bytes]) -> None:
    frontmatter = {"name": "deploy", "description": "Ship the service to production."}
    fake.listing[:] = [entry("deploy", files, frontmatter)]
    fake.files = {f"skill://deploy/{p}": d for p, d in files.items()}


def test_a_remote_skill_is_pinned_in_the_lock_and_updated(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    token = team_token(tmp_path)
    fake = FakeServer(token=TOKEN)
    _serve(fake, {"SKILL.md": DEPLOY, "scripts/ship.sh": b"echo ship\n"})
    with serving(fake):
        config = tmp_path / "config.toml"
        config.write_text(f'[[remote]]\nname = "team"\nurl = "{fake.url}"\ntokenFile = "{token}"\n')
        environ = h.env(
            HOME=os.fspath(tmp_path / "home"),
            SKILLSD_CONFIG=os.fspath(config),
            XDG_STATE_HOME=os.fspath(tmp_path / "state"),
        )

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "skillsd", *args],
                cwd=project,
                env=environ,
                capture_output=True,
                text=True,
                timeout=120,
            )

        source = f"mcp+{fake.url}#deploy"
        added = cli("add", source)
        assert added.returncode == 0, added.stderr
        installed = project / ".agents" / "skills" / "deploy"
        assert (installed / "SKILL.md").read_bytes() == DEPLOY
        assert (installed / "scripts" / "ship.sh").read_bytes() == b"echo ship\n"
        lock = json.loads((project / "skills-lock.json").read_text())
        locked = lock["skills"]["deploy"]
        assert locked["sourceType"] == "mcp"
        assert locked["source"] == source
        assert locked["digest"].startswith("sha256:")

        # The server serves a new version: update follows its digest.
        _serve(fake, {"SKILL.md": DEPLOY.replace(b"Run it.", b"Run it twice."), "x.md": b"x\n"})
        updated = cli("update")
        assert updated.returncode == 0, updated.stderr
        assert b"Run it twice." in (installed / "SKILL.md").read_bytes()
        assert not (installed / "scripts").exists()
        newer = json.loads((project / "skills-lock.json").read_text())["skills"]["deploy"]
        assert newer["digest"] != locked["digest"]

        # A server whose files do not match its listing: the update is refused, nothing moves.
        fake.files["skill://deploy/SKILL.md"] = DEPLOY.replace(b"Run it.", b"Rm -rf.")
        _tampered = dict(fake.files)
        _serve(fake, {"SKILL.md": DEPLOY.replace(b"Run it.", b"Run it 3x."), "x.md": b"x\n"})
        fake.files = _tampered
        refused = cli("update")
        assert refused.returncode != 0
        assert "deploy refused: SKILL.md: size" in refused.stderr, refused.stderr
        assert b"Run it twice." in (installed / "SKILL.md").read_bytes()
