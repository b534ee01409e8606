"""What the daemon watches for a catalog, and that ``skillsd doctor`` reports the same."""

from __future__ import annotations

import os
from pathlib import Path

from skillsd.cli.doctor import diagnose
from skillsd.core.catalog import build_catalog
from skillsd.core.discovery import Root, RootPlan
from skillsd.core.watch_plan import watch_plan


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
    assert watched.targets == {
        (str(roots), True),
        (str(tmp_path), False),  # the nearest existing ancestor of the missing root
        (str(tmp_path / "single"), True),
        (str(tmp_path / "elsewhere" / "linked"), True),  # real dir outside every root
    }
    assert watched.ancestors_of_missing == {str(missing), str(missing.parent)}
    assert watched.directories == sorted(p for p, _ in watched.targets)
    assert str(tmp_path / "elsewhere" / "linked") in watched.prefixes


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
    report = diagnose(
        os.fspath(repo),
        env=env,
        home=os.fspath(home),
        extra_roots=[],
        state_path=os.fspath(tmp_path / "state.json"),
    )
    # A skill reached through a symlink is watched at its real directory, as the daemon does.
    assert os.fspath(tmp_path / "outside" / "linked") in report.watch.directories
    assert os.fspath(skills) in report.watch.directories
