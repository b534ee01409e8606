"""The use ledger's record format and its report (docs/usage.md), as plain functions.

A ledger is JSON Lines: one :class:`UseRecord` per line, appended by the runtime's writer
(:mod:`skillsd.runtime.use_ledger_file`). Reading never trusts a line: a line that is not one
whole record (a write torn by a crash, a hand edit) is skipped with a message naming the file
and the line. The report (``usage.report``, ``skillsd usage``) folds records, and the uses
read from an agent's own transcripts, into the skills used (counts, last use, by agent), the
skills of the current catalog never used, and the suggestions nobody followed.
"""

from __future__ import annotations

import bisect
import datetime
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from skillsd.core import limits
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.messages import IgnoredSuggestion, SkillUse, UnusedSkill, UsageResult

__all__ = [
    "FOLLOW_SECONDS",
    "LEDGER_VERSION",
    "UNNAMED_CLIENT",
    "Event",
    "Kind",
    "UseRecord",
    "build_report",
    "decode_ledger",
    "encode_record",
    "event_of",
    "iso_time",
    "make_record",
    "use_counts",
]

LEDGER_VERSION = 1
#: A suggestion counts as followed when its skill is used in the same repository within this
#: many seconds after it (or at any later time in the same session).
FOLLOW_SECONDS = 30 * 60
#: How a use by a client that gave no name is counted.
UNNAMED_CLIENT = "(unnamed client)"
#: Problems listed one by one; past it one more says how many others were skipped.
_MAX_PROBLEMS = 5

#: ``load`` and ``invoke`` are uses; ``activation`` (a suggestion past the threshold) and
#: ``candidate`` (one below it) are suggestions.
Kind = Literal["load", "invoke", "activation", "candidate"]
_USES = frozenset({"load", "invoke"})

#: Bounds of one record's text fields (a longer value is cut: the line stays small).
_NAME_CHARS = 256
_LABEL_CHARS = 128
_PATH_CHARS = 4096


class UseRecord(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=False):
    """One line of the ledger: what was served (``kind``), which skill (its ``name``, and its
    ``id`` in the catalog it was served from), when (``at``: ISO-8601 UTC), in which
    repository (``repo``: its real root), to whom (``client``: the agent's or client's name,
    when it gave one) and in which skillsd ``session``."""

    #: The format's version: written on every line (a line without it is not a record).
    v: int
    at: str
    kind: Kind
    skill: str
    repo: str
    id: str | None = None
    client: str | None = None
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """A record or a transcript's use, ready to count: ``at`` in Unix seconds."""

    at: float
    kind: Kind
    skill: str
    agent: str
    session: str | None


def iso_time(seconds: float) -> str:
    """``seconds`` (Unix time) as ISO-8601 UTC with milliseconds and ``Z``."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _seconds(text: str) -> float | None:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


def _cut(text: str | None, limit: int) -> str | None:
    return None if text is None else text[:limit]


def make_record(
    kind: Kind,
    skill: SkillMetadata,
    *,
    repo: str,
    at: float,
    client: str | None,
    session: str | None,
) -> UseRecord:
    """The record of one use or suggestion of ``skill``, each text field bounded."""
    return UseRecord(
        v=LEDGER_VERSION,
        at=iso_time(at),
        kind=kind,
        skill=skill.name[:_NAME_CHARS],
        id=skill.id[:_LABEL_CHARS],
        repo=repo[:_PATH_CHARS],
        client=_cut(client, _LABEL_CHARS),
        session=_cut(session, _LABEL_CHARS),
    )


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(UseRecord)


def encode_record(record: UseRecord) -> bytes | None:
    """One ledger line (ending in a newline), or None when it would pass
    ``LEDGER_LINE_BYTES``."""
    line = _ENCODER.encode(record) + b"\n"
    return line if len(line) <= limits.LEDGER_LINE_BYTES else None


def decode_ledger(data: bytes, source: str) -> tuple[list[UseRecord], list[str]]:
    """The records of one ledger file's bytes, and a message for each line skipped: one that is
    not a whole record of this version, or a last line without its newline (a torn write)."""
    records: list[UseRecord] = []
    skipped: list[str] = []
    lines = data.split(b"\n")
    complete = len(lines) - 1  # the part after the last newline is not a whole line
    for number, line in enumerate(lines, start=1):
        if number > complete:
            if line.strip():
                skipped.append(f"{source} line {number}: no newline at its end (a torn write)")
            break
        if not line.strip():
            continue
        try:
            record = _DECODER.decode(line)
        except msgspec.DecodeError as exc:
            skipped.append(f"{source} line {number}: not a ledger record ({exc})")
            continue
        if record.v != LEDGER_VERSION or _seconds(record.at) is None:
            skipped.append(
                f"{source} line {number}: not a ledger record (version {record.v}, time "
                f"{record.at!r})"
            )
            continue
        records.append(record)
    return records, skipped


def event_of(record: UseRecord) -> Event:
    """``record`` to count (its time was checked by :func:`decode_ledger`)."""
    seconds = _seconds(record.at)
    return Event(
        at=0.0 if seconds is None else seconds,
        kind=record.kind,
        skill=record.skill,
        agent=record.client or UNNAMED_CLIENT,
        session=record.session,
    )


def use_counts(
    records: Iterable[UseRecord], repo: str, *, since: float | None = None
) -> dict[str, int]:
    """Loads and invocations of each skill (by name) in the repository at the real root
    ``repo``, at or after ``since``: what a profile weighs a skill's use by."""
    counts: dict[str, int] = {}
    for record in records:
        if record.repo != repo or record.kind not in _USES:
            continue
        if since is not None and event_of(record).at < since:
            continue
        counts[record.skill] = counts.get(record.skill, 0) + 1
    return counts


