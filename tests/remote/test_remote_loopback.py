"""Two skillsd on one machine, as on two (docs/remote.md): one ``skillsd mcp --http`` serves a
team's catalog behind a token, and a daemon whose user config names it as a remote consumes
it. Then the server's files change, and the server goes away."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.remote.fake_skills_server import FakeServer, entry, serving
from tests.remote.loopback import (
    DEPLOY,
    call,
    consumer,
    remote_named,
    skills_of,
    team_server,
    team_token,
    wait_for,
)
from tests.support import daemons as h
from tests.support.mcp_http import TOKEN
from tests.support.skill_tree import write_skill

pytestmark = [pytest.mark.process]


def test_one_skillsd_serving_over_http_feeds_another(tmp_path: Path) -> None:
    team = tmp_path / "team"
    (team / ".git").mkdir(parents=True)
    skills_a = team / ".agents" / "skills"
    (skills_a / "deploy").mkdir(parents=True)
    (skills_a / "deploy" / "SKILL.md").write_text(DEPLOY)
    (skills_a / "deploy" / "scripts").mkdir()
    (skills_a / "deploy" / "scripts" / "ship.sh").write_text("echo ship\n")
    write_skill(skills_a, "review", "Review a change the team's way.")
    home_a = tmp_path / "home-a"
    home_a.mkdir()
    (home_a / "config.toml").write_text("")
    token = team_token(tmp_path)
    with team_server(team, home_a, token) as (_proc, url):
        environ, project = consumer(
            tmp_path,
            f'[[remote]]\nname = "team"\nurl = "{url}"\ntokenFile = "{token}"\n'
            "refreshSeconds = 1\n",
        )
        # B has a skill of its own named like one of the team's.
        write_skill(project / ".agents" / "skills", "review", "My own review.")
        daemon = h.StdioDaemon(environ=environ)
        n = [0]
        try:
            listed = wait_for(
                "the team's skills listed",
                lambda: (s := skills_of(daemon, project, n)) and remote_named(s, "deploy") and s,
            )
            deploy = remote_named(listed, "deploy")
            assert deploy is not None
            assert deploy["remote"] == {"name": "team", "url": url}
            assert deploy["qualifiedName"] == "team:deploy"
            assert deploy["description"] == "Ship the service to production."
            # Never silently shadowing: both reviews are listed, each naming the other.
            reviews = [s for s in listed if s["name"] == "review"]
            assert {s["scope"] for s in reviews} == {"repo", "remote"}
            assert all(s.get("sameName") for s in reviews)

            loaded = call(daemon, n, "skills.load", {"cwd": os.fspath(project), "id": deploy["id"]})
            assert "result" in loaded, loaded
            assert "Run it." in loaded["result"]["content"]
            read = call(
                daemon,
                n,
                "skills.readFile",
                {"cwd": os.fspath(project), "id": deploy["id"], "file": "scripts/ship.sh"},
            )
            assert read["result"]["content"] == "echo ship\n", read

            # A file changed on the server is picked up after the ttl.
            (skills_a / "deploy" / "SKILL.md").write_text(
                DEPLOY.replace("Run it.", "Run it twice.")
            )

            def reloaded() -> bool:
                params = {"cwd": os.fspath(project), "id": deploy["id"], "force": True}
                got = call(daemon, n, "skills.load", params)
                return "Run it twice." in got.get("result", {}).get("content", "")

            wait_for("the server's change", reloaded)
        except BaseException:
            daemon.kill()
            raise
        stopped_url = url
    # The server is gone: the skills are still listed and the loaded one still served, stale.
    try:
        # Past refreshSeconds the next refresh fails: the skills stay, marked stale.
        def stale() -> dict[str, Any] | None:
            skill = remote_named(skills_of(daemon, project, n), "deploy")
            codes = [d["code"] for d in (skill or {}).get("diagnostics", [])]
            return skill if "remote.stale" in codes else None

        deploy = wait_for("the skills marked stale", stale)
        params = {"cwd": os.fspath(project), "id": deploy["id"], "force": True}
        offline = call(daemon, n, "skills.load", params)
        assert "Run it twice." in offline["result"]["content"], offline
        listed_state = subprocess.run(
            [sys.executable, "-m", "skillsd", "remote", "list"],
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "team" in listed_state.stdout and "stale" in listed_state.stdout, listed_state
        assert stopped_url in listed_state.stdout
    finally:
        daemon.kill()


def test_a_server_serving_a_stale_digest_is_refused_and_doctor_says_why(tmp_path: Path) -> None:
    files = {"SKILL.md": DEPLOY.encode(), "scripts/ship.sh": b"echo ship\n"}
    fake = FakeServer(token=TOKEN)
    frontmatter = {"name": "deploy", "description": "Ship the service to production."}
    fake.listing.append(entry("deploy", files, frontmatter))
    fake.files = {f"skill://deploy/{p}": d for p, d in files.items()}
    # What it serves is not what it lists (a tampered copy behind a stale digest).
    fake.files["skill://deploy/SKILL.md"] = DEPLOY.replace("Run it.", "Rm -rf.").encode()
    token = team_token(tmp_path)
    with serving(fake):
        environ, project = consumer(
            tmp_path, f'[[remote]]\nname = "team"\nurl = "{fake.url}"\ntokenFile = "{token}"\n'
        )
        daemon = h.StdioDaemon(environ=environ)
        n = [0]
        try:
            skills = wait_for(
                "the listing",
                lambda: (s := skills_of(daemon, project, n)) and remote_named(s, "deploy") and s,
            )
            deploy = remote_named(skills, "deploy")
            assert deploy is not None
            got = call(daemon, n, "skills.load", {"cwd": os.fspath(project), "id": deploy["id"]})
            assert "error" in got, got
            assert "refused: SKILL.md: digest sha256:" in got["error"]["message"]
            assert "Rm -rf" not in str(got)
            reads = [m for _v, m, _h in fake.seen if m == "resources/read"]
            assert len(reads) == 1, " ".join(m or v for v, m, _h in fake.seen)
        finally:
            daemon.kill()
    doctor = subprocess.run(
        [sys.executable, "-m", "skillsd", "doctor"],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "team:deploy refused" in doctor.stdout, doctor.stdout
    assert "digest" in doctor.stdout


def test_nothing_is_fetched_for_a_load_waiting_for_approval(tmp_path: Path) -> None:
    files = {"SKILL.md": DEPLOY.encode()}
    fake = FakeServer(token=TOKEN)
    frontmatter = {"name": "deploy", "description": "Ship the service to production."}
    fake.listing.append(entry("deploy", files, frontmatter))
    fake.files = {f"skill://deploy/{p}": d for p, d in files.items()}
    token = team_token(tmp_path)
    with serving(fake):
        remotes = f'[[remote]]\nname = "team"\nurl = "{fake.url}"\ntokenFile = "{token}"\n'
        environ, project = consumer(tmp_path, remotes, allow=False)
        daemon = h.StdioDaemon(environ=environ)
        n = [0]
        try:
            skills = wait_for(
                "the listing",
                lambda: (s := skills_of(daemon, project, n)) and remote_named(s, "deploy") and s,
            )
            deploy = remote_named(skills, "deploy")
            assert deploy is not None
            got = call(daemon, n, "skills.load", {"cwd": os.fspath(project), "id": deploy["id"]})
            assert got["error"]["data"]["kind"] == "permission_required", got
            assert not [m for _v, m, _h in fake.seen if m == "resources/read"]
        finally:
            daemon.kill()
