"""Who asks (:class:`Caller`: the face describes itself) and what the request sees
(:func:`view_for`): the first step of every use case."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.listing.use_ledger import Kind, make_record
from skillsd.core.policy.permissions import (
    Check,
)
from skillsd.core.policy.sessions import Session
from skillsd.runtime.catalog_cache import Listener, Progress
from skillsd.runtime.request_view import (
    RequestView,
)
from skillsd.runtime.services import Services, View
from skillsd_protocol import SkillMetadata


@dataclass(frozen=True, slots=True)
class Caller:
    """What a use case needs to know about the face asking: roots its connection added, who
    hears about changes to the catalogs this request sees (the face decides which requests
    subscribe), where progress goes, and whether the host already asked its user (an MCP client
    approves each tool call itself, which answers ``ask``), and its name (the client's or
    agent's, for the use ledger)."""

    extra_roots: tuple[str, ...] = ()
    listener: Listener | None = None
    progress: Progress | None = None
    host_approves: bool = False
    client: str | None = None


NOBODY = Caller()


def bad_param(field: str, why: str) -> SkillsdError:
    """A bad parameter (each face prefixes the method it came with)."""
    return SkillsdError(f"`{field}`{why}", InvalidParamsData(field=field))


async def view_for(
    svc: Services,
    caller: Caller,
    cwd: str | None,
    session_id: str | None,
    *,
    extra_roots: tuple[str, ...] = (),
    force: bool = False,
) -> View:
    view = await svc.view(
        cwd=cwd,
        session_id=session_id,
        connection_roots=caller.extra_roots,
        extra_roots=extra_roots,
        force=force,
        listener=caller.listener,
        progress=caller.progress,
    )
    return model_view(view) if caller.host_approves else view


def note_uses(
    svc: Services, caller: Caller, view: View, kind: Kind, skills: Iterable[SkillMetadata]
) -> None:
    """Record uses (or suggestions) served in the use ledger (docs/usage.md); its writer
    thread does the writing, so this never waits on the disk."""
    ledger = svc.ledger
    if ledger is None:
        return
    session = view.session.id if view.session is not None else None
    now = time.time()
    root = view.catalog.repo_root
    # Built by the ledger's writer: formatting a record is no work for the loop.
    ledger.record(
        *(
            partial(make_record, kind, s, repo=root, at=now, client=caller.client, session=session)
            for s in skills
        )
    )


def model_view(view: View) -> View:
    """``view`` for a host that asked its user before calling: an ``ask`` counts as ``allow``
    (a ``deny`` still refuses)."""
    seen = view.seen
    check = seen.check
    if check is None:
        return view

    def approved(session: Session | None, tool: str, input: str | None) -> Check:
        result = check(session, tool, input)
        if result.decision == "ask":
            return Check("allow", result.layer, result.rule)
        return result

    return View(
        RequestView(seen.catalog, seen.session, approved, seen.trust, seen.is_trusted),
        view.entry,
    )
