"""Rendering one loaded skill for the model (``skills.load``), and its reload reminder.

Three formats: ``codelia`` (default), ``spec`` (the Agent Skills client guide) and ``markdown``. The
SKILL.md text is inserted verbatim: it is the instructions the model is meant to read, and escaping
it would garble code samples. Attribute values and listed paths are XML-escaped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final
from urllib.parse import quote

from skillsd.core.catalog.catalog_prompt import xml_attr, xml_text
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import LoadFormat

__all__ = ["DEFAULT_LOAD_FORMAT", "dir_uri", "render_reminder", "render_skill"]

DEFAULT_LOAD_FORMAT: Final[LoadFormat] = "codelia"

_RELATIVE_NOTE = "Relative paths in this skill are resolved from this directory."


def dir_uri(directory: str) -> str:
    """``file://`` URI of a directory, percent-encoded (UTF-8), with a trailing ``/``."""
    encoded = quote(os.fsencode(os.path.abspath(directory)), safe="/")
    return "file://" + encoded.rstrip("/") + "/"


def _has(files: Sequence[str], folder: str, counted: int) -> str:
    # The listing is capped, so the catalog's counts are consulted too.
    return "yes" if counted > 0 or any(f.startswith(folder + "/") for f in files) else "no"


def render_skill(
    skill: SkillMetadata,
    text: str,
    body: str,
    files: Sequence[str],
    *,
    format: LoadFormat = DEFAULT_LOAD_FORMAT,
) -> str:
    """The model-facing content of a loaded skill.

    ``text`` is the whole SKILL.md, ``body`` the part after the frontmatter, ``files`` the
    listing from :func:`skillsd.core.skill.fs_resources.list_skill_files` (relative POSIX paths).
    """
    if format == "codelia":
        listed = "".join(f"<file>{xml_text(os.path.join(skill.dir, f))}</file>\n" for f in files)
        return (
            f'<skill_context name="{xml_attr(skill.name)}" path="{xml_attr(skill.path)}">\n'
            f"{text.rstrip()}\n\n"
            f"Base directory: {dir_uri(skill.dir)}\n"
            f"{_RELATIVE_NOTE}\n"
            f"<skill_files>\n{listed}</skill_files>\n"
            "</skill_context>"
        )
    if format == "spec":
        listed = "".join(f"  <file>{xml_text(f)}</file>\n" for f in files)
        return (
            f'<skill_content name="{xml_attr(skill.name)}">\n'
            f"{body.strip()}\n\n"
            f"Skill directory: {xml_text(skill.dir)}\n"
            "Relative paths in this skill are relative to the skill directory.\n\n"
            f"<skill_resources>\n{listed}</skill_resources>\n"
            "</skill_content>"
        )
    if format == "markdown":
        res = skill.resources
        return (
            f"# Skill Activated: {skill.name}\n\n"
            f"{body.strip()}\n\n"
            "## Available Resources\n"
            f"- Scripts: {_has(files, 'scripts', res.scripts)}\n"
            f"- References: {_has(files, 'references', res.references)}\n"
            f"- Assets: {_has(files, 'assets', res.assets)}"
        )
    raise ValueError(f"unknown load format {format!r}")


def render_reminder(skill: SkillMetadata, *, format: LoadFormat = DEFAULT_LOAD_FORMAT) -> str:
    """The short text sent instead of the body when the same unchanged skill is loaded again."""
    sentence = (
        f'The skill "{skill.name}" is already loaded in this conversation and has not changed '
        "since; follow the instructions given earlier instead of loading it again."
    )
    if format == "codelia":
        return (
            f'<skill_context_reminder name="{xml_attr(skill.name)}" '
            f'path="{xml_attr(skill.path)}">\n'
            f"{xml_text(sentence)}\n"
            f"Base directory: {dir_uri(skill.dir)}\n"
            "</skill_context_reminder>"
        )
    if format == "spec":
        return (
            f'<skill_content_reminder name="{xml_attr(skill.name)}">\n'
            f"{xml_text(sentence)}\n"
            f"Skill directory: {xml_text(skill.dir)}\n"
            "</skill_content_reminder>"
        )
    if format == "markdown":
        return f"# Skill Already Active: {skill.name}\n\n{sentence}"
    raise ValueError(f"unknown load format {format!r}")
