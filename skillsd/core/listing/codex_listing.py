"""Codex 0.171.0's skill listing (docs/agents.md), checked against its captured request
(tests/listing). Pure: the skills of Codex's view in, the listing out.

One line per skill, ``- name: description (file: rN/<path>/SKILL.md)``, where ``rN`` names a
root in a table of the roots the listed skills come from (sorted by path). Order: Codex's own
``.system`` skills, then admin (``/etc/codex/skills``), repository and user skills, each by
name then path. The budget is 2 % of the context window in tokens, a line costing its UTF-8
bytes and newline over 4, rounded up, less what a long roots table costs. When every line in
full fits, all are full. When the lines without descriptions fit, the room left is handed
out one description character at a time to each skill in turn (a character that costs no new
token is always taken), so every description is shortened about equally. Otherwise the
descriptions are dropped and the lines that fit, in order, are kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from skillsd.core.listing.agent_listing import Listing
from skillsd_protocol import SkillMetadata
from skillsd_protocol.listing import ListingEntry, ListingShown

__all__ = ["CODEX_CONTEXT_WINDOW", "codex_listing", "codex_rank"]

#: The context window (tokens) Codex 0.171.0 assumed for a model it has no metadata for, as in
#: the captures: a 10 000-token listing budget.
CODEX_CONTEXT_WINDOW = 500_000
_PERCENT = 2
#: Tokens of the roots table Codex does not charge to the budget (fitted, see above).
_TABLE_ALLOWANCE = 40
#: The tag that closes Codex's message (its preamble opens it).
_CLOSE = "</skills_instructions>"


def _cost(line: str) -> int:
    return (len(line.encode()) + 1 + 3) // 4


def codex_rank(skill: SkillMetadata, system_root: str) -> int:
    """Codex's scope rank: its own skills, admin, repository, user."""
    if skill.path.startswith(system_root.rstrip(os.sep) + os.sep):
        return 0
    if skill.path.startswith("/etc/codex/"):
        return 1
    return 2 if skill.scope == "repo" else 3


def _root_of(skill: SkillMetadata, system_root: str) -> str:
    if skill.path.startswith(system_root.rstrip(os.sep) + os.sep):
        return system_root
    return skill.root


# Complex by design: Codex's own steps in its order (roots table, budget, shortening, dropping),
# checked byte for byte against its captures.
def codex_listing(  # noqa: C901
    skills: Iterable[SkillMetadata],
    *,
    codex_home: str,
    context_window: int | None = None,
    preamble: str | None = None,
) -> Listing:
    """Codex's listing of ``skills`` (its view, its ``.system`` skills among them when they
    are on disk in ``codex_home``). ``preamble``: the lines Codex opens the message with, as
    the installed Codex holds them (:mod:`skillsd.core.listing.fs_agent_text`); with it,
    ``text`` is the whole ``<skills_instructions>`` message, without it the part from the
    roots table on."""
    system_root = os.path.join(codex_home, "skills", ".system")
    window = context_window or CODEX_CONTEXT_WINDOW
    limit = max(1, window * _PERCENT // 100)
    ordered = sorted(
        (s for s in skills if s.invocation.model),
        key=lambda s: (codex_rank(s, system_root), s.qualified_name or s.name, s.path),
    )
    roots = sorted({_root_of(s, system_root) for s in ordered})
    alias = {root: f"r{i}" for i, root in enumerate(roots)}
    names: list[str] = []
    descriptions: list[str] = []
    paths: list[str] = []
    for skill in ordered:
        root = _root_of(skill, system_root)
        names.append(skill.qualified_name or skill.name)
        descriptions.append(skill.description)
        paths.append(f"{alias[root]}/{os.path.relpath(skill.path, root)}")

    def render(i: int, chars: int) -> str:
        text = descriptions[i][:chars]
        return (
            f"- {names[i]}: {text} (file: {paths[i]})"
            if text
            else (f"- {names[i]}: (file: {paths[i]})")
        )

    table = [f"- `{alias[root]}` = `{root}`" for root in roots]
    # What the roots table costs beyond the room it saves, measured on Codex 0.171.0 with
    # roots paths of 8 to 82 characters: nothing for short paths, a token per 4 bytes beyond.
    table_bytes = len("### Skill roots\n") + sum(len(line.encode()) + 1 for line in table)
    limit = max(1, limit - max(0, (table_bytes + 2 + 3) // 4 - _TABLE_ALLOWANCE))
    count = len(names)
    full = [len(d) for d in descriptions]
    given = list(full)
    kept = [True] * count
    if sum(_cost(render(i, full[i])) for i in range(count)) > limit:
        minimum = [_cost(render(i, 0)) for i in range(count)]
        if sum(minimum) <= limit:
            given = [0] * count
            spent = [0] * count
            left = limit - sum(minimum)
            changed = True
            while changed:
                changed = False
                for i in range(count):
                    if given[i] >= full[i]:
                        continue
                    extra = _cost(render(i, given[i] + 1)) - minimum[i]
                    if extra - spent[i] <= left:
                        left -= extra - spent[i]
                        spent[i] = extra
                        given[i] += 1
                        changed = True
        else:
            given = [0] * count
            used = 0
            for i in range(count):
                if used + minimum[i] <= limit:
                    used += minimum[i]
                else:
                    kept[i] = False

    entries: list[ListingEntry] = []
    lines: list[str] = []
    used_tokens = 0
    for i in range(count):
        if not kept[i]:
            why = "over the budget even without descriptions: left out"
            entries.append(ListingEntry(name=names[i], shown="off", chars=0, why=why))
            continue
        line = render(i, given[i])
        lines.append(line)
        used_tokens += _cost(line)
        cut = 0 < given[i] < full[i]
        shown: ListingShown
        if given[i] == full[i]:
            shown, why = "full", "fits the budget"
        elif given[i] == 0:
            shown, why = "name-only", "over the budget: description dropped"
        else:
            shown, why = "full", f"description cut to {given[i]} of {full[i]} characters"
        entry = ListingEntry(name=names[i], shown=shown, chars=len(line), why=why, cut=cut)
        entries.append(entry)
    for skill, entry in zip(ordered, entries, strict=True):
        if codex_rank(skill, system_root) == 0:
            entry.bundled = True  # Codex's own skill
        else:
            entry.id = skill.id
    text = "\n".join(["### Skill roots", *table, "### Available skills", *lines]) if lines else ""
    if text and preamble is not None:
        text = f"{preamble}\n{text}\n{_CLOSE}"
    return Listing(
        agent="codex",
        budget_chars=limit * 4,
        used_chars=used_tokens * 4,
        text=text,
        entries=entries,
        agent_text=bool(text) and preamble is not None,
    )
