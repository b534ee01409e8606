"""Workspace trust (docs/permissions.md): whether the user trusts a repository root. Pure.

A repository the user cloned brings skills and a project config; until its root is trusted the
policy withholds what they grant (see :mod:`skillsd.core.policy.permissions`). A root's trust comes
from, first match wins: the user's decision in the state file (``trust.set``, ``skillsd
trust``), then the user config's ``[trust] roots`` (paths or globs, ``~`` expanded), then its
``[trust] default``. A project config's own ``[trust]`` table is never read: a repository
cannot vouch for itself.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import msgspec

__all__ = ["TrustConfig", "TrustSource", "TrustState", "resolve_trust", "root_pattern_matches"]

TrustSource = Literal["state", "config", "default"]

_GLOB_CHARS = frozenset("*?[")


class TrustConfig(
    msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True, kw_only=True
):
    """The user config's ``[trust]`` table as written."""

    default: Literal["untrusted", "trusted"] = "untrusted"
    roots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TrustState:
    """A root's trust and where it comes from."""

    root: str
    trusted: bool
    source: TrustSource


def resolve_trust(
    root: str, decisions: Mapping[str, bool], config: TrustConfig, *, home: str
) -> TrustState:
    """The trust of the repository ``root`` (a real path): the state file's ``decisions``
    (root -> trusted), else the config's ``roots``, else its ``default``."""
    decided = decisions.get(root)
    if decided is not None:
        return TrustState(root, decided, "state")
    if any(root_pattern_matches(root, pattern, home=home) for pattern in config.roots):
        return TrustState(root, True, "config")
    return TrustState(root, config.default == "trusted", "default")


def root_pattern_matches(root: str, pattern: str, *, home: str) -> bool:
    """Does a ``[trust] roots`` entry cover ``root``? A plain path names that directory; a glob
    (``*``, ``?``, ``[...]``; ``*`` also spans ``/``) is matched against the whole root path.
    The part before the first glob is resolved like the root was (symlinks, ``~``)."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = home + pattern[1:]
    if not os.path.isabs(pattern):
        return False  # relative to what? The config documents absolute paths and `~`.
    parts = pattern.split(os.sep)
    first_glob = next((i for i, p in enumerate(parts) if _GLOB_CHARS & set(p)), len(parts))
    base = os.path.realpath(os.sep.join(parts[:first_glob]) or os.sep)
    if first_glob == len(parts):
        return root == base
    rest = os.sep.join(parts[first_glob:])
    return fnmatch.fnmatchcase(root, os.path.join(base, rest))
