"""skillsd's core measured in this process: the scan, a cold catalog, a refresh after one edit,
search over a built index, and the peak RSS of a fresh process holding a catalog.

These call ``skillsd.core`` directly (no daemon, no wire), so their numbers are the library's own
cost; the daemon probes measure the same operations over the protocol.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.contender import BenchUnavailable, Outcome, Prepared, Runner, latencies
from bench.corpus import MANIFEST_MODE, Corpus, OneEdit, search_queries

REPO_DIR = Path(__file__).resolve().parent.parent


def skillsd_plan(corpus: Corpus) -> tuple[Any, Any]:
    """The config and root plan of a catalog holding only the corpus (an extra root).

    ``discovery.auto`` is off, the environment is empty (so ``$AGENT_SKILLS_PATH`` cannot add
    roots) and, because one root holds the whole corpus, the per-root directory cap (2000 by
    default) is raised to let every skill directory and category folder be listed.
    """
    from skillsd.core.discovery.fs_roots import compute_roots
    from skillsd.core.policy.config import Config, DiscoveryConfig, RootsConfig

    config = Config(
        validation=MANIFEST_MODE,
        discovery=DiscoveryConfig(auto=False, max_dirs=corpus.max_dirs),
        roots=RootsConfig(extra=(corpus.root,)),
    )
    plan = compute_roots(corpus.root, config, home=corpus.root, env={})
    return config, plan


def _catalog_outcome(catalog: Any) -> Outcome:
    """Valid skills / load errors of a catalog, and how many SKILL.md files it parsed."""
    return Outcome.counted(len(catalog.skills), len(catalog.errors), parsed=catalog.stats.parsed)


def prepare_scan(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """skillsd's discovery scan alone (walk, resource counts), as a cold build runs it."""
    from skillsd.core.discovery.fs_roots import scan_plan

    config, plan = skillsd_plan(corpus)

    def run() -> Outcome:
        # A first build skips the per-file stat: it fstat's each SKILL.md when it opens it.
        return Outcome.counted(len(scan_plan(plan, config, stat_files=False).skills))

    return Prepared(run)


def _cold_catalog(corpus: Corpus) -> Runner:
    from skillsd.core.catalog.fs_catalog_build import build_catalog
    from skillsd.core.discovery.fs_roots import compute_roots

    config, _ = skillsd_plan(corpus)

    def run() -> Outcome:
        # Root planning is part of a cold skills.list, so it is inside the timing.
        plan = compute_roots(corpus.root, config, home=corpus.root, env={})
        catalog = build_catalog(plan, config)
        # A build pauses the cyclic GC; the young-generation pass it deferred is charged here.
        gc.collect(0)
        return _catalog_outcome(catalog)

    return run


def prepare_skillsd(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A cold skillsd catalog with the core API: plan, scan, read + validate each SKILL.md."""
    return Prepared(_cold_catalog(corpus))


#: Per corpus root, the file the core-level edit contenders edit (all the same one, so that each
#: of them sees exactly one changed file against the catalog it built).
_CORE_EDITORS: dict[str, OneEdit] = {}


def _core_editor(corpus: Corpus, catalog: Any) -> OneEdit:
    if corpus.root not in _CORE_EDITORS:
        if not catalog.skills:
            raise BenchUnavailable("the corpus has no valid skill to edit")
        _CORE_EDITORS[corpus.root] = OneEdit(catalog.skills[len(catalog.skills) // 2].path)
    return _CORE_EDITORS[corpus.root]


#: Rebuilds a catalog after one edit: (config, plan, previous catalog, edited path) -> catalog.
Rebuild = Callable[[Any, Any, Any, str], Any]


def _prepare_after_one_edit(corpus: Corpus, rebuild: Rebuild) -> Prepared:
    """Build a catalog once; before each run one valid skill's SKILL.md gets an atomic save
    (untimed), and the run is ``rebuild`` against the catalog built before the first edit."""
    from skillsd.core.catalog.fs_catalog_build import build_catalog

    config, plan = skillsd_plan(corpus)
    previous = build_catalog(plan, config)
    editor = _core_editor(corpus, previous)

    def run() -> Outcome:
        return _catalog_outcome(rebuild(config, plan, previous, editor.path))

    return Prepared(run, before_each=editor.edit, cleanup=editor.restore)


def prepare_relist(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """What the daemon does on a file event (core level): ``refresh_catalog`` with the path.

    It must re-list one directory and re-parse exactly the edited file (``stats.parsed == 1``).
    """
    from skillsd.core.catalog.fs_catalog_build import refresh_catalog

    return _prepare_after_one_edit(
        corpus, lambda _config, _plan, previous, path: refresh_catalog(previous, [path])
    )


def prepare_rescan(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """A full rescan reusing every unchanged parse: ``build_catalog(previous=...)`` after one
    edit. The daemon does this only for structural events (a skill added or removed, a root
    appearing) or a watcher fallback; shown for comparison with ``relist``."""
    from skillsd.core.catalog.fs_catalog_build import build_catalog

    return _prepare_after_one_edit(
        corpus,
        lambda config, plan, previous, _path: build_catalog(plan, config, previous=previous),
    )


def prepare_search(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``SearchIndex.search`` latency over a built index (the daemon caches one per catalog)."""
    from skillsd.core.catalog.fs_catalog_build import build_catalog
    from skillsd.core.catalog.search import SearchIndex

    config, plan = skillsd_plan(corpus)
    catalog = build_catalog(plan, config)
    index = SearchIndex(catalog.skills)
    queries = search_queries(
        [s.name for s in catalog.skills], [s.description for s in catalog.skills], corpus.seed
    )
    clock = time.perf_counter

    def search(query: str) -> tuple[float, bool]:
        start = clock()
        result = index.search(query)
        return clock() - start, result.count > 0

    return Prepared(lambda: latencies(queries, search))


# Runs in a fresh interpreter: peak RSS after imports, then after building the catalog and its
# search index (what the daemon holds for one cwd). VmHWM (the high-water mark of this process's
# address space, in kB) is used, not ru_maxrss: Linux carries ru_maxrss over from the parent
# across fork + exec, so a child of this large bench process would report the parent's peak.
_RSS_SCRIPT = """
import json, sys
def hwm():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
sys.path.insert(0, sys.argv[1])
from bench.core_probes import skillsd_plan
from bench.corpus import Corpus
from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.search import SearchIndex
config, plan = skillsd_plan(Corpus(sys.argv[2], int(sys.argv[3]), 0, 0, 0))
base = hwm()
catalog = build_catalog(plan, config)
index = SearchIndex(catalog.skills)
peak = hwm()
print(json.dumps({"base_kib": base, "peak_kib": peak, "skills": len(catalog.skills),
                  "errors": len(catalog.errors)}))
"""


def prepare_rss(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """Peak RSS of a fresh process holding the cold catalog and its search index (MB)."""
    if sys.platform != "linux":
        raise BenchUnavailable("peak RSS is read from /proc/self/status (Linux only)")

    def run() -> Outcome:
        out = subprocess.run(
            [sys.executable, "-c", _RSS_SCRIPT, str(REPO_DIR), corpus.root, str(corpus.n)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        data = json.loads(out.strip().splitlines()[-1])
        return Outcome.counted(
            data["skills"],
            data["errors"],
            value=data["peak_kib"] / 1024,
            detail=f"interpreter + imports alone: {data['base_kib'] / 1024:.1f} MB",
        )

    return Prepared(run)
