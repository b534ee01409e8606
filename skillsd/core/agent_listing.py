"""What an agent puts in front of its model: its skill listing, cut to its budget by its own
rules (docs/agents.md). Pure: the skills come from the agent's view of a catalog
(:mod:`skillsd.core.agent_view`), the settings from :func:`claude_code_settings`; the output is
the listing, entry by entry, and its text.

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
from typing import Any, Literal

from skillsd_protocol import SkillMetadata

__all__ = [
    "CLAUDE_CODE_BUNDLED",
    "CLAUDE_CODE_CONTEXT_WINDOW",
    "OVERRIDE_VALUES",
    "ClaudeCodeSettings",
    "Listing",
    "ListingEntry",
    "Shown",
    "claude_code_listing",
    "claude_code_settings",
    "claude_code_usage_scores",
    "listing_summary",
]

Shown = Literal["full", "name-only", "user-only", "off"]

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
#: the agent; only names and lengths are kept here).
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
class ListingEntry:
    """One skill of the listing: how the model is shown it, the characters its line takes
    (0 when absent), and why."""

    name: str
    shown: Shown
    chars: int
    why: str
    skill_id: str | None = None
    bundled: bool = False


@dataclass(frozen=True, slots=True)
class Listing:
    """An agent's listing: its budget and what it used (characters), the text of the lines
    of the skills on disk as the agent sends them, and every entry."""

    agent: str
    budget_chars: int
    used_chars: int
    text: str
    entries: tuple[ListingEntry, ...]

    def counts(self) -> tuple[int, int]:
        """(skills on disk shown in full, skills on disk the model is shown at all)."""
        own = [e for e in self.entries if not e.bundled and e.shown in ("full", "name-only")]
        return sum(1 for e in own if e.shown == "full"), len(own)


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
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _claude_rank(skill: SkillMetadata) -> int:
    # Personal (and managed) skills, then project skills, then plugins and the rest.
    return {"user": 0, "repo": 1, "plugin": 2}.get(skill.scope, 3)


def _description(skill: SkillMetadata, max_desc: int) -> str:
    text = skill.description
    when = skill.host.when_to_use if skill.host is not None else None
    if when:
        text = f"{text} - {when}"
    if _js_length(text) > max_desc:
        text = text[: max_desc - 1] + _ELLIPSIS
    return text


@dataclass(slots=True)
class _Line:
    name: str
    full: str | None  # None: a bundled skill, whose text is not known here
    full_len: int
    bare_len: int
    fixed: bool
    skill_id: str | None
    why: str
    bundled: bool = False


def claude_code_listing(
    skills: Iterable[SkillMetadata],
    settings: ClaudeCodeSettings,
    *,
    context_window: int | None = None,
    usage: Mapping[str, float] | None = None,
    pinned_order: Sequence[str] = (),
) -> Listing:
    """Claude Code's listing of ``skills`` (its view of the catalog) under ``settings``.

    ``usage`` holds Claude Code's own priority of each skill (:func:`claude_code_usage_scores`);
    ``pinned_order`` is unused by the agent and reserved."""
    del pinned_order
    max_desc = settings.max_desc_chars or _DEFAULT_MAX_DESC
    fraction = settings.budget_fraction or _DEFAULT_FRACTION
    window = context_window or CLAUDE_CODE_CONTEXT_WINDOW
    budget = settings.char_budget or max(1, math.floor(window * _CHARS_PER_TOKEN * fraction))
    scores = usage or {}

    absent: list[ListingEntry] = []
    lines: list[_Line] = []
    seen: set[str] = set()
    for skill in sorted(skills, key=lambda s: (_claude_rank(s), s.qualified_name or s.name)):
        name = skill.qualified_name or skill.name
        if name in seen:
            absent.append(
                ListingEntry(
                    name, "off", 0, "shadowed by a skill of the same name listed first", skill.id
                )
            )
            continue
        seen.add(name)
        choice = "on" if skill.scope == "plugin" else settings.overrides.get(skill.name, "on")
        source = settings.override_sources.get(skill.name, "")
        if not skill.invocation.model:
            absent.append(
                ListingEntry(name, "user-only", 0, "disable-model-invocation: true", skill.id)
            )
            continue
        if choice in ("off", "user-invocable-only"):
            absent.append(
                ListingEntry(
                    name,
                    OVERRIDE_VALUES[choice],
                    0,
                    f"skillOverrides {choice!r} in {source}",
                    skill.id,
                )
            )
            continue
        bare = f"- {name}"
        if choice == "name-only":
            lines.append(
                _Line(
                    name,
                    bare,
                    _js_length(bare),
                    _js_length(bare),
                    True,
                    skill.id,
                    f"skillOverrides 'name-only' in {source}",
                )
            )
            continue
        full = f"{bare}: {_description(skill, max_desc)}"
        lines.append(_Line(name, full, _js_length(full), _js_length(bare), False, skill.id, ""))
    if not settings.disable_bundled:
        for item in CLAUDE_CODE_BUNDLED:
            if item.name in seen:
                continue
            bare_len = 2 + len(item.name)
            full_len = bare_len + 2 + min(item.description_chars, max_desc)
            lines.append(
                _Line(
                    item.name,
                    None,
                    full_len,
                    bare_len,
                    not item.competes,
                    None,
                    "bundled with Claude Code",
                    bundled=True,
                )
            )

    total = sum(line.full_len for line in lines) + max(0, len(lines) - 1)
    keep_full = [True] * len(lines)
    competing = [i for i, line in enumerate(lines) if not line.fixed]
    if total > budget and competing:
        keep_full = [line.fixed for line in lines]
        base = sum(line.full_len if line.fixed else line.bare_len for line in lines)
        left = budget - base - max(0, len(lines) - 1)
        # A stable sort: equal priorities keep listing order.
        for i in sorted(competing, key=lambda i: -scores.get(lines[i].name, 0.0)):
            extra = lines[i].full_len - lines[i].bare_len
            if extra <= left:
                keep_full[i] = True
                left -= extra

    entries: list[ListingEntry] = []
    text_lines: list[str] = []
    used = max(0, len(lines) - 1)
    for line, whole in zip(lines, keep_full, strict=True):
        name_only = line.full == f"- {line.name}" and not line.bundled
        shown: Shown = "full" if whole and not name_only else "name-only"
        chars = line.full_len if whole else line.bare_len
        used += chars
        why = line.why
        if not why:
            why = "fits the budget" if whole else "over the budget: its description is left out"
        elif line.bundled and not whole:
            why += "; over the budget: its description is left out"
        entries.append(ListingEntry(line.name, shown, chars, why, line.skill_id, line.bundled))
        if line.full is not None:
            text_lines.append(line.full if whole else f"- {line.name}")
    entries.extend(absent)
    return Listing(
        agent="claude-code",
        budget_chars=budget,
        used_chars=used if lines else 0,
        text="\n".join(text_lines),
        entries=tuple(entries),
    )


def listing_summary(listing: Listing, title: str) -> str | None:
    """The doctor's line when some skill on disk reaches the model without its description
    ("Claude Code shows 79 of 300 skills in full in this folder"); None when all do."""
    full, shown = listing.counts()
    if shown == full:
        return None
    return f"{title} shows {full} of {shown} skills in full in this folder"
