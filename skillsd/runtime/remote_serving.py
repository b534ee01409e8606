"""What skillsd serves onward of a remote skill, over the MCP skills extension (``skills/list``,
``skills/get``, ``resources/directory/read``): what the remote itself lists, file by file, with
its sizes and digests and its frontmatter, never what the skill's cached folder holds now.

Until a remote skill is loaded its folder holds a ``SKILL.md`` written from the listing entry
(no prefetch); serving that file's digest would have every host that verifies refuse the real
content. The remote's own values are the ones the verified files have, and a read fetches and
verifies them first (:meth:`skillsd.runtime.remote_skills.RemoteSkills.ready`), so what a host
is told and what it then reads agree. Both functions read the cached listing (no network);
run them off the event loop.
"""

from __future__ import annotations

from typing import Any

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.core.remote.remote_wire import RemoteEntry
from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd.runtime.gates import gate_model_read
from skillsd.runtime.remote_store import RemoteStore
from skillsd.runtime.request_view import RequestView
from skillsd_protocol import Diagnostic, SkillMetadata
from skillsd_protocol.errors import InvalidSkillData

__all__ = ["ListedFile", "remote_contents", "remote_file_names"]

#: One file as the remote lists it: its path, size and SHA-256 (hex, no prefix).
ListedFile = tuple[str, int, str]


def remote_contents(
    store: RemoteStore, view: RequestView, skill: SkillMetadata
) -> tuple[dict[str, Any], list[ListedFile] | None]:
    """``skill``'s listing entry as its remote gave it, gated like a model read: its
    frontmatter, and its files with their sizes and digests (``"dynamic"``, None, when the
    remote lists none or more than skillsd lists of any skill)."""
    gate_model_read(view, skill)
    entry = _listed(store, skill)
    files: list[ListedFile] | None = None
    if (
        entry.files is not None
        and len(entry.files) <= limits.MAX_MANIFEST_FILES
        and sum(f.size for f in entry.files) <= limits.MAX_MANIFEST_BYTES
    ):
        ordered = sorted(entry.files, key=lambda f: f.path != SKILL_FILE)  # SKILL.md first
        files = [(f.path, f.size, f.digest.removeprefix("sha256:")) for f in ordered]
    return dict(entry.frontmatter), files


def remote_file_names(
    store: RemoteStore, view: RequestView, skill: SkillMetadata
) -> list[str] | None:
    """The files ``skill``'s remote lists (``SKILL.md`` first), gated like a model read; None
    for a remote that lists none (``"dynamic"``): then those of the skill's folder count."""
    gate_model_read(view, skill)
    entry = _listed(store, skill)
    if entry.files is None:
        return None
    names = [f.path for f in entry.files if f.path != SKILL_FILE]
    return [SKILL_FILE, *names]


def _listed(store: RemoteStore, skill: SkillMetadata) -> RemoteEntry:
    assert skill.remote is not None
    entry = store.listed_entry(skill.remote.name, skill.remote.url, skill.name)
    if entry is None:
        # The listing changed under the catalog (the skill is gone, or the remote's URL
        # changed): nothing verified can be said of it until the catalog catches up.
        label = skill.qualified_name or skill.name
        message = f"remote skill {label}: not in the last listing of {skill.remote.url}"
        note = Diagnostic(severity="error", code="remote.unlisted", message=message)
        raise SkillsdError(message, InvalidSkillData(path=skill.path, diagnostics=[note]))
    return entry
