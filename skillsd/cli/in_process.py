"""The runtime in this process, for one CLI command.

A command runs the same use case a daemon runs (:mod:`skillsd.runtime.use_cases`), over
services built for one command: no watching, each catalog built once, nothing gated (the user
acts directly: docs/permissions.md). ``--json`` therefore prints exactly the Struct the same
method returns.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.display_text import escape_controls
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.runtime.caller import Caller, view_for
from skillsd.runtime.remote_skills import refresh_due
from skillsd.runtime.services import Services, View

__all__ = ["catalog_in", "catalog_options", "command_cwd", "run_in_process", "view_of"]

_T = TypeVar("_T")


def catalog_options(p: argparse.ArgumentParser) -> None:
    """``--cwd``, ``--extra-root`` and ``--json``: what every catalog command takes."""
    p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def command_cwd(args: argparse.Namespace) -> str:
    """The real directory of ``--cwd`` (default: the process cwd)."""
    given = getattr(args, "cwd", None)
    cwd = os.path.realpath(given or os.getcwd())
    if not os.path.isdir(cwd):
        raise SkillsdError(f"--cwd {given}: not a directory", InvalidParamsData(field="cwd"))
    return cwd


def run_in_process(
    args: argparse.Namespace,
    body: Callable[[Services, Caller], Coroutine[Any, Any, _T]],
    *,
    warn: bool = True,
) -> _T:
    """``body`` on an event loop of its own, with the services of one command for ``--cwd``
    and the caller holding ``--extra-root``s. A config typo is ignored, but the user should
    hear of it wherever they are: it is printed on stderr (``warn``; a config that cannot be
    used at all is the use case's to refuse or report)."""
    svc = Services.create(cwd=command_cwd(args), for_one_command=True)
    if warn:
        _warn_unknown_keys(svc)
    _refresh_remotes(svc)
    caller = Caller(extra_roots=tuple(getattr(args, "extra_root", None) or ()))
    try:
        return asyncio.run(body(svc, caller))
    finally:
        svc.catalogs.close()


def _warn_unknown_keys(svc: Services) -> None:
    try:
        config, _root = svc.config_for(None, None)
    except SkillsdError:
        return
    for path, warning in config.unknown_keys:
        shown = f"{escape_controls(path)}: {escape_controls(warning)}"
        print(f"skillsd: warning: {shown}", file=sys.stderr)


def _refresh_remotes(svc: Services) -> None:
    """Remote listings past their ttl asked for before the catalog is built (no daemon
    refreshes them for a lone command); a remote that does not answer is warned of on stderr
    and keeps its last listing, stale."""
    try:
        config, root = svc.config_for(None, None)
    except SkillsdError:
        return
    for name, error in refresh_due(svc.remotes.store, config, svc.is_trusted(root)):
        print(f"skillsd: warning: remote {name!r}: {escape_controls(error)}", file=sys.stderr)


async def view_of(svc: Services, caller: Caller) -> View:
    """What the command's requests see (the catalog is built once: later use cases share it)."""
    return await view_for(svc, caller, None, None)


def catalog_in(cwd: str) -> Catalog:
    """The catalog of ``cwd`` (a real directory) as the user sees it, built once."""
    svc = Services.create(cwd=cwd, for_one_command=True)
    _refresh_remotes(svc)
    try:
        return asyncio.run(view_of(svc, Caller())).catalog
    finally:
        svc.catalogs.close()
