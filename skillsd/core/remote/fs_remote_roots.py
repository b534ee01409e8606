"""The configured remotes as catalog roots (scope ``remote``, docs/remote.md).

Each remote's skills live in ``<cache>/remotes/<remote>/skills/<skill>/``: a skill listed but never
loaded is a ``SKILL.md`` written from its listing entry alone (the frontmatter the server
listed, and a body saying it is fetched on first use: nothing was read from the server), and a
loaded one holds its verified files. Discovery reads these folders like any other root, so a
remote skill is listed, searched and suggested like any other; a load first fetches and verifies
it (:mod:`skillsd.runtime.remote_skills`).

The remotes are the user's ``[[remote]]`` entries, and a trusted repository's; a remote's skills
grant no tools unless the user marked the remote ``trusted = true``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import msgspec
import platformdirs
import yaml

from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.policy.config import Config, RemoteConfig
from skillsd_protocol import Diagnostic, RemoteInfo, SkillMetadata

__all__ = [
    "STALE_MARK",
    "STUB_MARK",
    "remote_cache_dir",
    "remote_grants_withheld",
    "remote_skills_dir",
    "remote_stale_note",
    "remotes_in_effect",
    "stub_skill_file",
    "with_remote_roots",
]

#: A file in a remote's skills folder while its last refresh failed (the folder is watched, so
#: the catalog hears when the remote goes stale or comes back).
STALE_MARK = ".stale"
#: The first body line of a listed, not yet loaded, remote skill's ``SKILL.md``.
STUB_MARK = "<!-- skillsd: remote skill, fetched and verified when loaded -->"


def remote_cache_dir() -> str:
    """``<cache>/remotes``: where every remote's listing, files and skills are kept."""
    return os.path.join(platformdirs.user_cache_dir("skillsd"), "remotes")


def remote_skills_dir(remote: str, cache_dir: str | None = None) -> str:
    return os.path.join(cache_dir or remote_cache_dir(), remote, "skills")


def remotes_in_effect(config: Config, trusted: bool) -> tuple[RemoteConfig, ...]:
    """The user's remotes, then a trusted repository's (a name the user has is the user's)."""
    if not trusted or not config.project_remotes:
        return config.remote
    mine = {r.name for r in config.remote}
    return (*config.remote, *(r for r in config.project_remotes if r.name not in mine))


def with_remote_roots(plan: RootPlan, config: Config, trusted: bool) -> RootPlan:
    """``plan`` with a root per remote in effect."""
    roots = tuple(
        Root(
            remote_skills_dir(r.name),
            "remote",
            remote=RemoteInfo(name=r.name, url=r.url),
            remote_trusted=r.trusted,
            remote_stale=os.path.exists(os.path.join(remote_skills_dir(r.name), STALE_MARK)),
            from_project=r not in config.remote,
        )
        for r in remotes_in_effect(config, trusted)
    )
    return plan if roots == plan.remote_roots else replace(plan, remote_roots=roots)


def remote_grants_withheld(skill: SkillMetadata) -> SkillMetadata:
    """``skill`` (from a remote the user has not marked trusted) with its ``allowed-tools``
    kept out of every grant, and a note saying so."""
    assert skill.remote is not None
    note = Diagnostic(
        severity="info",
        code="remote.grants_withheld",
        message=(
            f"allowed-tools grant nothing: the remote {skill.remote.name!r} is not marked "
            "trusted = true in your config"
        ),
        field="allowed-tools",
    )
    return msgspec.structs.replace(
        skill, allowed_tools=None, diagnostics=[*skill.diagnostics, note]
    )


def remote_stale_note(skill: SkillMetadata) -> SkillMetadata:
    """``skill`` marked as its remote's last verified listing (the remote did not answer)."""
    assert skill.remote is not None
    note = Diagnostic(
        severity="warning",
        code="remote.stale",
        message=(
            f"stale: the remote {skill.remote.name!r} did not answer its last refresh; this is "
            "its last verified listing"
        ),
    )
    return msgspec.structs.replace(skill, diagnostics=[*skill.diagnostics, note])


def stub_skill_file(frontmatter: dict[str, Any], remote: str) -> bytes:
    """The ``SKILL.md`` of a listed remote skill not loaded yet: its listed frontmatter, and a
    body that says where it comes from (never shown as its content: a load fetches it first)."""
    text = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=1 << 16)
    body = (
        f"{STUB_MARK}\n\nThis skill is served by the remote {remote!r}; skillsd fetches and "
        "verifies it when it is loaded.\n"
    )
    return f"---\n{text}---\n\n{body}".encode()
