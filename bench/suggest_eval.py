"""How well ``skills.suggest`` finds the skill a request needs, on bench/suggest_set.json (155
requests written from the meaning of the 30 corpus skills: direct, paraphrased, indirect,
ambiguous, and unrelated ones no skill covers).

    python bench/suggest_eval.py [--threshold T] [--sweep] [--json]

Prints top-1 and top-3 on the requests a skill covers (per kind), activation precision and
recall, the false-activation rate on unrelated requests, and p50/p95 latency per request on the
corpus and on a 1 000-skill catalog (the corpus plus generated skills). ``--sweep`` prints the
same at several thresholds (how the default of ``suggest.threshold`` was chosen). The baseline
in the same run is ``skills.search``'s ranking (lexical BM25F) for top-1 and top-3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillsd.core.catalog_build import build_catalog  # noqa: E402
from skillsd.core.config import Config, DiscoveryConfig, RootsConfig  # noqa: E402
from skillsd.core.discovery import compute_roots  # noqa: E402
from skillsd.core.search import SearchIndex  # noqa: E402
from skillsd.core.suggest import DEFAULT_THRESHOLD, SuggestIndex  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
SET = Path(__file__).with_name("suggest_set.json")


def catalog_of(*roots: Path):  # type: ignore[no-untyped-def]
    config = Config(
        discovery=DiscoveryConfig(auto=False), roots=RootsConfig(extra=tuple(map(str, roots)))
    )
    plan = compute_roots(str(ROOT), config, home="/nonexistent", env={})
    return build_catalog(plan, config)


def _filler(folder: Path, count: int) -> None:
    words = "alpha beta gamma delta ledger invoice sensor payroll atlas orbit kernel shard"
    vocab = words.split()
    for i in range(count):
        name = f"filler-{i:04d}"
        skill = folder / name
        skill.mkdir(parents=True)
        topic = " ".join(vocab[(i + k) % len(vocab)] for k in range(3))
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles {topic} records for team {i}.\n---\nBody.\n"
        )


def evaluate(index: SuggestIndex, rows: list[dict], threshold: float, semantic=None) -> dict:  # type: ignore[no-untyped-def,type-arg]
    covered = [r for r in rows if r["expect"]]
    top1 = top3 = 0
    by_kind: dict[str, list[int]] = {}
    true_act = false_act = missed_act = unrelated_act = 0
    unrelated = [r for r in rows if not r["expect"]]
    for row in rows:
        similarity = semantic(row["query"]) if semantic is not None else None
        ranked = index.rank(row["query"], similarity=similarity)
        names = [s.skill.name for s in ranked[:3]]
        active = [s.skill.name for s in ranked if s.score >= threshold]
        wanted = set((row["expect"] or "").split("|")) - {""}
        if wanted:
            hit1 = bool(names[:1]) and names[0] in wanted
            hit3 = bool(wanted & set(names))
            top1 += hit1
            top3 += hit3
            kind = by_kind.setdefault(row["kind"], [0, 0, 0])
            kind[0] += hit1
            kind[1] += hit3
            kind[2] += 1
            if active and active[0] in wanted:
                true_act += 1
            elif active:
                false_act += 1
            else:
                missed_act += 1
        elif active:
            unrelated_act += 1
    activated = true_act + false_act + unrelated_act
    return {
        "threshold": threshold,
        "top1": top1 / len(covered),
        "top3": top3 / len(covered),
        "by_kind": {k: (v[0] / v[2], v[1] / v[2], v[2]) for k, v in by_kind.items()},
        "activation_precision": true_act / activated if activated else 1.0,
        "activation_recall": true_act / len(covered),
        "false_activation_unrelated": unrelated_act / len(unrelated),
    }


def search_baseline(catalog, rows: list[dict]) -> tuple[float, float]:  # type: ignore[no-untyped-def,type-arg]
    index = SearchIndex(catalog.skills)
    covered = [r for r in rows if r["expect"]]
    top1 = top3 = 0
    for row in covered:
        wanted = set(row["expect"].split("|"))
        hits = index.search(row["query"], limit=3, default_limit=3, max_limit=3).results
        names = [h.skill.name for h in hits]
        top1 += bool(names) and names[0] in wanted
        top3 += bool(wanted & set(names))
    return top1 / len(covered), top3 / len(covered)


def latency(index: SuggestIndex, rows: list[dict], semantic=None) -> tuple[float, float]:  # type: ignore[no-untyped-def,type-arg]
    times = []
    for _ in range(3):
        for row in rows:
            start = time.perf_counter()
            similarity = semantic(row["query"]) if semantic is not None else None
            index.rank(row["query"], similarity=similarity)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def _semantic_for(skills):  # type: ignore[no-untyped-def]
    """The semantic stage over ``skills`` (None without the extra ``skillsd[semantic]``)."""
    from skillsd.runtime.embeddings import SemanticIndex, SemanticModel, semantic_version

    if semantic_version() is None:
        return None
    return SemanticIndex(SemanticModel(tempfile.mkdtemp(prefix="skillsd-emb-")), skills)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = json.loads(SET.read_text())
    catalog = catalog_of(CORPORA)
    index = SuggestIndex(catalog.skills)
    base1, base3 = search_baseline(catalog, rows)
    stages = {"lexical": None, "lexical+semantic": _semantic_for(catalog.skills)}
    report: dict[str, object] = {
        "requests": len(rows),
        "skills": len(catalog.skills),
        "search_baseline": {"top1": base1, "top3": base3},
    }
    with tempfile.TemporaryDirectory() as tmp:
        _filler(Path(tmp), 1000 - len(catalog.skills))
        big_catalog = catalog_of(CORPORA, Path(tmp))
        big = SuggestIndex(big_catalog.skills)
        for name, semantic in stages.items():
            if name != "lexical" and semantic is None:
                continue
            result = evaluate(index, rows, args.threshold, semantic)
            big_semantic = _semantic_for(big_catalog.skills) if semantic is not None else None
            p50, p95 = latency(big, rows, big_semantic)
            result["n1000_latency_ms"] = {"p50": p50, "p95": p95}
            if args.sweep:
                result["sweep"] = {
                    t: evaluate(index, rows, t, semantic)
                    for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
                }
            report[name] = result
    if args.json:
        print(json.dumps(report, indent=1, default=str))
        return 0
    print(f"{len(rows)} requests, {len(catalog.skills)} corpus skills, threshold {args.threshold}")
    print(
        f"{'':26}{'top-1':>7}{'top-3':>7}{'act.prec':>9}{'act.rec':>8}{'unrel.act':>10}"
        f"{'p50 ms@1k':>10}"
    )
    print(f"{'skills.search (baseline)':26}{base1:7.2f}{base3:7.2f}")
    for name in stages:
        r = report.get(name)
        if not isinstance(r, dict):
            print(f"{name:26}  (not installed: pip install '.[semantic]')")
            continue
        print(
            f"{name:26}{r['top1']:7.2f}{r['top3']:7.2f}{r['activation_precision']:9.2f}"
            f"{r['activation_recall']:8.2f}{r['false_activation_unrelated']:10.2f}"
            f"{r['n1000_latency_ms']['p50']:10.2f}"
        )
        for kind, (t1, t3, n) in sorted(r["by_kind"].items()):
            print(f"{'  ' + kind + f' ({n})':26}{t1:7.2f}{t3:7.2f}")
        for t, swept in (r.get("sweep") or {}).items():
            print(
                f"{'  threshold ' + str(t):26}{'':14}{swept['activation_precision']:9.2f}"
                f"{swept['activation_recall']:8.2f}{swept['false_activation_unrelated']:10.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
