"""The catalog: identity, collisions, order, incremental rebuilds, enable state, refs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog import fs_catalog_build as catalog_mod
from skillsd.core.catalog.fs_catalog_build import build_catalog, refresh_catalog
from skillsd.core.catalog.skill_catalog import Catalog, diff_catalogs, skill_id
from skillsd.core.discovery.fs_roots import Root, RootPlan, compute_roots
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd_protocol.errors import AmbiguousSkillData, SkillCandidate, SkillNotFoundData


def write_skill(
    directory: Path, name: str | None = None, description: str = "Does things.", extra: str = ""
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(
        f"---\nname: {name or directory.name}\ndescription: {description}\n{extra}---\n# Body\n"
    )
    return path


def plan_for(tmp_path: Path, *roots: Root) -> RootPlan:
    return RootPlan(cwd=str(tmp_path), repo_root=str(tmp_path), roots=tuple(roots))


def extra(path: Path) -> Root:
    return Root(str(path), "extra")


def err(excinfo: pytest.ExceptionInfo[SkillsdError]) -> SkillsdError:
    return excinfo.value


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Any]:
    """A repo with a nested cwd, a home with user skills and an extra root."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "pkg"
    home = tmp_path / "home"
    write_skill(repo / ".agents" / "skills" / "top")
    write_skill(cwd / ".agents" / "skills" / "near")
    write_skill(cwd / ".claude" / "skills" / "compat")
    write_skill(home / ".agents" / "skills" / "mine")
    write_skill(tmp_path / "extra" / "more")
    plan = compute_roots(
        str(cwd), home=str(home), env={"AGENT_SKILLS_PATH": str(tmp_path / "extra")}
    )
    return {"tmp": tmp_path, "repo": repo, "cwd": cwd, "home": home, "plan": plan}


# -- building -------------------------------------------------------------------------------


def test_metadata_fields(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path / "root" / "pdf",
        extra=(
            "license: MIT\ncompatibility: needs python\nmetadata:\n  tags: pdf,forms\n"
            "allowed-tools: Bash(git:*) Read\nmodel: fast\n"
        ),
    )
    (tmp_path / "root" / "pdf" / "scripts").mkdir()
    (tmp_path / "root" / "pdf" / "scripts" / "x.py").write_text("")
    cat = build_catalog(plan_for(tmp_path, extra(tmp_path / "root")))
    [skill] = cat.skills
    st = os.stat(path)
    assert skill.id == hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:24]
    assert (skill.name, skill.description) == ("pdf", "Does things.")
    assert (skill.path, skill.dir) == (str(path), str(path.parent))
    assert (skill.scope, skill.root) == ("extra", str(tmp_path / "root"))
    assert skill.mtime_ms == st.st_mtime_ns / 1_000_000
    assert skill.size == st.st_size
    assert skill.license == "MIT"
    assert skill.compatibility == "needs python"
    assert skill.metadata == {"tags": "pdf,forms"}
    assert skill.allowed_tools == ["Bash(git:*)", "Read"]
    assert skill.extra_fields == {"model": "fast"}
    assert skill.enabled is True
    assert skill.resources.scripts == 1
    # `model` is a Claude Code host field (docs/conformance.md): honoured, and still a warning.
    assert [d.code for d in skill.diagnostics] == ["field.host"]
    assert skill.host is not None and skill.host.model == "fast"
    assert all(d.severity != "error" for d in skill.diagnostics)
    assert skill.same_name is None
    assert cat.generation == 1
    assert (cat.stats.parsed, cat.stats.reused) == (1, 0)
    assert cat.by_id[skill.id] is skill
    assert cat.by_name["pdf"] == [skill]
    assert cat.by_real_path[str(path.resolve())] is skill


def test_skill_id_is_sha256_prefix_of_the_real_path() -> None:
    assert skill_id("/a/SKILL.md") == hashlib.sha256(b"/a/SKILL.md").hexdigest()[:24]
    assert len(skill_id("/ü/SKILL.md")) == 24


