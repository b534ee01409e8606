"""The use ledger's report for every face, read from disk: ``skillsd usage`` calls it directly
and ``usage.report`` off the event loop; and the use counts a profile weighs skills by
(docs/usage.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from skillsd.core.listing.fs_claude_transcripts import transcript_uses
from skillsd.core.listing.use_ledger import build_report, event_of, use_counts
from skillsd.core.policy.config import LedgerConfig
from skillsd.core.policy.fs_state import default_state_path
from skillsd.runtime.use_ledger_file import ledger_dir, read_ledger
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import UsageResult

__all__ = ["report", "skill_use_counts"]


def report(
    repo: str,
    catalog: Sequence[SkillMetadata],
    *,
    since: float | None,
    ledger: LedgerConfig,
    state_path: str,
    home: str,
    env: Mapping[str, str],
) -> UsageResult:
    """The report of the repository at the real root ``repo``, whose current skills are
    ``catalog``: the ledger beside ``state_path``, plus Claude Code's transcripts when
    ``ledger.agent_transcripts`` allows them. Reads files: run it off the event loop."""
    records, skipped = read_ledger(ledger_dir(state_path), ledger.max_bytes)
    events = [event_of(r) for r in records if r.repo == repo]
    if ledger.agent_transcripts:
        found = transcript_uses(repo, home=home, env=env, since=since)
        events.extend(found.events)
        skipped.extend(found.problems)
    events.sort(key=lambda e: e.at)
    return build_report(
        events,
        catalog,
        repo=repo,
        since=since,
        ledger_enabled=ledger.enabled,
        transcripts=ledger.agent_transcripts,
        skipped=skipped,
    )


def skill_use_counts(
    repo: str,
    *,
    state_path: str | None = None,
    since: float | None = None,
    ledger: LedgerConfig | None = None,
    home: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """How often each skill (by name) was used in the repository at the real root ``repo`` (at
    or after ``since``, Unix seconds): its loads and invocations through skillsd, from the
    user's ledger (``state_path``: the state file it sits beside), plus the Skill tool uses in
    Claude Code's transcripts when the user's ``ledger`` config (``[ledger]``, which also gives
    the ledger's bound) allows reading them (``home``, ``env``: where they are). Lines that
    cannot be read are left out. Reads files: call it off the event loop."""
    config = ledger or LedgerConfig()
    records, _skipped = read_ledger(
        ledger_dir(state_path or default_state_path()), config.max_bytes
    )
    counts = use_counts(records, repo, since=since)
    if config.agent_transcripts:
        found = transcript_uses(
            repo,
            home=home if home is not None else os.path.expanduser("~"),
            env=os.environ if env is None else env,
            since=since,
        )
        for event in found.events:
            counts[event.skill] = counts.get(event.skill, 0) + 1
    return counts
