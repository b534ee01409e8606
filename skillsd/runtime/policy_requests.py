"""The user's policy: ``permissions.check``, ``permissions.remember``, ``skills.setEnabled``,
``trust.get`` and ``trust.set``. State-file writes run off the loop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.policy.fs_state import StateStore
from skillsd.core.policy.permissions import (
    Check,
    Rule,
    RuleError,
    parse_rule,
    remember_rule,
)
from skillsd.core.policy.trust import TrustState
from skillsd.runtime.caller import NOBODY, Caller, bad_param, view_for
from skillsd.runtime.request_view import (
    resolve,
)
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    CheckParams,
    CheckResult,
    Empty,
    RememberParams,
    SetEnabledParams,
    SetEnabledResult,
    TrustGetParams,
    TrustInfo,
    TrustSetParams,
)


async def _save(fn: Callable[..., None], *args: object, **kw: object) -> None:
    """Run a state-file write off the loop (a failure is ``state_write_failed``, old state kept)."""
    await asyncio.to_thread(fn, *args, **kw)


async def check(svc: Services, params: CheckParams) -> CheckResult:
    if not params.tool.strip():
        raise bad_param("tool", " is empty")
    session = svc.session(params.session_id)

    def decide() -> Check:
        # The config files and the state file (trust, remembered answers) are read: a thread.
        config, root = svc.config_for(params.cwd, session)
        return svc.check(config, root, session, params.tool, params.input)

    decided = await asyncio.to_thread(decide)
    return CheckResult(
        decision=decided.decision,
        layer=decided.layer,
        rule=decided.rule,
        granted_by=list(decided.granted_by) if decided.granted_by is not None else None,
        withheld_by=list(decided.withheld_by) if decided.withheld_by is not None else None,
    )


async def remember(svc: Services, params: RememberParams) -> Empty:
    session = svc.sessions.get(params.session_id)
    try:
        rule = parse_rule(params.rule)
    except RuleError as exc:
        raise bad_param("rule", f": {exc}") from None
    if params.persist == "always":
        await _save(svc.state.remember, rule.text, params.decision)
        # The newest answer wins: a session-only one for the same rule would now contradict it.
        for text in [t for t in session.remembered if _same_rule(t, rule)]:
            del session.remembered[text]
    else:
        remember_rule(session.remembered, rule, params.decision)
    return Empty()


def _same_rule(text: str, rule: Rule) -> bool:
    try:
        return parse_rule(text).key == rule.key
    except RuleError:
        return False


def _enable_persist(params: SetEnabledParams) -> str:
    """Where ``skills.setEnabled`` keeps its flag: ``scope`` names the same choice as
    ``persist``; a ``persist`` other than the default that says otherwise is a bad ``scope``."""
    if params.scope is None:
        return params.persist
    if params.persist not in ("user", params.scope):
        raise bad_param("scope", f' "{params.scope}" disagrees with persist "{params.persist}"')
    return params.scope


async def set_enabled(
    svc: Services, params: SetEnabledParams, caller: Caller = NOBODY
) -> SetEnabledResult:
    persist = _enable_persist(params)
    if persist == "session" and params.session_id is None:
        raise bad_param(
            "sessionId", f' is required with {"scope" if params.scope else "persist"} "session"'
        )
    view = await view_for(svc, caller, params.cwd, params.session_id)
    skill = resolve(view.catalog, params, include_disabled=True)
    session = view.session
    if persist == "session":
        assert session is not None
        session.enabled_overrides[skill.id] = params.enabled
    else:
        project = persist == "project"
        await _save(save_enabled, svc.state, view.catalog, skill, params.enabled, project=project)
        if session is not None:
            # The user's newest choice also ends this session's own override of it.
            session.enabled_overrides.pop(skill.id, None)
    after = await view_for(svc, caller, params.cwd, params.session_id)
    return SetEnabledResult(skill=after.catalog.get(skill.id) or skill)


# -- workspace trust -----------------------------------------------------------------------


def _trust_here(svc: Services, cwd: str | None) -> TrustState:
    _config, root = svc.config_for(cwd, None)
    return svc.trust_of(root)


async def trust_get(svc: Services, params: TrustGetParams) -> TrustInfo:
    # The config files and the state file are read: a thread.
    return trust_info(await asyncio.to_thread(_trust_here, svc, params.cwd))


def _trust_root(svc: Services, params: TrustSetParams) -> str:
    """The repository root ``trust.set`` decides for: ``repoRoot`` (or its deprecated name
    ``root``) as given, else the cwd's."""
    named, field = (
        (params.repo_root, "repoRoot") if params.repo_root is not None else (params.root, "root")
    )
    if params.repo_root is not None and params.root is not None and params.root != params.repo_root:
        raise bad_param("root", " differs from repoRoot (root is repoRoot's old name: give one)")
    if named is not None:
        root = os.path.realpath(os.path.join(svc.cwd, named))
        if not os.path.isdir(root):
            raise bad_param(field, f" {root!r} is not a directory")
        return root
    _config, found = svc.config_for(params.cwd, None)
    return found


async def trust_set(svc: Services, params: TrustSetParams) -> TrustInfo:
    # Resolving a path waits on the filesystem: off the loop.
    root = await asyncio.to_thread(_trust_root, svc, params)
    # Every later check reads the state file's decision: in effect for every session at once.
    await _save(svc.state.set_trust, root, params.trusted)
    return trust_info(svc.trust_of(root))


def save_enabled(
    state: StateStore,
    catalog: Catalog,
    skill: SkillMetadata,
    enabled: bool,
    *,
    project: bool = False,
) -> None:
    """The user's enable flag of ``skill`` in the state file (``skills.setEnabled`` with
    ``persist: "user"`` and ``skillsd enable|disable``), or (``project``) its flag in the
    catalog's repository only (``persist: "project"``, ``--project``), kept in the state file
    under the repository's root, never in the repository. Writes a file: run it off the loop."""
    real = catalog.real_path_of[skill.id]
    # Every spelling a hand-edited state file may use, so enabling clears them all.
    aliases = (skill.id, skill.path, skill.dir, os.path.dirname(real))
    if project:
        state.set_project_enabled(catalog.repo_root, aliases, enabled, key=real)
    else:
        state.set_enabled(aliases, enabled, key=real)


def trust_info(trust: TrustState) -> TrustInfo:
    """``trust.get`` / ``trust.set``'s answer."""
    return TrustInfo(
        repo_root=trust.root, root=trust.root, trusted=trust.trusted, source=trust.source
    )