def test_scopes_order_and_repo_root(project: dict[str, Any]) -> None:
    cat = build_catalog(project["plan"])
    assert cat.repo_root == str(project["repo"])
    assert cat.cwd == str(project["cwd"])
    assert [(s.scope, s.name) for s in cat.skills] == [
        ("repo", "near"),
        ("repo", "compat"),
        ("repo", "top"),
        ("user", "mine"),
        ("extra", "more"),
    ]


def test_compat_roots_off_drops_claude_skills(project: dict[str, Any]) -> None:
    config = Config(discovery=DiscoveryConfig(compat_roots=False))
    plan = compute_roots(
        str(project["cwd"]),
        config,
        home=str(project["home"]),
        env={"AGENT_SKILLS_PATH": str(project["tmp"] / "extra")},
    )
    assert [s.name for s in build_catalog(plan, config).skills] == ["near", "top", "mine", "more"]


def test_auto_off_only_extra(project: dict[str, Any]) -> None:
    config = Config(discovery=DiscoveryConfig(auto=False))
    plan = compute_roots(
        str(project["cwd"]),
        config,
        home=str(project["home"]),
        env={"AGENT_SKILLS_PATH": str(project["tmp"] / "extra")},
    )
    assert [s.name for s in build_catalog(plan, config).skills] == ["more"]


def test_invalid_skill_is_an_error_in_strict_and_a_warning_in_lenient(tmp_path: Path) -> None:
    write_skill(tmp_path / "root" / "good")
    bad = write_skill(tmp_path / "root" / "dirname", name="othername")
    write_skill(tmp_path / "root" / "nodesc", description="''")
    plan = plan_for(tmp_path, extra(tmp_path / "root"))
    strict = build_catalog(plan, Config(validation="strict"))
    assert [s.name for s in strict.skills] == ["good"]
    assert [e.path for e in strict.errors] == [
        str(bad),
        str(tmp_path / "root" / "nodesc" / "SKILL.md"),
    ]
    mismatch = strict.errors[0]
    assert "othername" in mismatch.message
    assert [d.code for d in mismatch.diagnostics if d.severity == "error"] == ["name.mismatch"]
    lenient = build_catalog(plan, Config(validation="lenient"))
    # Ordered by path: root/dirname before root/good.
    assert [s.name for s in lenient.skills] == ["othername", "good"]
    assert [d.severity for d in lenient.skills[0].diagnostics] == ["warning"]
    # A missing description excludes the skill in lenient mode too.
    assert [e.path for e in lenient.errors] == [str(tmp_path / "root" / "nodesc" / "SKILL.md")]


def test_same_file_twice_is_one_skill_with_the_first_scope(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "userroot" / "tool")
    (tmp_path / "reporoot").mkdir()
    (tmp_path / "reporoot" / "tool").symlink_to(tmp_path / "userroot" / "tool")
    cat = build_catalog(
        plan_for(
            tmp_path,
            Root(str(tmp_path / "userroot"), "user"),
            Root(str(tmp_path / "reporoot"), "repo"),
            extra(tmp_path / "userroot" / "tool"),
        )
    )
    [skill] = cat.skills
    assert skill.scope == "repo"
    assert skill.id == skill_id(str(path.resolve()))
    assert cat.stats.parsed == 1


def test_same_name_in_two_places_keeps_both_with_same_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "a" / "dup")
    write_skill(tmp_path / "b" / "cat" / "dup", description="Does other things.")
    write_skill(tmp_path / "b" / "solo")
    cat = build_catalog(plan_for(tmp_path, extra(tmp_path / "a"), extra(tmp_path / "b")))
    first, second, solo = cat.skills
    assert (first.name, second.name) == ("dup", "dup")
    assert first.same_name == [second.id]
    assert second.same_name == [first.id]
    assert solo.same_name is None
    for skill, other in ((first, second), (second, first)):
        [warning] = [d for d in skill.diagnostics if d.code == "name.duplicate"]
        assert warning.severity == "warning"
        assert warning.path == skill.path
        assert other.path in warning.message
    assert solo.diagnostics == []
    assert first.copy_of is None and second.copy_of is None


