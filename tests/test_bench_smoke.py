"""Smoke test of the benchmark: the corpus generator's shape, manifest and determinism, and the
harness's plumbing (no timing is asserted)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bench import gen_corpus as gen
from bench.baselines import frontmatter_bytes, start_mcp_ping_server
from bench.cases import CASES, CONTENDERS
from bench.corpus import Corpus, OneEdit
from bench.daemon_probes import PINGS_BURST, PINGS_SEQUENTIAL, prepare_ping, start_skillsd

BENCH = Path(__file__).resolve().parent.parent / "bench"
N = 20


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _skill_dirs(root: Path) -> Iterator[Path]:
    return (p.parent for p in root.rglob("SKILL.md"))


def test_generates_n_skills_matching_the_manifest(tmp_path: Path) -> None:
    manifest = gen.generate(tmp_path / "c", N, seed=7)
    root = tmp_path / "c"
    dirs = sorted(p.relative_to(root).as_posix() for p in _skill_dirs(root))
    assert dirs == sorted(e["dir"] for e in manifest["skills"])
    assert len(dirs) == N
    totals = manifest["totals"]
    assert totals["valid"] + totals["invalid"] == N
    assert sum(totals["invalid_by_kind"].values()) == totals["invalid"]
    assert sum(totals["depths"].values()) == N
    # The manifest on disk is the one returned.
    assert json.loads((root / gen.MANIFEST_NAME).read_text()) == json.loads(json.dumps(manifest))
    for entry in manifest["skills"]:
        skill_dir = root / entry["dir"]
        for folder in ("scripts", "references", "assets"):
            folder_path = skill_dir / folder
            count = len(list(folder_path.iterdir())) if folder_path.is_dir() else 0
            assert count == entry["resources"][folder], entry["dir"]
        assert (skill_dir / "SKILL.md").stat().st_size == entry["skill_md_bytes"]


def test_valid_skills_parse_and_match_their_directory(tmp_path: Path) -> None:
    manifest = gen.generate(tmp_path, N, seed=3)
    for entry in manifest["skills"]:
        if not entry["valid"]:
            continue
        data = (tmp_path / entry["dir"] / "SKILL.md").read_bytes().decode("utf-8-sig")
        _, fm, _ = data.replace("\r\n", "\n").split("---\n", 2)
        fields = yaml.load(fm, Loader=yaml.CBaseLoader)
        assert fields["name"] == entry["dir"].rsplit("/", 1)[-1] == entry["name"]
        assert 0 < len(fields["description"]) <= 1024


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    gen.generate(tmp_path / "a", N, seed=11)
    gen.generate(tmp_path / "b", N, seed=11)
    gen.generate(tmp_path / "c", N, seed=12)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


def test_invalid_share_and_kinds_follow_the_shape(tmp_path: Path) -> None:
    none = gen.generate(tmp_path / "none", N, seed=1, shape=gen.Shape(invalid_share=0.0))
    assert none["totals"]["invalid"] == 0
    every = gen.generate(tmp_path / "all", N, seed=1, shape=gen.Shape(invalid_share=1.0))
    assert every["totals"]["valid"] == 0
    assert set(every["totals"]["invalid_by_kind"]) <= set(gen.INVALID_KINDS)
    # The default share is realistic: a few percent over a larger corpus.
    mix = gen.generate(tmp_path / "mix", 400, seed=1)
    assert 0.005 <= mix["totals"]["invalid"] / 400 <= 0.08


def test_verdicts_agree_with_skills_ref(tmp_path: Path) -> None:
    """Invalid skills are invalid for the reference library too, except documented cases."""
    skills_ref = pytest.importorskip("skills_ref")
    manifest = gen.generate(tmp_path, 60, seed=5, shape=gen.Shape(invalid_share=0.4))
    for entry in manifest["skills"]:
        errors = skills_ref.validate(tmp_path / entry["dir"])
        if entry["invalid_kind"] in gen.SKILLS_REF_DISAGREES_KINDS or (
            set(entry["quirks"]) & gen.SKILLS_REF_DISAGREES_QUIRKS
        ):
            continue
        # skills-ref rejects unknown fields, which skillsd only warns about.
        expected_valid = entry["valid"] and "field.unknown" not in entry["warnings"]
        assert (not errors) == expected_valid, (entry, errors)


def test_shape_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="invalid_share"):
        gen.Shape(invalid_share=1.5)
    with pytest.raises(ValueError, match="depth_weights"):
        gen.Shape(depth_weights=(0.0, 0.0))


def test_refuses_non_empty_and_foreign_directories(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("not a corpus")
    with pytest.raises(FileExistsError):
        gen.generate(tmp_path, N)
    with pytest.raises(FileExistsError, match="refusing"):
        gen.ensure_corpus(tmp_path, N)
    assert (tmp_path / "keep.txt").exists()


def test_ensure_corpus_reuses_then_regenerates(tmp_path: Path) -> None:
    root = tmp_path / "c"
    first = gen.ensure_corpus(root, N, seed=2)
    marker = root / gen.MANIFEST_NAME
    mtime = marker.stat().st_mtime_ns
    assert gen.ensure_corpus(root, N, seed=2) == first
    assert marker.stat().st_mtime_ns == mtime  # reused, not rewritten
    assert gen.ensure_corpus(root, N + 1, seed=2)["n"] == N + 1


@pytest.mark.process
def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "gen_corpus.py"), str(out), "--n", str(N), "--seed", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout)["skills"] == N
    bad = subprocess.run(
        [sys.executable, str(BENCH / "gen_corpus.py"), str(out), "--n", "5"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "not empty" in bad.stderr
    forced = subprocess.run(
        [sys.executable, str(BENCH / "gen_corpus.py"), str(out), "--n", "5", "--force"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(forced.stdout)["skills"] == 5
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("not a corpus")
    refused = subprocess.run(
        [sys.executable, str(BENCH / "gen_corpus.py"), str(foreign), "--force"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "refusing to delete" in refused.stderr
    assert (foreign / "keep.txt").exists()


def test_bench_frontmatter_baseline() -> None:
    """Baseline (b)'s frontmatter split: BOM, CRLF, trailing blanks, unclosed, missing."""
    assert frontmatter_bytes(b"\xef\xbb\xbf---\r\nname: x\r\n--- \r\nbody") == b"name: x\r\n"
    assert frontmatter_bytes(b"---\ndescription: a --- b\n---\n") == b"description: a --- b\n"
    assert frontmatter_bytes(b"---\nname: x\n") is None
    assert frontmatter_bytes(b"# title\n---\n") is None


