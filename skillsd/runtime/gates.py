"""The gates of the ``skill_load`` decision, written once: a load (and what counts as one: an
invocation, a persona's skills, a read of a skill's files) and a read on the model's behalf."""

from __future__ import annotations

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.permissions import (
    SKILL_LOAD,
    skill_load_rule,
)
from skillsd.runtime.request_view import (
    RequestView,
)
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import (
    NotModelInvocableData,
    PermissionDeniedData,
    PermissionRequiredData,
)


def gate_load(
    view: RequestView,
    name: str,
    *,
    agent: str | None = None,
    action: str = "loading",
    deny_only: bool = False,
) -> SkillsdError | None:
    """Loading is the tool ``skill_load`` with the skill's (or command's) ``name`` as input
    (docs/permissions.md). The error for a decision that is not ``allow``, or None.

    For an ``agent``'s skill the agent file is the user's own configuration, so only a deny
    holds (with no session's memory): there is nobody to ask. ``action`` words the refusal
    ("reading" the skill's files, "invoking" it), and ``deny_only`` lets an ``ask`` through."""
    if view.check is None:
        return None
    session = None if agent is not None else view.session
    check = view.check(session, SKILL_LOAD, name)
    if check.decision == "allow" or ((agent is not None or deny_only) and check.decision != "deny"):
        return None
    if check.decision == "deny":
        why = f"the {check.layer} rule {check.rule!r}" if check.rule else "the default action"
        subject = f"{action} skill {name!r}"
        if agent is not None:
            subject = f"agent {agent!r} uses skill {name!r}, whose loading"
        return SkillsdError(
            f"{subject} is denied by {why}",
            PermissionDeniedData(
                skill=name,
                layer=check.layer,
                rule=check.rule or skill_load_rule(name),
                agent=agent,
            ),
        )
    rule = skill_load_rule(name)
    return SkillsdError(
        f"{action} skill {name!r} needs the user's approval "
        "(as loading it does): ask them, then call "
        f"permissions.remember with rule {rule!r}",
        PermissionRequiredData(skill=name, layer=check.layer, rule=rule),
    )


def gate_model_read(view: RequestView, skill: SkillMetadata) -> None:
    """A read on the model's behalf (its tools, MCP resources and the skills extension) obeys
    the model's rules: refused for a skill only the user may invoke, and checked like a load
    (a deny refuses; a skill the session has not loaded also needs the load's ``ask``)."""
    if not skill.invocation.model:
        raise SkillsdError(
            f"skill {skill.name!r} is for the user only (its author set "
            "`disable-model-invocation: true`): the model may not read its files",
            NotModelInvocableData(skill=skill.name, path=skill.path),
        )
    loaded = view.session is not None and skill.path in view.session.loaded
    refusal = gate_load(view, skill.name, action="reading", deny_only=loaded)
    if refusal is not None:
        raise refusal
