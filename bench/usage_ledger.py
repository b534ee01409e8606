"""What the use ledger costs (docs/usage.md), beside named baselines measured in the same run.

    python bench/usage_ledger.py [--records 20000] [--skills 10000] [--transcript-mb 64]

- **record on the caller**: ``UseLedger.record`` as a request pays it on the event loop (make the
  record, queue it), per record, against ``json.dumps`` of the same record as the floor;
- **writer**: records appended per second by the writer thread (lock, ``O_APPEND``, rotation)
  into a folder under ``/tmp``;
- **report**: ``usage_report.report`` on a full ledger (two files at the default 1 MiB bound) and
  a catalog of ``--skills`` skills, against reading the same two files alone;
- **transcripts**: Claude Code transcripts read per second (lines shaped like the real agent's,
  one Skill use per hundred lines), against reading the same bytes with ``Path.read_bytes``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from skillsd.core.listing.fs_claude_transcripts import project_folder, transcript_uses
from skillsd.core.listing.use_ledger import make_record
from skillsd.core.policy.config import LedgerConfig
from skillsd.runtime.usage_report import report
from skillsd.runtime.use_ledger_file import UseLedger, ledger_dir, ledger_files
from skillsd_protocol import SkillMetadata


def _skill(n: int) -> SkillMetadata:
    return msgspec.convert(
        {
            "id": f"{n:024x}",
            "name": f"skill-{n:05}",
            "description": "A skill.",
            "path": f"/home/me/.agents/skills/skill-{n:05}/SKILL.md",
            "dir": f"/home/me/.agents/skills/skill-{n:05}",
            "scope": "user",
            "root": "/home/me/.agents/skills",
            "enabled": True,
            "mtimeMs": 0.0,
            "size": 1,
            "resources": {"scripts": 0, "references": 0, "assets": 0, "other": 0},
            "diagnostics": [],
        },
        SkillMetadata,
    )


def _row(name: str, value: str, baseline: str) -> None:
    print(f"| {name} | {value} | {baseline} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--transcript-mb", type=int, default=64)
    args = parser.parse_args()
    repo = "/home/me/src/site"
    skills = [_skill(n) for n in range(args.skills)]
    print("| measure | skillsd | baseline |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="skillsd-ledger-bench-") as tmp:
        state = os.path.join(tmp, "state", "state.json")
        folder = ledger_dir(state)
        ledger = UseLedger(folder, config=LedgerConfig)
        ledger.record(
            make_record("load", skills[0], repo=repo, at=time.time(), client="x", session=None)
        )
        ledger.flush(10)  # the thread is started

        # On the caller: per record, in batches the queue can hold.
        spent, floor = [], []
        for batch in range(args.records // 500):
            picks = skills[(batch * 500) % len(skills) :][:500]
            started = time.perf_counter()
            for skill in picks:
                ledger.record(
                    make_record(
                        "load", skill, repo=repo, at=time.time(), client="claude-code", session="s"
                    )
                )
            spent.append((time.perf_counter() - started) / len(picks))
            started = time.perf_counter()
            for skill in picks:
                json.dumps({"kind": "load", "skill": skill.name, "repo": repo, "at": time.time()})
            floor.append((time.perf_counter() - started) / len(picks))
            ledger.flush(30)
        _row(
            "record() on the caller, median per record",
            f"{statistics.median(spent) * 1e6:.1f} µs",
            f"json.dumps of the record: {statistics.median(floor) * 1e6:.1f} µs",
        )
        assert ledger.dropped == 0, ledger.dropped

        # The writer alone: a burst, timed until written.
        burst = [
            make_record(
                "invoke",
                skills[n % len(skills)],
                repo=repo,
                at=time.time(),
                client="c",
                session=None,
            )
            for n in range(1000)
        ]
        started = time.perf_counter()
        for start in range(0, len(burst), 500):
            ledger.record(*burst[start : start + 500])
            ledger.flush(30)
        rate = len(burst) / (time.perf_counter() - started)
        sizes = [os.path.getsize(p) for p in ledger_files(folder) if os.path.exists(p)]
        _row(
            "writer: records appended per second",
            f"{rate:,.0f}/s",
            f"files now {sizes} bytes (bound 1 MiB each)",
        )

        # The report on a full ledger.
        timings, reads = [], []
        for _ in range(5):
            started = time.perf_counter()
            result = report(
                repo, skills, since=None, ledger=LedgerConfig(), state_path=state, home=tmp, env={}
            )
            timings.append(time.perf_counter() - started)
            started = time.perf_counter()
            for path in ledger_files(folder):
                Path(path).read_bytes()
            reads.append(time.perf_counter() - started)
        _row(
            f"report: {result.records} records, {len(skills)} skills, median",
            f"{statistics.median(timings) * 1e3:.0f} ms",
            f"reading the two files: {statistics.median(reads) * 1e3:.1f} ms",
        )

        # Transcripts.
        home = os.path.join(tmp, "home")
        projects = Path(home, ".claude", "projects", project_folder(repo))
        projects.mkdir(parents=True)
        use = {
            "type": "assistant",
            "cwd": repo,
            "sessionId": "s",
            "timestamp": "2026-11-26T22:31:55.360Z",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t",
                        "name": "Skill",
                        "input": {"skill": "skill-00001"},
                    }
                ],
            },
        }
        other = {
            **use,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "x" * 900}]},
        }
        lines = [json.dumps(use if n % 100 == 0 else other) for n in range(1000)]
        block = ("\n".join(lines) + "\n").encode()
        files = 0
        written = 0
        while written < args.transcript_mb * 1024 * 1024:
            path = projects / f"{files:04}.jsonl"
            path.write_bytes(block * 8)
            written += len(block) * 8
            files += 1
        started = time.perf_counter()
        found = transcript_uses(repo, home=home, env={})
        took = time.perf_counter() - started
        started = time.perf_counter()
        for path in projects.iterdir():
            path.read_bytes()
        floor_took = time.perf_counter() - started
        _row(
            f"transcripts: {written / 1e6:.0f} MB in {files} files, {len(found.events)} uses",
            f"{written / 1e6 / took:.0f} MB/s ({took * 1e3:.0f} ms)",
            f"Path.read_bytes: {written / 1e6 / floor_took:.0f} MB/s",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
