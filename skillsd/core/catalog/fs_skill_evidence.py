"""What a skill says about itself beyond its frontmatter, for ranking suggestions
(docs/hooks.md): its body's headings and first paragraphs, the names of its ``references/``,
``scripts/`` and ``examples/`` files, and the queries of its own ``evals/triggers.json``.

Everything here is read from files the skill's author controls, so every read is bounded: the
first :data:`BODY_BYTES` of ``SKILL.md`` (never a FIFO or a device), the first
:data:`MAX_LISTED` entries of each resource folder (not descended into), a ``triggers.json`` of
at most :data:`TRIGGERS_BYTES` with at most :data:`MAX_TRIGGERS` queries; and what is kept is
capped in words (:data:`MAX_HEADING_WORDS`, :data:`MAX_PARAGRAPH_WORDS`). A file that cannot be
read contributes nothing: the skill is ranked on what could be read.

:class:`EvidenceCache` keeps each skill's evidence by the versions of the files it came from
(:class:`~skillsd.core.fs.file_version.StatKey`), so rebuilding the index after one edit re-reads
one skill.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.file_version import StatKey, stat_key
from skillsd.core.fs.fs_boundary import decode_json
from skillsd.core.skill.frontmatter import FrontmatterError, body_text, locate_frontmatter
from skillsd_protocol import SkillMetadata

__all__ = [
    "BODY_BYTES",
    "MAX_HEADING_WORDS",
    "MAX_LISTED",
    "MAX_PARAGRAPH_WORDS",
    "MAX_TRIGGERS",
    "NO_EVIDENCE",
    "RESOURCE_FOLDERS",
    "TRIGGERS_BYTES",
    "TRIGGERS_FILE",
    "EvidenceCache",
    "SkillEvidence",
    "read_evidence",
]

#: Where a skill keeps its trigger evaluations, relative to its folder.
TRIGGERS_FILE = os.path.join("evals", "triggers.json")
#: The folders whose file names say what a skill works with.
RESOURCE_FOLDERS = ("references", "scripts", "examples")
#: How much of ``SKILL.md`` is read for its headings and first paragraphs.
BODY_BYTES = 64 * 1024
#: Entries of one resource folder looked at.
MAX_LISTED = 64
TRIGGERS_BYTES = 256 * 1024
MAX_TRIGGERS = 200
#: Words kept from the body's headings, and from its first paragraphs.
MAX_HEADING_WORDS = 120
MAX_PARAGRAPH_WORDS = 400
#: Words of one paragraph kept (the first sentences say what a section is about).
_PARAGRAPH_WORDS = 60
#: The longest trigger query kept (characters).
_MAX_QUERY_CHARS = 2000
#: Skills remembered by an :class:`EvidenceCache` (the least recently built are dropped past it).
_MAX_CACHED = 50_000

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class SkillEvidence:
    """A skill's own words beyond its frontmatter, as plain text per field."""

    headings: str = ""
    paragraphs: str = ""
    resources: str = ""
    #: The queries of ``evals/triggers.json``: should trigger, and should not.
    positives: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()


NO_EVIDENCE = SkillEvidence()


def _capped(words: list[str], text: str, limit: int) -> None:
    room = limit - len(words)
    if room > 0:
        words.extend(_WORD.findall(text)[:room])


def body_outline(body: str) -> tuple[str, str]:
    """The headings of a Markdown ``body`` and its first paragraphs (the one before the first
    heading and the first after each heading), outside fenced code blocks, each capped in
    words."""
    headings: list[str] = []
    paragraphs: list[str] = []
    fence: str | None = None
    want_paragraph = True
    current: list[str] = []

    def close() -> None:
        nonlocal want_paragraph
        if current:
            if want_paragraph:
                text = " ".join(current)
                _capped(paragraphs, " ".join(_WORD.findall(text)[:_PARAGRAPH_WORDS]), 10**9)
                want_paragraph = False
            current.clear()

    for line in body.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            close()
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            _capped(headings, heading.group(2), MAX_HEADING_WORDS)
            want_paragraph = True
            continue
        if not line.strip():
            close()
            continue
        if want_paragraph:
            current.append(line.strip())
        if len(headings) >= MAX_HEADING_WORDS and len(paragraphs) >= MAX_PARAGRAPH_WORDS:
            break
    close()
    return " ".join(headings), " ".join(paragraphs[:MAX_PARAGRAPH_WORDS])