# --- the harness itself (no timing) ---------------------------------------------------------


def test_every_case_names_known_contenders_and_baselines() -> None:
    known = set(CONTENDERS)
    for case in CASES:
        assert set(case.contenders) <= known, case.name
        for target in case.targets:
            assert target.subject in known
            assert target.baseline is None or target.baseline in known
            # A target's subject runs in its own case; a baseline may come from an earlier one.
            assert target.subject in case.contenders


def test_one_edit_is_an_atomic_save_and_restores(tmp_path: Path) -> None:
    skill = tmp_path / "s" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_bytes(b"---\nname: s\ndescription: d\n---\nbody\n")
    before = skill.stat()
    editor = OneEdit(str(skill))
    editor.edit()
    edited = skill.stat()
    assert skill.read_bytes().startswith(b"---\nname: s\n") and edited.st_size > before.st_size
    assert edited.st_ino != before.st_ino  # written next to it and renamed over
    editor.edit()
    assert skill.read_bytes() == editor.original
    assert sorted(p.name for p in skill.parent.iterdir()) == ["SKILL.md"]  # no temp left
    editor.restore()
    assert skill.read_bytes() == editor.original
    assert skill.stat().st_mtime_ns == before.st_mtime_ns


def _corpus(tmp_path: Path) -> Corpus:
    return Corpus(str(tmp_path), 1, 0, 1, 0)


@pytest.fixture
def opts() -> Iterator[argparse.Namespace]:
    """The options the daemon contenders read; their temporary homes are removed afterwards."""
    namespace = argparse.Namespace(
        serve_command=[sys.executable, "-m", "skillsd", "serve"], temp_dirs=[]
    )
    yield namespace
    for path in namespace.temp_dirs:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.process
def test_ping_client_loops_against_the_echo_floor(tmp_path: Path, opts: argparse.Namespace) -> None:
    for burst in (False, True):
        prepared = prepare_ping("floor", burst)(_corpus(tmp_path), opts)
        try:
            outcome = prepared.run()
        finally:
            prepared.cleanup()
        count = PINGS_BURST if burst else PINGS_SEQUENTIAL
        assert (outcome.ok, outcome.failed, outcome.operations) == (count, 0, count)


@pytest.mark.process
def test_skillsd_daemon_env_sees_only_the_corpus(tmp_path: Path, opts: argparse.Namespace) -> None:
    """The spawned daemon gets an empty HOME and the corpus as its only skills."""
    gen.generate(tmp_path / "c", 3, seed=1, shape=gen.Shape(invalid_share=0.0))
    corpus = Corpus(str(tmp_path / "c"), 3, 1, 3, 0)
    peer = start_skillsd(corpus, opts)
    try:
        listing = peer.call("skills.list")
        assert len(listing["skills"]) == 3
        assert {s["scope"] for s in listing["skills"]} == {"extra"}
        assert all(s["path"].startswith(corpus.root) for s in listing["skills"])
        seconds, line = peer.request("ping")
        assert seconds > 0 and b'"result":{}' in line
    finally:
        peer.close()


@pytest.mark.process
def test_mcp_ping_server_handshake(tmp_path: Path, opts: argparse.Namespace) -> None:
    peer = start_mcp_ping_server(_corpus(tmp_path), opts)
    try:
        assert peer.call("ping") == {}
    finally:
        peer.close()


@pytest.mark.process
def test_run_script_prints_the_tables(tmp_path: Path) -> None:
    """``bench/run.py`` as a script: a corpus, two cases, the tables, the JSON; no PROBLEM."""
    report = tmp_path / "bench.json"
    keys = "walk,a,b,skillsd,relist"
    options = ["--sizes", str(N), "--repeat", "1", "--fresh", "--only", keys, "--json", str(report)]
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), *options],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("| case | N | contender | median | vs (a) | vs (b) | vs (c) |")
    labels = [CONTENDERS[k].label for k in keys.split(",")]
    assert [line.split(" | ")[2] for line in lines[2:7]] == labels
    assert "PROBLEM" not in proc.stdout
    data = json.loads(report.read_text())
    assert [(b["case"], b["n"]) for b in data["results"]] == [
        ("cold_catalog", N),
        ("relist_one_edit", N),
    ]
    results = {t["target"]: t["result"] for b in data["results"] for t in b["targets"]}
    # (c) did not run: its targets say so; the others were checked.
    assert results["skillsd <= 1.5x b"] in {"PASS", "FAIL"}
    assert results["relist <= 0.05x skillsd"] in {"PASS", "FAIL"}
    assert results["skillsd >= 20x faster than c"] == "n/a"
    relist = data["results"][1]["contenders"]["relist"]
    assert relist["outcome"]["parsed"] == 1 and len(relist["runs"]) == 1
