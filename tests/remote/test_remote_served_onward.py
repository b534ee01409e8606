"""A remote skill served onward (docs/remote.md): machine B consumes machine A's
``skillsd mcp --http`` and serves its own ``skillsd mcp`` to a third party, which verifies what
it reads as the skills extension requires of hosts. Before a remote skill is loaded B's folder
of it holds a placeholder; what B lists and serves must be the remote's skill all the same."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from skillsd.core.remote.fs_remote_roots import STUB_MARK
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
from tests.support.mcp_stdio import request
from tests.support.skill_tree import write_skill

pytestmark = [pytest.mark.process]

SHIP = "echo ship\n"
REVIEW_BODY = "Read the diff twice, then comment.\n"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _team(tmp: Path) -> tuple[Path, Path, Path]:
    """Machine A's repository (deploy with a script, review), home and token file."""
    team = tmp / "team"
    (team / ".git").mkdir(parents=True)
    skills = team / ".agents" / "skills"
    (skills / "deploy" / "scripts").mkdir(parents=True)
    (skills / "deploy" / "SKILL.md").write_text(DEPLOY)
    (skills / "deploy" / "scripts" / "ship.sh").write_text(SHIP)
    write_skill(skills, "review", "Review a change the team's way.", body=REVIEW_BODY)
    home = tmp / "home-a"
    home.mkdir()
    (home / "config.toml").write_text("")
    token = team_token(tmp)
    return team, home, token


def _placeholder(tmp: Path, skill: str) -> bool:
    """Whether B's folder of ``skill`` still holds the listing's placeholder (not loaded)."""
    path = tmp / "cache-b" / "skillsd" / "remotes" / "team" / "skills" / skill / "SKILL.md"
    return path.is_file() and STUB_MARK in path.read_text()


def test_a_third_party_verifies_what_b_serves_of_a_remote_skill(tmp_path: Path) -> None:
    team, home_a, token = _team(tmp_path)
    with team_server(team, home_a, token) as (_proc, url):
        environ, project = consumer(
            tmp_path, f'[[remote]]\nname = "team"\nurl = "{url}"\ntokenFile = "{token}"\n'
        )
        third_party(environ, project, tmp_path)

        # The CLI shows and runs the remote's skill, never the placeholder.
        assert _placeholder(tmp_path, "review")
        shown = _cli(environ, project, "show", "team:review")
        assert REVIEW_BODY.strip() in shown.stdout, shown
        assert STUB_MARK not in shown.stdout
        assert not _placeholder(tmp_path, "review")
        ran = _cli(environ, project, "run", "/team:review", "the", "diff")
        assert REVIEW_BODY.strip() in ran.stdout, ran
        assert STUB_MARK not in ran.stdout


def third_party(environ: dict[str, str], project: Path, tmp: Path) -> None:
    """A host of B's ``skillsd mcp`` (stdio): lists, then reads and verifies."""
    deploy_md = DEPLOY.encode()

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "skillsd", "mcp"], cwd=project, env=environ
        )
        with anyio.fail_after(90):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed: dict[str, Any] = {}
                while "skill://deploy/SKILL.md" not in listed:  # B's refresh, in the background
                    page = await request(session, "skills/list", {})
                    listed = {s["uri"]: s for s in page["skills"]}
                    await anyio.sleep(0.2)
                deploy = listed["skill://deploy/SKILL.md"]
                files = {r["uri"]: r for r in deploy["resources"]}
                # The remote's own sizes and digests, every file, before anything was read.
                assert _placeholder(tmp, "deploy")
                assert files["skill://deploy/SKILL.md"]["digest"] == _digest(deploy_md)
                assert files["skill://deploy/SKILL.md"]["size"] == len(deploy_md)
                assert files["skill://deploy/scripts/ship.sh"]["digest"] == _digest(SHIP.encode())
                assert deploy["frontmatter"] == {
                    "name": "deploy",
                    "description": "Ship the service to production.",
                }
                got = await request(session, "skills/get", {"uri": "skill://deploy/SKILL.md"})
                assert got["skill"] == deploy
                folder = await request(
                    session, "resources/directory/read", {"uri": "skill://deploy"}
                )
                assert "skill://deploy/scripts" in [r["uri"] for r in folder["resources"]]
                assert _placeholder(tmp, "deploy")  # listing it read nothing from A

                # Reading fetches and verifies first: the bytes match what B listed.
                for uri, listed_file in files.items():
                    contents = (await session.read_resource(uri)).contents[0]
                    text = getattr(contents, "text", None)
                    assert isinstance(text, str), contents
                    data = text.encode()
                    assert STUB_MARK.encode() not in data
                    assert _digest(data) == listed_file["digest"], uri
                    assert len(data) == listed_file["size"], uri
                # Once loaded, B lists the same values it did before.
                again = await request(session, "skills/list", {})
                assert {s["uri"]: s for s in again["skills"]}["skill://deploy/SKILL.md"] == deploy

    anyio.run(main)


