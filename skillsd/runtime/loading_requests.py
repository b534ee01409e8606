"""Loading and reading skills: ``skills.load``, ``skills.unload``, ``skills.readFile`` and what
the model may read without loading (the MCP skills extension's contents and file lists).

Reading runs off the loop; what the session remembers is recorded back on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.bounded_read import sha256_of_file
from skillsd.core.skill.fs_loading import load_skill, record_load
from skillsd.core.skill.fs_resources import list_skill_files, read_resource
from skillsd.core.skill.fs_skillfile import (
    SKILL_FILE,
    written_frontmatter,
)
from skillsd.runtime.caller import NOBODY, Caller, note_uses, view_for
from skillsd.runtime.gates import gate_load, gate_model_read
from skillsd.runtime.remote_ready import remote_ready
from skillsd.runtime.remote_serving import remote_contents, remote_file_names
from skillsd.runtime.request_view import (
    RequestView,
    resolve,
)
from skillsd.runtime.services import Services, View
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    LoadParams,
    LoadResult,
    ReadFileParams,
    ReadFileResult,
    UnloadParams,
    UnloadResult,
)


async def load(svc: Services, params: LoadParams, caller: Caller = NOBODY) -> LoadResult:
    """``skills.load``: gate, read off the loop, then remember in the session."""
    view = await view_for(svc, caller, params.cwd, params.session_id)
    await remote_ready(svc, view, params)
    loaded = await svc.file_ops.run(read_and_render, view.seen, params)
    record_load(view.session, loaded, view.catalog)
    note_uses(svc, caller, view, "load", [loaded.skill])
    return loaded


async def unload(svc: Services, params: UnloadParams, caller: Caller = NOBODY) -> UnloadResult:
    view = await view_for(svc, caller, params.cwd, params.session_id)
    assert view.session is not None  # session_id is required by the params type
    skill = resolve(view.catalog, params, include_disabled=True)
    unloaded, revoked = view.session.unload(skill)
    return UnloadResult(unloaded=unloaded, revoked_rules=revoked)


async def read_file(
    svc: Services,
    params: ReadFileParams,
    caller: Caller = NOBODY,
    *,
    model: bool = False,
    seen: View | None = None,
) -> ReadFileResult:
    """``skills.readFile``, or (``model``) a read on the model's behalf, which obeys the
    model's rules: a skill the model may not invoke is refused. ``seen``: the view this
    request took already for ``caller``, ``params.cwd`` and ``params.session_id``."""
    view = seen if seen is not None else await view_for(svc, caller, params.cwd, params.session_id)
    await remote_ready(svc, view, params, deny_only=not model)
    window = await svc.file_ops.run(read_window, view.seen, params, model=model)
    if model and params.offset == 0 and window.file == SKILL_FILE:
        # A host reading a skill's SKILL.md for its model (an MCP resource) is loading it.
        note_uses(svc, caller, view, "load", [resolve(view.catalog, params)])
    return window


async def skill_contents(
    svc: Services,
    cwd: str,
    session_id: str | None,
    skills: list[SkillMetadata],
    caller: Caller = NOBODY,
    *,
    strict: bool = False,
) -> list[SkillContents]:
    """Each skill's frontmatter and file digests, gated like a model read: a refused skill is
    left out of a listing, or (``strict``) refuses the request."""
    view = await view_for(svc, caller, cwd, session_id)

    def gather() -> list[SkillContents]:
        found = []
        for skill in skills:
            try:
                if skill.remote is not None:  # what its remote lists, loaded or not
                    found.append(served_remote_contents(svc, view.seen, skill))
                else:
                    found.append(contents_of(view.seen, skill))
            except SkillsdError:
                if strict:
                    raise
        return found

    return await svc.file_ops.run(gather)


async def skill_files(
    svc: Services,
    cwd: str,
    session_id: str | None,
    skill: SkillMetadata,
    caller: Caller = NOBODY,
) -> list[str]:
    """The files of ``skill`` (``SKILL.md`` first), gated like a model read."""
    view = await view_for(svc, caller, cwd, session_id)
    if skill.remote is not None:
        listed = await svc.file_ops.run(remote_file_names, svc.remotes.store, view.seen, skill)
        if listed is not None:
            return listed
    return await svc.file_ops.run(file_names, view.seen, skill)


# -- the steps, run off the loop -----------------------------------------------------


def read_and_render(view: RequestView, params: LoadParams) -> LoadResult:
    """``skills.load``: resolve, gate, then read and render (or the reload reminder).

    Reads files; records nothing in the session (give the result to :func:`record_load`)."""
    skill = resolve(view.catalog, params)
    refusal = gate_load(view, skill.name)
    if refusal is not None:
        raise refusal
    loaded = load_skill(view.session, skill, force=params.force, format=params.format or "codelia")
    withheld = view.withheld_grants(skill)
    if withheld:
        loaded.withheld_grants = withheld
    return loaded


def read_window(
    view: RequestView, params: ReadFileParams, *, model: bool = False
) -> ReadFileResult:
    """``skills.readFile``: a window of one file inside the skill's directory, checked like a
    load of the skill (a deny refuses it); for the ``model``, as :func:`gate_model_read`
    says."""
    skill = resolve(view.catalog, params)
    if model:
        gate_model_read(view, skill)
    else:
        refusal = gate_load(view, skill.name, action="reading", deny_only=True)
        if refusal is not None:
            raise refusal
    return read_resource(skill.dir, params.file, offset=params.offset, length=params.length)


@dataclass(frozen=True, slots=True)
class FileDigest:
    """One file of a skill as the MCP skills extension lists it."""

    file: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class SkillContents:
    """A skill's frontmatter as written (all strings) and its files with their digests, or
    None past the listing bounds (the client then reads the directory as it goes)."""

    skill: SkillMetadata
    frontmatter: dict[str, Any]
    files: list[FileDigest] | None


def served_remote_contents(svc: Services, view: RequestView, skill: SkillMetadata) -> SkillContents:
    """A remote skill's contents as its remote lists them
    (:mod:`~skillsd.runtime.remote_serving`), never its folder's placeholder. Reads the cached
    listing."""
    frontmatter, files = remote_contents(svc.remotes.store, view, skill)
    listed = None if files is None else [FileDigest(*file) for file in files]
    return SkillContents(skill, frontmatter, listed)


def file_names(view: RequestView, skill: SkillMetadata) -> list[str]:
    """Every file of ``skill``, ``SKILL.md`` first, gated like a model read. Reads a folder."""
    gate_model_read(view, skill)
    return [SKILL_FILE, *list_skill_files(skill.dir)]


def contents_of(view: RequestView, skill: SkillMetadata) -> SkillContents:
    """What the model may know of ``skill`` without loading it: gated like a model read (see
    :func:`gate_model_read`). Reads files."""
    gate_model_read(view, skill)
    names = [SKILL_FILE, *list_skill_files(skill.dir, max_files=limits.MAX_MANIFEST_FILES + 1)]
    files: list[FileDigest] | None = []
    total = 0
    for name in names:
        if len(names) > limits.MAX_MANIFEST_FILES:
            files = None
            break
        try:
            got = sha256_of_file(f"{skill.dir}/{name}", limits.MAX_MANIFEST_BYTES - total)
        except (OSError, ValueError):
            continue  # gone or not a regular file since it was listed
        if got is None:
            files = None
            break
        sha256, size = got
        total += size
        assert files is not None
        files.append(FileDigest(name, size, sha256))
    return SkillContents(skill, written_frontmatter(skill.path), files)
