"""Words people use for the same software task, for matching requests to skills
(``skills.suggest``, docs/hooks.md).

A request rarely repeats a skill's wording: "ship it to prod" for a deploy skill, "the build is
red on my PR" for a CI skill. Each group below holds words that, in a request about software
work, point at the same task or thing; a request word then also finds a skill holding another
word of its group, for less than the word itself (:data:`RELATED_FACTOR` in
:mod:`skillsd.core.catalog.suggest`). The groups are hand-written, general vocabulary of software
work (not any one skill's wording), and fixed: like the word weights, they do not depend on the
catalog. A few phrases name a situation without any of its task's words ("before you start",
"works on my machine"): a request holding one implies the task's word (:func:`implied_words`).
"""

from __future__ import annotations

import re

from skillsd.core.catalog.word_forms import word_form

__all__ = ["implied_words", "related_words", "written_form"]

_GROUPS = """
deploy deployment ship release publish launch live online host hosting production prod staging
  preview domain public internet rollout hosted
guidelines guideline conventions convention standards practices checklist compliance
ci pipeline pipelines workflow workflows actions job jobs lint checks typecheck
  runner green
failing fail failed failure broken red flaky crash crashing breaks broke timeout
review reviewer reviewers feedback comment comments suggestion
  suggestions threads approve nit nits
pr pull merge branch mergeable
announce announcement announcements comms communication communications newsletter memo
  email slack intranet allhands townhall
status update updates report writeup postmortem incident outage recap progress weekly
  leadership stakeholders exec
slack chat channel workspace emoji reaction emote
gif animation animated animate looping loop moving meme
art artwork generative procedural algorithmic creative sketch pattern patterns visual
  randomness seeded fractal particles noise
poster flyer print printable graphic illustration canvas cover banner leaflet brochure
  infographic postcard invitation wallpaper signage
brand branding identity logo guidelines corporate
color colors colour palette font fonts typography theme themes styling style restyle
  aesthetic look
ui interface frontend design layout landing homepage website site page dashboard
  component components
test tests testing e2e browser screenshot verify localhost automate chrome firefox safari
  automated qa smoke click clicking
mcp server integration connector expose wrap tool tools plugin bridge adapter
skill skills capability instructions playbook
install installer installing setup download catalog
plan planning steps outline approach strategy breakdown roadmap proposal scope
wiki workspace knowledge docs documentation runbook handbook howto kb
meeting meetings agenda prep sync standup briefing
research consolidate synthesize summarize summary findings compare sources brief
spec specification requirements prd implement implementation
issue issues ticket tickets backlog sprint cycle triage bug bugs epic assignee kanban
performance perf slow fast speed lcp bundle rerender render rendering waterfall optimize
  lag laggy sluggish jank janky stutter stutters freeze frames fps latency memoize vitals
props prop flags boolean compound composition refactor
mobile ios android phone native
transition transitions fade slide navigation
token tokens login auth env container credentials
accessibility a11y aria keyboard screenreader focus contrast labels wcag usability ux
write draft writeup document note notes
"""


def _related() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    found: dict[str, set[str]] = {}
    written: dict[str, str] = {}
    lines: list[list[str]] = []
    for line in _GROUPS.strip().splitlines():
        words = line.split()
        if line.startswith("  ") and lines:
            lines[-1].extend(words)
        else:
            lines.append(words)
    for words in lines:
        stems = [word_form(w) for w in words]
        for word, stemmed in zip(words, stems, strict=True):
            written.setdefault(stemmed, word)
            found.setdefault(stemmed, set()).update(w for w in stems if w != stemmed)
    return {word: frozenset(others) for word, others in found.items()}, written


_RELATED, _WRITTEN = _related()


def written_form(word: str) -> str:
    """A stem of the groups as the groups write it (``deploy`` for ``deploy``, ``workspace``
    for ``workspac``), for reasons a person reads; other stems unchanged."""
    return _WRITTEN.get(word, word)


def related_words(word: str) -> frozenset[str]:
    """The stems sharing a group with the stem ``word`` (empty when it is in none)."""
    return _RELATED.get(word, frozenset())


