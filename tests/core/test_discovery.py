"""Discovery: repo root, roots per scope, and the scan over real trees (docs/embedding.md)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.discovery import fs_roots as discovery
from skillsd.core.discovery.agent_folders import SKILL_FOLDERS, user_folder_path
from skillsd.core.discovery.fs_roots import (
    Root,
    compute_roots,
    find_repo_root,
    nearest_existing_ancestor,
    scan,
    scan_plan,
)
from skillsd.core.policy.config import Config, DiscoveryConfig, RootsConfig


def make_skill(directory: Path, name: str | None = None) -> Path:
    """A minimal skill at ``directory`` (its name defaults to the directory name)."""
    directory.mkdir(parents=True, exist_ok=True)
    skill_file = directory / "SKILL.md"
    skill_file.write_text(f"---\nname: {name or directory.name}\ndescription: test\n---\nbody\n")
    return skill_file


def found_paths(roots: list[Root], **kwargs: Any) -> list[str]:
    return [s.path for s in scan(roots, **kwargs).skills]


def extra(path: Path) -> Root:
    return Root(str(path), "extra")


# -- repo root ------------------------------------------------------------------------------


def test_repo_root_is_nearest_ancestor_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".hg").mkdir(parents=True)
    (tmp_path / "outer" / "repo" / ".git").mkdir(parents=True)
    cwd = tmp_path / "outer" / "repo" / "a" / "b"
    cwd.mkdir(parents=True)
    markers = (".git", ".jj", ".hg")
    assert find_repo_root(str(cwd), markers, {}) == str(tmp_path / "outer" / "repo")
    assert find_repo_root(str(tmp_path / "outer"), markers, {}) == str(tmp_path / "outer")


def test_repo_root_marker_may_be_a_file(tmp_path: Path) -> None:
    # A git worktree has a `.git` file, not a directory.
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: elsewhere\n")
    cwd = tmp_path / "wt" / "src"
    cwd.mkdir()
    assert find_repo_root(str(cwd), (".git",), {}) == str(tmp_path / "wt")


def test_repo_root_defaults_to_cwd_without_markers(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    cwd.mkdir()
    assert find_repo_root(str(cwd), ("no-such-marker-anywhere",), {}) == str(cwd)


def test_repo_root_env_override_wins(tmp_path: Path) -> None:
    (tmp_path / "r" / ".git").mkdir(parents=True)
    cwd = tmp_path / "r" / "x"
    cwd.mkdir()
    env = {"SKILLSD_ROOT": str(tmp_path)}
    assert find_repo_root(str(cwd), (".git",), env) == str(tmp_path)
    # Relative to cwd.
    assert find_repo_root(str(cwd), (".git",), {"SKILLSD_ROOT": ".."}) == str(tmp_path / "r")


def test_configured_markers_replace_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "p" / ".git").mkdir(parents=True)
    (tmp_path / "p" / "q" / ".mymark").mkdir(parents=True)
    cwd = tmp_path / "p" / "q" / "r"
    cwd.mkdir()
    config = Config(discovery=DiscoveryConfig(markers=(".mymark",)))
    plan = compute_roots(str(cwd), config, home=str(tmp_path / "home"), env={})
    assert plan.repo_root == str(tmp_path / "p" / "q")


# -- roots ----------------------------------------------------------------------------------


def test_roots_cover_the_chain_nearest_first_then_user_then_extra(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    home = tmp_path / "home"
    plan = compute_roots(
        str(cwd),
        Config(roots=RootsConfig(extra=("cfg-extra",))),
        home=str(home),
        env={"AGENT_SKILLS_PATH": f"/env/one{os.pathsep}{os.pathsep} {os.pathsep}~/env-two"},
        client_extra_roots=["/client"],
    )
    assert plan.cwd == str(cwd)
    assert plan.repo_root == str(repo)
    got = [(r.scope, r.distance, r.path) for r in plan.roots]
    repo_folders = sorted(f.path for f in SKILL_FOLDERS if f.scope == "repo")
    # Every agent's project folders, the canonical one and the other agents' alike.
    assert {".agents/skills", ".claude/skills", ".github/skills", ".cursor/skills"} <= set(
        repo_folders
    )
    expected_repo = [
        ("repo", distance, str(directory / name))
        for distance, directory in enumerate([cwd, repo / "pkg", repo])
        for name in repo_folders  # path order
    ]
    expected_user = sorted(
        {
            ("user", 0, user_folder_path(f, home=str(home), env={}))
            for f in SKILL_FOLDERS
            if f.scope == "user"
        },
        key=lambda r: r[2],
    )
    user_paths = {path for _, _, path in expected_user}
    assert {
        str(home / ".agents/skills"),
        str(home / ".claude/skills"),
        str(home / ".codex/skills"),
        str(home / ".config/opencode/skills"),
        str(home / ".copilot/skills"),
        "/etc/codex/skills",
        "/etc/claude-code/.claude/skills",
    } <= user_paths
    expected_extra = sorted(
        [
            ("extra", 0, "/env/one"),
            ("extra", 0, str(home / "env-two")),
            # A relative config entry starts at the repo root, never at cwd (docs/embedding.md).
            ("extra", 0, str(repo / "cfg-extra")),
            ("extra", 0, "/client"),
        ]
    )
    assert got == expected_repo + expected_user + expected_extra


def test_compat_roots_off_keeps_only_dot_agents(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = Config(discovery=DiscoveryConfig(compat_roots=False))
    plan = compute_roots(str(tmp_path), config, home="/h", env={})
    assert [r.path for r in plan.roots] == [
        str(tmp_path / ".agents" / "skills"),
        "/h/.agents/skills",
    ]


def test_codex_home_and_agents_of_each_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    plan = compute_roots(str(tmp_path), home="/h", env={"CODEX_HOME": "/opt/codex"})
    agents = {r.path: r.agents for r in plan.roots}
    assert agents["/opt/codex/skills"] == ("codex",)
    # Cursor reads ~/.codex/skills itself, whatever $CODEX_HOME says.
    assert agents["/h/.codex/skills"] == ("cursor",)
    assert agents["/h/.config/opencode/skills"] == ("opencode",)
    assert agents["/h/.claude/skills"] == ("claude-code", "opencode", "cursor", "goose")
    assert agents[str(tmp_path / ".opencode/skills")] == ("opencode",)
    assert agents[str(tmp_path / ".github/skills")] == ("copilot",)
    assert agents["/h/.agent/skills"] == ()
    # A relative or ~ $CODEX_HOME is taken from the home directory.
    for value in ("codex", "~/codex"):
        plan = compute_roots(str(tmp_path), home="/h", env={"CODEX_HOME": value})
        assert "/h/codex/skills" in [r.path for r in plan.roots]


def test_one_folder_reached_as_two_roots_keeps_every_reader(tmp_path: Path) -> None:
    # $CODEX_HOME pointed at ~/.agents: one root, read by Codex and opencode.
    plan = compute_roots(str(tmp_path), home="/h", env={"CODEX_HOME": "/h/.agents"})
    (root,) = [r for r in plan.roots if r.path == "/h/.agents/skills"]
    assert root.agents[:3] == ("codex", "opencode", "copilot") and "cursor" in root.agents


def test_agents_that_read_the_cwd_only_do_not_see_a_parents_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "pkg"
    sub.mkdir()
    plan = compute_roots(str(sub), home="/h", env={})
    agents = {r.path: r.agents for r in plan.roots}
    here, parent = agents[str(sub / ".agents/skills")], agents[str(tmp_path / ".agents/skills")]
    assert "gemini-cli" in here and "cursor" in here
    # Codex, opencode and Copilot walk up to the repository root; Gemini CLI and Cursor do not.
    assert parent == ("codex", "opencode", "copilot")
    assert agents[str(tmp_path / ".gemini/skills")] == ()


def test_variables_that_move_or_add_agents_folders(tmp_path: Path) -> None:
    env = {
        "CLAUDE_CONFIG_DIR": "/cfg/claude",
        "COPILOT_HOME": "/cfg/copilot",
        "COPILOT_SKILLS_DIRS": "/team/skills, ~/more",
        "XDG_CONFIG_HOME": "/xdg",
    }
    plan = compute_roots(str(tmp_path), home="/h", env=env)
    agents = {r.path: r.agents for r in plan.roots}
    assert agents["/cfg/claude/skills"] == ("claude-code",)
    assert agents["/cfg/copilot/skills"] == ("copilot",)
    assert agents["/team/skills"] == ("copilot",) and agents["/h/more"] == ("copilot",)
    assert agents["/xdg/opencode/skills"] == ("opencode",)
    # What moved is kept with the plan, for the plugins and for one agent's precedence.
    assert dict(plan.env) == env and plan.home == "/h"


def test_auto_off_uses_only_extra_roots(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = Config(discovery=DiscoveryConfig(auto=False), roots=RootsConfig(extra=("/x",)))
    plan = compute_roots(str(tmp_path), config, home="/h", env={"AGENT_SKILLS_PATH": "/y"})
    assert [(r.scope, r.path) for r in plan.roots] == [("extra", "/x"), ("extra", "/y")]


def test_the_same_root_path_is_listed_once_with_the_best_scope(tmp_path: Path) -> None:
    # cwd == home: the repo root's .agents/skills is also the user root.
    plan = compute_roots(
        str(tmp_path),
        home=str(tmp_path),
        env={},
        client_extra_roots=[str(tmp_path / ".agents/skills")],
    )
    matching = [r for r in plan.roots if r.path == str(tmp_path / ".agents" / "skills")]
    assert [r.scope for r in matching] == ["repo"]


def test_skillsd_root_outside_cwd_is_its_own_chain(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cwd").mkdir()
    plan = compute_roots(
        str(tmp_path / "cwd"),
        Config(discovery=DiscoveryConfig(compat_roots=False)),
        home="/h",
        env={"SKILLSD_ROOT": str(tmp_path / "elsewhere")},
    )
    assert [r.path for r in plan.roots if r.scope == "repo"] == [
        str(tmp_path / "elsewhere" / ".agents" / "skills")
    ]


def test_nearest_existing_ancestor(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert nearest_existing_ancestor(str(tmp_path / "a" / "b" / "c")) == str(tmp_path / "a")
    assert nearest_existing_ancestor(str(tmp_path / "a")) == str(tmp_path / "a")


# -- scan -----------------------------------------------------------------------------------


def test_category_folders_and_skills_not_descended(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(root / "alpha")
    make_skill(root / "cat" / "beta")
    make_skill(root / "cat" / "deeper" / "gamma")
    # A SKILL.md inside a skill is part of that skill, not another skill.
    make_skill(root / "alpha" / "nested")
    result = scan([extra(root)])
    assert [s.dir for s in result.skills] == [
        str(root / "alpha"),
        str(root / "cat" / "beta"),
        str(root / "cat" / "deeper" / "gamma"),
    ]
    assert result.diagnostics == []
    skill = result.skills[0]
    assert skill.path == str(root / "alpha" / "SKILL.md")
    assert skill.real_path == os.path.realpath(skill.path)
    st = os.stat(skill.path)
    assert (skill.stat.mtime_ns, skill.stat.size, skill.stat.ino) == (
        st.st_mtime_ns,
        st.st_size,
        st.st_ino,
    )


def test_extra_root_that_is_a_skill(tmp_path: Path) -> None:
    skill_file = make_skill(tmp_path / "solo")
    make_skill(tmp_path / "solo" / "inner")  # not a separate skill
    assert found_paths([extra(tmp_path / "solo")]) == [str(skill_file)]
    # The SKILL.md path itself works as a root too.
    assert found_paths([extra(skill_file)]) == [str(skill_file)]


def test_resource_counts(tmp_path: Path) -> None:
    skill = tmp_path / "r" / "tool"
    make_skill(skill)
    (skill / "scripts").mkdir()
    (skill / "scripts" / "a.py").write_text("")
    (skill / "scripts" / "b.sh").write_text("")
    (skill / "scripts" / ".hidden").write_text("")
    (skill / "references" / "deep").mkdir(parents=True)
    (skill / "references" / "deep" / "x.md").write_text("")  # not counted: only direct entries
    (skill / "assets").write_text("a file, not the folder")  # counts as other
    (skill / "LICENSE.txt").write_text("")
    (skill / ".DS_Store").write_text("")
    [found] = scan([extra(tmp_path / "r")]).skills
    assert (found.resources.scripts, found.resources.references) == (2, 1)
    assert (found.resources.assets, found.resources.other) == (0, 2)


@pytest.mark.parametrize("limit", [1, 3, 6])
def test_max_depth_boundary(tmp_path: Path, limit: int) -> None:
    root = tmp_path / "root"
    at_limit = root.joinpath(*[f"d{i}" for i in range(1, limit)], "ok")
    beyond = root.joinpath(*[f"e{i}" for i in range(1, limit + 1)], "too-deep")
    make_skill(at_limit)
    make_skill(beyond)
    result = scan([extra(root)], max_depth=limit)
    assert [s.dir for s in result.skills] == [str(at_limit)]
    [diag] = result.diagnostics
    assert (diag.code, diag.severity, diag.path) == ("discovery.max_depth", "warning", str(root))
    # Without the deeper tree nothing is cut off, so no warning.
    shutil.rmtree(root / "e1")
    assert scan([extra(root)], max_depth=limit).diagnostics == []


def test_default_max_depth_is_six(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root.joinpath("a", "b", "c", "d", "e", "six"))
    make_skill(root.joinpath("a", "b", "c", "d", "e", "f", "seven"))
    result = scan([extra(root)])
    assert [os.path.basename(s.dir) for s in result.skills] == ["six"]
    assert [d.code for d in result.diagnostics] == ["discovery.max_depth"]


def test_max_dirs_boundary(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for i in range(5):
        make_skill(root / f"s{i}")
    exact = scan([extra(root)], max_dirs=5)
    assert len(exact.skills) == 5
    assert exact.diagnostics == []
    cut = scan([extra(root)], max_dirs=4)
    assert [os.path.basename(s.dir) for s in cut.skills] == ["s0", "s1", "s2", "s3"]
    [diag] = cut.diagnostics
    assert (diag.code, diag.severity, diag.path) == ("discovery.max_dirs", "warning", str(root))
    assert str(root) in diag.message


def test_max_dirs_counts_category_folders(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root / "cat" / "one")
    make_skill(root / "cat" / "two")
    assert len(scan([extra(root)], max_dirs=3).skills) == 2
    assert len(scan([extra(root)], max_dirs=2).skills) == 1


def test_skips_git_and_node_modules_but_scans_dot_folders(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root / ".git" / "hidden-in-git")
    make_skill(root / "node_modules" / "pkg")
    make_skill(root / "sub" / "node_modules" / "pkg2")
    make_skill(root / ".curated" / "kept")
    make_skill(root / ".system" / "also-kept")
    names = [os.path.basename(s.dir) for s in scan([extra(root)]).skills]
    assert names == ["kept", "also-kept"]


def test_symlinked_root_and_skill_dir_are_followed(tmp_path: Path) -> None:
    real_root = tmp_path / "store"
    make_skill(real_root / "one")
    elsewhere = make_skill(tmp_path / "elsewhere" / "two")
    (real_root / "two").symlink_to(tmp_path / "elsewhere" / "two", target_is_directory=True)
    link_root = tmp_path / "linked-root"
    link_root.symlink_to(real_root, target_is_directory=True)
    result = scan([extra(link_root)])
    assert [s.path for s in result.skills] == [
        str(link_root / "one" / "SKILL.md"),
        str(link_root / "two" / "SKILL.md"),
    ]
    assert [s.real_path for s in result.skills] == [
        str(real_root.resolve() / "one" / "SKILL.md"),
        str(elsewhere.resolve()),
    ]


def test_symlinked_skill_file_is_keyed_by_its_target(tmp_path: Path) -> None:
    target = make_skill(tmp_path / "shared" / "tool")
    (tmp_path / "root" / "tool").mkdir(parents=True)
    (tmp_path / "root" / "tool" / "SKILL.md").symlink_to(target)
    [found] = scan([extra(tmp_path / "root")]).skills
    assert found.path == str(tmp_path / "root" / "tool" / "SKILL.md")
    assert found.real_path == str(target.resolve())
    assert found.stat.ino == os.stat(target).st_ino


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root / "a" / "skill")
    (root / "a" / "back").symlink_to(root, target_is_directory=True)
    (root / "self").symlink_to(root / "self", target_is_directory=True)  # dangling self-loop
    result = scan([extra(root)])
    assert [s.dir for s in result.skills] == [str(root / "a" / "skill")]


def test_same_file_via_two_roots_is_one_skill_of_the_first_scope(tmp_path: Path) -> None:
    make_skill(tmp_path / "user-root" / "tool")
    repo_root = tmp_path / "repo-root"
    repo_root.mkdir()
    (repo_root / "tool").symlink_to(tmp_path / "user-root" / "tool", target_is_directory=True)
    result = scan([Root(str(tmp_path / "user-root"), "user"), Root(str(repo_root), "repo")])
    [found] = result.skills
    assert found.root.scope == "repo"
    assert found.path == str(repo_root / "tool" / "SKILL.md")


def test_two_roots_with_one_real_path_are_scanned_once(tmp_path: Path) -> None:
    make_skill(tmp_path / "store" / "tool")
    (tmp_path / "alias").symlink_to(tmp_path / "store", target_is_directory=True)
    result = scan([Root(str(tmp_path / "alias"), "user"), Root(str(tmp_path / "store"), "extra")])
    assert [(s.root.scope, s.path) for s in result.skills] == [
        ("user", str(tmp_path / "alias" / "tool" / "SKILL.md"))
    ]


def test_ordering_scope_then_distance_then_path(tmp_path: Path) -> None:
    roots = [
        Root(str(tmp_path / "x"), "extra"),
        Root(str(tmp_path / "u"), "user"),
        Root(str(tmp_path / "far"), "repo", distance=1),
        Root(str(tmp_path / "near"), "repo", distance=0),
    ]
    for root in ("x", "u", "far", "near"):
        make_skill(tmp_path / root / "b")
        make_skill(tmp_path / root / "a")
    got = [(s.root.scope, os.path.relpath(s.dir, tmp_path)) for s in scan(roots).skills]
    assert got == [
        ("repo", "near/a"),
        ("repo", "near/b"),
        ("repo", "far/a"),
        ("repo", "far/b"),
        ("user", "u/a"),
        ("user", "u/b"),
        ("extra", "x/a"),
        ("extra", "x/b"),
    ]


def test_missing_roots_are_reported_not_diagnosed(tmp_path: Path) -> None:
    make_skill(tmp_path / "exists" / "one")
    result = scan([extra(tmp_path / "exists"), extra(tmp_path / "absent")])
    assert [r.path for r in result.missing_roots] == [str(tmp_path / "absent")]
    assert result.diagnostics == []
    assert len(result.skills) == 1


def test_root_that_is_a_plain_file_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = scan([extra(tmp_path / "file")])
    assert result.skills == []
    [diag] = result.diagnostics
    assert diag.code == "discovery.unreadable"
    assert diag.path == str(tmp_path / "file")


def test_skill_md_that_is_a_directory_or_broken_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "weird" / "SKILL.md").mkdir(parents=True)
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").symlink_to(tmp_path / "nowhere")
    result = scan([extra(root)])
    assert result.skills == []
    assert sorted((d.code, d.path) for d in result.diagnostics) == [
        ("discovery.not_a_file", str(root / "broken" / "SKILL.md")),
        ("discovery.not_a_file", str(root / "weird" / "SKILL.md")),
    ]


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores chmod 000 permissions"
)
def test_unreadable_directory_is_a_diagnostic(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root / "ok")
    locked = root / "locked"
    make_skill(locked / "inner")
    locked.chmod(0)
    try:
        result = scan([extra(root)])
    finally:
        locked.chmod(0o755)
    assert [os.path.basename(s.dir) for s in result.skills] == ["ok"]
    [diag] = result.diagnostics
    assert (diag.code, diag.path) == ("discovery.unreadable", str(locked))


class _Vanishing:
    """An ``os.scandir`` stand-in that deletes something right before or after a listing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: Path, delete: Path, after: bool):
        self.real = os.scandir
        self.at, self.delete, self.after = str(at), delete, after
        monkeypatch.setattr(discovery.os, "scandir", self)

    def _remove(self) -> None:
        if self.delete.is_dir():
            shutil.rmtree(self.delete)
        elif self.delete.exists():
            self.delete.unlink()

    def __call__(self, path: Any) -> Any:
        # The patch is process-wide (shutil.rmtree lists fds with it too): match exactly.
        if not isinstance(path, str) or path != self.at:
            return self.real(path)
        if not self.after:
            self._remove()
            return self.real(path)
        with self.real(path) as it:
            entries = list(it)
        self._remove()
        return _Listing(entries)