@dataclass
class _Used:
    loads: int = 0
    invokes: int = 0
    last: float = 0.0
    by_agent: dict[str, int] = field(default_factory=dict)


@dataclass
class _Suggested:
    times: list[tuple[float, str | None, bool]] = field(default_factory=list)


def _problems(messages: Sequence[str]) -> list[Diagnostic]:
    shown = [
        Diagnostic(severity="warning", code="ledger.skipped", message=text)
        for text in messages[:_MAX_PROBLEMS]
    ]
    if len(messages) > _MAX_PROBLEMS:
        rest = len(messages) - _MAX_PROBLEMS
        shown.append(
            Diagnostic(
                severity="warning", code="ledger.skipped", message=f"and {rest} more skipped"
            )
        )
    return shown


def build_report(
    events: Iterable[Event],
    catalog: Sequence[SkillMetadata],
    *,
    repo: str,
    since: float | None,
    ledger_enabled: bool,
    transcripts: bool,
    skipped: Sequence[str] = (),
) -> UsageResult:
    """The usage report of the repository at ``repo`` from ``events`` already limited to it:
    skills used (most used first), the skills of ``catalog`` never used, and the suggestions
    not followed (most ignored first); ``skipped`` are the messages of what could not be
    read."""
    used: dict[str, _Used] = {}
    suggested: dict[str, _Suggested] = {}
    #: Per skill: the sorted times of its uses, and the last use in each session.
    use_times: dict[str, list[float]] = {}
    last_in_session: dict[tuple[str, str], float] = {}
    count = 0
    for event in events:
        if since is not None and event.at < since:
            continue
        count += 1
        if event.kind in _USES:
            entry = used.setdefault(event.skill, _Used())
            if event.kind == "load":
                entry.loads += 1
            else:
                entry.invokes += 1
            entry.last = max(entry.last, event.at)
            entry.by_agent[event.agent] = entry.by_agent.get(event.agent, 0) + 1
            use_times.setdefault(event.skill, []).append(event.at)
            if event.session is not None:
                key = (event.skill, event.session)
                last_in_session[key] = max(last_in_session.get(key, 0.0), event.at)
        else:
            suggestion = suggested.setdefault(event.skill, _Suggested())
            suggestion.times.append((event.at, event.session, event.kind == "activation"))
    for times in use_times.values():
        times.sort()
    ids: dict[str, str] = {}
    for skill in catalog:
        ids.setdefault(skill.name, skill.id)
    return UsageResult(
        repo=repo,
        since=None if since is None else iso_time(since),
        ledger_enabled=ledger_enabled,
        transcripts=transcripts,
        records=count,
        used=_used(used, ids),
        never_used=[
            UnusedSkill(name=s.name, id=s.id, scope=s.scope)
            for s in catalog
            if s.enabled and s.name not in used
        ],
        ignored=list(_ignored(suggested, use_times, last_in_session, ids)),
        problems=_problems(skipped),
    )


def _used(used: dict[str, _Used], ids: dict[str, str]) -> list[SkillUse]:
    rows = [
        SkillUse(
            name=name,
            id=ids.get(name),
            uses=entry.loads + entry.invokes,
            loads=entry.loads,
            invokes=entry.invokes,
            last_used=iso_time(entry.last),
            by_agent=dict(sorted(entry.by_agent.items(), key=lambda kv: (-kv[1], kv[0]))),
        )
        for name, entry in used.items()
    ]
    rows.sort(key=lambda row: (-row.uses, row.name))
    return rows


def _ignored(
    suggested: dict[str, _Suggested],
    use_times: dict[str, list[float]],
    last_in_session: dict[tuple[str, str], float],
    ids: dict[str, str],
) -> Iterator[IgnoredSuggestion]:
    rows = []
    for name, entry in suggested.items():
        times = use_times.get(name, [])
        ignored = 0
        for at, session, _activated in entry.times:
            later = bisect.bisect_left(times, at)
            soon = later < len(times) and times[later] - at <= FOLLOW_SECONDS
            in_session = session is not None and last_in_session.get((name, session), -1.0) >= at
            if not (soon or in_session):
                ignored += 1
        if ignored:
            rows.append(
                IgnoredSuggestion(
                    name=name,
                    id=ids.get(name),
                    suggested=len(entry.times),
                    activated=sum(1 for _at, _s, on in entry.times if on),
                    ignored=ignored,
                    last_suggested=iso_time(max(at for at, _s, _on in entry.times)),
                )
            )
    rows.sort(key=lambda row: (-row.ignored, row.name))
    yield from rows
