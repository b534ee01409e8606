"""What an agent puts in front of its model: its skill listing, cut to its budget by its own
rules (docs/agents.md). Pure: the skills come from the agent's view of a catalog
(:mod:`skillsd.core.catalog.agent_view`), the settings from :func:`claude_code_settings`; the output
is the listing, entry by entry, and its text.

Claude Code 2.1.328 (checked against its captured request, tests/listing): one line per skill,
``- name: description`` or ``- name``, lines joined by a newline; personal skills by name, then
project skills by name, then plugin skills, then its own bundled skills. ``description`` is the
frontmatter's, with `` - `` and ``when_to_use`` appended when there is one, cut to
``skillListingMaxDescChars`` (default 1 536: the first max-1 characters and an ellipsis). The
budget is ``skillListingBudgetFraction`` (default 0.01) of the context window in characters
(3 per token for its current models), or ``SLASH_COMMAND_TOOL_CHAR_BUDGET``. When every line in
full fits, all are full; otherwise the ``name-only`` ones and most bundled ones keep their
form, every other entry starts as a bare name, and descriptions are handed out in priority
order (its own use counts, then listing order) to each entry whose description still fits in
what is left; an entry that does not fit is skipped and the next one tried.
``skillOverrides`` ``off`` and ``user-invocable-only`` leave a skill out, as does
``disable-model-invocation``.

Codex 0.171.0: see :func:`codex_listing`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillsd_protocol import SkillMetadata
from skillsd_protocol.listing import ListingEntry, ListingShown

__all__ = [
    "CLAUDE_CODE_BUNDLED",
    "CLAUDE_CODE_CONTEXT_WINDOW",
    "OVERRIDE_VALUES",
    "ClaudeCodeSettings",
    "Listing",
    "Shown",
    "claude_code_listing",
    "claude_code_settings",
    "claude_code_usage_scores",
    "listing_summary",
]

Shown = ListingShown

#: The values ``skillOverrides`` takes, and what each means for the listing.
OVERRIDE_VALUES: dict[str, Shown] = {
    "on": "full",
    "name-only": "name-only",
    "user-invocable-only": "user-only",
    "off": "off",
}

#: Claude Code's default context window (tokens) for its default model, and characters per
#: token it assumes for its current models: 30 000 characters at the default fraction.
CLAUDE_CODE_CONTEXT_WINDOW = 1_000_000
_CHARS_PER_TOKEN = 3
_DEFAULT_FRACTION = 0.01
_DEFAULT_MAX_DESC = 1536
_ELLIPSIS = "\u2026"


@dataclass(frozen=True, slots=True)
class Bundled:
    """One of Claude Code's own skills: its name, the length of its description (measured in
    its captured request) and whether it competes for the budget like the user's skills
    (``competes``) or always keeps its description."""

    name: str
    description_chars: int
    competes: bool = False


#: Claude Code 2.1.328's bundled skills, in the order it lists them (their text ships inside
#: the agent; only names and lengths are kept here, the text is read from the installed agent
#: by :mod:`skillsd.core.listing.fs_agent_text`).
CLAUDE_CODE_BUNDLED: tuple[Bundled, ...] = (
    Bundled("dataviz", 1436),
    Bundled("update-config", 690),
    Bundled("keybindings-help", 228),
    Bundled("code-review", 835),
    Bundled("simplify", 176),
    Bundled("fewer-permission-prompts", 163),
    Bundled("loop", 336),
    Bundled("claude-api", 1157),
    Bundled("workflow-authoring", 230),
    Bundled("run", 361),
    Bundled("plugin-authoring", 255),
    Bundled("init", 59, competes=True),
    Bundled("security-review", 71, competes=True),
)


@dataclass(frozen=True, slots=True)
class Listing:
    """An agent's listing: its budget and what it used (characters), its text as the agent
    sends it (with the agent's own text when ``agent_text``, else only what comes from
    disk), and every entry."""

    agent: str
    budget_chars: int
    used_chars: int
    text: str
    entries: list[ListingEntry]
    #: ``text`` holds the agent's own text too (its bundled skills' lines, Codex's opening
    #: sentences), read from the installed agent; otherwise only what comes from disk.
    agent_text: bool = False

    def counts(self) -> tuple[int, int]:
        """(skills on disk shown in full, skills on disk the model is shown at all)."""
        full = shown = 0
        for entry in self.entries:
            if not entry.bundled and entry.shown in ("full", "name-only"):
                shown += 1
                full += entry.shown == "full" and not entry.cut
        return full, shown


@dataclass(frozen=True, slots=True)
class ClaudeCodeSettings:
    """The settings that change Claude Code's listing, merged (local over project over user),
    and the problems met reading them."""

    budget_fraction: float | None = None
    max_desc_chars: int | None = None
    overrides: Mapping[str, str] = field(default_factory=dict)
    #: Where each override came from (name -> settings file), for ``why``.
    override_sources: Mapping[str, str] = field(default_factory=dict)
    disable_bundled: bool = False
    char_budget: int | None = None
    problems: tuple[str, ...] = ()


def _positive_int(text: str | None) -> int | None:
    if text is None or not text.strip().isdigit():
        return None
    value = int(text.strip())
    return value if value > 0 else None


def claude_code_settings(
    layers: Sequence[tuple[str, Any]], env: Mapping[str, str] | None = None
) -> ClaudeCodeSettings:
    """Merge the decoded settings files ``layers`` ((label, JSON value), lowest precedence
    first: user, project, local). A value of the wrong type is ignored and named in
    ``problems``, as Claude Code would not apply it."""
    fraction: float | None = None
    max_desc: int | None = None
    overrides: dict[str, str] = {}
    sources: dict[str, str] = {}
    disable_bundled = False
    problems: list[str] = []
    for label, data in layers:
        if not isinstance(data, dict):
            if data is not None:
                problems.append(f"{label}: not a JSON object")
            continue
        value = data.get("skillListingBudgetFraction")
        if value is not None:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
                fraction = float(value)
            else:
                problems.append(f"{label}: skillListingBudgetFraction must be in (0, 1]")
        value = data.get("skillListingMaxDescChars")
        if value is not None:
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                max_desc = value
            else:
                problems.append(f"{label}: skillListingMaxDescChars must be a positive integer")
        value = data.get("disableBundledSkills")
        if isinstance(value, bool):
            disable_bundled = value
        value = data.get("skillOverrides")
        if value is not None:
            if not isinstance(value, dict):
                problems.append(f"{label}: skillOverrides must be an object")
                continue
            for name, choice in value.items():
                if isinstance(name, str) and choice in OVERRIDE_VALUES:
                    overrides[name] = choice
                    sources[name] = label
                else:
                    problems.append(
                        f"{label}: skillOverrides.{name} is not one of on, "
                        "name-only, user-invocable-only, off"
                    )
    return ClaudeCodeSettings(
        budget_fraction=fraction,
        max_desc_chars=max_desc,
        overrides=overrides,
        override_sources=sources,
        disable_bundled=disable_bundled,
        char_budget=_positive_int((env or {}).get("SLASH_COMMAND_TOOL_CHAR_BUDGET")),
        problems=tuple(problems),
    )


def claude_code_usage_scores(usage: Any, now_ms: float) -> dict[str, float]:
    """Claude Code's priority of each skill from its own use record (``skillUsage`` of
    ``~/.claude.json``: {name: {usageCount, lastUsedAt}}): the count, halved every 7 days
    since the last use, never below a tenth of it. Malformed entries count 0."""
    scores: dict[str, float] = {}
    if not isinstance(usage, dict):
        return scores
    for name, record in usage.items():
        if not isinstance(record, dict):
            continue
        count, last = record.get("usageCount"), record.get("lastUsedAt")
        if not isinstance(count, (int, float)) or not isinstance(last, (int, float)):
            continue
        days = (now_ms - last) / 86_400_000
        scores[str(name)] = count * max(math.pow(0.5, days / 7), 0.1)
    return scores


def _js_length(text: str) -> int:
    """The length JavaScript gives ``text`` (UTF-16 code units), which Claude Code counts."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _claude_rank(skill: SkillMetadata) -> int:
    # Personal (and managed) skills, then project skills, then plugins and the rest.
    return {"user": 0, "repo": 1, "plugin": 2}.get(skill.scope, 3)