class _Listing:
    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self.entries = entries

    def __enter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)

    def __exit__(self, *exc: object) -> None:
        return None


def test_directory_vanishing_mid_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    make_skill(root / "a")
    make_skill(root / "cat" / "b")
    _Vanishing(monkeypatch, at=root / "cat", delete=root / "cat", after=False)
    result = scan([extra(root)])
    assert [os.path.basename(s.dir) for s in result.skills] == ["a"]
    [diag] = result.diagnostics
    assert (diag.code, diag.path) == ("discovery.vanished", str(root / "cat"))


def test_skill_file_vanishing_mid_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    make_skill(root / "a")
    gone = make_skill(root / "b")
    _Vanishing(monkeypatch, at=root / "b", delete=gone, after=True)
    result = scan([extra(root)])
    assert [os.path.basename(s.dir) for s in result.skills] == ["a"]
    [diag] = result.diagnostics
    assert (diag.code, diag.path) == ("discovery.vanished", str(gone))


def test_no_realpath_per_skill_without_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    for i in range(20):
        make_skill(root / f"cat{i % 3}" / f"s{i}")
    calls: list[str] = []
    real = os.path.realpath

    def counting(path: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(discovery.os.path, "realpath", counting)
    result = scan([extra(root)])
    assert len(result.skills) == 20
    assert calls == [str(root)]  # once for the root, never per skill
    assert all(s.real_path == real(s.path) for s in result.skills)


def test_scan_plan_uses_config_limits(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    make_skill(tmp_path / ".agents" / "skills" / "a" / "b" / "deep")
    config = Config(discovery=DiscoveryConfig(max_depth=2))
    plan = compute_roots(str(tmp_path), config, home=str(tmp_path / "nohome"), env={})
    result = scan_plan(plan, config)
    assert result.skills == []
    assert [d.code for d in result.diagnostics] == ["discovery.max_depth"]
    assert {r.scope for r in result.missing_roots} == {"repo", "user"}


def test_permission_denied_listing_is_a_diagnostic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same path as the chmod test above, but runnable as root: the listing itself is refused.
    root = tmp_path / "root"
    make_skill(root / "ok")
    make_skill(root / "locked" / "inner")
    real = os.scandir

    def refusing(path: Any) -> Any:
        if isinstance(path, str) and path == str(root / "locked"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", refusing)
    result = scan([extra(root)])
    assert [os.path.basename(s.dir) for s in result.skills] == ["ok"]
    [diag] = result.diagnostics
    assert (diag.code, diag.severity, diag.path) == (
        "discovery.unreadable",
        "warning",
        str(root / "locked"),
    )
    assert "Permission denied" in diag.message
