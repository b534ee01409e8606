"""The generated corpus a run measures, and the workload drawn from it: edits and search queries.

A corpus is generated (or reused) with ``bench/gen_corpus.py`` and its files are read once before
any timing, so the OS page cache is warm for every contender equally.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import gen_corpus

SKILL_FILE = "SKILL.md"
SKIPPED_DIRS = frozenset({".git", "node_modules"})


@dataclass
class Corpus:
    """A generated corpus on disk, with what its manifest promises."""

    root: str
    n: int
    seed: int
    expected_valid: int
    expected_invalid: int

    @property
    def max_dirs(self) -> int:
        """A ``discovery.maxDirs`` that lets one root list the whole corpus (the default cap,
        2000, is per root, and every skill directory and category folder counts)."""
        return max(10 * self.n, 1000)


def prepare_corpus(path: Path, n: int, seed: int) -> Corpus:
    """Generate the corpus at ``path`` (or reuse it) and prime the page cache with its files."""
    start = time.perf_counter()
    totals = gen_corpus.ensure_corpus(path, n, seed)["totals"]
    root = str(path.resolve())
    primed = prime_page_cache(root)
    print(
        f"corpus N={n:,}: {root} ({totals['valid']:,} valid, {totals['invalid']:,} "
        f"invalid; {primed / 1e6:.0f} MB primed) in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    return Corpus(root, n, seed, totals["valid"], totals["invalid"])


def walk_skill_dirs(root: str) -> list[str]:
    """Every directory holding a SKILL.md, found with ``os.walk`` the way discovery does it.

    A skill directory is not descended into and ``.git``/``node_modules`` are skipped, so the
    baselines list the same directories the skillsd scan lists (except resource folders, which
    only skillsd opens, to count a skill's resources).
    """
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        if SKILL_FILE in filenames:
            found.append(dirpath)
            dirnames.clear()
        else:
            dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
    return found


def prime_page_cache(root: str) -> int:
    """Read every file under ``root`` once so no contender pays for a cold disk; returns bytes."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                while chunk := fh.read(1 << 20):
                    total += len(chunk)
    return total


class OneEdit:
    """Edits one SKILL.md the way an editor saves it: write a temporary file, rename it over.

    Each edit alternates between the original bytes plus one line and the original bytes, so
    the size, mtime and inode change every time. ``restore`` puts back the original bytes and
    mtime, so the corpus (and its manifest) stays valid for the next run.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.original = Path(path).read_bytes()
        st = os.stat(path)
        self._times = (st.st_atime_ns, st.st_mtime_ns)
        self.edits = 0

    def edit(self) -> None:
        self.edits += 1
        data = self.original
        if self.edits % 2:
            data += f"\nEdited by the benchmark ({self.edits}).\n".encode()
        # A hidden name: the temporary file never shows up in the skill's resource counts.
        tmp = os.path.join(os.path.dirname(self.path), f".{SKILL_FILE}.bench-save")
        Path(tmp).write_bytes(data)
        os.replace(tmp, self.path)

    def restore(self) -> None:
        Path(self.path).write_bytes(self.original)
        os.utime(self.path, ns=self._times)


def search_queries(names: Sequence[str], descriptions: Sequence[str], seed: int) -> list[str]:
    """A deterministic mix of what users and models type into ``skills.search``.

    40 % words from a description, 20 % exact names, 15 % name prefixes, 15 % names with a typo
    (two letters swapped), 10 % Japanese or single generic words.
    """
    rng = random.Random(seed)
    queries = []
    for _ in range(200):
        roll = rng.random()
        name = rng.choice(names)
        if roll < 0.4:
            words = [w.strip(".,") for w in rng.choice(descriptions).split() if len(w) > 3]
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
        elif roll < 0.6:
            queries.append(name)
        elif roll < 0.75:
            queries.append(name[: max(3, len(name) * 3 // 5)])
        elif roll < 0.9:
            token = max(name.split("-"), key=len)
            i = rng.randrange(max(1, len(token) - 1))
            queries.append(token[:i] + token[i + 1 : i + 2] + token[i : i + 1] + token[i + 2 :])
        else:
            queries.append(rng.choice(("レビュー", "デプロイ", "review", "deploy", "pdf forms")))
    return queries
