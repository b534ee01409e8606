"""Reading one SKILL.md: a bounded read, frontmatter extraction and field validation.

CONTRACT (other modules build on exactly this; implementation in progress):
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from skillsd_protocol import Diagnostic

Mode = Literal["strict", "lenient"]


class StatKey(msgspec.Struct, frozen=True, array_like=True):
    """What identifies a version of a file on disk: a change in any part means re-parse."""

    mtime_ns: int
    size: int
    ino: int


class SkillFields(msgspec.Struct, frozen=True, kw_only=True):
    """The validated frontmatter fields of a skill (``name`` NFKC-normalised and stripped)."""

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] | None = None
    allowed_tools: list[str] | None = None
    extra_fields: dict[str, Any] | None = None


class ParsedSkillFile(msgspec.Struct, kw_only=True):
    """The outcome of reading one SKILL.md.

    ``fields`` is None when the skill cannot be accepted in the given mode; ``diagnostics`` holds
    everything found (errors, warnings, info), each with ``path`` set to the SKILL.md path.
    ``stat`` is None only when the file could not be stat'ed at all.
    """

    path: str
    fields: SkillFields | None
    diagnostics: list[Diagnostic]
    stat: StatKey | None
    #: Byte offset of the body inside the file (after the closing ``---`` line), or -1.
    body_offset: int = -1


def read_skill_file(path: str, *, mode: Mode = "strict", dir_name: str | None = None) -> ParsedSkillFile:
    """Read and validate the SKILL.md at ``path`` without reading its body.

    ``dir_name`` is the name the skill's ``name`` must equal (default: the parent directory's
    basename). Never raises for problems with the file: those are diagnostics.
    """
    raise NotImplementedError
