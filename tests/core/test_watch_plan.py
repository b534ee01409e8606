"""What the daemon watches for a catalog, and that ``skillsd doctor`` reports the same."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.discovery.fs_watch_plan import watch_plan
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd.runtime.diagnosis_requests import doctor_report
from skillsd.runtime.services import Services
from skillsd_protocol.diagnosis import DoctorParams


def write_skill(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {directory.name}\ndescription: Does things.\n---\nBody\n"
    )


def test_roots_missing_roots_root_files_and_symlinked_skills(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    write_skill(roots / "pdf")
    write_skill(tmp_path / "elsewhere" / "linked")
    (roots / "linked").symlink_to(tmp_path / "elsewhere" / "linked")
    write_skill(tmp_path / "single")
    missing = tmp_path / "not" / "yet"
    plan = RootPlan(
        cwd=str(tmp_path),
        repo_root=str(tmp_path),
        roots=(
            Root(str(roots), "extra"),
            Root(str(missing), "extra"),
            Root(str(tmp_path / "single" / "SKILL.md"), "extra"),
        ),
    )
    watched = watch_plan(build_catalog(plan))
    real = os.path.realpath
    # Each directory alone: the root the scan listed, each skill's own directory (the linked
    # one at its real place), and the missing root's nearest existing ancestor as an anchor.
    assert watched.directories == {
        real(roots),
        real(roots / "pdf"),
        real(tmp_path / "elsewhere" / "linked"),
        real(tmp_path / "single"),
        real(tmp_path),
    }
    assert watched.anchors == {real(tmp_path)}
    assert watched.ancestors_of_missing == {real(missing), real(missing.parent)}
    # Only events on the way to the missing root count in the anchor.
    assert watched.relevant(real(missing.parent))
    assert not watched.relevant(real(tmp_path / "unrelated.txt"))
    assert watched.relevant(os.path.join(real(roots / "pdf"), "SKILL.md"))
    assert watched.relevant(os.path.join(real(roots), "new-skill"))
    assert watched.roots == (str(roots),)


def test_loops_and_huge_trees_are_watched_as_the_scan_walked_them(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "cat" / "kept")
    (root / "cat" / "back").symlink_to(root)  # a loop back to the root
    (root / "cat" / "self").symlink_to(root / "cat")  # a loop onto itself
    (root / "scripts-skill").mkdir()
    write_skill(root / "with-files")
    (root / "with-files" / "scripts").mkdir()
    (root / "with-files" / "agents").mkdir()
    big = tmp_path / "big"
    for n in range(30):
        (big / f"d{n}" / "sub").mkdir(parents=True)
    plan = RootPlan(
        cwd=str(tmp_path),
        repo_root=str(tmp_path),
        roots=(Root(str(root), "extra"), Root(str(big), "extra")),
    )
    config = Config(discovery=DiscoveryConfig(max_dirs=10))
    catalog = build_catalog(plan, config)
    watched = watch_plan(catalog)
    real = os.path.realpath
    # Every directory once, by its real path; the loops add nothing.
    assert {real(root), real(root / "cat"), real(root / "cat" / "kept")} <= watched.directories
    assert real(root / "with-files" / "scripts") in watched.directories
    assert real(root / "with-files" / "agents") in watched.directories
    assert not any("back" in d or "self" in d for d in watched.directories)
    # The big root stopped at maxDirs: no more of it is watched than the scan listed.
    in_big = [d for d in watched.directories if d.startswith(real(big))]
    assert 1 <= len(in_big) <= 1 + 10
    assert any(d.code == "discovery.max_dirs" for d in catalog.diagnostics)


def test_doctor_reports_what_the_daemon_would_watch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    skills = repo / ".agents" / "skills"
    write_skill(skills / "pdf")
    write_skill(tmp_path / "outside" / "linked")
    (skills / "linked").symlink_to(tmp_path / "outside" / "linked")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "SKILLSD_CONFIG": os.fspath(tmp_path / "none.toml"),
        "HOME": os.fspath(home),
    }
    svc = Services.create(
        cwd=os.fspath(repo),
        env=env,
        home=os.fspath(home),
        state_path=os.fspath(tmp_path / "state.json"),
        for_one_command=True,
    )
    report = asyncio.run(doctor_report(svc, DoctorParams()))
    # A skill reached through a symlink is watched at its real directory, as the daemon does.
    assert os.fspath(tmp_path / "outside" / "linked") in report.watch.directories
    assert os.fspath(skills) in report.watch.directories
