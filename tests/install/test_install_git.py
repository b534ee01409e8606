"""Installing from real git repositories (bare, served as file://): placement, links, lock,
refs, update, local edits, remove, restore on a fresh clone."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.install.fs_skill_digest import skill_digest
from skillsd.installing import install, installed, remove, restore, update
from skillsd_protocol.install import (
    InstalledParams,
    InstallParams,
    RemoveParams,
    RestoreParams,
    UpdateParams,
)
from tests.install.helpers import Origin, context, git, skill_text, write_skill
from tests.support.cli import run_cli

pytestmark = pytest.mark.process


def _lock(project: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((project / "skills-lock.json").read_text())


def test_install_places_links_and_locks(project: Path, env: dict[str, str], origin: Origin) -> None:
    head = git("rev-parse", "HEAD", cwd=origin.work, env=env)
    result = install(InstallParams(source=origin.url), context(project, env))
    assert [s.name for s in result.installed] == ["alpha", "beta"]
    canonical = project / ".agents" / "skills" / "alpha"
    assert (canonical / "scripts" / "run.sh").read_text() == "#!/bin/sh\necho alpha\n"
    assert os.access(canonical / "scripts" / "run.sh", os.X_OK)
    assert not (canonical / ".git").exists()
    # Claude Code reads .claude/skills: a relative link that resolves from there.
    link = project / ".claude" / "skills" / "alpha"
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    assert (link / "references" / "guide.md").read_text() == "# Guide\n"
    assert result.installed[0].links == [str(link)]
    lock = _lock(project)
    entry = lock["skills"]["alpha"]
    assert entry["sourceType"] == "git" and entry["commit"] == head
    assert entry["path"] == "skills/alpha" and entry["source"] == origin.url
    assert entry["digest"] == skill_digest(str(canonical))
    assert entry["agents"] == ["claude-code"] and entry["mode"] == "link"
    assert (project / "skills-lock.json").read_text().endswith("}\n")
    statuses = installed(InstalledParams(), context(project, env)).skills
    assert [(s.name, s.status) for s in statuses] == [("alpha", "ok"), ("beta", "ok")]
    # Links are relative: the project can move and they still resolve.
    moved = project.parent / "moved"
    project.rename(moved)
    assert {s.status for s in installed(InstalledParams(), context(moved, env)).skills} == {"ok"}


def test_refs_branch_tag_and_commit(project: Path, env: dict[str, str], origin: Origin) -> None:
    v1 = git("rev-parse", "HEAD", cwd=origin.work, env=env)
    git("checkout", "-q", "-b", "next", cwd=origin.work, env=env)
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "Next."))
    next_commit = origin.commit("next")
    git("checkout", "-q", "main", cwd=origin.work, env=env)
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "Main v2."))
    origin.commit("v2")
    body = project / ".agents" / "skills" / "alpha" / "SKILL.md"
    ctx = context(project, env)
    for ref, commit, text in [
        ("v1", v1, "Do the thing."),
        ("next", next_commit, "Next."),
        (v1, v1, "Do the thing."),
        (v1[:10], v1, "Do the thing."),
    ]:
        result = install(InstallParams(source=origin.url, ref=ref, names=["alpha"]), ctx)
        assert result.installed[0].commit == commit, ref
        assert text in body.read_text(), ref
        assert _lock(project)["skills"]["alpha"]["ref"] == ref
    with pytest.raises(SkillsdError) as caught:
        install(InstallParams(source=origin.url, ref="no-such-ref"), ctx)
    assert caught.value.kind == "install_failed" and caught.value.data.step == "fetch"
    assert "no-such-ref" in caught.value.message


def test_update_check_then_apply(project: Path, env: dict[str, str], origin: Origin) -> None:
    ctx = context(project, env)
    install(InstallParams(source=origin.url), ctx)
    install(InstallParams(source=origin.url, ref="v1", names=["beta"]), ctx)
    assert update(UpdateParams(), ctx).updates == []  # nothing moved yet
    alpha = origin.work / "skills" / "alpha"
    (alpha / "SKILL.md").write_text(skill_text("alpha", "Better."))
    (alpha / "references" / "guide.md").unlink()
    (alpha / "references" / "more.md").write_text("more\n")
    (origin.work / "skills" / "beta" / "SKILL.md").write_text(skill_text("beta", "B2"))
    v2 = origin.commit("v2")
    before = (project / "skills-lock.json").read_bytes()
    [check] = update(UpdateParams(check=True), ctx).updates
    # beta is pinned to the tag v1, which did not move.
    assert check.name == "alpha" and not check.applied and check.skipped == "check"
    assert check.to == v2
    assert (check.files.added, check.files.changed, check.files.removed) == (
        ["references/more.md"],
        ["SKILL.md"],
        ["references/guide.md"],
    )
    assert (project / "skills-lock.json").read_bytes() == before
    [applied] = update(UpdateParams(names=["alpha"]), ctx).updates
    assert applied.applied
    assert _lock(project)["skills"]["alpha"]["commit"] == v2
    assert "Better." in (project / ".claude" / "skills" / "alpha" / "SKILL.md").read_text()
    assert update(UpdateParams(), ctx).updates == []


def test_local_edits_are_named_and_kept(project: Path, env: dict[str, str], origin: Origin) -> None:
    ctx = context(project, env)
    install(InstallParams(source=origin.url), ctx)
    edited = project / ".agents" / "skills" / "alpha" / "references" / "guide.md"
    edited.write_text("my notes\n")
    (project / ".agents" / "skills" / "alpha" / "extra.md").write_text("x")
    (project / ".claude" / "skills" / "beta").unlink()
    by_name = {s.name: s for s in installed(InstalledParams(), ctx).skills}
    assert by_name["alpha"].status == "modified"
    assert by_name["alpha"].files == ["extra.md", "references/guide.md"]
    assert by_name["beta"].status == "links-broken"
    assert by_name["beta"].broken_links == [str(project / ".claude" / "skills" / "beta")]
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "v2"))
    origin.commit("v2")
    [skipped] = update(UpdateParams(names=["alpha"]), ctx).updates
    assert not skipped.applied and "references/guide.md" in (skipped.skipped or "")
    assert edited.read_text() == "my notes\n"
    with pytest.raises(SkillsdError) as caught:
        restore(RestoreParams(), ctx)
    assert caught.value.kind == "digest_mismatch"
    assert caught.value.data.files == ["extra.md", "references/guide.md"]
    cli = run_cli("installed", cwd=project, env=env)
    assert cli.returncode == 1 and "modified references/guide.md" in cli.stdout
    [forced] = update(UpdateParams(names=["alpha"], force=True), ctx).updates
    assert forced.applied and not (project / ".agents" / "skills" / "alpha" / "extra.md").exists()


def test_remove_only_what_the_lock_owns(project: Path, env: dict[str, str], origin: Origin) -> None:
    ctx = context(project, env)
    install(InstallParams(source=origin.url), ctx)
    write_skill(project / ".agents" / "skills" / "mine")
    result = remove(RemoveParams(name="alpha"), ctx)
    assert result.removed == [
        str(project / ".agents" / "skills" / "alpha"),
        str(project / ".claude" / "skills" / "alpha"),
    ]
    assert not os.path.lexists(project / ".claude" / "skills" / "alpha")
    assert list(_lock(project)["skills"]) == ["beta"]
    with pytest.raises(SkillsdError) as caught:
        remove(RemoveParams(name="mine"), ctx)
    assert caught.value.kind == "not_installed"
    assert (project / ".agents" / "skills" / "mine" / "SKILL.md").exists()
    with pytest.raises(SkillsdError) as caught:
        remove(RemoveParams(name="bta"), ctx)
    assert caught.value.data.suggestions == ["beta"]


def test_existing_folder_not_owned_needs_force(
    project: Path, env: dict[str, str], origin: Origin
) -> None:
    ctx = context(project, env)
    write_skill(project / ".agents" / "skills" / "alpha", **{"notes.md": "mine"})
    with pytest.raises(SkillsdError) as caught:
        install(InstallParams(source=origin.url), ctx)
    assert caught.value.kind == "already_exists"
    assert caught.value.data.path == str(project / ".agents" / "skills" / "alpha")
    assert (project / ".agents" / "skills" / "alpha" / "notes.md").read_text() == "mine"
    assert not (project / "skills-lock.json").exists()
    assert not (project / ".agents" / "skills" / "beta").exists()
    install(InstallParams(source=origin.url, force=True), ctx)
    assert not (project / ".agents" / "skills" / "alpha" / "notes.md").exists()


def test_restore_on_a_fresh_clone_gives_the_same_digests(
    tmp_path: Path, project: Path, env: dict[str, str], origin: Origin
) -> None:
    install(InstallParams(source=origin.url, names=["alpha"]), context(project, env))
    install(InstallParams(source=origin.url, ref="v1", names=["beta"]), context(project, env))
    # The source moves on; the lock keeps the team on what was installed.
    (origin.work / "skills" / "alpha" / "SKILL.md").write_text(skill_text("alpha", "later"))
    origin.commit("later")
    # Only the lock file is committed (a team would ignore or commit .agents; here: ignored).
    (project / ".gitignore").write_text(".agents/\n.claude/\n")
    git("add", "-A", cwd=project, env=env)
    git("commit", "-qm", "skills", cwd=project, env=env)
    clone = tmp_path / "teammate"
    git("clone", "-q", str(project), str(clone), cwd=tmp_path, env=env)
    (clone / ".claude").mkdir()
    mate_env = dict(env, XDG_STATE_HOME=str(tmp_path / "mate-state"))
    result = restore(RestoreParams(), context(clone, mate_env))
    assert sorted(s.name for s in result.restored) == ["alpha", "beta"]
    for name in ("alpha", "beta"):
        ours = skill_digest(str(project / ".agents" / "skills" / name))
        assert skill_digest(str(clone / ".agents" / "skills" / name)) == ours
        assert (clone / ".claude" / "skills" / name / "SKILL.md").exists()
    assert "later" not in (clone / ".agents" / "skills" / "alpha" / "SKILL.md").read_text()
    assert (clone / "skills-lock.json").read_bytes() == (project / "skills-lock.json").read_bytes()
    again = restore(RestoreParams(), context(clone, mate_env))
    assert again.restored == [] and again.unchanged == ["alpha", "beta"]


def test_restore_refuses_a_source_that_changed_under_the_lock(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    source = tmp_path / "vendor"
    write_skill(source / "gamma", **{"a.md": "one\n"})
    ctx = context(project, env)
    install(InstallParams(source=str(source)), ctx)
    assert _lock(project)["skills"]["gamma"]["source"] == str(source)
    (source / "gamma" / "a.md").write_text("tampered\n")
    shutil.rmtree(project / ".agents" / "skills" / "gamma")
    with pytest.raises(SkillsdError) as caught:
        restore(RestoreParams(), ctx)
    assert caught.value.kind == "digest_mismatch"
    assert caught.value.data.files == ["a.md"] and "a.md" in caught.value.message
    assert not (project / ".agents" / "skills" / "gamma").exists()


def test_user_scope(project: Path, env: dict[str, str], origin: Origin) -> None:
    home = Path(env["HOME"])
    (home / ".claude").mkdir()
    result = install(InstallParams(source=origin.url, scope="user"), context(project, env))
    assert result.installed[0].path == str(home / ".agents" / "skills" / "alpha")
    assert (home / ".claude" / "skills" / "alpha" / "SKILL.md").exists()
    assert result.lock == str(Path(env["XDG_STATE_HOME"]) / "skillsd" / "skills-lock.json")
    assert not (project / "skills-lock.json").exists()
