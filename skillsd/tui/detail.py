"""What the detail pane shows about one skill, fetched from the daemon (no Textual here).

The picker acts as a host would: it asks the daemon whether ``skill_load`` is allowed for the
skill, and only then calls ``skills.load`` (which is gated by that same policy). When the
answer is ``ask`` or ``deny`` it asks for the SKILL.md text with ``skills.readFile`` instead
(checked like a load, but only ``deny`` refuses it: it is how a host shows a file to its user;
a refusal is shown in its place), together with the decision, and the user can answer the
question with the approve dialog.

Each ``allowed-tools`` rule is checked with ``permissions.check`` for a call the rule
describes (the specifier with its wildcards dropped: ``Bash(git diff:*)`` is checked as
``Bash`` running ``git diff``), without the picker's session, so the answer is the user's
policy as configured and remembered, before any skill grants it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from skillsd.core.policy.permissions import SKILL_LOAD, RuleError, parse_rule, skill_load_rule
from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd_client import AsyncClient, RpcError
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import CheckResult, LoadResult, ReadFileResult

__all__ = ["SkillDetail", "ToolDecision", "fetch_detail", "probe_for_rule"]


@dataclass(frozen=True, slots=True)
class ToolDecision:
    """One ``allowed-tools`` rule and what the user's policy says about a call it describes."""

    rule: str
    check: CheckResult | None = None
    #: Why the rule could not be checked (a malformed rule), instead of ``check``.
    problem: str | None = None

    @property
    def when_loaded(self) -> str | None:
        """The decision while the skill is loaded: its grant sits in the ``allow`` layer, so
        it answers only what would otherwise fall to the ``default`` layer."""
        if self.check is None:
            return None
        return "allow" if self.check.layer == "default" else self.check.decision


@dataclass(frozen=True, slots=True)
class SkillDetail:
    """Everything the detail pane shows for one skill."""

    skill: SkillMetadata
    #: The rule a user approves to load this skill (``skill_load(name)``).
    load_rule: str
    #: ``permissions.check`` for ``skill_load`` with the skill's name, in the picker's session.
    load_check: CheckResult
    #: ``skills.load``'s result when loading is allowed.
    loaded: LoadResult | None
    #: The SKILL.md as ``skills.readFile`` returns it, when loading is not allowed.
    source: ReadFileResult | None
    tools: tuple[ToolDecision, ...]
    #: Why neither the rendered content nor the file could be shown.
    content_error: str | None = None


def probe_for_rule(rule: str) -> tuple[str, str | None]:
    """The ``(tool, input)`` of a call that ``rule`` describes; raises `RuleError`."""
    parsed = parse_rule(rule)
    if parsed.specifier is None:
        return parsed.tool, None
    spec = parsed.specifier[:-2] if parsed.command else parsed.specifier
    return parsed.tool, spec.replace("*", "").strip()


async def _tool_decision(client: AsyncClient, rule: str, cwd: str) -> ToolDecision:
    try:
        tool, input_ = probe_for_rule(rule)
    except RuleError as exc:
        return ToolDecision(rule, problem=str(exc))
    return ToolDecision(rule, await client.permissions_check(tool=tool, input=input_, cwd=cwd))


async def fetch_detail(
    client: AsyncClient, skill: SkillMetadata, *, cwd: str, session_id: str | None
) -> SkillDetail:
    """Ask the daemon for one skill's permission decisions and its content."""
    load_check, tools = await asyncio.gather(
        client.permissions_check(tool=SKILL_LOAD, input=skill.name, session_id=session_id, cwd=cwd),
        asyncio.gather(*(_tool_decision(client, r, cwd) for r in skill.allowed_tools or ())),
    )
    loaded: LoadResult | None = None
    source: ReadFileResult | None = None
    error: str | None = None
    try:
        if load_check.decision == "allow":
            # ``force``: the picker previews the same skill many times; a reminder is no preview.
            try:
                loaded = await client.load(id=skill.id, cwd=cwd, session_id=session_id, force=True)
            finally:
                if session_id is not None:
                    # The session is needed for approvals remembered in it; the preview must
                    # not leave the skill's grants there to colour later checks, even when the
                    # highlight moves on and cancels this worker mid-way.
                    await asyncio.shield(client.unload(id=skill.id, cwd=cwd, session_id=session_id))
        else:
            source = await client.read_file(id=skill.id, file=SKILL_FILE, cwd=cwd)
    except RpcError as exc:
        error = str(exc)
    return SkillDetail(
        skill=skill,
        load_rule=skill_load_rule(skill.name),
        load_check=load_check,
        loaded=loaded,
        source=source,
        tools=tuple(tools),
        content_error=error,
    )
