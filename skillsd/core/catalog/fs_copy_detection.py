"""Identical copies of one skill in several agents' folders (docs/agents.md, "Copies").

The same skill is often copied into ``.claude/skills/x`` and ``.agents/skills/x``. Skills of one
name whose folders hold byte-identical files (the digest of ``skillsd add``'s lock file) are one
skill shown once: each later one is a copy of the first in catalog order. Copies that differ are
two skills of one name, and :func:`drift` names the files that differ.

File contents are hashed only for skills that share a name, and remembered per folder until a
file's stat changes, so a catalog rebuilt on every edit hashes nothing twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence

from skillsd.core import limits
from skillsd.core.install.fs_skill_digest import (
    FileChanges,
    TreeTooLarge,
    compare_files,
    digest_of_files,
    file_digests,
    list_files,
)
from skillsd_protocol import SkillMetadata

__all__ = ["copies_of", "drift", "folder_files"]

#: Folders whose file digests are remembered (the least recently used one goes first).
_REMEMBERED = 2048
_Signature = tuple[tuple[str, int, int], ...]
_files: OrderedDict[str, tuple[_Signature, dict[str, str]]] = OrderedDict()


def folder_files(folder: str) -> dict[str, str] | None:
    """Relative path -> SHA-256 of every file of ``folder``, or None when it cannot be read or
    is larger than an installed skill may be."""
    try:
        listed = list_files(
            folder, max_files=limits.INSTALL_MAX_FILES, max_bytes=limits.INSTALL_MAX_BYTES
        )
        signature = tuple(sorted((f.rel, f.size, f.mtime_ns) for f in listed))
        remembered = _files.get(folder)
        if remembered is not None and remembered[0] == signature:
            _files.move_to_end(folder)
            return remembered[1]
        files = file_digests(folder, listed=listed)
    except (OSError, TreeTooLarge):
        return None
    _files[folder] = (signature, files)
    if len(_files) > _REMEMBERED:
        _files.popitem(last=False)
    return files


def copies_of(groups: Iterable[Sequence[SkillMetadata]]) -> dict[str, str]:
    """Skill id -> the id of the skill it is an identical copy of, over groups of skills that
    share a name (each group in catalog order)."""
    copies: dict[str, str] = {}
    for group in groups:
        first_of: dict[str, str] = {}
        for skill in group:
            files = folder_files(skill.dir)
            if files is None:
                continue
            digest = digest_of_files(files)
            original = first_of.setdefault(digest, skill.id)
            if original != skill.id:
                copies[skill.id] = original
    return copies


def drift(a: SkillMetadata, b: SkillMetadata) -> FileChanges | None:
    """The files that differ between two skills of one name (None when either is unreadable)."""
    before, after = folder_files(a.dir), folder_files(b.dir)
    if before is None or after is None:
        return None
    return compare_files(before, after)
