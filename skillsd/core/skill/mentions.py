"""Explicit skill mentions in user text: ``$skill-name`` and ``[$skill-name](path/to/SKILL.md)``.

Parsing is pure; resolution is given a resolver so the rules (path wins, a bare name must be
unique, a linked path that is not a catalog skill is an error with no fallback to the name) live
here and the catalog lookup stays in the catalog.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass

from skillsd.core.catalog.catalog_prompt import xml_text
from skillsd.core.errors import SkillsdError
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import Mention, MentionError

# A markdown link whose text is `$name`. The target stops at whitespace or `)`.
_LINK = re.compile(r"\[\$([^\]\s]+)\]\(([^)\s]+)\)")
# A bare `$token`: not preceded by a word char or `$` (so `a$b` and `$$x` are not mentions).
_BARE = re.compile(r"(?<![\w$])\$([^\W_][\w-]*)")

#: Resolves a skill by ``path`` (absolute or relative to the caller's cwd) or by ``name``.
Resolver = Callable[..., SkillMetadata]


@dataclass(frozen=True, slots=True)
class RawMention:
    """A mention found in text, before resolution. Offsets are code point indexes."""

    text: str
    start: int
    end: int
    name: str
    link: str | None


def find_mentions(text: str, known_names: Collection[str]) -> list[RawMention]:
    """Find mentions in ``text``: every linked one, and bare ones that name a known skill.

    Filtering bare tokens by ``known_names`` keeps ``$PATH``, ``$HOME`` and ``$1`` out.
    """
    found: list[RawMention] = []
    taken: list[tuple[int, int]] = []
    for match in _LINK.finditer(text):
        found.append(
            RawMention(match.group(0), match.start(), match.end(), match.group(1), match.group(2))
        )
        taken.append(match.span())
    for match in _BARE.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        name = match.group(1).rstrip("-")
        if unicodedata.normalize("NFKC", name) not in known_names:
            continue
        end = match.start() + 1 + len(name)
        found.append(RawMention(text[match.start() : end], match.start(), end, name, None))
    found.sort(key=lambda m: m.start)
    return found


def resolve_mentions(raw: list[RawMention], resolve: Resolver) -> list[Mention]:
    """Resolve each mention: the link path if there is one (no fallback), else the unique name."""
    out: list[Mention] = []
    for item in raw:
        try:
            if item.link is not None:
                skill = resolve(path=item.link)
            else:
                skill = resolve(name=unicodedata.normalize("NFKC", item.name))
        except SkillsdError as exc:
            out.append(
                Mention(
                    text=item.text,
                    start=item.start,
                    end=item.end,
                    error=MentionError(kind=exc.kind, message=exc.message),
                )
            )
            continue
        out.append(Mention(text=item.text, start=item.start, end=item.end, skill=skill))
    return out


def mentions_hint(mentions: list[Mention]) -> str:
    """The ``<skill_mentions>`` block telling the model which skills to load (empty if none)."""
    seen: dict[str, SkillMetadata] = {}
    for mention in mentions:
        if mention.skill is not None:
            seen.setdefault(mention.skill.id, mention.skill)
    if not seen:
        return ""
    lines = [
        "<skill_mentions>",
        "The user explicitly mentioned these skills. Load each one with skill_load before acting:",
    ]
    lines += [f"- {xml_text(s.name)}: {xml_text(s.path)}" for s in seen.values()]
    lines.append("</skill_mentions>")
    return "\n".join(lines)