def test_identical_copies_are_one_skill_shown_once(tmp_path: Path) -> None:
    """The same folder copied into two agents' folders: the later one is a copy of the first
    (no duplicate warning); a third that differs keeps sameName with both."""
    for root in ("claude", "agents"):
        write_skill(tmp_path / root / "fmt")
        (tmp_path / root / "fmt" / "notes.md").write_text("same\n")
    write_skill(tmp_path / "codex" / "fmt", description="Formats differently.")
    cat = build_catalog(
        plan_for(
            tmp_path,
            extra(tmp_path / "claude"),
            extra(tmp_path / "agents"),
            extra(tmp_path / "codex"),
        )
    )
    by_root = {os.path.basename(s.root): s for s in cat.skills}
    original, copy, other = by_root["agents"], by_root["claude"], by_root["codex"]
    assert copy.copy_of == original.id and original.copy_of is None
    assert sorted(original.same_name or []) == [other.id]
    assert sorted(other.same_name or []) == sorted([original.id, copy.id])
    # Editing a file of the copy makes it a skill of its own again.
    (tmp_path / "claude" / "fmt" / "notes.md").write_text("mine\n")
    again = build_catalog(cat.plan, previous=cat)
    assert all(s.copy_of is None for s in again.skills)


def test_scan_diagnostics_and_missing_roots_are_kept(tmp_path: Path) -> None:
    write_skill(tmp_path / "root" / "a" / "b" / "deep")
    cat = build_catalog(
        plan_for(tmp_path, extra(tmp_path / "root"), extra(tmp_path / "absent")),
        Config(discovery=DiscoveryConfig(max_depth=1)),
    )
    assert cat.skills == []
    assert [(d.code, d.path) for d in cat.diagnostics] == [
        ("discovery.max_depth", str(tmp_path / "root"))
    ]
    assert [r.path for r in cat.missing_roots] == [str(tmp_path / "absent")]


def test_file_vanishing_between_scan_and_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "root" / "stays")
    gone = write_skill(tmp_path / "root" / "goes")
    real_read = catalog_mod.read_skill_file

    def deleting_read(path: str, **kwargs: Any) -> Any:
        if path == str(gone):
            gone.unlink()
        return real_read(path, **kwargs)

    monkeypatch.setattr(catalog_mod, "read_skill_file", deleting_read)
    cat = build_catalog(plan_for(tmp_path, extra(tmp_path / "root")))
    assert [s.name for s in cat.skills] == ["stays"]
    assert cat.errors == []
    assert [(d.code, d.path) for d in cat.diagnostics] == [("discovery.vanished", str(gone))]


# -- incremental rebuilds -------------------------------------------------------------------


def _three(tmp_path: Path) -> tuple[RootPlan, Catalog]:
    for name in ("one", "two", "three"):
        write_skill(tmp_path / "root" / name)
    write_skill(tmp_path / "root" / "broken", name="Not Valid")
    plan = plan_for(tmp_path, extra(tmp_path / "root"))
    return plan, build_catalog(plan)