#: An issue key (``ENG-1423``, ``FE-88``: the key convention of issue trackers) implies a
#: ticket; the names of standards and algorithms written the same way (``UTF-8``, ``RFC-2616``)
#: do not.
_ISSUE_KEY = re.compile(r"(?<![\w-])([A-Z]{2,10})-[0-9]{1,7}(?![\w-])")
_NOT_ISSUE_KEYS = frozenset(
    [
        "AES",
        "CVE",
        "CWE",
        "ECMA",
        "ES",
        "GPT",
        "HTTP",
        "IEC",
        "IEEE",
        "ISO",
        "MD",
        "PEP",
        "RFC",
        "RSA",
        "SHA",
        "TLS",
        "SSL",
        "UTF",
        "WCAG",
    ]
)


#: Phrases that name a software situation without its task's word: the task word each implies
#: ("before you start coding" asks for a plan, "works on my machine" is about CI). General
#: phrasing of software work, like the groups above; matched case-insensitively, a few words
#: at most, so a phrase cannot match by accident across a long request.
_PHRASES: tuple[tuple[str, str], ...] = (
    (r"before (?:you|we|i) (?:start|begin|code|touch|write|implement|change)", "plan"),
    (r"(?:don'?t|do not|no) (?:code|coding|implement|implementation|changes)(?: \w+)? yet", "plan"),
    (r"before (?:writing|coding|touching|implementing|changing) (?:any|the)? ?\w+", "plan"),
    (r"plan (?:only|first)|(?:walk|talk) me through (?:your|the) approach", "plan"),
    (r"lay (?:it|this|that|them) out|think (?:it |this )?through", "plan"),
    (r"(?:go|goes|going|went) live|(?:put|get) (?:it|this|them) (?:online|up|live)", "deploy"),
    (r"(?:share|send|give me) (?:a|the) (?:link|url)", "deploy"),
    (r"so (?:people|others|anyone|friends|the team) can (?:see|open|visit|try)", "deploy"),
    (
        r"so (?:that )?(?:the|my|our) (?:clients?|boss) can (?:see|open|try|view) (?:it|this)",
        "deploy",
    ),
    (r"(?:public|shareable|live) (?:link|url)", "deploy"),
    (r"(?:pass|passes|passed|works|worked|green) (?:locally|on my machine)", "ci"),
    (r"red (?:build|check|checks|pipeline|ci)", "ci"),
    (r"(?:build|checks?|pipeline|ci) (?:is|are|went|turned) red", "ci"),
    (r"end[ -]to[ -]end|click(?:s|ing)? (?:through|around)|smoke[ -]test", "test"),
    (r"screen ?readers?|tab order|alt text|colou?r contrast", "accessibility"),
    (r"(?:write|jot|note) (?:it|this|that|them) down|for future reference", "documentation"),
    (r"\b1[:-]1s?\b|one[- ]on[- ]ones?|talking points", "meeting"),
    (r"web vitals|time to (?:interactive|first byte)", "performance"),
    (r"(?:drops?|dropping|dropped) frames", "performance"),
    (r"changes requested|requested changes|left (?:\w+ )?(?:comments|notes|feedback)", "review"),
    (r"look and feel|house style|on[- ]brand", "brand"),
    (r"so (?:that )?(?:claude|the agent|an agent|the assistant|the model) can", "integration"),
)
_PHRASE_PATTERNS = tuple(
    (re.compile(rf"(?<![\w-])(?:{pattern})(?![\w-])", re.IGNORECASE), word_form(word))
    for pattern, word in _PHRASES
)


def implied_words(text: str) -> list[str]:
    """The matching forms of the words ``text`` implies: by the shape of its tokens (``ticket``
    for an issue key such as ``ENG-1423``) and by its phrases (:data:`_PHRASES`)."""
    found: list[str] = []
    keys = (m.group(1) for m in _ISSUE_KEY.finditer(text))
    if any(k not in _NOT_ISSUE_KEYS for k in keys):
        found.append(word_form("ticket"))
    for pattern, word in _PHRASE_PATTERNS:
        if word not in found and pattern.search(text):
            found.append(word)
    return found
