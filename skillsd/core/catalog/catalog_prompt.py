"""The skill catalog rendered for a system prompt (``skills.prompt``), within a budget.

Formats: ``xml`` (default: ``<available_skills>`` with child elements), ``codelia``
(``<skills_context>``), ``attributes`` (``<skill name=".." description=".." location=".."/>``) and
``markdown`` (a list under a short how-to-use header). Only enabled skills the model may invoke
(``invocation.model``, the host fields) are rendered, in the order given (the catalog's: scope,
nearer roots, path). Descriptions (with ``whenToUse`` appended) are put on one line (whitespace runs
collapsed). Text and attribute values are XML-escaped, and characters XML 1.0 forbids (control
characters, lone surrogates, U+FFFE/U+FFFF) become U+FFFD in every format.

Budget (``maxEntries`` skills, ``maxBytes`` UTF-8 bytes of the whole text), applied in stages:

1. skills past ``maxEntries`` are dropped from the end of the list;
2. over ``maxBytes``, every description is cut to one common character cap (as large as fits,
   not below ``PROMPT_MIN_DESCRIPTION_CHARS``), ending in an ellipsis;
3. still over, descriptions are dropped (names and locations stay);
4. still over, skills are dropped from the end of the list: extra before user before repo, and
   within a scope the farthest roots first.

Whenever anything was cut the result has ``truncated: true`` and the text says so and points the
model to the ``skill_search`` tool.

With a token budget, a query, active files or a description cap (docs/embedding.md),
:func:`render_catalog_within` renders what :mod:`skillsd.core.catalog.prompt_budget` keeps instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, Literal

from skillsd.core import limits
from skillsd.core.catalog.prompt_budget import choose_entries, estimate_tokens
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.skill.host_fields import model_description, model_may_see
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import CatalogFormat, PromptResult

__all__ = [
    "DEFAULT_CATALOG_FORMAT",
    "clean_text",
    "render_active_skills",
    "render_catalog",
    "render_catalog_within",
    "xml_attr",
    "xml_text",
]

DEFAULT_CATALOG_FORMAT: Final[CatalogFormat] = "xml"
ELLIPSIS: Final = "\u2026"

# Everything outside XML 1.0's Char production (also catches lone surrogates, which cannot
# even be encoded as UTF-8).
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTR_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&apos;",
        "\t": "&#9;",
        "\n": "&#10;",
        "\r": "&#13;",
    }
)


def clean_text(value: str) -> str:
    """Replace characters that XML 1.0 does not allow (and lone surrogates) with U+FFFD."""
    return _ILLEGAL_XML.sub("\ufffd", value)


def xml_text(value: str) -> str:
    """Escape for XML character data."""
    return clean_text(value).translate(_TEXT_ESCAPES)


def xml_attr(value: str) -> str:
    """Escape for a double- or single-quoted XML attribute value (whitespace kept as refs)."""
    return clean_text(value).translate(_ATTR_ESCAPES)


def _one_line(text: str) -> str:
    return " ".join(clean_text(text).split())


def _cut(description: str, cap: int) -> str:
    if len(description) <= cap:
        return description
    return description[: cap - 1].rstrip() + ELLIPSIS


DescState = Literal["full", "short", "none"]


def _notice(shown: int, total: int, state: DescState) -> str:
    if shown < total:
        detail = {"full": "", "short": ", with shortened descriptions", "none": ", names only"}
        return (
            f"Only {shown} of {total} skills are listed here{detail[state]}. "
            "Use the skill_search tool to find the others."
        )
    if state == "short":
        return (
            "Skill descriptions are shortened to fit; "
            "use the skill_search tool to see a skill's full description."
        )
    return (
        "Skill descriptions are left out to fit; "
        "use the skill_search tool to see what a skill is for."
    )


class _Format:
    """One catalog format: a head, one chunk per skill and a tail (text = their concatenation).

    Each chunk starts with its own line break, so sizes add up exactly for the budget.
    """

    def __init__(self, include_location: bool) -> None:
        self.include_location = include_location

    def head(self, notice: str | None) -> str:
        return "<available_skills>"

    def tail(self, notice: str | None) -> str:
        return "\n</available_skills>" + (f"\n\n{xml_text(notice)}" if notice else "")

    def entry(self, skill: SkillMetadata, description: str | None) -> str:
        lines = [f"\n  <skill>\n    <name>{xml_text(skill.name)}</name>"]
        if description is not None:
            lines.append(f"\n    <description>{xml_text(description)}</description>")
        if self.include_location:
            lines.append(f"\n    <location>{xml_text(skill.path)}</location>")
        lines.append("\n  </skill>")
        return "".join(lines)


class _Attributes(_Format):
    def entry(self, skill: SkillMetadata, description: str | None) -> str:
        attrs = f'name="{xml_attr(skill.name)}"'
        if description is not None:
            attrs += f' description="{xml_attr(description)}"'
        if self.include_location:
            attrs += f' location="{xml_attr(skill.path)}"'
        return f"\n  <skill {attrs}/>"


class _Codelia(_Format):
    RULES: Final = (
        "Each skill below is a set of instructions for one kind of task. Before starting a task "
        "that matches a skill's description, load it with the skill_load tool (by name, or by "
        "path when names repeat) and follow its instructions.",
        "When the user names a skill explicitly (for example $skill-name), load that skill.",
        "Load only the skills the task needs. A loaded skill stays in context: do not load it "
        "again unless told it changed.",
        "Relative paths inside a skill resolve from its base directory; read its bundled files "
        "with the skill_read_file tool.",
    )

    def head(self, notice: str | None) -> str:
        rules = [*self.RULES, notice] if notice else self.RULES
        listed = "".join(f"\n  <rule>{xml_text(rule)}</rule>" for rule in rules)
        truncated = "true" if notice else "false"
        return (
            f"<skills_context>\n<skills_usage>{listed}\n</skills_usage>\n"
            f'<skills_catalog scope="initial" truncated="{truncated}">'
        )

    def tail(self, notice: str | None) -> str:
        return "\n</skills_catalog>\n</skills_context>"

    def entry(self, skill: SkillMetadata, description: str | None) -> str:
        lines = [f"\n  <skill>\n    <name>{xml_text(skill.name)}</name>"]
        if description is not None:
            lines.append(f"\n    <description>{xml_text(description)}</description>")
        if self.include_location:
            lines.append(f"\n    <path>{xml_text(skill.path)}</path>")
        lines.append(f"\n    <scope>{xml_text(skill.scope)}</scope>\n  </skill>")
        return "".join(lines)


class _Markdown(_Format):
    def head(self, notice: str | None) -> str:
        how = (
            "read its SKILL.md (the file shown) or load it with the skill_load tool"
            if self.include_location
            else "load it with the skill_load tool"
        )
        return (
            "## Available skills\n\n"
            "Each skill below holds instructions for one kind of task. When a task matches a "
            f"skill's description, {how} before starting, and follow it.\n"
        )

    def tail(self, notice: str | None) -> str:
        return f"\n\n{clean_text(notice)}" if notice else ""

    def entry(self, skill: SkillMetadata, description: str | None) -> str:
        line = f"\n- {_one_line(skill.name)}"
        if description is not None:
            line += f": {description}"
        if self.include_location:
            line += f" (file: {_one_line(skill.path)})"
        return line


_FORMATS: Final[dict[str, Callable[[bool], _Format]]] = {
    "xml": _Format,
    "attributes": _Attributes,
    "codelia": _Codelia,
    "markdown": _Markdown,
}


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _check_budget(max_entries: int, max_bytes: int) -> None:
    for field, value in (("maxEntries", max_entries), ("maxBytes", max_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SkillsdError(
                f"{field} must be a non-negative integer, got {value!r}",
                InvalidParamsData(field=field),
            )


def _formatter(format: str, include_location: bool) -> _Format:
    factory = _FORMATS.get(format)
    if factory is None:
        raise SkillsdError(
            f"format must be one of {', '.join(_FORMATS)}, got {format!r}",
            InvalidParamsData(field="format"),
        )
    return factory(include_location)


def render_catalog(
    skills: Sequence[SkillMetadata],
    *,
    format: CatalogFormat = DEFAULT_CATALOG_FORMAT,
    max_entries: int = limits.DEFAULT_PROMPT_MAX_ENTRIES,
    max_bytes: int = limits.DEFAULT_PROMPT_MAX_BYTES,
    include_location: bool = True,
) -> PromptResult:
    """Render the enabled, model-invocable ``skills`` in ``format`` within the budget (module
    docstring)."""
    _check_budget(max_entries, max_bytes)
    fmt = _formatter(format, include_location)
    enabled = [s for s in skills if model_may_see(s)]
    total = len(enabled)
    if not total:
        return PromptResult(text="", shown=0, total=0, truncated=False, bytes=0)
    kept = enabled[:max_entries]
    descriptions = [_one_line(model_description(s)) for s in kept]

    def frame(shown: int, state: DescState) -> tuple[str, str]:
        notice = _notice(shown, total, state) if shown < total or state != "full" else None
        return fmt.head(notice), fmt.tail(notice)

    def fits(entries_bytes: int, shown: int, state: DescState) -> bool:
        head, tail = frame(shown, state)
        return _size(head) + entries_bytes + _size(tail) <= max_bytes

    def done(entries: list[str], state: DescState) -> PromptResult:
        head, tail = frame(len(entries), state)
        text = head + "".join(entries) + tail
        size = _size(text)
        if size > max_bytes:  # not even an empty catalog fits the budget
            text, size = "", 0
        truncated = len(entries) < total or state != "full"
        return PromptResult(
            text=text, shown=len(entries), total=total, truncated=truncated, bytes=size
        )

    full = [fmt.entry(s, d) for s, d in zip(kept, descriptions, strict=True)]
    full_sizes = [_size(e) for e in full]
    if fits(sum(full_sizes), len(kept), "full"):
        return done(full, "full")

    # Stage 2: one common cap on description length, the largest that fits.
    bare = [fmt.entry(s, None) for s in kept]
    bare_sizes = [_size(e) for e in bare]
    floor = limits.PROMPT_MIN_DESCRIPTION_CHARS
    longest = max(len(d) for d in descriptions)

    def capped_size(cap: int) -> int:
        return sum(
            size if len(d) <= cap else _size(fmt.entry(s, _cut(d, cap)))
            for s, d, size in zip(kept, descriptions, full_sizes, strict=True)
        )

    if longest > floor and fits(capped_size(floor), len(kept), "short"):
        lo, hi = floor, longest - 1  # lo always fits; longest itself did not
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(capped_size(mid), len(kept), "short"):
                lo = mid
            else:
                hi = mid - 1
        shortened = [_cut(d, lo) for d in descriptions]
        return done([fmt.entry(s, d) for s, d in zip(kept, shortened, strict=True)], "short")

    # Stage 3: names only.
    if fits(sum(bare_sizes), len(kept), "none"):
        return done(bare, "none")

    # Stage 4: drop skills from the end (extra, then user, then repo; farthest roots first).
    prefix = [0]
    for size in bare_sizes:
        prefix.append(prefix[-1] + size)
    lo, hi = 0, len(kept)  # the size grows with the count, so the largest fitting count is found
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(prefix[mid], mid, "none"):
            lo = mid
        else:
            hi = mid - 1
    return done(bare[:lo], "none")


def _omitted_notice(omitted: int, names_only: bool) -> str | None:
    parts = []
    if omitted:
        parts.append(f"{omitted} more skill{'s are' if omitted != 1 else ' is'} not listed here.")
    if names_only:
        parts.append("Some skills are listed by name only.")
    if not parts:
        return None
    parts.append("Use the skill_search tool to find skills and see what they are for.")
    return " ".join(parts)


def render_catalog_within(
    skills: Sequence[SkillMetadata],
    *,
    format: CatalogFormat = DEFAULT_CATALOG_FORMAT,
    include_location: bool = True,
    max_bytes: int | None,
    max_entries: int | None = None,
    max_description_chars: int = limits.PROMPT_DESCRIPTION_CHARS,
    priority: Sequence[str] = (),
    hidden: frozenset[str] = frozenset(),
) -> PromptResult:
    """The enabled, model-invocable ``skills`` within ``max_bytes`` (docs/embedding.md): ids in
    ``priority`` are considered first, ``hidden`` ones (``paths`` that match no active file)
    are left out; each kept skill has its description (cut to ``max_description_chars``) or
    its name alone, printed in catalog order. ``omitted`` names the rest."""
    fmt = _formatter(format, include_location)
    candidates = [s for s in skills if model_may_see(s)]
    shown = [s for s in candidates if s.id not in hidden]
    position = {s.id: i for i, s in enumerate(shown)}
    cut: dict[int, str] = {}  # only the entries the walk reaches are ever described

    def description(i: int) -> str:
        text = cut.get(i)
        if text is None:
            text = cut[i] = _cut(_one_line(model_description(shown[i])), max_description_chars)
        return text

    # Room for the entries once the longest notice this catalog can need is in place.
    reserve = _omitted_notice(len(candidates), names_only=True)
    frame_bytes = _size(fmt.head(reserve)) + _size(fmt.tail(reserve))
    room = (
        max_bytes - frame_bytes
        if max_bytes is not None
        else sum(_size(fmt.entry(s, description(i))) for i, s in enumerate(shown))
    )
    choice = choose_entries(
        len(shown),
        [position[i] for i in priority if i in position],
        full_size=lambda i: _size(fmt.entry(shown[i], description(i))),
        name_size=lambda i: _size(fmt.entry(shown[i], None)),
        room=max(room, 0),
        most=max_entries,
    )
    kept = sorted(choice.kept)
    entries = [
        fmt.entry(shown[i], description(i) if choice.kept[i] == "full" else None) for i in kept
    ]
    kept_ids = {shown[i].id for i in kept}
    omitted = [s.name for s in candidates if s.id not in kept_ids]
    names_only = any(state == "name" for state in choice.kept.values())
    notice = _omitted_notice(len(omitted), names_only)
    text = fmt.head(notice) + "".join(entries) + fmt.tail(notice) if candidates else ""
    if max_bytes is not None and _size(text) > max_bytes:
        text = ""  # not even the frame fits the budget
    return PromptResult(
        text=text,
        shown=len(kept) if text else 0,
        total=len(candidates),
        truncated=bool(omitted) or names_only,
        bytes=_size(text),
        tokens=estimate_tokens(text),
        omitted=omitted,
    )


def render_active_skills(
    loaded: Sequence[tuple[SkillMetadata, str]],
    *,
    format: CatalogFormat = DEFAULT_CATALOG_FORMAT,
    max_entries: int = limits.DEFAULT_PROMPT_MAX_ENTRIES,
    max_bytes: int | None = None,
) -> PromptResult:
    """The full instructions of the skills loaded in a session (``skills.prompt {active}``).

    ``loaded`` holds (skill, body) pairs in load order. ``markdown`` renders one
    ``# Skill Activated: name`` section per skill; every other format an ``<active_skills>``
    block of ``<skill name=".." location="..">`` elements holding the body verbatim. Bodies are
    never cut: skills that do not fit ``max_entries``/``max_bytes`` (no byte limit by default)
    are left out from the end and named in a closing note.
    """
    _check_budget(max_entries, 0 if max_bytes is None else max_bytes)
    _formatter(format, True)  # validates the name
    total = len(loaded)
    if not total:
        return PromptResult(text="", shown=0, total=0, truncated=False, bytes=0)
    if format == "markdown":
        head, sep, tail = "", "\n\n", ""
        chunks = [
            f"# Skill Activated: {_one_line(skill.name)}\n\n{clean_text(body).strip()}"
            for skill, body in loaded
        ]
    else:
        head, sep, tail = "<active_skills>\n", "\n", "\n</active_skills>"
        chunks = [
            f'<skill name="{xml_attr(skill.name)}" location="{xml_attr(skill.path)}">\n'
            f"{clean_text(body).strip()}\n</skill>"
            for skill, body in loaded
        ]

    def compose(count: int) -> str:
        omitted = [_one_line(skill.name) for skill, _ in loaded[count:]]
        note = (
            f"\n\nInstructions of {len(omitted)} loaded skill(s) left out to fit the prompt: "
            f"{', '.join(omitted)}."
            if omitted
            else ""
        )
        if not count:
            return note.lstrip("\n")
        return head + sep.join(chunks[:count]) + tail + note

    count = min(total, max_entries)
    text = compose(count)
    while max_bytes is not None and count and _size(text) > max_bytes:
        count -= 1  # bodies are never cut: a skill is shown whole or named in the note
        text = compose(count)
    if max_bytes is not None and _size(text) > max_bytes:
        text = ""
    return PromptResult(
        text=text, shown=count, total=total, truncated=count < total, bytes=_size(text)
    )
