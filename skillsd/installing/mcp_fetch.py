"""Fetching one skill of a skills server (``mcp+https://host/mcp#<skill>``) for an install: the
server's listing entry, then ``SKILL.md`` and every listed file, each verified (size, digest,
frontmatter) before the next is read; a skill that fails is refused, nothing of it written.

The bearer token is the ``tokenFile`` of the user's ``[[remote]]`` whose ``url`` is the
server's (docs/remote.md); a server no remote names is asked without one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from skillsd.core.errors import SkillsdError
from skillsd.core.fs.atomic_files import atomic_write
from skillsd.core.policy.fs_effective_config import ConfigSource
from skillsd.core.remote.fs_token_file import read_token_file
from skillsd.core.remote.remote_wire import RemoteError
from skillsd.runtime.remote_http import RemoteClient
from skillsd.runtime.remote_load import load_skill

__all__ = ["McpFetchError", "fetch_mcp_skill"]

#: The whole of one fetch (listing and files), whatever the server's pace.
FETCH_SECONDS = 60.0


class McpFetchError(Exception):
    """The server could not be reached, or its skill failed verification."""


def _token(url: str, env: Mapping[str, str]) -> str | None:
    try:
        remotes = ConfigSource(env).user().remote
    except SkillsdError:
        return None
    remote = next((r for r in remotes if r.url == url and r.token_file), None)
    if remote is None or remote.token_file is None:
        return None
    path = os.path.expanduser(remote.token_file)
    token, why = read_token_file(path)
    if token is None:
        raise McpFetchError(f"remote {remote.name!r}: tokenFile {path}: {why}")
    return token


def fetch_mcp_skill(url: str, skill: str, folder: str, env: Mapping[str, str]) -> None:
    """Write ``skill``'s verified files into ``folder`` (which must not exist yet)."""
    try:
        with RemoteClient(url, token=_token(url, env), timeout=FETCH_SECONDS) as client:
            listing = client.list_skills()
            entry = next((e for e in listing.entries if e.name == skill), None)
            if entry is None:
                names = ", ".join(sorted(e.name for e in listing.entries)[:20]) or "none"
                raise McpFetchError(f"{url} lists no skill {skill!r} (it lists: {names})")
            outcome = load_skill(client, entry)
    except RemoteError as exc:
        raise McpFetchError(str(exc)) from None
    if outcome.refusal is not None:
        raise McpFetchError(f"{skill} refused: {outcome.refusal}")
    for file, data in outcome.verified:
        atomic_write(os.path.join(folder, *file.path.split("/")), data)