def test_rebuild_without_changes_parses_nothing_and_keeps_generation(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    assert (first.stats.parsed, first.stats.reused) == (4, 0)
    again = build_catalog(plan, previous=first)
    assert (again.stats.parsed, again.stats.reused) == (0, 4)
    assert again.generation == first.generation
    assert not diff_catalogs(first, again)
    assert again.skills == first.skills
    assert again.errors == first.errors


def test_editing_one_file_reparses_exactly_one(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    two = tmp_path / "root" / "two" / "SKILL.md"
    write_skill(two.parent, description="Now does other things.")
    second = build_catalog(plan, previous=first)
    assert (second.stats.parsed, second.stats.reused) == (1, 3)
    assert second.generation == first.generation + 1
    changed_id = skill_id(str(two.resolve()))
    assert second.by_id[changed_id].description == "Now does other things."
    diff = diff_catalogs(first, second)
    assert (diff.added, diff.removed, diff.changed) == ([], [], [changed_id])


def test_atomic_replace_with_same_size_and_mtime_is_a_change(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    target = tmp_path / "root" / "one" / "SKILL.md"
    old = os.stat(target)
    text = target.read_text().replace("Does things.", "Does thinks.")
    temp = target.with_name(".SKILL.md.tmp")
    temp.write_text(text)
    os.utime(temp, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(temp, target)
    new = os.stat(target)
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    assert new.st_ino != old.st_ino
    second = build_catalog(plan, previous=first)
    assert second.stats.parsed == 1
    assert second.by_id[skill_id(str(target.resolve()))].description == "Does thinks."
    assert second.generation == first.generation + 1


def test_added_removed_and_fixed_skills(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    (tmp_path / "root" / "three" / "SKILL.md").unlink()
    added = write_skill(tmp_path / "root" / "four")
    fixed = write_skill(tmp_path / "root" / "broken")
    second = build_catalog(plan, previous=first)
    assert second.stats.parsed == 2  # four, and the fixed broken one
    assert second.errors == []
    diff = diff_catalogs(first, second)
    assert sorted(diff.added) == sorted(
        [skill_id(str(added.resolve())), skill_id(str(fixed.resolve()))]
    )
    assert diff.removed == [skill_id(str((tmp_path / "root" / "three" / "SKILL.md").resolve()))]
    assert diff.changed == []
    assert second.generation == 2


def test_error_only_change_bumps_generation(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    write_skill(tmp_path / "root" / "broken", name="Still Bad")
    second = build_catalog(plan, previous=first)
    assert not diff_catalogs(first, second)
    assert second.generation == first.generation + 1
    assert "Still Bad" in str(second.errors[0].diagnostics)


def test_mode_change_reparses_everything(tmp_path: Path) -> None:
    plan, first = _three(tmp_path)
    strict = build_catalog(plan, Config(validation="strict"), previous=first)
    assert strict.stats.parsed == 4


def test_diff_from_nothing_adds_everything(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    assert diff_catalogs(None, first).added == [s.id for s in first.skills]


# -- targeted refresh from file events ------------------------------------------------------


def _same_as_full_build(refreshed: Catalog) -> None:
    full = build_catalog(refreshed.plan, refreshed.config, disabled=refreshed.disabled)
    assert refreshed.skills == full.skills
    assert refreshed.errors == full.errors
    assert refreshed.diagnostics == full.diagnostics


def test_refresh_edited_skill_lists_only_its_directory(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    target = write_skill(tmp_path / "root" / "two", description="Edited.")
    second = refresh_catalog(first, [str(target)])
    assert (second.stats.parsed, second.stats.reused, second.stats.dirs_scanned) == (1, 3, 1)
    assert diff_catalogs(first, second).changed == [skill_id(str(target.resolve()))]
    assert second.generation == first.generation + 1
    _same_as_full_build(second)


def test_refresh_with_no_events_or_no_change(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    assert refresh_catalog(first, []) is first
    again = refresh_catalog(first, [str(tmp_path / "root" / "one" / "SKILL.md")])
    assert (again.stats.parsed, again.generation) == (0, first.generation)


def test_refresh_recounts_resources_without_parsing(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    (tmp_path / "root" / "one" / "references").mkdir()
    (tmp_path / "root" / "one" / "references" / "guide.md").write_text("x")
    second = refresh_catalog(first, [str(tmp_path / "root" / "one" / "references" / "guide.md")])
    assert second.stats.parsed == 0
    assert second.by_name["one"][0].resources.references == 1
    assert diff_catalogs(first, second).changed == [second.by_name["one"][0].id]
    _same_as_full_build(second)


def test_refresh_fixes_an_invalid_skill(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    fixed = write_skill(tmp_path / "root" / "broken")
    second = refresh_catalog(first, [str(fixed)])
    assert second.errors == []
    assert diff_catalogs(first, second).added == [skill_id(str(fixed.resolve()))]
    _same_as_full_build(second)


def test_refresh_removed_skill_directory(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    gone = first.by_name["three"][0]
    for child in (tmp_path / "root" / "three").iterdir():
        child.unlink()
    (tmp_path / "root" / "three").rmdir()
    second = refresh_catalog(first, [gone.dir])
    assert diff_catalogs(first, second).removed == [gone.id]
    assert second.stats.dirs_scanned == 1
    _same_as_full_build(second)


def test_refresh_falls_back_to_a_rescan_for_structural_changes(tmp_path: Path) -> None:
    _, first = _three(tmp_path)
    new = write_skill(tmp_path / "root" / "cat" / "four")
    second = refresh_catalog(first, [str(new)])
    assert diff_catalogs(first, second).added == [skill_id(str(new.resolve()))]
    assert second.stats.parsed == 1
    assert second.stats.dirs_scanned > 1
    _same_as_full_build(second)
    # A skill whose SKILL.md is deleted may expose skills nested in it.
    nested = write_skill(tmp_path / "root" / "one" / "inner")
    old_one = second.by_name["one"][0]
    (tmp_path / "root" / "one" / "SKILL.md").unlink()
    third = refresh_catalog(second, [old_one.path])
    diff = diff_catalogs(second, third)
    assert (diff.added, diff.removed) == ([skill_id(str(nested.resolve()))], [old_one.id])
    _same_as_full_build(third)


def test_refresh_through_a_symlinked_skill_dir(tmp_path: Path) -> None:
    target = write_skill(tmp_path / "store" / "tool")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "tool").symlink_to(tmp_path / "store" / "tool")
    first = build_catalog(plan_for(tmp_path, extra(tmp_path / "root")))
    write_skill(tmp_path / "store" / "tool", description="Changed.")
    # The watcher may report the path as reached or the real one: both are this skill.
    for reported in (tmp_path / "root" / "tool" / "SKILL.md", target):
        second = refresh_catalog(first, [str(reported)])
        assert (second.stats.parsed, second.stats.dirs_scanned) == (1, 1)
        assert second.skills[0].description == "Changed."
        _same_as_full_build(second)


# -- enabled state --------------------------------------------------------------------------


def test_disabled_by_id_or_path(tmp_path: Path) -> None:
    plan, base = _three(tmp_path)
    one, _, two = base.skills
    cat = build_catalog(plan, disabled={one.id, two.dir}, previous=base)
    assert [(s.name, s.enabled) for s in cat.skills] == [
        ("one", False),
        ("three", True),
        ("two", False),
    ]
    assert cat.stats.parsed == 0
    assert diff_catalogs(base, cat).changed == [one.id, two.id]
    assert cat.generation == base.generation + 1


def test_with_disabled_flips_flags_and_bumps_generation(tmp_path: Path) -> None:
    _, base = _three(tmp_path)
    one = base.skills[0]
    off = base.with_disabled({one.path})
    assert off.by_id[one.id].enabled is False
    assert off.by_name["one"][0].enabled is False
    assert off.by_real_path[off.real_path_of[one.id]].enabled is False
    assert off.generation == base.generation + 1
    assert base.by_id[one.id].enabled is True  # the original is untouched
    assert off.with_disabled({one.path}) is off


def test_overrides_view(tmp_path: Path) -> None:
    _, base = _three(tmp_path)
    one, three, _ = base.skills
    assert base.with_overrides({}) is base
    assert base.with_overrides({one.id: True}) is base  # already enabled: nothing to copy
    view = base.with_overrides({one.id: False, "unknown-id": False})
    assert view.generation == base.generation
    assert [s.enabled for s in view.skills] == [False, True, True]
    assert view.skills[1] is base.skills[1]  # untouched skills are shared
    user_off = base.with_disabled({three.id})
    back_on = user_off.with_overrides({three.id: True})
    assert back_on.by_id[three.id].enabled is True


# -- refs -----------------------------------------------------------------------------------


def test_resolve_by_path_id_and_name(tmp_path: Path) -> None:
    _, cat = _three(tmp_path)
    two = cat.by_name["two"][0]
    assert cat.resolve(path=two.dir) is two
    assert cat.resolve(path=two.path) is two
    assert cat.resolve(path="root/two") is two  # relative to the catalog's cwd
    assert cat.resolve(path="root/two/SKILL.md") is two
    (tmp_path / "alias").symlink_to(tmp_path / "root" / "two")
    assert cat.resolve(path=str(tmp_path / "alias")) is two
    assert cat.resolve(id=two.id) is two
    assert cat.resolve(name="two") is two
    assert cat.resolve(name=" two ") is two


def test_resolve_precedence_path_over_id_over_name(tmp_path: Path) -> None:
    _, cat = _three(tmp_path)
    one, _, two = cat.skills
    assert cat.resolve(path=one.dir, id=two.id, name="three") is one
    assert cat.resolve(id=two.id, name="three") is two


def test_resolve_unknown_refs_name_what_was_asked(tmp_path: Path) -> None:
    _, cat = _three(tmp_path)
    with pytest.raises(SkillsdError) as info:
        cat.resolve(id="deadbeef")
    assert (err(info).kind, err(info).data) == ("skill_not_found", SkillNotFoundData())
    assert "deadbeef" in err(info).message
    with pytest.raises(SkillsdError) as info:
        cat.resolve(path="root/tw")
    assert err(info).kind == "skill_not_found"
    assert "root/tw" in err(info).message
    assert err(info).data.suggestions == ["two"]
    with pytest.raises(SkillsdError) as info:
        cat.resolve()
    assert err(info).kind == "skill_not_found"


def test_resolve_name_suggestions(tmp_path: Path) -> None:
    _, cat = _three(tmp_path)
    with pytest.raises(SkillsdError) as info:
        cat.resolve(name="thre")
    assert err(info).kind == "skill_not_found"
    assert err(info).data.suggestions == ["three"]
    assert "'thre'" in err(info).message
    with pytest.raises(SkillsdError) as info:
        cat.resolve(name="completely-unrelated")
    assert err(info).data.suggestions == []


def test_resolve_invalid_skill_path(tmp_path: Path) -> None:
    _, cat = _three(tmp_path)
    with pytest.raises(SkillsdError) as info:
        cat.resolve(path="root/broken")
    assert err(info).kind == "invalid_skill"
    assert err(info).data.diagnostics
    assert "root/broken" in err(info).message


def test_resolve_ambiguous_name_lists_candidates(tmp_path: Path) -> None:
    write_skill(tmp_path / "a" / "dup")
    write_skill(tmp_path / "b" / "dup")
    cat = build_catalog(
        plan_for(tmp_path, Root(str(tmp_path / "b"), "user"), extra(tmp_path / "a"))
    )
    with pytest.raises(SkillsdError) as info:
        cat.resolve(name="dup")
    assert err(info).kind == "ambiguous_skill"
    assert err(info).data == AmbiguousSkillData(
        candidates=[SkillCandidate(id=s.id, path=s.path, scope=s.scope) for s in cat.skills]
    )
    assert [c.scope for c in err(info).data.candidates] == ["user", "extra"]
    assert "'dup'" in err(info).message
    # Disabling one makes the name unique among enabled skills.
    user_dup = cat.skills[0]
    narrowed = cat.with_disabled({user_dup.id})
    assert narrowed.resolve(name="dup").scope == "extra"
    with pytest.raises(SkillsdError) as info:
        narrowed.resolve(name="dup", include_disabled=True)
    assert err(info).kind == "ambiguous_skill"


def test_disabled_skill_resolution(tmp_path: Path) -> None:
    _, base = _three(tmp_path)
    two = base.by_name["two"][0]
    cat = base.with_disabled({two.id})
    with pytest.raises(SkillsdError) as info:
        cat.resolve(name="two")
    assert err(info).kind == "skill_not_found"
    assert "disabled" in err(info).message
    assert "two" not in err(info).data.suggestions
    assert cat.resolve(name="two", include_disabled=True).id == two.id
    # Explicit refs reach disabled skills; the caller decides what to do with them.
    assert cat.resolve(id=two.id).enabled is False
    assert cat.resolve(path=two.dir).enabled is False
