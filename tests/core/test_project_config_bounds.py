"""A repository cannot widen what skillsd scans or raise its bounds: its config's ``roots.extra``
entries outside the repository are ignored with a warning, its discovery bounds only lower the
user's, and its ``[limits]`` are not read."""

from __future__ import annotations

import os
from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.policy.config import layer_configs


def _project(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".agents").mkdir()
    return repo, os.fspath(repo / ".agents" / "skillsd.toml")


def test_extra_roots_outside_the_repository_are_ignored_with_a_warning(tmp_path: Path) -> None:
    repo, source = _project(tmp_path)
    (repo / "vendor-skills").mkdir()
    outside = tmp_path / "private"
    outside.mkdir()
    (repo / "link-out").symlink_to(outside)
    entries = ["/", "~", os.fspath(outside), "../private", "link-out", "vendor-skills"]
    config = layer_configs([(source, {"roots": {"extra": entries}})])
    assert list(config.roots.extra) == ["vendor-skills"]
    assert set(config.ignored_extra_roots) == {
        "/",
        "~",
        os.fspath(outside),
        "../private",
        "link-out",
    }
    plan = compute_roots(
        os.fspath(repo),
        config,
        home=os.fspath(tmp_path / "home"),
        env={},
        repo_root=os.fspath(repo),
    )
    assert all(not r.path.startswith(os.fspath(outside)) and r.path != "/" for r in plan.roots)
    warnings = [
        d
        for d in build_catalog(plan, config).diagnostics
        if d.code == "config.root_outside_repository"
    ]
    assert len(warnings) == 5 and all(d.severity == "warning" for d in warnings)
    assert any("'~'" in d.message for d in warnings)


def test_the_users_own_config_may_add_roots_anywhere(tmp_path: Path) -> None:
    user = os.fspath(tmp_path / "config.toml")
    config = layer_configs([(user, {"roots": {"extra": ["/srv/skills"]}})])
    assert list(config.roots.extra) == ["/srv/skills"] and not config.ignored_extra_roots


def test_discovery_bounds_from_a_project_only_lower(tmp_path: Path) -> None:
    _repo, source = _project(tmp_path)
    user = os.fspath(tmp_path / "config.toml")
    wider = layer_configs(
        [
            (user, {"discovery": {"maxDepth": 4}}),
            (source, {"discovery": {"maxDepth": 1000, "maxDirs": 10_000_000}}),
        ]
    )
    assert wider.discovery.max_depth == 4 and wider.discovery.max_dirs == 2000
    narrower = layer_configs([(user, {}), (source, {"discovery": {"maxDepth": 2, "maxDirs": 50}})])
    assert (narrower.discovery.max_depth, narrower.discovery.max_dirs) == (2, 50)


def test_a_project_cannot_raise_the_limits(tmp_path: Path) -> None:
    _repo, source = _project(tmp_path)
    user = os.fspath(tmp_path / "config.toml")
    config = layer_configs(
        [(user, {"limits": {"maxCatalogs": 10}}), (source, {"limits": {"maxCatalogs": 99999}})]
    )
    assert config.limits.max_catalogs == 10
