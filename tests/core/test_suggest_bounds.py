"""``paths`` globs are matched without backtracking, and ``activeFiles`` is bounded
(docs/security.md).

``pathspec`` compiles ``*a*a*a*a*a*a*a*a*b`` to a regex that took 53.6 s against a 56-character
file name, on the daemon's event loop. Each hostile case here runs in a forked child with a
generous timeout, so a regression fails in seconds instead of hanging the run.
"""

from __future__ import annotations

import multiprocessing
import warnings
from collections.abc import Callable
from typing import TypeVar

import msgspec
import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillsd.core.catalog.path_globs import compile_globs, globs_match, split_path
from skillsd.core.catalog.prompt_budget import paths_match_reason
from skillsd.core.catalog.suggest import (
    MAX_ACTIVE_FILE_BYTES,
    MAX_ACTIVE_FILES,
    SuggestIndex,
    check_active_files,
)
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd_protocol import SkillMetadata
from skillsd_protocol.model import HostFields
from tests.core.skill_fixtures import make_skill

#: What took minutes before; a few milliseconds after. Generous for a loaded 2-core machine.
TIMEOUT = 5.0
_T = TypeVar("_T")


def bounded(fn: Callable[[], _T]) -> _T:
    """``fn()`` in a forked child, given up past :data:`TIMEOUT`: a regex holds the GIL while it
    runs, so no thread of this process could even notice the time."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)

    def run() -> None:
        try:
            writer.send((True, fn()))
        except Exception as exc:
            writer.send((False, repr(exc)))

    child = context.Process(target=run, daemon=True)
    child.start()
    writer.close()
    try:
        if not reader.poll(TIMEOUT):
            pytest.fail(f"still matching after {TIMEOUT} s")
        done, value = reader.recv()
    finally:
        child.kill()
        child.join()
    assert done, value
    return value  # type: ignore[no-any-return]


def with_paths(name: str, *globs: str) -> SkillMetadata:
    return msgspec.structs.replace(make_skill(name), host=HostFields(paths=list(globs)))


def matches(globs: list[str], path: str) -> bool:
    return globs_match(compile_globs(globs), split_path(path))


@pytest.mark.process
def test_the_backtracking_glob_answers_at_once_and_rightly() -> None:
    skill = with_paths("stars", "*a*a*a*a*a*a*a*a*b")
    root = "/repo"
    miss = bounded(lambda: paths_match_reason([f"{root}/{'a' * 56}"], root)(skill))
    assert miss is None
    hit = bounded(lambda: paths_match_reason([f"{root}/src/{'a' * 56}b"], root)(skill))
    assert hit == f"*a*a*a*a*a*a*a*a*b matches src/{'a' * 56}b"
    # The longest file name allowed, and stars that must share it among many pieces.
    assert not bounded(lambda: matches(["*a*a*a*a*a*a*a*a*b"], "a" * MAX_ACTIVE_FILE_BYTES))
    assert bounded(lambda: matches(["*a?a*[ab]*a*a*a*b"], "a" * 4000 + "b"))
    assert not bounded(lambda: matches(["*a?a*[ab]*a*a*a*c"], "a" * 4000 + "b"))
    # ``**`` between names backtracked over folders the same way.
    deep = "/".join(["a"] * 2000)
    assert not bounded(lambda: matches(["**/a/**/a/**/a/**/a/**/a/**/b"], deep))
    assert bounded(lambda: matches(["**/a/**/a/**/a/**/a/**/a/**/b"], deep + "/b"))
    # Runs of stars are one star, not a product of them.
    assert not bounded(lambda: matches(["*" * 64 + "b"], "a" * 4000))


@pytest.mark.process
def test_a_miss_places_each_piece_once() -> None:
    """A name whose head and tail fit but whose middle cannot: each piece is searched for once,
    left to right, so a thousand misses over 4 096 characters cost milliseconds."""
    globs = compile_globs(["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c*b"])
    names = split_path("a" * 4095 + "b")
    assert bounded(lambda: not any(globs_match(globs, names) for _ in range(1000)))
    assert globs_match(globs, split_path("a" * 4000 + "cb"))


def test_broken_globs_match_nothing_instead_of_failing_the_request() -> None:
    """An unclosed ``[``, a trailing backslash or a reversed range raised from pathspec or
    ``re`` (every suggest with activeFiles failed); git ignores such patterns."""
    for glob in ("[z-a]", "src/[abc", "foo\\"):
        skill = with_paths("broken", glob)
        assert paths_match_reason(["z", "src/a", "foo", "foo\\"], "/repo")(skill) is None
    # Beside a valid glob, a broken one leaves the valid one working.
    skill = with_paths("mixed", "[z-a]", "**/*.sql")
    assert paths_match_reason(["db/q.sql"], "/repo")(skill) == "**/*.sql matches db/q.sql"


@pytest.mark.parametrize(
    ("globs", "path", "expected"),
    [
        (["**/*.sql"], "db/report.sql", True),
        (["*.sql"], "db/report.sql", True),  # no "/" inside: any depth
        (["/*.sql"], "db/report.sql", False),
        (["db/*.sql"], "db/report.sql", True),
        (["db/*.sql"], "x/db/report.sql", False),  # a "/" inside anchors
        (["db/"], "db/report.sql", True),
        (["db/"], "db", False),  # a folder glob never names the file itself
        (["db/**"], "db/a/b.sql", True),
        (["a/**/b"], "a/b", True),
        (["a/**/b"], "a/x/y/b", True),
        (["src"], "src/deep/file.py", True),  # a folder's files
        (["*.py", "!test_*.py"], "src/test_x.py", False),
        (["*.py", "!test_*.py"], "src/x.py", True),
        (["src/", "!src/keep.py"], "src/keep.py", False),
        (["!src/keep.py", "src/"], "src/keep.py", False),  # the file's own match wins
        (["[!a]*"], "b/x", True),
        (["x[!a]y"], "x/y", False),  # a set never matches "/" (pathspec's did)
        (["\\*.md"], "*.md", True),
        (["\\*.md"], "a.md", False),
        (["# not a glob", "", "   "], "x", False),
    ],
)
def test_gitignore_meaning(globs: list[str], path: str, expected: bool) -> None:
    assert matches(globs, path) is expected


_GLOB_PART = st.sampled_from(
    [*"ab*?/!#.-] ", "ab", "**", "[ab]", "[]a]", "[a-b]", "[b-a]", "[a-", "\\*", "\\", "//"]
)
_NAME = st.sampled_from(["a", "b", "ab", "ba", "aa", "a.b", "*", " ", "x", "]", "-"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_GLOB_PART, min_size=1, max_size=6).map("".join), min_size=1, max_size=3),
    st.lists(_NAME, min_size=1, max_size=4).map("/".join),
)
def test_the_same_answers_as_pathspec(globs: list[str], path: str) -> None:
    """What the project matched with before (``pathspec.GitIgnoreSpec``), wherever pathspec
    answers at all. Negated sets are left out: pathspec lets ``[!a]`` match a "/"."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # re's FutureWarning on "[[" in a set
            spec = pathspec.GitIgnoreSpec.from_lines(globs)
    except Exception:  # the globs pathspec or re refuse (tested above)
        return
    assert matches(globs, path) is spec.match_file(path)


def test_active_files_are_bounded_naming_the_field() -> None:
    check_active_files(None)
    check_active_files(["x" * MAX_ACTIVE_FILE_BYTES] * MAX_ACTIVE_FILES)
    check_active_files(["é" * (MAX_ACTIVE_FILE_BYTES // 2)])  # 4 096 bytes
    for files in (
        ["a.py"] * (MAX_ACTIVE_FILES + 1),
        ["x" * (MAX_ACTIVE_FILE_BYTES + 1)],
        ["ok.py", "é" * (MAX_ACTIVE_FILE_BYTES // 2 + 1)],  # 2 049 characters, 4 098 bytes
    ):
        with pytest.raises(SkillsdError) as caught:
            check_active_files(files)
        assert isinstance(caught.value.data, InvalidParamsData)
        assert caught.value.data.field == "activeFiles"
        assert "activeFiles" in caught.value.message


@pytest.mark.process
def test_ranking_with_active_files_at_the_cap_is_quick() -> None:
    """50 skills with hostile globs against 1 000 files of 4 096 bytes: 100 000 active files
    against 50 globs blocked the loop 12.9 s before the cap."""
    skills = [with_paths(f"s{i}", f"*a*a*a*a*a*a*a*a*b{i}") for i in range(50)]
    skills.append(with_paths("sql", "**/*.sql"))
    files = [f"src/{'a' * 4000}{i}" for i in range(MAX_ACTIVE_FILES - 1)] + ["db/q.sql"]
    index = SuggestIndex(skills)
    ranked = bounded(
        lambda: [
            (s.skill.name, s.matched)
            for s in index.rank("tidy this query", paths_match=paths_match_reason(files, "/repo"))
        ]
    )
    assert ranked == [("sql", {"paths": ["**/*.sql matches db/q.sql"]})]
