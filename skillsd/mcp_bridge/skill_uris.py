"""``skill://`` URIs (docs/mcp.md): a skill is ``skill://<name>/SKILL.md`` when its name is unique
among the enabled skills, else ``skill://<id>/<name>/SKILL.md``; its other files follow the same
prefix (``skill://pdf/references/forms.md``), and its folders too, without a trailing slash
(``skill://pdf/references``; the skill's own folder is ``skill://pdf``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd_protocol import SkillMetadata

__all__ = ["SCHEME", "TEMPLATES", "SkillUris", "UriTarget"]

SCHEME = "skill://"

#: The RFC 6570 templates of these URIs (``resources/templates/list``) as ``(uriTemplate, name,
#: description)``: ``{+path}`` keeps the slashes of a file's path.
TEMPLATES: tuple[tuple[str, str, str], ...] = (
    (
        SCHEME + "{name}/{+path}",
        "skill-file",
        "A file of the skill named `name` (unique among the enabled skills), `path` relative to "
        "its folder: SKILL.md is the skill itself.",
    ),
    (
        SCHEME + "{id}/{name}/{+path}",
        "skill-file-by-id",
        "A file of the skill `name` with id `id`, the form used when several enabled skills "
        "share a name.",
    ),
)


@dataclass(frozen=True, slots=True)
class UriTarget:
    """What a ``skill://`` URI names: a skill and a file relative to its directory."""

    skill: SkillMetadata
    file: str


class SkillUris:
    """The URIs of one catalog's enabled skills."""

    def __init__(self, skills: Iterable[SkillMetadata]) -> None:
        enabled = [s for s in skills if s.enabled]
        counts = Counter(s.name for s in enabled)
        self._prefix: dict[str, str] = {}
        self._by_prefix: dict[str, SkillMetadata] = {}
        for skill in enabled:
            prefix = skill.name if counts[skill.name] == 1 else f"{skill.id}/{skill.name}"
            self._prefix[skill.id] = prefix
            self._by_prefix[prefix] = skill

    def skill_uri(self, skill: SkillMetadata) -> str:
        return self.file_uri(skill, SKILL_FILE)

    def file_uri(self, skill: SkillMetadata, file: str) -> str:
        return f"{SCHEME}{self._prefix[skill.id]}/{quote(file)}"

    def prefix_uri(self, skill: SkillMetadata) -> str:
        return f"{SCHEME}{self._prefix[skill.id]}/"

    def resolve(self, uri: str) -> UriTarget | None:
        """The skill and file ``uri`` names, or None (not ``skill://``, or no such skill)."""
        if not uri.startswith(SCHEME):
            return None
        parts: Sequence[str] = uri[len(SCHEME) :].split("/")
        for length in (2, 1):  # ``<id>/<name>/...`` before ``<name>/...``
            skill = self._by_prefix.get("/".join(parts[:length]))
            if skill is not None and len(parts) > length:
                return UriTarget(skill, unquote("/".join(parts[length:])))
        return None
