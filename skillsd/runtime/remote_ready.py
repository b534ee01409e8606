"""A remote skill's verified files in place before a use case reads it (docs/remote.md):
the step ``skills.load``, ``skills.readFile``, ``skills.invoke`` and the model's load and read
tools take first."""

from __future__ import annotations

from skillsd.core.errors import SkillsdError
from skillsd.runtime.gates import gate_load
from skillsd.runtime.request_view import resolve
from skillsd.runtime.services import Services, View
from skillsd_protocol.messages import RefParams

__all__ = ["remote_ready"]


async def remote_ready(
    svc: Services, view: View, ref: RefParams, *, deny_only: bool = False
) -> None:
    """Fetch and verify the remote skill ``ref`` names (nothing for a local one); a skill that
    does not resolve is left to the use case to refuse. ``deny_only``: the use case lets an
    ``ask`` through (a read or an invocation the user makes), so the fetch must too: what it
    reads is never the folder's placeholder."""
    if not view.catalog.plan.remote_roots:
        return
    try:
        skill = resolve(view.catalog, ref, include_disabled=True)
    except SkillsdError:
        return
    if skill.remote is None:
        return
    # Nothing is fetched for a load the policy would not let through (not even to ask).
    loaded = view.session is not None and skill.path in view.session.loaded
    lenient = deny_only or loaded
    if await svc.file_ops.run(gate_load, view.seen, skill.name, deny_only=lenient):
        return
    await svc.remotes.ready(skill, view.catalog.config, view.seen.trusted)
