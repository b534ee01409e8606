"""Word forms and implied words that suggestions match on (docs/hooks.md): a request and a
skill agree on a word written two ways, and an issue key means a ticket."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog.suggest import (
    CANDIDATE_THRESHOLD,
    DEFAULT_THRESHOLD,
    SuggestIndex,
    request_stems,
)
from skillsd.core.catalog.task_words import implied_words
from skillsd.core.catalog.word_forms import word_form
from tests.support.root_catalog import catalog
from tests.support.skill_tree import write_skill


def test_derivational_endings_fold_onto_one_form() -> None:
    assert word_form("deployment") == word_form("deploy") == word_form("deploying")
    assert word_form("reviewer") == word_form("reviews") == word_form("review")
    assert word_form("installer") == word_form("install")
    assert word_form("verified") == word_form("verify")
    assert word_form("optimise") == word_form("optimize") == word_form("optimizing")
    assert word_form("wrapper") == word_form("wrap")
    # Short words keep their own form: a server is not a "serve", a paper not a "pap".
    assert word_form("server") != word_form("serve")
    assert word_form("paper") == "paper"
    assert word_form("analysis") == "analysis"


def test_a_word_is_not_taken_for_the_function_word_it_stems_to(tmp_path: Path) -> None:
    # "theme" stems to "them", "news" to "new", "noted" to "not": without care a request for a
    # theme says nothing (a filler word), and a skill that says "them" matches "theme".
    assert word_form("theme") == word_form("themes") == "theme" != word_form("them")
    assert word_form("news") != word_form("new")
    assert word_form("noted") != word_form("not")
    assert word_form("getting") == word_form("get")  # an inflected filler word stays filler
    assert request_stems("apply a theme to the deck") == ["apply", "theme", "deck"]
    write_skill(tmp_path, "slide-themes", "Apply a color theme to a slide deck.")
    write_skill(tmp_path, "weekly-report", "Write the weekly report and send it to them.")
    ranked = SuggestIndex(catalog(tmp_path)).rank("pick a theme", explain=2)
    assert [s.skill.name for s in ranked] == ["slide-themes"]
    assert ranked[0].matched == {"name": ["theme"]}  # "slide-themes" holds it too


def test_the_pieces_of_a_contraction_say_nothing() -> None:
    # "don't" is written as "don" and "t" by the tokenizer; "don", "re", "isn" are no words.
    request = "don't write code yet, we're stuck and it isn't working"
    assert request_stems(request) == [word_form(w) for w in ("write", "code", "yet", "stuck")] + [
        word_form("working")
    ]


def test_an_issue_key_implies_a_ticket_and_a_standard_does_not() -> None:
    assert implied_words("close out FE-88 and FE-91, they shipped") == [word_form("ticket")]
    assert implied_words("move ENG-1423 to done") == [word_form("ticket")]
    assert implied_words("decode it as UTF-8 per RFC-3629") == []
    assert implied_words("hash with SHA-256") == []
    assert implied_words("the x-FE-1 header, utf-8") == []


def test_a_request_finds_a_skill_written_in_another_form_of_its_words(tmp_path: Path) -> None:
    write_skill(tmp_path, "app-handoff", "Deploy the app and verify the deploy.")
    write_skill(tmp_path, "tracker", "Update tickets in the issue tracker.")
    write_skill(tmp_path, "charts", "Draw charts from tables.")
    index = SuggestIndex(catalog(tmp_path))
    ranked = index.rank("the deployment is verified?")
    assert ranked[0].skill.name == "app-handoff"
    assert ranked[0].matched["description"] == ["deployment", "verified"]
    assert index.rank("close out FE-88, FE-91")[0].skill.name == "tracker"
    assert index.rank("decode UTF-8") == []


def test_a_phrase_of_a_software_situation_implies_its_task_word() -> None:
    assert implied_words("don't code yet, how would you add caching") == [word_form("plan")]
    assert implied_words("it works on my machine but not in the pipeline") == [word_form("ci")]
    assert implied_words("put it online so the team can try it") == [word_form("deploy")]
    assert implied_words("push the site so the client can see it") == [word_form("deploy")]
    assert implied_words("so the client can see the invoice total") == []
    assert implied_words("prep talking points for my 1:1") == [word_form("meeting")]
    assert implied_words("wrap the API so the agent can call it") == [word_form("integration")]
    assert implied_words("before writing any code, list the risks") == [word_form("plan")]
    # The same words outside the phrase imply nothing: "live" music, a "plan" of a house.
    assert implied_words("I live near the station; my plan is to code on the train") == []
    assert implied_words("version 1.1 of the parser") == []


def test_a_situation_phrase_finds_the_skill_of_its_task(tmp_path: Path) -> None:
    write_skill(tmp_path, "make-plan", "Write a plan for a coding task.")
    write_skill(tmp_path, "charts", "Draw charts from tables.")
    index = SuggestIndex(catalog(tmp_path))
    assert [s.skill.name for s in index.rank("before you start, how would you add caching")] == [
        "make-plan"
    ]
    assert index.rank("how would you add caching") == []


def test_api_is_a_generic_word_of_software_requests(tmp_path: Path) -> None:
    # "API" names nearly every interface; a skill named for one API is not what any API
    # question needs.
    write_skill(tmp_path, "billing-api", "Call the billing API for invoices and refunds.")
    index = SuggestIndex(catalog(tmp_path))
    assert index.rank("our REST api")[0].score < CANDIDATE_THRESHOLD
    assert index.rank("refund an invoice with the billing api")[0].score >= DEFAULT_THRESHOLD
