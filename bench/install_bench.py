"""Install benchmark: ``skillsd add`` of a 20-skill local git repository (target under 2 s) and
``skillsd installed`` with 200 locked skills (target under 1 s).

    .venv/bin/python bench/install_bench.py [--repeat 5]

Each case runs once untimed, then ``--repeat`` times; the table shows the median and the
slowest, in-process (the operation alone) and through the CLI (a new ``skillsd`` process, as a
user runs it). Everything lives in a temporary folder with its own HOME, state and git config.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillsd.installing import InstallContext, install, installed  # noqa: E402
from skillsd_protocol.install import InstalledParams, InstallParams  # noqa: E402

BODY = "Use this skill when the task needs it.\n\n" + "Step by step guidance. " * 80 + "\n"


def _skill(folder: Path, name: str) -> None:
    (folder / "references").mkdir(parents=True)
    (folder / "scripts").mkdir()
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Benchmark skill {name}.\n---\n{BODY}"
    )
    (folder / "references" / "guide.md").write_text("# Guide\n" + "More text. " * 400)
    (folder / "references" / "api.md").write_text("# API\n" + "Call it so. " * 300)
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n")


def _env(tmp: Path) -> dict[str, str]:
    (tmp / "home").mkdir()
    (tmp / "gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@example.test\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLSD_", "XDG_", "GIT_"))}
    env.update(
        HOME=str(tmp / "home"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        GIT_CONFIG_GLOBAL=str(tmp / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def _git(*args: str, cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _project(tmp: Path, name: str, env: dict[str, str]) -> Path:
    project = tmp / name
    project.mkdir()
    _git("init", "-q", cwd=project, env=env)
    (project / ".claude").mkdir()
    return project


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return runs


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "skillsd", *args], cwd=cwd, env=env, check=True, capture_output=True
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="skillsd-install-bench-"))
    try:
        env = _env(tmp)
        os.environ.update(env)
        repo = tmp / "collection"
        for i in range(20):
            _skill(repo / "skills" / f"skill-{i:02}", f"skill-{i:02}")
        _git("init", "-q", cwd=repo, env=env)
        _git("add", "-A", cwd=repo, env=env)
        _git("commit", "-qm", "skills", cwd=repo, env=env)
        rows: list[tuple[str, list[float], float]] = []

        counter = iter(range(10_000))

        def fresh_install_api() -> None:
            project = _project(tmp, f"p-api-{next(counter)}", env)
            ctx = InstallContext(cwd=str(project), env=env, home=env["HOME"])
            result = install(InstallParams(source=str(repo)), ctx)
            assert len(result.installed) == 20

        def fresh_install_cli() -> None:
            project = _project(tmp, f"p-cli-{next(counter)}", env)
            _cli(["add", str(repo)], project, env)

        rows.append(
            (
                "add: 20-skill local git repo (in-process)",
                _time(fresh_install_api, args.repeat),
                2.0,
            )
        )
        rows.append(
            ("add: 20-skill local git repo (CLI)", _time(fresh_install_cli, args.repeat), 2.0)
        )

        many = tmp / "many"
        for i in range(200):
            _skill(many / f"locked-{i:03}", f"locked-{i:03}")
        project = _project(tmp, "p-200", env)
        ctx = InstallContext(cwd=str(project), env=env, home=env["HOME"])
        install(InstallParams(source=str(many)), ctx)

        def list_api() -> None:
            result = installed(InstalledParams(), ctx)
            assert len(result.skills) == 200 and all(s.status == "ok" for s in result.skills)

        rows.append(
            ("installed: 200 locked skills (in-process)", _time(list_api, args.repeat), 1.0)
        )
        rows.append(
            (
                "installed: 200 locked skills (CLI)",
                _time(lambda: _cli(["installed"], project, env), args.repeat),
                1.0,
            )
        )
        print(f"| case | median | slowest | target |  (repeat {args.repeat})")
        print("|---|---|---|---|")
        for label, runs, target in rows:
            median = statistics.median(runs)
            verdict = "ok" if max(runs) < target else "OVER"
            times = f"{median * 1000:.0f} ms | {max(runs) * 1000:.0f} ms"
            print(f"| {label} | {times} | < {target:g} s {verdict} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
