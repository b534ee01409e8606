"""``skillsd validate`` run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.process

SKILLSD = Path(sys.executable).with_name("skillsd")


def write_skill(root: Path, dir_name: str, frontmatter: str, body: str = "Body.\n") -> Path:
    skill_dir = root / dir_name
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return skill_dir


def good(root: Path, name: str = "good") -> Path:
    return write_skill(root, name, f"name: {name}\ndescription: A good skill.\n")


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # The console script is what users run; its absence is a packaging bug, not a skip.
    assert SKILLSD.exists(), f"{SKILLSD} is not installed (pip install -e .)"
    return subprocess.run(
        [str(SKILLSD), "validate", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def run_json(*args: str | Path) -> tuple[int, list[dict[str, Any]]]:
    proc = run(*args, "--json")
    return proc.returncode, json.loads(proc.stdout)


def test_valid_skill_dir_exits_0(tmp_path: Path) -> None:
    proc = run(good(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout
    assert "1 skill checked, 0 failed" in proc.stdout


def test_skill_md_path_is_accepted(tmp_path: Path) -> None:
    proc = run(good(tmp_path) / "SKILL.md")
    assert proc.returncode == 0, proc.stdout


def test_error_exits_1_and_names_file_field_reason(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "wrong-dir", "name: right-name\ndescription: d\n")
    proc = run(skill)
    assert proc.returncode == 1
    assert str(skill / "SKILL.md") in proc.stdout
    assert "name.mismatch [name]" in proc.stdout
    assert "'right-name'" in proc.stdout and "'wrong-dir'" in proc.stdout


def test_folder_is_searched_recursively(tmp_path: Path) -> None:
    good(tmp_path / "cat-a", "one")
    good(tmp_path / ".hidden" / "deeper", "two")
    write_skill(tmp_path / "cat-b", "three", "name: three\n")  # no description
    code, results = run_json(tmp_path)
    assert code == 1
    verdicts = {Path(r["path"]).parent.name: r["valid"] for r in results}
    assert verdicts == {"one": True, "two": True, "three": False}


def test_skill_dirs_are_not_descended(tmp_path: Path) -> None:
    outer = good(tmp_path, "outer")
    good(outer, "inner")
    _, results = run_json(tmp_path)
    assert [Path(r["path"]).parent.name for r in results] == ["outer"]


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    good(tmp_path / "skills", "one")
    (tmp_path / "skills" / "loop").symlink_to(tmp_path / "skills")
    code, results = run_json(tmp_path / "skills")
    assert code == 0
    assert len(results) == 1


def test_links_out_of_the_folder_are_not_followed(tmp_path: Path) -> None:
    # A repository's link back up (``ln -s .. loop``) and a link to ``/`` once made the search
    # walk outside the folder (and through the whole filesystem); both are named, not entered.
    good(tmp_path, "outside")
    skills = tmp_path / "skills"
    one = good(skills, "one")
    for folder in (skills, one):
        (folder / "loop").symlink_to("..")
        (folder / "root").symlink_to("/")
    proc = run(skills, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    assert [r["path"] for r in results] == [str(one / "SKILL.md")]
    notes = proc.stderr.splitlines()
    assert len(notes) == 2
    assert str(skills / "loop") in notes[0] and "not followed" in notes[0]
    assert str(skills / "root") in notes[1] and "not followed" in notes[1]
    # A skill folder holding them is checked alone: nothing below it is walked.
    proc = run(one)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "1 skill checked, 0 failed" in proc.stdout


def test_warning_passes_unless_strict(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "extra", "name: extra\ndescription: d\nmodel: opus\nhooks: x\n")
    proc = run(skill)
    assert proc.returncode == 0
    # A host field skillsd honours (docs/conformance.md) is still a warning: `--strict` keeps the
    # skills-ref verdict.
    assert "warning field.host [model]" in proc.stdout
    assert "warning field.unknown [hooks]" in proc.stdout
    assert run(skill, "--strict").returncode == 1


def test_info_never_fails(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "long", "name: long\ndescription: d\n", body="line\n" * 600)
    code, results = run_json(skill, "--strict")
    assert code == 0
    assert [d["code"] for d in results[0]["diagnostics"]] == ["body.too_long"]
    assert results[0]["diagnostics"][0]["severity"] == "info"


def test_mode_lenient_demotes(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "dir", "name: other\ndescription: d\n")
    assert run(skill).returncode == 1
    assert run(skill, "--mode", "lenient").returncode == 0
    assert run(skill, "--mode", "lenient", "--strict").returncode == 1


def test_mode_comes_from_the_flag_whatever_the_config_says(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('validation = "lenient"\n')
    skill = write_skill(tmp_path, "dir", "name: other\ndescription: d\n")
    env = {**os.environ, "SKILLSD_CONFIG": str(config)}
    assert run(skill, env=env).returncode == 1  # default --mode strict despite the config


def test_mode_lenient_missing_description_still_fails(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "nodesc", "name: nodesc\ndescription: ''\n")
    assert run(skill, "--mode", "lenient").returncode == 1


def test_json_shape(tmp_path: Path) -> None:
    ok = good(tmp_path, "ok")
    bad = write_skill(tmp_path, "bad", "name: bad\ndescription: d\ncompatibility: ''\n")
    code, results = run_json(ok, bad)
    assert code == 1
    assert results[0] == {
        "path": str(ok / "SKILL.md"),
        "valid": True,
        "diagnostics": [],
        "name": "ok",
    }
    assert results[1]["valid"] is False and "name" not in results[1]
    (diag,) = results[1]["diagnostics"]
    assert diag == {
        "severity": "error",
        "code": "compatibility.invalid",
        "message": diag["message"],
        "field": "compatibility",
        "path": str(bad / "SKILL.md"),
    }


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, results = run_json(tmp_path / "nope", tmp_path / "empty")
    assert code == 1
    assert [r["diagnostics"][0]["code"] for r in results] == ["file.missing", "file.missing"]
    assert "does not exist" in results[0]["diagnostics"][0]["message"]


def test_broken_yaml_does_not_crash(tmp_path: Path) -> None:
    skill = tmp_path / "broken"
    skill.mkdir()
    (skill / "SKILL.md").write_bytes(b"---\nname: [\x00\xff\n---\n")
    proc = run(skill)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "encoding.invalid" in proc.stdout


def test_same_skill_given_twice_is_checked_once(tmp_path: Path) -> None:
    skill = good(tmp_path)
    _, results = run_json(skill, skill / "SKILL.md", tmp_path)
    assert len(results) == 1


def test_bad_mode_is_a_usage_error(tmp_path: Path) -> None:
    proc = run(good(tmp_path), "--mode", "sloppy")
    assert proc.returncode == 2
    assert "--mode" in proc.stderr


def test_strict_refuses_host_fields_without_calling_them_failures(tmp_path: Path) -> None:
    """Claude Code's own fields are warnings: `--strict` refuses them (exit 1) and says why,
    and FAILED is kept for a skill with an error."""
    host = write_skill(
        tmp_path,
        "deploy",
        "name: deploy\ndescription: Deploy.\ndisable-model-invocation: true\n"
        'argument-hint: "[env]"\n',
    )
    broken = write_skill(tmp_path, "broken", "name: broken\n")
    lenient = run(host)
    assert lenient.returncode == 0 and f"{host / 'SKILL.md'}: ok" in lenient.stdout
    strict = run("--strict", host, broken)
    assert strict.returncode == 1
    lines = strict.stdout.splitlines()
    assert f"{host / 'SKILL.md'}: refused by --strict (2 warning(s), no error" in lines[0]
    assert "field 'argument-hint' is a Claude Code field: accepted by the catalog (lenient)" in (
        strict.stdout
    )
    assert f"{broken / 'SKILL.md'}: FAILED" in strict.stdout
    assert lines[-1] == "2 skills checked, 1 failed, 1 refused by --strict"
