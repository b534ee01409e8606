"""Search cost stays bounded for any query the protocol allows (docs/security.md, issue 13 item 1).

Typo matching enumerated every 2-deletion of a query token: ~n**2/2 strings of ~n characters, so
one 1 250-letter word took 700 MB and a 5 KB one the OOM killer. Each query here runs in a worker
thread joined with a generous timeout, under tracemalloc, against a catalog of 2 000 skills.
"""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from skillsd.core.catalog.search import SearchIndex
from skillsd.core.name_distance import closest_names
from tests.core.skill_fixtures import make_skill
from tests.support.daemons import StdioDaemon, request
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project, write_skill

#: Minutes before the bound; a few milliseconds after it. Generous for a loaded 2-core machine.
TIMEOUT = 10.0
#: Peak Python memory one query may allocate (1 000 random letters took ~700 MB before).
MAX_PEAK_BYTES = 64 * 2**20

_WORDS = [
    "deploy",
    "migrate",
    "review",
    "release",
    "notes",
    "changelog",
    "commit",
    "format",
    "lint",
    "test",
    "pdf",
    "forms",
    "data",
    "analysis",
    "chart",
    "kubernetes",
    "terraform",
    "docker",
    "python",
    "typescript",
    "database",
    "schema",
    "backup",
]


def _catalog(n: int = 2000) -> SearchIndex:
    rng = random.Random(13)
    skills = []
    for i in range(n):
        parts = rng.sample(_WORDS, 2)
        # Some long alphabetic name tokens too, so long query tokens have typo candidates.
        if i % 10 == 0:
            parts.append("".join(rng.choices(string.ascii_lowercase, k=60)))
        name = "-".join(parts) + f"-{i}"
        description = " ".join(rng.choices(_WORDS, k=12)) + " 日本語の説明 für Ärzte"
        skills.append(make_skill(name, description, tags=",".join(rng.sample(_WORDS, 2))))
    return SearchIndex(skills)


INDEX = _catalog()


T = TypeVar("T")


