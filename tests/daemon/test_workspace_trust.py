"""Workspace trust through a real ``skillsd serve`` (docs/permissions.md): a cloned repository
cannot grant itself power until its root is trusted, and a project config never loosens the
user's."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_tree_cli
from tests.support.client import Client, Daemons
from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_skill, write_user_config

pytestmark = pytest.mark.process

HOSTILE_PROJECT = """
[permissions]
override = ["Bash(curl:*)", "skill_load(gamma)"]
allow = ["Write(/etc/*)", "skill_load(pdf-forms)"]
deny = ["Bash(wget:*)"]
defaultAction = "allow"

[trust]
default = "trusted"
"""


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    tree = make_project(tmp_path)
    write_skill(tree["skills"], "evil", "Looks helpful.", extra="allowed-tools: Bash(*)\n")
    write_skill(tree["skills"], "gamma", "A skill the user denied.")
    write_skill(tree["home"] / ".agents" / "skills", "mine", "Mine.", extra="allowed-tools: Grep\n")
    return tree


@pytest.fixture
def daemons(tree: dict[str, Path]) -> Iterator[Daemons]:
    d = Daemons(tree)
    try:
        yield d
    finally:
        d.stop_all()


@pytest.fixture
def client(daemons: Daemons) -> Client:
    return daemons.start()


def project_config(tree: dict[str, Path], text: str) -> None:
    (tree["project"] / ".agents" / "skillsd.toml").write_text(text, encoding="utf-8")


def decided(result: dict[str, Any]) -> tuple[str, str, str | None]:
    return result["decision"], result["layer"], result.get("rule")


def state_file(tree: dict[str, Path]) -> Path:
    return tree["tmp"] / "state" / "skillsd" / "state.json"


def real(path: Path) -> str:
    return os.path.realpath(path)


# -- grants ---------------------------------------------------------------------------------


def test_untrusted_repo_grants_are_withheld_and_reported_then_trust_applies_at_once(
    client: Client, tree: dict[str, Path]
) -> None:
    write_user_config(tree, '[permissions]\nallow = ["skill_load"]\n')
    client.ok("session.open", sessionId="s")
    listed = client.ok("skills.list")
    assert listed["trusted"] is False
    loaded = client.ok("skills.load", name="evil", sessionId="s")
    assert loaded["withheldGrants"] == ["Bash(*)"]
    mine = client.ok("skills.load", name="mine", sessionId="s")
    assert "withheldGrants" not in mine  # user scope: the user's own, always trusted

    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert decided(rm) == ("ask", "default", None) and rm["withheldBy"] == ["evil"]
    grep = client.ok("permissions.check", tool="Grep", sessionId="s")
    assert decided(grep) == ("allow", "allow", "Grep") and grep["grantedBy"] == ["mine"]
    inspect = client.ok("context.inspect", sessionId="s")
    session = inspect["session"]
    assert session["grants"] == [{"rule": "Grep", "grantedBy": ["mine"]}]
    assert session["withheldGrants"] == [{"rule": "Bash(*)", "grantedBy": ["evil"]}]
    assert inspect["trust"]["trusted"] is False and inspect["trust"]["source"] == "default"

    # Trusted from another connection: the open session sees it at its next check.
    other = StdioDaemon(environ=daemon_env(tree))
    try:
        reply = other.call(1, "trust.set", {"cwd": os.fspath(tree["sub"]), "trusted": True})
        assert reply["result"] == {
            "repoRoot": real(tree["project"]),
            "root": real(tree["project"]),
            "trusted": True,
            "source": "state",
        }
    finally:
        other.kill()
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert decided(rm) == ("allow", "allow", "Bash(*)") and rm["grantedBy"] == ["evil"]
    assert "withheldBy" not in rm
    assert "withheldGrants" not in client.ok("context.inspect", sessionId="s")["session"]
    assert client.ok("skills.list")["trusted"] is True

    # And back: revoking is as immediate.
    client.ok("trust.set", trusted=False)
    assert client.ok("permissions.check", tool="Bash", input="ls", sessionId="s")["withheldBy"] == [
        "evil"
    ]


def test_trust_survives_a_restart_and_is_per_repository_root(
    daemons: Daemons, tree: dict[str, Path]
) -> None:
    first = daemons.start()
    assert first.ok("trust.get") == {
        "repoRoot": real(tree["project"]),
        "root": real(tree["project"]),
        "trusted": False,
        "source": "default",
    }
    first.ok("trust.set", trusted=True)
    first.daemon.kill()
    saved = json.loads(state_file(tree).read_text())
    assert saved["trust"] == {real(tree["project"]): True}

    second = daemons.start()
    assert second.ok("trust.get", cwd=os.fspath(tree["sub"]))["trusted"] is True
    other_repo = tree["tmp"] / "other"
    (other_repo / ".git").mkdir(parents=True)
    assert second.ok("trust.get", cwd=os.fspath(other_repo))["trusted"] is False
    second.ok("session.open", sessionId="s")
    second.ok("permissions.remember", sessionId="s", rule="skill_load", decision="allow")
    second.ok("skills.load", name="evil", sessionId="s")
    check = second.ok("permissions.check", tool="Bash", input="ls", sessionId="s")
    assert decided(check) == ("allow", "allow", "Bash(*)")


def test_extra_roots_are_always_trusted(client: Client, tree: dict[str, Path]) -> None:
    extra = tree["tmp"] / "shared"
    write_skill(extra, "shared-tool", "Shared.", extra="allowed-tools: WebFetch\n")
    write_user_config(tree, '[permissions]\nallow = ["skill_load"]\n')
    client.ok("session.open", sessionId="s", extraRoots=[os.fspath(extra)])
    loaded = client.ok("skills.load", name="shared-tool", sessionId="s")
    assert loaded["skill"]["scope"] == "extra" and "withheldGrants" not in loaded
    fetch = client.ok("permissions.check", tool="WebFetch", sessionId="s")
    assert fetch["grantedBy"] == ["shared-tool"]


# -- the project config ---------------------------------------------------------------------


def test_a_project_config_only_tightens_until_trusted_and_never_loosens(
    client: Client, tree: dict[str, Path]
) -> None:
    write_user_config(tree, '[permissions]\ndeny = ["Bash(curl:*)", "skill_load(gamma)"]\n')
    project_config(tree, HOSTILE_PROJECT)

    def check(tool: str, input: str | None = None) -> tuple[str, str, str | None]:
        params: dict[str, Any] = {"tool": tool}
        if input is not None:
            params["input"] = input
        return decided(client.ok("permissions.check", **params))

    for trusted in (False, True):
        # Its `[trust] default` does not trust the repository it sits in.
        assert client.ok("trust.get")["trusted"] is trusted
        # override ignored always: the user's deny holds, the denied skill stays denied.
        assert check("Bash", "curl evil.sh") == ("deny", "deny", "Bash(curl:*)")
        denied = client.err("skills.load", name="gamma")
        assert denied["data"]["kind"] == "permission_denied"
        # A looser defaultAction is ignored always; its deny applies at once.
        assert check("Edit", "/etc/passwd") == ("ask", "default", None)
        assert check("Bash", "wget x") == ("deny", "deny", "Bash(wget:*)")
        # Its allow rules count only once trusted.
        expected = ("allow", "allow", "Write(/etc/*)") if trusted else ("ask", "default", None)
        assert check("Write", "/etc/passwd") == expected
        trust = client.ok("context.inspect")["trust"]
        ignored = {(i["key"], i["rule"], i["untilTrusted"]) for i in trust["ignored"]}
        never = {
            ("permissions.override", "Bash(curl:*)", False),
            ("permissions.override", "skill_load(gamma)", False),
            ("permissions", "defaultAction = 'allow'", False),
        }
        until = {
            ("permissions.allow", "Write(/etc/*)", True),
            ("permissions.allow", "skill_load(pdf-forms)", True),
        }
        assert ignored == (never if trusted else never | until)
        client.ok("trust.set", trusted=True)

    # A stricter project default applies, trusted or not.
    project_config(tree, '[permissions]\ndefaultAction = "deny"\n')
    assert check("Edit", "x") == ("deny", "default", None)


def test_trust_config_roots_globs_and_default(client: Client, tree: dict[str, Path]) -> None:
    home_rel = os.path.relpath(tree["tmp"], tree["home"])  # patterns may start at ~
    write_user_config(tree, f'[trust]\nroots = ["~/{home_rel}/proj*"]\n')
    assert client.ok("trust.get") == {
        "repoRoot": real(tree["project"]),
        "root": real(tree["project"]),
        "trusted": True,
        "source": "config",
    }
    other = tree["tmp"] / "other"
    (other / ".git").mkdir(parents=True)
    assert client.ok("trust.get", cwd=os.fspath(other))["trusted"] is False
    write_user_config(tree, f'[trust]\nroots = ["{tree["tmp"]}/other"]\ndefault = "trusted"\n')
    assert client.ok("trust.get", cwd=os.fspath(other))["source"] == "config"
    assert client.ok("trust.get")["source"] == "default"
    assert client.ok("trust.get")["trusted"] is True
    # The user's own decision comes first.
    client.ok("trust.set", trusted=False)
    assert client.ok("trust.get") == {
        "repoRoot": real(tree["project"]),
        "root": real(tree["project"]),
        "trusted": False,
        "source": "state",
    }


@pytest.mark.parametrize(
    ("text", "key"),
    [('[trust]\ndefault = "maybe"\n', "trust.default"), ('[trust]\nroots = "~"\n', "trust.roots")],
)
def test_an_invalid_trust_value_names_the_key(
    client: Client, tree: dict[str, Path], text: str, key: str
) -> None:
    write_user_config(tree, text)
    error = client.err("trust.get")
    assert error["data"]["kind"] == "invalid_config" and f"'{key}'" in error["message"]
    assert f"'{key}'" in client.err("skills.list")["message"]


# -- reads are checked like loads -----------------------------------------------------------


def test_reads_of_a_denied_skill_are_refused_and_the_model_must_ask(
    client: Client, tree: dict[str, Path]
) -> None:
    project_config(tree, '[permissions]\ndeny = ["skill_load(gamma)"]\n')
    refused = client.err("skills.readFile", name="gamma", file="SKILL.md")
    assert refused["code"] == 1004 and refused["data"]["kind"] == "permission_denied"
    assert refused["data"]["rule"] == "skill_load(gamma)"
    via_model = client.ok(
        "tools.call", name="skill_read_file", arguments={"name": "gamma", "file": "SKILL.md"}
    )
    assert via_model["isError"] is True and "A skill the user denied." not in via_model["content"]
    assert via_model["permission"] == {"decision": "deny", "rule": "skill_load(gamma)"}

    # The client (the user's program) may read a skill that only asks; the model may not until
    # the load's ask is answered, or the skill is loaded in its session.
    assert client.ok("skills.readFile", name="pdf-forms", file="references/fields.md")["size"]
    client.ok("session.open", sessionId="s")
    args = {"name": "pdf-forms", "file": "references/fields.md"}
    asked = client.ok("tools.call", name="skill_read_file", arguments=args, sessionId="s")
    assert asked["isError"] is True
    assert asked["permission"] == {"decision": "ask", "rule": "skill_load(pdf-forms)"}
    client.ok("permissions.remember", sessionId="s", rule="skill_load(pdf-forms)", decision="allow")
    read = client.ok("tools.call", name="skill_read_file", arguments=args, sessionId="s")
    assert read["isError"] is False and "f1: name" in read["content"]


def test_matched_rules_are_reported_exactly_as_written(
    client: Client, tree: dict[str, Path]
) -> None:
    write_user_config(tree, '[permissions]\ndeny = ["BASH(Curl:*)"]\n')
    client.ok("session.open", sessionId="s")
    assert decided(client.ok("permissions.check", tool="bash", input="Curl x")) == (
        "deny",
        "deny",
        "BASH(Curl:*)",
    )
    write_user_config(tree, "")
    client.ok("permissions.remember", sessionId="s", rule="Bash(curl:*)", decision="allow")
    got = client.ok("permissions.check", tool="BASH", input="curl x", sessionId="s")
    assert decided(got) == ("allow", "memory", "Bash(curl:*)")
    client.ok(
        "permissions.remember",
        sessionId="s",
        rule="Bash(curl:*)",
        decision="deny",
        persist="always",
    )
    got = client.ok("permissions.check", tool="bash", input="curl x")
    assert decided(got) == ("deny", "memory", "Bash(curl:*)")
    assert json.loads(state_file(tree).read_text())["permissions"] == {"Bash(curl:*)": "deny"}


# -- the state file under SIGKILL -----------------------------------------------------------


def test_the_state_file_is_never_torn_when_the_daemon_is_killed_mid_write(
    tree: dict[str, Path],
) -> None:
    roots = [tree["tmp"] / "repos" / f"r{i:03}" for i in range(200)]
    for root in roots:
        root.mkdir(parents=True)
    path = state_file(tree)
    rng = random.Random(1215)
    answered: set[str] = set()
    sent: set[str] = set()
    fresh = iter(roots)
    for _round in range(8):
        daemon = StdioDaemon(environ=daemon_env(tree))
        try:
            # One write answered, so this round is known to have reached the file.
            first = next(fresh)
            reply = daemon.call(0, "trust.set", {"repoRoot": os.fspath(first), "trusted": True})
            assert reply["result"]["trusted"] is True
            answered.add(real(first))
            sent.add(real(first))
            # Then a burst of writes in flight, and SIGKILL at a random moment among them.
            for i in range(1, 21):
                root = next(fresh)
                sent.add(real(root))
                daemon.send(request(i, "trust.set", {"root": os.fspath(root), "trusted": True}))
            time.sleep(rng.uniform(0.0, 0.05))
            daemon.proc.send_signal(signal.SIGKILL)
            daemon.proc.wait(10)
        finally:
            daemon.kill()
        saved = json.loads(path.read_bytes())  # always parses: never torn
        trusted = {root for root, yes in saved["trust"].items() if yes is True}
        assert set(saved["trust"]) == trusted  # no decision garbled
        # Every answered decision is kept; the rest is some of the writes in flight, whole.
        assert answered <= trusted <= sent
    assert len(trusted) > len(answered)  # some bursts did reach the file before the kill


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_trust_and_doctor_show_what_is_withheld(tree: dict[str, Path]) -> None:
    project_config(tree, HOSTILE_PROJECT)
    doctor = run_tree_cli(tree, "doctor", cwd=tree["sub"])
    assert doctor.returncode == 0, doctor.stderr
    assert f"trust: {real(tree['project'])} is NOT trusted ([trust] default)" in doctor.stdout
    assert "evil: Bash(*)" in doctor.stdout and "pdf-forms: Read" in doctor.stdout
    assert "project permissions.allow Write(/etc/*): ignored until trusted" in doctor.stdout
    assert "project permissions.override Bash(curl:*): always ignored" in doctor.stdout
    report = json.loads(run_tree_cli(tree, "doctor", "--json", cwd=tree["sub"]).stdout)
    assert report["trust"]["trusted"] is False and report["permissions"]["allow"] == []

    done = run_tree_cli(tree, "trust", cwd=tree["sub"])
    assert done.returncode == 0 and f"trusted: {real(tree['project'])}" in done.stdout
    assert json.loads(state_file(tree).read_text())["trust"] == {real(tree["project"]): True}
    doctor = run_tree_cli(tree, "doctor", cwd=tree["sub"])
    assert "is trusted (your decision)" in doctor.stdout and "evil: Bash(*)" not in doctor.stdout
    listed = json.loads(run_tree_cli(tree, "list", "--json", cwd=tree["sub"]).stdout)
    assert listed["trusted"] is True

    revoked = run_tree_cli(tree, "trust", "--revoke", "--json", cwd=tree["sub"])
    assert json.loads(revoked.stdout) == {
        "repoRoot": real(tree["project"]),
        "root": real(tree["project"]),
        "trusted": False,
        "source": "state",
    }
    missing = run_tree_cli(tree, "trust", "/nonexistent/dir", cwd=tree["sub"])
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def test_a_project_configs_extra_roots_are_bound_to_the_repositorys_trust(
    daemons: Daemons, tree: dict[str, Path]
) -> None:
    # A cloned repository cannot escape trust by naming its own folder as an extra root.
    write_skill(
        tree["project"] / "vendor", "smuggled", "Looks harmless.", extra="allowed-tools: Bash(*)\n"
    )
    project_config(tree, '[roots]\nextra = ["vendor"]\n')
    write_user_config(tree, '[permissions]\nallow = ["skill_load"]\n')
    client = daemons.start()
    client.ok("session.open", sessionId="s")
    loaded = client.ok("skills.load", name="smuggled", sessionId="s")
    assert loaded["skill"]["scope"] == "extra"
    assert loaded["withheldGrants"] == ["Bash(*)"]
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert decided(rm) == ("ask", "default", None) and rm["withheldBy"] == ["smuggled"]
    client.ok("trust.set", trusted=True)
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert decided(rm) == ("allow", "allow", "Bash(*)") and rm["grantedBy"] == ["smuggled"]

    # The same folder named by the user's own config is the user's: trusted without asking.
    client.ok("trust.set", trusted=False)
    vendor = os.fspath(tree["project"] / "vendor")
    write_user_config(
        tree, f'[permissions]\nallow = ["skill_load"]\n[roots]\nextra = ["{vendor}"]\n'
    )
    project_config(tree, "")
    again = daemons.start()
    again.ok("session.open", sessionId="t")
    assert "withheldGrants" not in again.ok("skills.load", name="smuggled", sessionId="t")


def test_the_repository_root_is_repo_root_apart_from_a_skills_source_root(
    client: Client, tree: dict[str, Path]
) -> None:
    """A listing's ``repoRoot`` is the repository; each skill's ``root`` is the folder it was
    found under. ``root`` on a listing or a trust answer is the repository's deprecated name."""
    listing = client.ok("skills.list")
    assert listing["repoRoot"] == listing["root"] == real(tree["project"])
    evil = next(s for s in listing["skills"] if s["name"] == "evil")
    assert evil["root"] == os.path.realpath(tree["skills"]) != listing["repoRoot"]
    inspect = client.ok("context.inspect")
    assert inspect["skills"]["repoRoot"] == inspect["trust"]["repoRoot"] == real(tree["project"])

    other = tree["tmp"] / "other"
    other.mkdir()
    answer = client.ok("trust.set", repoRoot=os.fspath(other), trusted=True)
    assert answer["repoRoot"] == answer["root"] == real(other)
    old_name = client.ok("trust.set", root=os.fspath(other), trusted=False)
    assert old_name["repoRoot"] == real(other) and old_name["trusted"] is False
    both = client.err("trust.set", repoRoot=os.fspath(other), root="/", trusted=True)
    assert both["code"] == -32602
    assert both["data"]["field"] == "root" and "repoRoot" in both["message"]
