"""Loading a skill for the model (progressive disclosure): read, render, remember.

Reload suppression lives here: a session that already received this exact version (same
``SKILL.md`` path and mtime) gets a short reminder instead of the body, unless ``force``.
"""

from __future__ import annotations

from skillsd.core.resources import list_skill_files, read_skill_file_content
from skillsd.core.sessions import Session
from skillsd.core.skill_render import render_reminder, render_skill
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import LoadFormat, LoadResult


def load_skill(
    session: Session | None, skill: SkillMetadata, *, force: bool, format: LoadFormat
) -> LoadResult:
    """Read, render and record one skill load (reload suppression by path + mtime)."""
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
    if session is not None:
        session.record_load(skill)
    return LoadResult(
        skill=skill,
        content=render_skill(skill, content.text, content.body, files, format=format),
        body=content.body,
        base_dir=skill.dir,
        files=files,
        already_loaded=False,
    )