def _cut(text: str, max_desc: int) -> str:
    if _js_length(text) > max_desc:
        text = text[: max_desc - 1] + _ELLIPSIS
    return text


def _description(skill: SkillMetadata, max_desc: int) -> str:
    text = skill.description
    when = skill.host.when_to_use if skill.host is not None else None
    if when:
        text = f"{text} - {when}"
    return _cut(text, max_desc)


# Complex by design: one pass that follows Claude Code's own steps in its order (overrides,
# bundled skills, budget, the greedy description hand-out), checked against its captures.
def claude_code_listing(  # noqa: C901
    skills: Iterable[SkillMetadata],
    settings: ClaudeCodeSettings,
    *,
    context_window: int | None = None,
    usage: Mapping[str, float] | None = None,
    bundled_text: Mapping[str, str] | None = None,
) -> Listing:
    """Claude Code's listing of ``skills`` (its view of the catalog) under ``settings``;
    ``usage`` holds Claude Code's own priority of each skill (:func:`claude_code_usage_scores`);
    ``bundled_text``: each bundled skill's description as the installed Claude Code holds it
    (:mod:`skillsd.core.listing.fs_agent_text`), which puts their lines in ``text`` too.
    """
    max_desc = settings.max_desc_chars or _DEFAULT_MAX_DESC
    fraction = settings.budget_fraction or _DEFAULT_FRACTION
    window = context_window or CLAUDE_CODE_CONTEXT_WINDOW
    budget = settings.char_budget or max(1, math.floor(window * _CHARS_PER_TOKEN * fraction))
    scores = usage or {}
    overrides, sources = settings.overrides, settings.override_sources

    absent: list[ListingEntry] = []
    # One slot per listed line, in listing order (parallel lists: 10 000 skills stay cheap).
    names: list[str] = []
    fulls: list[str | None] = []  # None: a bundled skill, whose text is not known here
    full_lens: list[int] = []
    bare_lens: list[int] = []
    fixed: list[bool] = []
    ids: list[str | None] = []
    whys: list[str] = []
    seen: set[str] = set()
    for skill in sorted(skills, key=lambda s: (_claude_rank(s), s.qualified_name or s.name)):
        name = skill.qualified_name or skill.name
        if name in seen:
            why = "shadowed by a skill of the same name listed first"
            absent.append(ListingEntry(name=name, shown="off", chars=0, why=why, id=skill.id))
            continue
        seen.add(name)
        choice = "on" if skill.scope == "plugin" else overrides.get(skill.name, "on")
        if not skill.invocation.model:
            why = "disable-model-invocation: true"
            absent.append(ListingEntry(name=name, shown="user-only", chars=0, why=why, id=skill.id))
            continue
        if choice in ("off", "user-invocable-only"):
            why = f"skillOverrides {choice!r} in {sources.get(skill.name, '')}"
            hidden = OVERRIDE_VALUES[choice]
            absent.append(ListingEntry(name=name, shown=hidden, chars=0, why=why, id=skill.id))
            continue
        bare = f"- {name}"
        bare_len = _js_length(bare)
        names.append(name)
        ids.append(skill.id)
        bare_lens.append(bare_len)
        if choice == "name-only":
            fulls.append(bare)
            full_lens.append(bare_len)
            fixed.append(True)
            whys.append(f"skillOverrides 'name-only' in {sources.get(skill.name, '')}")
            continue
        full = f"{bare}: {_description(skill, max_desc)}"
        fulls.append(full)
        full_lens.append(_js_length(full))
        fixed.append(False)
        whys.append("")
    first_bundled = len(names)
    own = bundled_text if bundled_text is not None else {}
    complete = bundled_text is not None
    if not settings.disable_bundled:
        for item in CLAUDE_CODE_BUNDLED:
            if item.name in seen:
                continue
            names.append(item.name)
            ids.append(None)
            bare_lens.append(2 + len(item.name))
            known = own.get(item.name)
            if known is None:
                complete = False
                fulls.append(None)
                full_lens.append(4 + len(item.name) + min(item.description_chars, max_desc))
            else:
                line = f"- {item.name}: {_cut(known, max_desc)}"
                fulls.append(line)
                full_lens.append(_js_length(line))
            fixed.append(not item.competes)
            whys.append("bundled with Claude Code")

    count = len(names)
    separators = max(0, count - 1)
    keep = [True] * count
    competing = [i for i in range(count) if not fixed[i]]
    if sum(full_lens) + separators > budget and competing:
        keep = list(fixed)
        pairs = zip(full_lens, bare_lens, fixed, strict=True)
        left = budget - separators - sum(f if k else b for f, b, k in pairs)
        # A stable sort: equal priorities keep listing order.
        order = sorted(competing, key=lambda i: -scores.get(names[i], 0.0)) if scores else competing
        for i in order:
            extra = full_lens[i] - bare_lens[i]
            if extra <= left:
                keep[i] = True
                left -= extra

    entries: list[ListingEntry] = []
    text_lines: list[str] = []
    used = separators
    for i in range(count):
        whole = keep[i]
        bundled = i >= first_bundled
        chars = full_lens[i] if whole else bare_lens[i]
        used += chars
        why = whys[i]
        if not bundled and not fixed[i]:
            why = "fits the budget" if whole else "over the budget: name only"
        elif bundled and not whole:
            why += "; over the budget: name only"
        shown: Shown = "full" if whole and (bundled or not fixed[i]) else "name-only"
        entries.append(
            ListingEntry(
                name=names[i], shown=shown, chars=chars, why=why, id=ids[i], bundled=bundled
            )
        )
        if not complete and bundled:
            continue  # the agent's own text is not known: only the lines from disk
        full_line = fulls[i]
        if full_line is not None:
            text_lines.append(full_line if whole else f"- {names[i]}")
    entries.extend(absent)
    return Listing(
        agent="claude-code",
        budget_chars=budget,
        used_chars=used if count else 0,
        text="\n".join(text_lines),
        entries=entries,
        agent_text=complete,
    )


def listing_summary(listing: Listing, title: str) -> str | None:
    """The doctor's line when some skill on disk reaches the model without its description
    ("Claude Code shows 79 of 300 skills in full in this folder"); None when all do."""
    full, shown = listing.counts()
    if shown == full:
        return None
    return f"{title} shows {full} of {shown} skills in full in this folder"
