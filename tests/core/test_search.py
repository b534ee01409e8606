"""Search ranking, reasons, filters, limits, typo tolerance and Unicode (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillsd.core import limits
from skillsd.core.catalog.search import SearchIndex, parse_tags, stem, tokenize
from skillsd.core.errors import SkillsdError
from skillsd.core.name_distance import edit_distance
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import SearchResult
from tests.core.skill_fixtures import make_skill


def search(skills: list[SkillMetadata], query: str, **options: Any) -> SearchResult:
    """One query over a fresh index (the daemon caches its index per catalog)."""
    return SearchIndex(skills).search(query, **options)


def _names(result: object) -> list[str]:
    return [hit.skill.name for hit in result.results]  # type: ignore[attr-defined]


def _reasons(result: object) -> dict[str, str]:
    return {hit.skill.name: hit.reason for hit in result.results}  # type: ignore[attr-defined]


CATALOG = [
    make_skill("pdf", "Minimal PDF helper."),
    make_skill("pdf-processing", "Extract text and tables from PDF files, fill forms."),
    make_skill("pdf-forms", "Fill PDF forms."),
    make_skill("data-analysis", "Analyze datasets and build charts from pdf exports."),
    make_skill("release-notes", "Draft release notes from commits.", tags="git, changelog"),
    make_skill("repo-review", "Review a pull request with a risk-first checklist."),
]


# -- reasons and bands --------------------------------------------------------------------------


def test_bands_exact_name_then_prefix_then_relevance() -> None:
    r = search(CATALOG, "pdf")
    assert _names(r) == ["pdf", "pdf-forms", "pdf-processing", "data-analysis"]
    assert [h.reason for h in r.results] == ["exact_name", "prefix", "prefix", "token_overlap"]
    assert r.results[0].score == 3.0
    assert r.results[1].score == pytest.approx(2 + 3 / 9)  # shorter name: closer fit
    assert r.results[2].score == pytest.approx(2 + 3 / 14)
    assert 0 < r.results[3].score < 1
    assert (r.count, r.truncated) == (4, False)


def test_exact_path_absolute_relative_and_dir() -> None:
    target = CATALOG[1]
    for query in (target.path, target.dir, target.dir + "/", "  " + target.path + " "):
        r = search(CATALOG, query)
        assert r.results[0].skill is target and r.results[0].reason == "exact_path", query
        assert r.results[0].score == 4.0
    rel = search(CATALOG, "pdf-processing/SKILL.md", cwd="/repo/.agents/skills")
    assert rel.results[0].skill is target and rel.results[0].reason == "exact_path"
    up = search(CATALOG, "../pdf-processing", cwd="/repo/.agents/skills/x")
    assert up.results[0].reason == "exact_path"
    # Without a cwd a relative path is just text.
    assert search(CATALOG, "pdf-processing/SKILL.md").results[0].reason != "exact_path"
    # Exact path outranks the exact name of another skill.
    named = search(CATALOG, "pdf", cwd="/repo/.agents/skills")
    assert named.results[0].reason == "exact_path"
    assert _reasons(named)["pdf"] == "exact_path"


def test_exact_name_is_case_and_width_insensitive() -> None:
    for query in ("PDF-Processing", "\uff50\uff44\uff46-processing"):  # fullwidth "pdf"
        assert search(CATALOG, query).results[0].reason == "exact_name"


def test_each_skill_appears_once_with_its_best_reason() -> None:
    r = search(CATALOG, "pdf-forms", limit=50)
    names = _names(r)
    assert len(names) == len(set(names))
    assert r.results[0].skill.name == "pdf-forms" and r.results[0].reason == "exact_name"


# -- relevance ----------------------------------------------------------------------------------


def test_relevance_prefers_name_over_tags_over_description() -> None:
    skills = [
        make_skill("alpha", "mentions changelog once"),
        make_skill("beta", "nothing here", tags="changelog"),
        make_skill("changelog-writer", "writes things"),
    ]
    r = search(skills, "changelog")
    assert _names(r) == ["changelog-writer", "beta", "alpha"]
    assert r.results[0].reason == "prefix"
    r = search(skills, "about changelog")
    assert _names(r) == ["changelog-writer", "beta", "alpha"]
    assert all(h.reason == "token_overlap" for h in r.results)
    assert r.results[0].score > r.results[1].score > r.results[2].score


def test_relevance_rare_terms_weigh_more_and_more_terms_rank_higher() -> None:
    skills = [make_skill(f"s{i}", "common words everywhere") for i in range(10)]
    skills.append(make_skill("special", "common words plus zebra"))
    r = search(skills, "zebra common")
    assert r.results[0].skill.name == "special"
    assert r.count == 11
    assert r.results[0].score > r.results[1].score


def test_hyphenated_names_match_by_part_and_joined() -> None:
    skills = [make_skill("web-app-builder", "Builds things."), make_skill("other", "x")]
    assert _names(search(skills, "app")) == ["web-app-builder"]
    assert _names(search(skills, "webapp")) == ["web-app-builder"]
    assert _names(search(skills, "builder for web")) == ["web-app-builder"]


def test_no_match() -> None:
    r = search(CATALOG, "kubernetes")
    assert (r.results, r.count, r.truncated) == ([], 0, False)
    assert search(CATALOG, "!!! ???").count == 0


def test_empty_query_lists_everything_in_tie_order() -> None:
    skills = [
        make_skill("b", scope="user", root="/u"),
        make_skill("z", scope="repo", root="/r"),
        make_skill("a", scope="repo", root="/r"),
    ]
    r = search(skills, "   ")
    assert _names(r) == ["a", "z", "b"]
    assert {h.score for h in r.results} == {0.0}
    assert r.count == 3


# -- typo tolerance -----------------------------------------------------------------------------


def test_typos_on_names() -> None:
    skills = [
        make_skill("pdf-processing", "Handles documents."),
        make_skill("spreadsheet", "Tables."),
        make_skill("git", "Version control."),
    ]
    assert _names(search(skills, "procesing")) == ["pdf-processing"]  # deletion
    assert _names(search(skills, "prcoessing")) == ["pdf-processing"]  # transposition
    assert _names(search(skills, "prosessinq")) == ["pdf-processing"]  # two edits, long token
    assert _names(search(skills, "spredsheat")) == ["spreadsheet"]
    assert search(skills, "gti").count == 0  # three letters: no typo tolerance
    assert search(skills, "sprdsht").count == 0  # too far


def test_short_tokens_allow_one_typo_only() -> None:
    skills = [make_skill("forms", "x y"), make_skill("farms", "x y"), make_skill("frame", "x y")]
    # "form" (4 chars) is within 1 of "forms" but 2 of "farms" and 3 of "frame".
    assert _names(search(skills, "form")) == ["forms"]


def test_exact_token_beats_typo_match() -> None:
    skills = [make_skill("procession", "x"), make_skill("processing", "x")]
    r = search(skills, "processing tool")
    assert _names(r) == ["processing", "procession"]
    assert r.results[0].score > r.results[1].score


def test_token_prefix_expansion() -> None:
    skills = [make_skill("pdf-processing", "x"), make_skill("image-tools", "y")]
    r = search(skills, "pdf proc")
    assert r.results[0].skill.name == "pdf-processing"
    assert search(skills, "ima").results[0].skill.name == "image-tools"


def _osa_reference(a: str, b: str) -> int:
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@given(st.text("abcd", max_size=9), st.text("abcd", max_size=9), st.integers(0, 3))
def test_edit_distance_matches_reference(a: str, b: str, bound: int) -> None:
    assert edit_distance(a, b, bound) == min(_osa_reference(a, b), bound + 1)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text("abcde", min_size=3, max_size=10), min_size=1, max_size=25, unique=True),
    st.text("abcde", min_size=1, max_size=10),
)
def test_fuzzy_matching_finds_exactly_the_near_names(names: list[str], query: str) -> None:
    # Every name is one token; descriptions never match. So the result set must be exactly the
    # names equal to, prefixed by, or within the allowed edit distance of the query, or sharing
    # its word form ("added" finds a skill named "add").
    skills = [make_skill(n, "-") for n in names]
    allowed = 2 if len(query) >= 8 else 1 if len(query) >= 4 else 0
    expected = {
        n
        for n in names
        if n.startswith(query)
        or (allowed and edit_distance(query, n, allowed) <= allowed)
        or stem(n) == stem(query)
    }
    r = search(skills, query, limit=50)
    assert set(_names(r)) == expected
    assert r.count == len(expected)


# -- Unicode ------------------------------------------------------------------------------------


def test_tokenize_unicode() -> None:
    fullwidth_pdf = "\uff30\uff24\uff26"
    assert tokenize(f"Café NAÏVE {fullwidth_pdf} snake_case") == [
        "café",
        "naïve",
        "pdf",
        "snake",
        "case",
    ]
    assert tokenize("cafe\u0301") == ["café"]  # NFKC composes the accent
    assert tokenize("हिन्दी text") == ["हिन्दी", "text"]  # combining marks stay inside words
    assert tokenize("PDFからテキスト") == ["pdf", "から", "らテ", "テキ", "キス", "スト"]
    assert tokenize("Straße") == ["strasse"]  # casefold, not lower


def test_unicode_queries() -> None:
    skills = [
        make_skill("pdf-extract", "PDFファイルからテキストを抽出します。"),
        make_skill("cafe-menu", "Build a café menu."),
        make_skill("other", "Unrelated tooling."),
    ]
    assert _names(search(skills, "テキスト抽出")) == ["pdf-extract"]
    assert _names(search(skills, "抽出")) == ["pdf-extract"]
    for query in ("café", "CAFÉ", "cafe\u0301 menu"):
        assert search(skills, query).results[0].skill.name == "cafe-menu", query


# -- filters, tie order, limits -----------------------------------------------------------------


def test_tie_order_scope_then_path() -> None:
    skills = [
        make_skill("dup", "same", scope="extra", root="/e"),
        make_skill("dup", "same", scope="user", root="/u2"),
        make_skill("dup", "same", scope="user", root="/u1"),
        make_skill("dup", "same", scope="repo", root="/r"),
    ]
    r = search(skills, "dup")
    assert [h.skill.root for h in r.results] == ["/r", "/u1", "/u2", "/e"]
    assert {h.reason for h in r.results} == {"exact_name"}
    r = search(skills, "same")
    assert [h.skill.root for h in r.results] == ["/r", "/u1", "/u2", "/e"]


def test_scope_filter() -> None:
    skills = [
        make_skill("a-one", scope="repo", root="/r"),
        make_skill("a-two", scope="user", root="/u"),
    ]
    assert _names(search(skills, "a", scope="user")) == ["a-two"]
    with pytest.raises(SkillsdError) as err:
        search(skills, "a", scope="system")
    assert err.value.kind == "invalid_params" and "scope" in err.value.message


def test_tags_filter_any_trimmed_case_insensitive() -> None:
    skills = [
        make_skill("one", "pdf tool", tags="PDF, Forms"),
        make_skill("two", "pdf tool", tags="images"),
        make_skill("three", "pdf tool"),
    ]
    assert parse_tags(skills[0]) == frozenset({"pdf", "forms"})
    assert _names(search(skills, "pdf", tags=[" FORMS "])) == ["one"]
    assert _names(search(skills, "pdf", tags=["forms", "images"])) == ["one", "two"]
    assert search(skills, "pdf", tags=["video"]).count == 0
    assert search(skills, "pdf", tags=[]).count == 3  # an empty list filters nothing
    assert _names(search(skills, "", tags=["images"])) == ["two"]


def test_disabled_skills_never_returned() -> None:
    skills = [make_skill("pdf", enabled=False), make_skill("pdf-tools")]
    r = search(skills, "pdf")
    assert _names(r) == ["pdf-tools"] and r.count == 1
    r = search(skills, "pdf", disabled_ids={skills[1].id})
    assert r.count == 0


def test_index_is_reused_and_reads_enabled_live() -> None:
    skills = [make_skill("pdf"), make_skill("pdf-tools")]
    index = SearchIndex(skills)
    assert len(index) == 2
    assert index.search("pdf").count == 2
    skills[0].enabled = False
    assert _names(index.search("pdf")) == ["pdf-tools"]


def _bulk(n: int) -> list[SkillMetadata]:
    return [make_skill(f"tool-{i:03d}", f"generic helper number {i}") for i in range(n)]


def test_limit_default_clamp_count_truncated() -> None:
    skills = _bulk(60)
    r = search(skills, "tool")
    assert len(r.results) == limits.DEFAULT_SEARCH_LIMIT
    assert (r.count, r.truncated) == (60, True)
    assert _names(r)[:2] == ["tool-000", "tool-001"]  # equal scores: path order
    r = search(skills, "tool", limit=1000)
    assert len(r.results) == limits.MAX_SEARCH_LIMIT and r.truncated
    r = search(skills, "helper", limit=60)
    assert len(r.results) == limits.MAX_SEARCH_LIMIT
    r = search(skills[:5], "helper", limit=5)
    assert (len(r.results), r.count, r.truncated) == (5, 5, False)
    index = SearchIndex(skills)
    assert len(index.search("tool", default_limit=3).results) == 3
    assert len(index.search("tool", limit=40, max_limit=10).results) == 10


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_bad_limit(bad: object) -> None:
    with pytest.raises(SkillsdError) as err:
        search(CATALOG, "pdf", limit=bad)  # type: ignore[arg-type]
    assert err.value.kind == "invalid_params" and "limit" in err.value.message


def test_relevance_top_k_respects_ties_across_the_threshold() -> None:
    # Many identical relevance scores: the ones returned must be the first by path.
    skills = [make_skill(f"s-{i:02d}", "shared words") for i in reversed(range(30))]
    r = search(skills, "shared", limit=5)
    assert _names(r) == ["s-00", "s-01", "s-02", "s-03", "s-04"]
    assert r.count == 30


def test_results_carry_the_catalog_objects() -> None:
    r = search(CATALOG, "release")
    assert r.results[0].skill is CATALOG[4]
    encoded = msgspec.json.decode(msgspec.json.encode(r))
    assert set(encoded) == {"results", "count", "truncated"}
    assert set(encoded["results"][0]) == {"skill", "score", "reason"}


def test_exact_bands_filling_the_limit_still_count_relevance_matches() -> None:
    r = search(CATALOG, "pdf", limit=2)
    assert _names(r) == ["pdf", "pdf-forms"]
    assert (r.count, r.truncated) == (4, True)


# -- word forms ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "forms",
    [
        ("migration", "migrations", "migrate", "migrating", "migrated"),
        ("deploy", "deploys", "deploying", "deployed"),
        ("test", "tests", "testing", "tested"),
        ("library", "libraries"),
        ("patch", "patches", "patching"),
        ("use", "uses"),
        ("run", "running", "runs"),
    ],
)
def test_word_forms_share_a_stem(forms: tuple[str, ...]) -> None:
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


def test_stem_leaves_short_non_ascii_and_mixed_tokens_alone() -> None:
    for token in ("pdf", "css", "status", "analysis", "café", "v2s", "日本"):
        assert stem(token) == token


def test_a_word_never_stems_to_a_function_word_it_is_not() -> None:
    assert stem("theme") == stem("themes") == "theme" != stem("them")
    assert stem("news") != stem("new") and stem("noted") != stem("not")
    skills = [
        make_skill("slide-styles", "Apply a colour theme to slides."),
        make_skill("report-mailer", "Write the weekly report and send it to them."),
    ]
    # Before, "theme" was "them": the mailer matched a search for themes.
    assert _names(search(skills, "theme")) == ["slide-styles"]
    assert _names(search(skills, "themes")) == ["slide-styles"]


def test_word_forms_match_in_descriptions_and_tags_not_typos_in_names() -> None:
    skills = [
        make_skill("db-tools", "Review database migrations before deploying."),
        make_skill("notes", "Unrelated.", tags="releases"),
        make_skill("migrator", "Something else."),
    ]
    assert _names(search(skills, "migration"))[0] == "db-tools"
    assert _names(search(skills, "deployed")) == ["db-tools"]
    assert _names(search(skills, "release")) == ["notes"]
    # Names keep their typo tolerance: "migrater" is one edit from "migrator".
    assert "migrator" in _names(search(skills, "migrater"))
