"""What the ranking of the day the maintainers measured their held-out set made of each request of
the suggestion sets (``bench/suggest_issue_time.json``), for the difficulty-matched estimate of
``bench/suggest_eval.py`` (docs/benchmarks.md, "Sets as hard as the maintainers'").

    python bench/suggest_issue_time.py [--commit fc76075] [--out bench/suggest_issue_time.json]

The maintainers published, per kind of request, what that ranking (words alone, activation at
0.4) scored on their set: how often the expected skill came first, came in the top three, and
was activated. Running the same ranking on our sets tells, per request, which of those outcomes
it had: ``first-activated``, ``first``, ``top3``, ``missed`` (covered requests), ``activated``
or ``quiet`` (unrelated ones). The old ranking runs in a temporary git worktree of ``--commit``,
in its own Python process (its modules share the names of today's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
CORPORA = ROOT.parent / "shared" / "corpora"
#: The last commit before the ranking was reworked: the ranking the issue's numbers are from.
ISSUE_TIME_COMMIT = "fc76075"

_PROGRAM = r"""
import json, sys
from pathlib import Path
from skillsd.core.catalog_build import build_catalog
from skillsd.core.config import Config, DiscoveryConfig, RootsConfig
from skillsd.core.discovery import compute_roots
from skillsd.core.suggest import DEFAULT_THRESHOLD, SuggestIndex

corpora, sets = sys.argv[1], json.loads(sys.stdin.read())
config = Config(discovery=DiscoveryConfig(auto=False), roots=RootsConfig(extra=(corpora,)))
plan = compute_roots(".", config, home="/nonexistent", env={})
index = SuggestIndex(build_catalog(plan, config).skills)
out = {}
for name, rows in sets.items():
    found = []
    for row in rows:
        want = set((row.get("expect") or "").split("|")) - {""}
        if row.get("kind") == "ambiguous":
            want |= set(row.get("also") or ())
        ranked = index.rank(row["query"])
        names = [s.skill.name for s in ranked[:3]]
        if not want:
            on = any(s.score >= DEFAULT_THRESHOLD for s in ranked)
            found.append("activated" if on else "quiet")
        elif names and names[0] in want:
            on = any(s.skill.name in want and s.score >= DEFAULT_THRESHOLD for s in ranked[:3])
            found.append("first-activated" if on else "first")
        else:
            found.append("top3" if want & set(names) else "missed")
    out[name] = found
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commit", default=ISSUE_TIME_COMMIT)
    parser.add_argument("--out", type=Path, default=BENCH / "suggest_issue_time.json")
    args = parser.parse_args()
    sets = {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(BENCH.glob("suggest_*.json"))
        if path.name != args.out.name
    }
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.commit],
            check=True,
            capture_output=True,
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", _PROGRAM, str(CORPORA)],
                input=json.dumps(sets),
                cwd=tree,
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
    outcomes = json.loads(done.stdout)
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in outcomes.items())
    text = f'{{"commit": {json.dumps(args.commit)}, "sets": {{\n{lines}\n}}}}\n'
    args.out.write_text(text, encoding="utf-8")  # one line a set: diffs stay readable
    print(f"{sum(map(len, outcomes.values()))} requests of {len(outcomes)} sets -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
