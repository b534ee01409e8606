"""Loading a skill for the model (progressive disclosure): read and render, then remember.

Reload suppression lives here: a session that already received this exact version (same
``SKILL.md`` path and mtime) gets a short reminder instead of the body, unless ``force``.
Reading and remembering are two steps so a daemon can read in a worker thread and change the
session on its event loop.
"""

from __future__ import annotations

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.policy.sessions import Session
from skillsd.core.skill.fs_resources import list_skill_files, read_skill_file_content
from skillsd.core.skill.skill_render import render_reminder, render_skill
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import LoadFormat, LoadResult

__all__ = ["load_skill", "record_load"]


def load_skill(
    session: Session | None, skill: SkillMetadata, *, force: bool, format: LoadFormat
) -> LoadResult:
    """Read and render one skill, or the reminder when ``session`` already has this version.

    Nothing is recorded: pass the result to :func:`record_load` for that."""
    if session is not None and not force and session.is_current(skill):
        return LoadResult(
            skill=skill,
            content=render_reminder(skill, format=format),
            body="",
            base_dir=skill.dir,
            files=[],
            already_loaded=True,
        )
    content = read_skill_file_content(skill.path)
    files = list_skill_files(skill.dir)
    return LoadResult(
        skill=skill,
        content=render_skill(skill, content.text, content.body, files, format=format),
        body=content.body,
        base_dir=skill.dir,
        files=files,
        already_loaded=False,
    )


def record_load(session: Session | None, loaded: LoadResult, catalog: Catalog) -> None:
    """Remember in ``session`` that the skill was sent (and take its grants, bound to the
    repository's trust when the catalog says they need it); a reminder, or no session, records
    nothing."""
    if session is not None and not loaded.already_loaded:
        skill = loaded.skill
        trust_root = catalog.repo_root if catalog.grants_need_trust(skill) else None
        session.record_load(skill, trust_root)
