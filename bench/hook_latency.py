"""How long ``skillsd hook claude-code`` takes end to end with a warm shared daemon, beside the
floor every Python hook pays (``python -c pass``) in the same run.

    python bench/hook_latency.py [--runs 21]

The hook runs as an agent runs it: a new process per prompt, the hook's JSON on stdin, on the
examples' catalog; the daemon is started once (by the first hook) in a temporary runtime
directory and stopped at the end. Target: under 150 ms (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "examples" / "project"
EVENT = (
    b'{"session_id": "bench", "hook_event_name": "UserPromptSubmit", '
    b'"prompt": "draft the release notes for v2", "cwd": "' + str(PROJECT).encode() + b'"}'
)


def _timed(command: list[str], env: dict[str, str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, input=EVENT, env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
        if "hook" in command:
            assert b"hookSpecificOutput" in done.stdout, done.stderr
    return sorted(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    skillsd = str(Path(sys.executable).with_name("skillsd"))
    with tempfile.TemporaryDirectory(prefix="sdhook-", dir="/tmp") as tmp:
        runtime = Path(tmp, "run")
        runtime.mkdir(mode=0o700)
        env = {
            **os.environ,
            "HOME": str(ROOT / "examples" / "home"),
            "SKILLSD_RUNTIME_DIR": str(runtime),
            "SKILLSD_CONFIG": str(Path(tmp, "config.toml")),
            "XDG_STATE_HOME": str(Path(tmp, "state")),
            "XDG_CACHE_HOME": str(Path(tmp, "cache")),
        }
        hook = [skillsd, "hook", "claude-code"]
        try:
            _timed(hook, env, 2)  # starts the daemon and warms its catalog and indexes
            floor = _timed([sys.executable, "-c", "pass"], env, args.runs)
            measured = _timed(hook, env, args.runs)
        finally:
            subprocess.run([skillsd, "daemon", "stop"], env=env, capture_output=True)
    print("| case | p50 | min | p90 | runs |\n|---|---:|---:|---:|---:|")
    for name, times in (("python -c pass (floor)", floor), ("skillsd hook claude-code", measured)):
        p90 = times[int(len(times) * 0.9)]
        print(
            f"| {name} | {statistics.median(times):.1f} ms | {times[0]:.1f} ms | {p90:.1f} ms "
            f"| {len(times)} |"
        )
    verdict = "met" if statistics.median(measured) < 150 else "NOT met"
    print(f"target hook p50 < 150 ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
