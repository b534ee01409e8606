"""``usage.report``: the use ledger's report of a cwd's repository (docs/usage.md)."""

from __future__ import annotations

from skillsd.runtime.caller import NOBODY, Caller
from skillsd.runtime.services import Services
from skillsd.runtime.usage_report import report
from skillsd_protocol.messages import UsageParams, UsageResult

__all__ = ["usage_report"]

#: How long a report waits for the ledger's writer to catch up.
_FLUSH_SECONDS = 5.0


async def usage_report(svc: Services, params: UsageParams, caller: Caller = NOBODY) -> UsageResult:
    """``usage.report``: the catalog of ``cwd`` (for the skills never used) and the report of
    its repository, read in a file-operation thread."""
    view = await svc.view(cwd=params.cwd, session_id=None, connection_roots=caller.extra_roots)
    config = svc.catalogs.configs.user()
    ledger = svc.ledger
    if ledger is not None:
        # What was served before this request is in its report (the writer is a thread).
        await svc.file_ops.run(ledger.flush, _FLUSH_SECONDS)
    return await svc.file_ops.run(
        report,
        view.catalog.repo_root,
        view.catalog.skills,
        since=params.since,
        ledger=config.ledger,
        state_path=svc.state.path,
        home=svc.home,
        env=svc.env,
    )