def _body(path: str) -> tuple[str, str]:
    try:
        read = read_regular_file(path, BODY_BYTES)
        located = locate_frontmatter(read.data, at_eof=True)
    except (OSError, ValueError, FrontmatterError):
        return "", ""
    if located is None:
        return "", ""
    return body_outline(body_text(read.data, located))


def _resources(folder: str) -> str:
    names: list[str] = []
    for sub in RESOURCE_FOLDERS:
        try:
            with os.scandir(os.path.join(folder, sub)) as entries:
                for n, entry in enumerate(entries):
                    if n >= MAX_LISTED:
                        break
                    if not entry.name.startswith("."):
                        names.append(os.path.splitext(entry.name)[0])
        except (OSError, ValueError):
            continue
    return " ".join(sorted(names))


def _triggers(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    try:
        read = read_regular_file(path, TRIGGERS_BYTES)
        data = None if read.over_cap else decode_json(read.data)
    except (OSError, ValueError):
        return (), ()
    positives: list[str] = []
    negatives: list[str] = []
    for case in data[:MAX_TRIGGERS] if isinstance(data, list) else ():
        query = case.get("query") if isinstance(case, dict) else None
        should = case.get("should_trigger") if isinstance(case, dict) else None
        if isinstance(query, str) and query.strip() and isinstance(should, bool):
            (positives if should else negatives).append(query[:_MAX_QUERY_CHARS])
    return tuple(positives), tuple(negatives)


def read_evidence(skill: SkillMetadata) -> SkillEvidence:
    """Read ``skill``'s evidence from its files (bounded; unreadable parts are left empty)."""
    headings, paragraphs = _body(skill.path)
    positives, negatives = _triggers(os.path.join(skill.dir, TRIGGERS_FILE))
    return SkillEvidence(
        headings=headings,
        paragraphs=paragraphs,
        resources=_resources(skill.dir),
        positives=positives,
        negatives=negatives,
    )


def _versions(skill: SkillMetadata) -> tuple[StatKey | None, ...]:
    """The versions of everything :func:`read_evidence` reads for ``skill`` (a folder's
    version changes when an entry is added, removed or renamed)."""
    folder = skill.dir
    return (
        stat_key(skill.path),
        stat_key(os.path.join(folder, TRIGGERS_FILE)),
        *(stat_key(os.path.join(folder, sub)) for sub in RESOURCE_FOLDERS),
    )


class EvidenceCache:
    """Each skill's :class:`SkillEvidence` by the versions of its files: :meth:`get` re-reads
    a skill only when one of them changed. Threads that build indexes may share one: each
    step is one dictionary operation, and a race costs at most a second read of a skill."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[StatKey | None, ...], SkillEvidence]] = {}

    def get(self, skill: SkillMetadata) -> SkillEvidence:
        versions = _versions(skill)
        kept = self._kept.pop(skill.path, None)
        evidence = kept[1] if kept is not None and kept[0] == versions else read_evidence(skill)
        self._kept[skill.path] = (versions, evidence)  # last: most recently used
        while len(self._kept) > _MAX_CACHED:
            # Another thread may drop the same entry first: then there is nothing left to do.
            with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                del self._kept[next(iter(self._kept))]
        return evidence

    def all(self, skills: Sequence[SkillMetadata]) -> list[SkillEvidence]:
        return [self.get(skill) for skill in skills]

    def __len__(self) -> int:
        return len(self._kept)
