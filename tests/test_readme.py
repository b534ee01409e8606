"""The README works as written: it starts with `make demo` and `make test`, its Python example
runs (against a fresh shared daemon, in examples/project), and no document links outside the
repository."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support.daemons import daemon_pids, kill_pid
from tests.support.env import example_user_env
from tests.support.snippets import python_script, run_python

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_starts_with_make_demo_and_make_test() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands[:2] == ["make demo", "make test"]


@pytest.mark.process
def test_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    # The example sits in a list item: its fence is indented.
    script = python_script(README.read_text(encoding="utf-8"))
    assert "connect_shared" in script
    # Unix socket paths are short: the shared daemon's runtime dir goes under /tmp.
    runtime = Path(tempfile.mkdtemp(prefix="sdr-"))
    env = example_user_env(tmp_path)
    env["SKILLSD_RUNTIME_DIR"] = os.fspath(runtime / "run")
    try:
        done = run_python(script, cwd=ROOT / "examples" / "project", env=env)
    finally:
        for pid in daemon_pids(runtime / "run" / "skillsd.sock"):
            kill_pid(pid)
        shutil.rmtree(runtime, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    names = done.stdout.splitlines()[0]
    assert "'release-notes'" in names and "'code-review'" in names
    assert '<skill_context name="release-notes"' in done.stdout


def test_docs_link_only_inside_the_repository() -> None:
    documents = [README, *ROOT.glob("docs/*.md"), *ROOT.glob("clients/*/README.md")]
    for doc in documents:
        text = doc.read_text(encoding="utf-8")
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor in the same page
            resolved = (doc.parent / target.split("#")[0]).resolve()
            assert resolved.is_relative_to(ROOT), f"{doc.name} links outside: {target}"
            assert resolved.exists(), f"{doc.name} links to a missing file: {target}"
