"""A process killed (SIGKILL) at any step of an install leaves the tree and the lock as they
were before or as they are after, never between; two installs into one lock both succeed."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillsd.installing import install
from skillsd_protocol.install import InstallParams
from tests.install.helpers import Origin, context, make_origin, skill_text, write_skill
from tests.support.cli import run_cli

pytestmark = pytest.mark.process

STEPS = ["fetched", "staged", "journaled", "placing", "placed", "locked"]


def _start_paused(
    args: list[str], cwd: Path, env: dict[str, str], step: str
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillsd", *args],
        cwd=cwd,
        env={**env, "SKILLSD_TEST_INSTALL_PAUSE_AT": step},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 30
    while b"paused at " + step.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None, seen.decode(errors="replace")
        ready, _, _ = select.select([proc.stderr], [], [], left)
        if ready:
            seen += os.read(proc.stderr.fileno(), 4096)
    return proc


def _skills_on_disk(project: Path) -> dict[str, list[str]]:
    found = {}
    for folder in (project / ".agents" / "skills", project / ".claude" / "skills"):
        found[str(folder.relative_to(project))] = (
            sorted(os.listdir(folder)) if folder.is_dir() else []
        )
    return found


def _staging_left(project: Path) -> list[str]:
    """Staging folders and journals anywhere: in the repository (never made there) and in the
    state directory's work folders (cleared by the next command)."""
    state = project.parent / "state" / "skillsd" / "installs"
    left = [str(p) for p in project.rglob(".skillsd-staging-*")]
    left += [str(p) for p in project.rglob("*journal*")]
    if state.is_dir():
        left += [str(p) for p in state.glob("*/staging-*")]
        left += [str(p) for p in state.glob("*/journal.json")]
    return left


@pytest.mark.parametrize("step", STEPS)
def test_sigkill_at_each_step(
    step: str, project: Path, env: dict[str, str], origin: Origin
) -> None:
    install(InstallParams(source=origin.url), context(project, env))
    lock_before = (project / "skills-lock.json").read_bytes()
    alpha_before = (project / ".agents" / "skills" / "alpha" / "SKILL.md").read_text()
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "Version 2."))
    write_skill(origin.work / "skills" / "gamma")
    origin.commit("v2")

    proc = _start_paused(["add", origin.url], project, env, step)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    # The lock file itself is always whole: before, or after.
    lock_now = (project / "skills-lock.json").read_bytes()
    committed = lock_now != lock_before
    assert committed == (step == "locked")
    if committed:
        assert set(json.loads(lock_now)["skills"]) == {"alpha", "beta", "gamma"}

    # The next command finishes or undoes what the killed one left, then reports.
    listing = run_cli("installed", "--json", cwd=project, env=env)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    statuses = {s["name"]: s["status"] for s in json.loads(listing.stdout)["skills"]}
    alpha_now = (project / ".agents" / "skills" / "alpha" / "SKILL.md").read_text()
    if committed:
        assert statuses == {"alpha": "ok", "beta": "ok", "gamma": "ok"}
        assert "Version 2." in alpha_now
        expected = ["alpha", "beta", "gamma"]
    else:
        assert statuses == {"alpha": "ok", "beta": "ok"}
        assert alpha_now == alpha_before
        expected = ["alpha", "beta"]
    assert _skills_on_disk(project) == {".agents/skills": expected, ".claude/skills": expected}
    assert _staging_left(project) == []
    assert not list(project.glob(".skills-lock.json.*"))  # bookkeeping is never here


def test_sigkill_during_a_first_install_leaves_nothing(
    project: Path, env: dict[str, str], origin: Origin
) -> None:
    proc = _start_paused(["add", origin.url], project, env, "placing")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not (project / "skills-lock.json").exists()
    listing = run_cli("installed", "--json", cwd=project, env=env)
    assert json.loads(listing.stdout)["skills"] == []
    assert _skills_on_disk(project) == {".agents/skills": [], ".claude/skills": []}
    assert _staging_left(project) == []


def test_two_concurrent_installs_into_one_lock(
    tmp_path: Path, project: Path, env: dict[str, str], origin: Origin
) -> None:
    second = make_origin(tmp_path / "second", env)
    for i in range(20):
        write_skill(second.work / "skills" / f"other-{i:02}", **{"notes.md": "n" * 2000})
    second.commit()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "skillsd", "add", url, "--json"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for url in (origin.url, second.url)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outputs]
    lock = json.loads((project / "skills-lock.json").read_text())
    assert len(lock["skills"]) == 22
    listing = run_cli("installed", "--json", cwd=project, env=env)
    assert {s["status"] for s in json.loads(listing.stdout)["skills"]} == {"ok"}


def test_a_failed_move_puts_everything_back(
    monkeypatch: pytest.MonkeyPatch, project: Path, env: dict[str, str], origin: Origin
) -> None:
    from skillsd.core.errors import SkillsdError
    from skillsd.installing import transaction

    install(InstallParams(source=origin.url), context(project, env))
    lock_before = (project / "skills-lock.json").read_bytes()
    on_disk = _skills_on_disk(project)
    alpha = (project / ".agents" / "skills" / "alpha" / "SKILL.md").read_text()
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "Version 2."))
    write_skill(origin.work / "skills" / "gamma")
    origin.commit("v2")
    real_rename = os.rename

    def failing(src: str, dest: str) -> None:
        if dest.endswith(os.path.join(".claude", "skills", "gamma")):
            raise OSError(28, "No space left on device", dest)
        real_rename(src, dest)

    monkeypatch.setattr(transaction.os, "rename", failing)
    with pytest.raises(SkillsdError) as caught:
        install(InstallParams(source=origin.url), context(project, env))
    assert caught.value.kind == "install_failed" and caught.value.data.step == "place"
    assert "No space left on device" in caught.value.message
    assert (project / "skills-lock.json").read_bytes() == lock_before
    assert _skills_on_disk(project) == on_disk
    assert (project / ".agents" / "skills" / "alpha" / "SKILL.md").read_text() == alpha
    assert _staging_left(project) == []
    assert not list(project.glob(".skills-lock.json.*"))  # bookkeeping is never here