def _bounded(run: Callable[[], T]) -> T:
    """``run()`` in a daemon thread: its result, or a failure if it outlasts TIMEOUT or
    allocates more than MAX_PEAK_BYTES at its peak."""
    box: list[T | BaseException] = []

    def work() -> None:
        try:
            box.append(run())
        except BaseException as exc:  # handed to the test thread
            box.append(exc)

    tracemalloc.start()
    try:
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(TIMEOUT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not worker.is_alive(), f"still running after {TIMEOUT} s"
    assert peak < MAX_PEAK_BYTES, f"one query peaked at {peak / 2**20:.0f} MiB"
    (outcome,) = box
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


_rng = random.Random(2024)
QUERIES = {
    "one word of 1000 a": "a" * 1000,
    "one word of 1000 random letters": "".join(_rng.choices(string.ascii_lowercase, k=1000)),
    "500 two-letter words": " ".join(
        "".join(_rng.choices(string.ascii_lowercase, k=2)) for _ in range(333)
    )[:1000],
    "200 distinct five-letter words": " ".join(
        "".join(_rng.choices(string.ascii_lowercase, k=5)) for _ in range(166)
    )[:1000],
    "random unicode": "".join(chr(_rng.randrange(0x20, 0x3000)) for _ in range(1000)),
    "han characters": "".join(chr(_rng.randrange(0x4E00, 0x9FFF)) for _ in range(1000)),
    "a long word near a long name token": INDEX.skills[0].name.split("-")[2][:59] + "x" * 941,
}


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_any_query_up_to_1000_characters_is_answered_quickly(query: str) -> None:
    assert len(query) <= 1000
    result = _bounded(lambda: INDEX.search(query, limit=50))
    assert result.count >= len(result.results)


def test_a_query_far_over_the_protocol_limit_is_still_bounded() -> None:
    # The protocol refuses these; the core must not depend on that.
    letters = "".join(random.Random(5).choices(string.ascii_lowercase, k=20_000))
    _bounded(lambda: INDEX.search(letters))
    _bounded(lambda: INDEX.search("a" * 128_000))


def _typo(word: str) -> str:
    return word[:10] + ("b" if word[10] != "b" else "c") + word[11:]


def test_tokens_up_to_64_characters_keep_typo_matching() -> None:
    rng = random.Random(7)
    long64 = "".join(rng.choices(string.ascii_lowercase, k=64))
    long65 = "".join(rng.choices(string.ascii_lowercase, k=65))
    index = SearchIndex([make_skill(f"x-{long64}", "-"), make_skill(f"y-{long65}", "-")])
    hits = index.search(_typo(long64)).results
    assert [h.skill.name for h in hits] == [f"x-{long64}"]
    # Past 64 characters a token matches exactly or as a prefix, never with a typo.
    assert index.search(_typo(long65)).count == 0
    assert [h.skill.name for h in index.search(long65).results] == [f"y-{long65}"]
    assert [h.skill.name for h in index.search(long65[:-1]).results] == [f"y-{long65}"]


def test_only_the_first_64_distinct_words_of_a_query_count() -> None:
    index = SearchIndex([make_skill("alpha", "first"), make_skill("omega", "last")])
    filler = [f"w{i}" for i in range(63)]
    assert [h.skill.name for h in index.search(" ".join(["first", *filler])).results] == ["alpha"]
    assert index.search(" ".join([*filler, "zz", "last"])).count == 0
    # Repeated words are one word: they do not use up the budget.
    assert index.search(" ".join(["w1"] * 200 + ["last"])).count == 1


def test_did_you_mean_is_bounded_for_long_names() -> None:
    # Lenient mode keeps names over 64 characters; from a small alphabet, no cheap filter
    # tells them apart, and each full comparison of 1 000 characters took ~0.3 s.
    rng = random.Random(9)
    long_names = ["".join(rng.choices("abc", k=1000)) for _ in range(50)]
    query = "".join(rng.choices("abc", k=1000))
    assert _bounded(lambda: closest_names(query, long_names)) == []
    name64 = "".join(rng.choices(string.ascii_lowercase, k=64))
    assert closest_names(_typo(name64), [name64, "deploy"]) == [name64]


# -- through the real daemon ----------------------------------------------------------------------


#: The daemon's whole peak RSS (about 60 MiB with 200 skills).
DAEMON_MAX_PEAK_RSS = 400 * 2**20


def _peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.process
def test_daemon_answers_a_1000_letter_word_and_the_next_ping(tmp_path: Path) -> None:
    tree = make_project(tmp_path)
    rng = random.Random(11)
    for i in range(200):
        long_token = "".join(rng.choices(string.ascii_lowercase, k=40))
        write_skill(tree["skills"], f"bulk-{long_token}-{i}", f"Bulk skill {i} for {long_token}.")
    word = "".join(rng.choices(string.ascii_lowercase, k=1000))
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        cwd = str(tree["project"])
        # Catalog built first, so the search below measures the query alone.
        assert "result" in daemon.call(1, "skills.list", {"cwd": cwd})
        daemon.send(
            request(2, "skills.search", {"cwd": cwd, "query": word})
            + request(
                3, "tools.call", {"cwd": cwd, "name": "skill_search", "arguments": {"query": word}}
            )
            + request(4, "ping")
        )
        replies = {}
        for _ in range(3):
            reply = daemon.reader.message(timeout=TIMEOUT)
            replies[reply["id"]] = reply
        assert replies[2]["result"]["count"] == 0, replies[2]
        assert replies[3]["result"]["isError"] is False, replies[3]
        assert replies[4] == {"jsonrpc": "2.0", "id": 4, "result": {}}
        # Unbounded, these two searches took the daemon past 500 MiB (and `skillsd search` 7 GiB).
        peak = _peak_rss_bytes(daemon.proc.pid)
        assert peak < DAEMON_MAX_PEAK_RSS, f"daemon peak RSS {peak / 2**20:.0f} MiB"
    finally:
        daemon.kill()


#: Runs ``argv[2:]`` with its output to the file ``argv[1]``, then prints its exit status and peak
#: RSS in KiB. A child's ``ru_maxrss`` starts at the RSS of the process it was forked from, and
#: the test process may hold hundreds of MiB by then (it did on an xdist worker: "skillsd search
#: peaked at 681 MiB"), so this small process starts the command and measures it.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'wb') as sink:\n"
    f"    done = subprocess.run(sys.argv[2:], stdout=sink, stderr=sink, timeout={TIMEOUT})\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def _run_measured(args: list[str], cwd: Path, environ: dict[str, str]) -> tuple[int, bytes, int]:
    """Run a command; its exit status, stdout and peak RSS in bytes (that command's alone, from
    ``_MEASURE``). Killed and failed after TIMEOUT seconds."""
    out = cwd / "measured.out"
    measured = subprocess.run(
        [sys.executable, "-c", _MEASURE, os.fspath(out), *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
    )
    assert measured.returncode == 0, f"{args} (killed after {TIMEOUT} s?): {measured.stderr}"
    status, peak_kib = (int(word) for word in measured.stdout.split())
    return status, out.read_bytes(), peak_kib * 1024


@pytest.mark.process
def test_cli_search_answers_a_1000_letter_word(tmp_path: Path) -> None:
    tree = make_project(tmp_path)
    word = "".join(random.Random(3).choices(string.ascii_lowercase, k=1000))
    status, output, peak = _run_measured(
        [sys.executable, "-m", "skillsd", "search", word], tree["project"], daemon_env(tree)
    )
    assert status == 0, output
    assert output.decode().splitlines()[-1] == "0 match(es)"
    assert peak < DAEMON_MAX_PEAK_RSS, f"skillsd search peaked at {peak / 2**20:.0f} MiB"
