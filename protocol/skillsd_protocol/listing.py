"""Params and results of what an agent shows its model (``skills.listing``) and of the
per-project profiles that choose it (``skills.profile.plan``, ``.apply``, ``.reset``)."""

from __future__ import annotations

from typing import Literal

from skillsd_protocol.messages import Params
from skillsd_protocol.model import Wire

__all__ = [
    "AgentProfile",
    "ListingEntry",
    "ListingParams",
    "ListingResult",
    "ListingShown",
    "ProfileApplied",
    "ProfileApplyResult",
    "ProfileChoice",
    "ProfileLeft",
    "ProfileParams",
    "ProfilePlanResult",
    "ProfileReset",
    "ProfileResetResult",
]

#: How the model is shown a skill: with its description, by name only, not at all but still
#: a slash command for the user, or not at all.
ListingShown = Literal["full", "name-only", "user-only", "off"]


class ListingParams(Params, kw_only=True):
    """``agent``: whose listing (``claude-code``, ``codex``); ``contextWindow``: the model's
    context window in tokens, when not the agent's default."""

    agent: str
    cwd: str | None = None
    session_id: str | None = None
    context_window: int | None = None


class ListingEntry(Wire, kw_only=True):
    """One skill of an agent's listing: how its model is shown it, the characters its line
    takes (0 when absent) and why. ``id`` is absent for the agent's own bundled skills; ``cut``:
    shown with the start of its description only (Codex shortens descriptions)."""

    name: str
    shown: ListingShown
    chars: int
    why: str
    id: str | None = None
    bundled: bool = False
    cut: bool = False


class ListingResult(Wire, kw_only=True):
    """The agent's budget and the characters its listing uses; ``text``: the listing byte for
    byte as the agent sends it. ``agentText``: ``text`` includes the agent's own text too (Claude
    Code's bundled skills' lines, Codex's opening sentences), read from the installed agent;
    when false (the agent is not installed here, or is a version skillsd cannot read it from:
    ``agentTextWhy`` says which), ``text`` holds only the lines of the skills on disk (and, for
    Codex, its message from the roots table on), and the bundled skills are still counted in
    ``usedChars`` and listed in ``entries``. ``full`` of ``shown`` skills on disk keep their
    description. ``modelled`` is false for an agent whose listing is not modelled (then only
    ``why``)."""

    agent: str
    modelled: bool
    budget_chars: int
    used_chars: int
    text: str
    entries: list[ListingEntry]
    full: int
    shown: int
    why: str | None = None
    problems: list[str] | None = None
    agent_text: bool = False
    agent_text_why: str | None = None


class ProfileParams(Params, kw_only=True):
    """``agent``: one agent (default: every agent skillsd writes profiles for: Claude Code);
    ``budgetFraction``: plan for this share of the context window instead of the agent's
    current setting (``reset`` ignores it)."""

    agent: str | None = None
    cwd: str | None = None
    budget_fraction: float | None = None


class ProfileChoice(Wire, kw_only=True):
    """What the profile shows the model of one skill, and why (relevance, pin, use)."""

    name: str
    shown: ListingShown
    why: str
    id: str | None = None
    score: float | None = None
    pinned: bool = False


class AgentProfile(Wire, kw_only=True):
    """One agent's plan: the file ``apply`` writes, the setting per skill it writes there
    (``changes``: name -> the agent's own value), and how many skills on disk keep their
    description before and after. ``supported`` is false when the agent has no per-skill
    switch skillsd can write (then only ``why``)."""

    agent: str
    supported: bool
    target: str | None = None
    budget_chars: int = 0
    full_before: int = 0
    full_after: int = 0
    shown: int = 0
    choices: list[ProfileChoice] | None = None
    changes: dict[str, str] | None = None
    why: str | None = None


class ProfilePlanResult(Wire, kw_only=True):
    """Every planned agent's profile."""

    profiles: list[AgentProfile]


class ProfileLeft(Wire, kw_only=True):
    """A key ``apply`` or ``reset`` did not touch, and why (the user set or changed it)."""

    name: str
    why: str


class ProfileApplied(Wire, kw_only=True):
    """What ``apply`` wrote into ``path`` for ``agent`` (name -> value), and what it left."""

    agent: str
    path: str
    written: dict[str, str]
    left: list[ProfileLeft]


class ProfileApplyResult(Wire, kw_only=True):
    """Each agent's file ``apply`` wrote; the plan it applied."""

    applied: list[ProfileApplied]
    profiles: list[AgentProfile]


class ProfileReset(Wire, kw_only=True):
    """The keys ``reset`` removed from ``path``, and the ones it left (changed by the user
    since skillsd wrote them)."""

    agent: str
    path: str
    removed: list[str]
    left: list[ProfileLeft]


class ProfileResetResult(Wire, kw_only=True):
    """Every file a profile had written, as ``reset`` left it."""

    reset: list[ProfileReset]
