"""Loading one remote skill as a host does when the skill is used: ``SKILL.md`` first, then every
other file its listing entry names, each read and verified
(:mod:`skillsd.core.remote.remote_verify`) before the next is asked for, stopping at the first that
fails. Nothing is read before a load (no prefetch). Blocking: run it in a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from skillsd.core.remote.remote_verify import Refusal, verify_file, verify_frontmatter
from skillsd.core.remote.remote_wire import RemoteCallFailed, RemoteEntry, RemoteFile
from skillsd.runtime.remote_http import RemoteClient

__all__ = ["LoadOutcome", "load_skill"]


@dataclass
class LoadOutcome:
    """The files verified, in the order read, and the refusal that stopped the load, if any."""

    entry: RemoteEntry
    verified: list[tuple[RemoteFile, bytes]] = field(default_factory=list)
    refusal: Refusal | None = None


def load_skill(
    client: RemoteClient,
    entry: RemoteEntry,
    *,
    every_file: bool = True,
    cached: Callable[[RemoteFile], bytes | None] | None = None,
    on_verified: Callable[[RemoteFile, bytes], None] | None = None,
) -> LoadOutcome:
    """Read and verify ``entry``'s files (``SKILL.md`` alone unless ``every_file``). A file
    ``cached`` already holds by its digest is not read again (it was verified when stored).

    Raises :class:`~skillsd.core.remote.remote_wire.RemoteError` when the server cannot be talked
    to; a file the server will not give, or that fails verification, is a refusal."""
    outcome = LoadOutcome(entry)
    if entry.files is None:  # "dynamic": nothing to pin, the frontmatter is still checked
        skill_file = RemoteFile(entry.uri, "SKILL.md", "", -1)
        text = client.read(entry.uri)
        outcome.refusal = verify_frontmatter(entry, text)
        if outcome.refusal is None:
            outcome.verified.append((skill_file, text))
        return outcome
    first = entry.skill_file
    if first is None:
        outcome.refusal = Refusal("listing", "SKILL.md", "the listing entry names no SKILL.md")
        return outcome
    rest = [f for f in entry.files if f is not first] if every_file else []
    for file in [first, *rest]:
        data = cached(file) if cached is not None else None
        fresh = data is None or verify_file(file, data) is not None
        if fresh:
            try:
                data = client.read(file.uri)
            except RemoteCallFailed as exc:  # the server answered, and not with the file
                outcome.refusal = Refusal("read", file.path, str(exc))
                return outcome
        assert data is not None
        refusal = verify_file(file, data)
        if refusal is None and file is first:
            refusal = verify_frontmatter(entry, data)
        if refusal is not None:
            outcome.refusal = refusal
            return outcome
        if fresh and on_verified is not None:
            on_verified(file, data)
        outcome.verified.append((file, data))
    return outcome
