"""Copying one skill folder out of a fetched tree into staging, within the install limits.

The copy goes through the filesystem boundary (:func:`skillsd.core.fs.fs_boundary.copy_tree`):
only folders and regular files are written, ``.git`` is left out, nothing is followed. A
symbolic link anywhere in the skill refuses the install (``path_not_allowed`` naming it): a
link's target is not the skill's content, and the digest leaves links out, so a link could
carry what no lock entry records. Files keep only their execute bits (0755 or 0644).
"""

from __future__ import annotations

from typing import Literal

from skillsd.core.errors import SkillsdError
from skillsd.core.fs.fs_boundary import TreeLimit, copy_tree
from skillsd_protocol.errors import PathNotAllowedData, TooLargeData

__all__ = ["copy_skill"]


def copy_skill(
    src: str,
    dest: str,
    *,
    max_files: int,
    max_bytes: int,
    links: Literal["refuse", "skip"] = "refuse",
) -> None:
    """Copy the skill folder ``src`` to the new folder ``dest``; raises ``too_large`` past a
    limit (files, bytes, 64 folders deep) and ``path_not_allowed`` for a link (with
    ``links="skip"``, links are left out instead: a restore's copy of an installed skill)."""
    try:
        copy_tree(src, dest, links=links, max_files=max_files, max_bytes=max_bytes)
    except TreeLimit as exc:
        if exc.kind == "link":
            raise SkillsdError(str(exc), PathNotAllowedData(file=exc.rel)) from None
        raise SkillsdError(str(exc), TooLargeData(path=src, limit=exc.limit)) from None