def _cli(environ: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", *args],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done
    return done


def test_a_read_or_invocation_the_user_asks_for_fetches_first(tmp_path: Path) -> None:
    """``skills.readFile`` and ``skills.invoke`` let an ``ask`` through (the user acts): the
    fetch must too, or the placeholder would be what they read."""
    files = {"SKILL.md": DEPLOY.encode(), "scripts/ship.sh": SHIP.encode()}
    fake = FakeServer(token=TOKEN)
    frontmatter = {"name": "deploy", "description": "Ship the service to production."}
    fake.listing.append(entry("deploy", files, frontmatter))
    fake.files = {f"skill://deploy/{p}": d for p, d in files.items()}
    token = team_token(tmp_path)
    with serving(fake):
        remotes = f'[[remote]]\nname = "team"\nurl = "{fake.url}"\ntokenFile = "{token}"\n'
        environ, project = consumer(tmp_path, remotes, allow=False)  # loading asks
        daemon = h.StdioDaemon(environ=environ)
        n = [0]
        try:
            skills = wait_for(
                "the listing",
                lambda: (s := skills_of(daemon, project, n)) and remote_named(s, "deploy") and s,
            )
            deploy = remote_named(skills, "deploy")
            assert deploy is not None
            cwd = os.fspath(project)
            read = call(
                daemon, n, "skills.readFile", {"cwd": cwd, "id": deploy["id"], "file": "SKILL.md"}
            )
            assert read["result"]["content"] == DEPLOY, read
            invoked = call(daemon, n, "skills.invoke", {"cwd": cwd, "command": "/team:deploy"})
            assert "Run it." in invoked["result"]["content"], invoked
            assert STUB_MARK not in invoked["result"]["content"]
        finally:
            daemon.kill()


def test_a_lone_cli_command_lists_a_remote_no_daemon_has_refreshed(tmp_path: Path) -> None:
    """No daemon has run on machine B: `skillsd list` asks the remote for its listing itself
    (within one timeout) instead of showing none of the team's skills, and `skillsd show`
    then fetches and verifies the skill. With the remote gone and the listing past its ttl,
    the last listing is kept, marked stale, with a warning naming the remote."""
    team, home, token = _team(tmp_path)
    with team_server(team, home, token) as (server, url):
        remotes = f'[[remote]]\nname = "team"\nurl = "{url}"\ntokenFile = "{token}"\n'
        remotes += "refreshSeconds = 1\n"
        environ, project = consumer(tmp_path, remotes)

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "skillsd", *args],
                cwd=project,
                env=environ,
                capture_output=True,
                text=True,
                timeout=120,
            )

        listed = cli("list", "--json")
        assert listed.returncode == 0, listed.stderr
        names = {s["qualifiedName"] for s in json.loads(listed.stdout)["skills"] if s.get("remote")}
        assert names == {"team:deploy", "team:review"}
        assert _placeholder(tmp_path, "review")
        shown = cli("show", "team:review")
        assert shown.returncode == 0, shown.stderr
        assert REVIEW_BODY.strip() in shown.stdout
        h.stop(server)
    time.sleep(1.1)  # part of the scenario: the listing passes its ttl (refreshSeconds = 1)
    again = cli("list", "--json")
    assert again.returncode == 0, again.stderr
    assert "remote 'team'" in again.stderr
    kept = [s for s in json.loads(again.stdout)["skills"] if s.get("remote")]
    assert {s["qualifiedName"] for s in kept} == {"team:deploy", "team:review"}
    assert all(any(d["code"] == "remote.stale" for d in s["diagnostics"]) for s in kept)
