"""The use cases of installing skills (``skills.install``, ``installed``, ``update``,
``remove``, ``restore``, ``scan``) for every face.

Each runs its blocking work (the ``git`` program, downloads, copies, digests) in the install
pool (``Services.install_pool``), not in the file reads' slots: a clone may rightly take
longer than a file read's time limit, and install work that hangs holds only the install
pool's slots (given back after ``limits.INSTALL_SECONDS``), never those other requests use.
Progress lines (clone, copy) go to the caller's ``$/progress``. The cwd is the param's, else
the daemon's.
"""

from __future__ import annotations

import os

from skillsd.installing import (
    InstallContext,
    install,
    installed,
    remove,
    restore,
    scan_path,
    update,
)
from skillsd.runtime.caller import NOBODY, Caller, view_for
from skillsd.runtime.request_view import resolve
from skillsd.runtime.services import Services
from skillsd_protocol.install import (
    InstalledParams,
    InstalledResult,
    InstallParams,
    InstallResult,
    RemoveParams,
    RemoveResult,
    RestoreParams,
    RestoreResult,
    ScanParams,
    ScanResult,
    UpdateParams,
    UpdateResult,
)

__all__ = [
    "install_skills",
    "installed_skills",
    "remove_skill",
    "restore_skills",
    "scan_skills",
    "update_skills",
]


def _context(svc: Services, cwd: str | None, caller: Caller) -> InstallContext:
    progress = caller.progress

    def say(line: str) -> None:
        if progress is not None:
            progress(line, None)

    return InstallContext(cwd=svc.request_cwd(cwd, None), env=svc.env, home=svc.home, progress=say)


async def install_skills(
    svc: Services, params: InstallParams, caller: Caller = NOBODY
) -> InstallResult:
    """``skills.install``."""
    return await svc.install_pool.run(install, params, _context(svc, params.cwd, caller))


async def installed_skills(
    svc: Services, params: InstalledParams, caller: Caller = NOBODY
) -> InstalledResult:
    """``skills.installed``."""
    return await svc.install_pool.run(installed, params, _context(svc, params.cwd, caller))


async def update_skills(
    svc: Services, params: UpdateParams, caller: Caller = NOBODY
) -> UpdateResult:
    """``skills.update``."""
    return await svc.install_pool.run(update, params, _context(svc, params.cwd, caller))


async def remove_skill(
    svc: Services, params: RemoveParams, caller: Caller = NOBODY
) -> RemoveResult:
    """``skills.remove``."""
    return await svc.install_pool.run(remove, params, _context(svc, params.cwd, caller))


async def restore_skills(
    svc: Services, params: RestoreParams, caller: Caller = NOBODY
) -> RestoreResult:
    """``skills.restore``."""
    return await svc.install_pool.run(restore, params, _context(svc, params.cwd, caller))


async def scan_skills(svc: Services, params: ScanParams, caller: Caller = NOBODY) -> ScanResult:
    """``skills.scan``: ``path`` (a folder, taken from the cwd) or a catalog skill."""
    if params.path is not None and params.id is None and params.name is None:
        folder = os.path.join(svc.request_cwd(params.cwd, None), params.path)
        return await svc.install_pool.run(scan_path, folder)
    view = await view_for(svc, caller, params.cwd, None)
    skill = resolve(view.seen.catalog, params, include_disabled=True)
    return await svc.install_pool.run(scan_path, skill.dir)
