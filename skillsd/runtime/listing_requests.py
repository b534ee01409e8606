"""The use cases of what an agent shows its model (``skills.listing``) and of the profiles
that choose it (``skills.profile.plan``, ``.apply``, ``.reset``), for every face.

Each reads what the agent itself reads (its settings files, its own use record) off the event
loop, bounded, and a profile also how often each skill was used in the repository (skillsd's use
ledger, docs/usage.md), and hands it to the pure model (:mod:`skillsd.core.listing.agent_listing`,
:mod:`skillsd.core.listing.listing_profile`). ``apply`` writes the agent's own per-skill switch
(Claude Code: ``skillOverrides`` in the project's ``.claude/settings.local.json``, never the
committed ``settings.json``) atomically and records what it wrote in ``profiles.json`` beside
skillsd's state file, so that ``reset`` removes exactly those keys.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from skillsd.core import limits
from skillsd.core.catalog.agent_view import known_agent
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.agent_folders import expand_folder
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.fs.atomic_files import atomic_write
from skillsd.core.fs.file_version import stat_key
from skillsd.core.fs.fs_boundary import (
    OutsideRoot,
    TreeLimit,
    beneath,
    decode_json,
    read_file,
    walk_tree,
)
from skillsd.core.listing.agent_listing import (
    ClaudeCodeSettings,
    Listing,
    claude_code_listing,
    claude_code_settings,
    claude_code_usage_scores,
)
from skillsd.core.listing.agent_settings_edit import SettingsError, add_keys, remove_keys
from skillsd.core.listing.codex_listing import codex_listing
from skillsd.core.listing.fs_agent_text import AgentText, agent_text, command_version
from skillsd.core.listing.listing_profile import Plan, RepoFacts, plan_claude_code, relevance
from skillsd.core.policy.config import LedgerConfig
from skillsd.runtime.caller import NOBODY, Caller, view_for
from skillsd.runtime.services import Services
from skillsd.runtime.usage_report import skill_use_counts
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import InvalidConfigData, StateWriteFailedData
from skillsd_protocol.listing import (
    AgentProfile,
    ListingParams,
    ListingResult,
    ProfileApplied,
    ProfileApplyResult,
    ProfileChoice,
    ProfileLeft,
    ProfileParams,
    ProfilePlanResult,
    ProfileReset,
    ProfileResetResult,
)

__all__ = [
    "MODELLED",
    "PROFILES_FILE",
    "ProfileRequest",
    "apply_profiles",
    "cached_listing",
    "compute_listing",
    "listing",
    "listing_warnings",
    "plan_profiles",
    "profile_apply",
    "profile_plan",
    "profile_reset",
    "profile_uses",
    "read_repo_facts",
    "records_path_for",
    "reset_profiles",
]


#: The agents whose listing skillsd models, and those whose per-skill switch it writes.
MODELLED = ("claude-code", "codex")
PROFILED = ("claude-code",)
#: Where ``apply`` records what it wrote, beside the state file.
PROFILES_FILE = "profiles.json"
#: ``~/.claude.json`` holds Claude Code's whole history: read at most this much of it.
_MAX_CLAUDE_JSON = 16 * 1024 * 1024
#: A repository's files a profile looks at (names only), and how deep.
_MAX_REPO_FILES = 5000
_MAX_REPO_DEPTH = 6
#: Files and folders looked at in all (folders cost a listing too).
_MAX_REPO_ENTRIES = 4 * _MAX_REPO_FILES
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "target", "dist"})
#: What a profile use case answers (a plan, what apply wrote, what reset removed).
_Profiled = TypeVar("_Profiled", ProfilePlanResult, ProfileApplyResult, ProfileResetResult)


# -- reading what the agent reads ----------------------------------------------------------


def _read_json(path: str, max_bytes: int = limits.MAX_CONFIG_FILE_BYTES) -> tuple[Any, str | None]:
    """(decoded JSON or None, a problem) of a file that may be absent."""
    try:
        data, over = read_file(path, max_bytes)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: not read ({exc.strerror or exc})"
    if over:
        return None, f"{path}: larger than {max_bytes} bytes, not read"
    try:
        return decode_json(data), None
    except ValueError as exc:
        return None, f"{path}: not JSON ({exc})"


def _read_text(path: str) -> str | None:
    try:
        data, _over = read_file(path, limits.MAX_CONFIG_FILE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def claude_paths(cwd: str, home: str, env: Mapping[str, str]) -> dict[str, str]:
    """Claude Code's settings files for a project at ``cwd``: user, project, local."""
    config = expand_folder("$CLAUDE_CONFIG_DIR", home=home, env=env)
    return {
        "user": os.path.join(config, "settings.json"),
        "project": os.path.join(cwd, ".claude", "settings.json"),
        "local": os.path.join(cwd, ".claude", "settings.local.json"),
    }


def _claude_record(home: str, env: Mapping[str, str]) -> str:
    """Claude Code's own record (``.claude.json``: its use counts among much else)."""
    config = env.get("CLAUDE_CONFIG_DIR")
    return os.path.join(config, ".claude.json") if config else os.path.join(home, ".claude.json")


@dataclass(frozen=True, slots=True)
class _ClaudeInputs:
    settings: ClaudeCodeSettings
    usage: dict[str, float]
    local_path: str
    problems: tuple[str, ...]


def _claude_inputs(
    cwd: str, home: str, env: Mapping[str, str], drop: Mapping[str, str] | None = None
) -> _ClaudeInputs:
    """Claude Code's settings for ``cwd`` and its own use record; ``drop``: keys skillsd wrote
    into the local file (name -> value), read as if absent (a plan starts from the user's)."""
    paths = claude_paths(cwd, home, env)
    layers: list[tuple[str, Any]] = []
    problems: list[str] = []
    for label, path in paths.items():
        data, problem = _read_json(path)
        if problem:
            problems.append(problem)
        if label == "local" and drop and isinstance(data, dict):
            own = data.get("skillOverrides")
            if isinstance(own, dict):
                kept = {k: v for k, v in own.items() if drop.get(k) != v}
                data = {**data, "skillOverrides": kept}
        layers.append((path, data))
    settings = claude_code_settings(layers, env)
    data, problem = _read_json(_claude_record(home, env), _MAX_CLAUDE_JSON)
    if problem:
        problems.append(problem)
    usage = claude_code_usage_scores(
        data.get("skillUsage") if isinstance(data, dict) else None, time.time() * 1000
    )
    return _ClaudeInputs(settings, usage, paths["local"], (*problems, *settings.problems))


def read_repo_facts(root: str) -> RepoFacts:
    """The README and the file names of the repository at ``root`` (bounded: at most
    :data:`_MAX_REPO_FILES` names, :data:`_MAX_REPO_DEPTH` folders deep; the boundary's walk, so
    no link is followed)."""
    files: list[str] = []

    def enter(_rel: str, entry: os.DirEntry[str]) -> bool:
        return entry.name not in _SKIP_DIRS

    def skip(_rel: str, _why: OSError | TreeLimit) -> None:
        pass  # a folder too deep or unreadable only leaves its names out

    with contextlib.suppress(TreeLimit):
        walk = walk_tree(
            root,
            max_depth=_MAX_REPO_DEPTH,
            max_entries=_MAX_REPO_ENTRIES,
            enter=enter,
            skipped=skip,
        )
        for rel, entry in walk:
            if entry.is_file(follow_symlinks=False):
                files.append(rel)
                if len(files) >= _MAX_REPO_FILES:
                    break
    readme = ""
    for name in ("README.md", "README.rst", "README.txt", "README", "readme.md"):
        text = _read_text(os.path.join(root, name))
        if text is not None:
            readme = text
            break
    return RepoFacts(readme=readme, files=tuple(files))


# -- skills.listing --------------------------------------------------------------------------


def _listing_result(
    result: Listing, problems: Sequence[str], own: AgentText | None = None
) -> ListingResult:
    full, shown = result.counts()
    return ListingResult(
        agent=result.agent,
        modelled=True,
        budget_chars=result.budget_chars,
        used_chars=result.used_chars,
        text=result.text,
        entries=result.entries,
        full=full,
        shown=shown,
        problems=list(problems) or None,
        agent_text=result.agent_text,
        agent_text_why=None if result.agent_text or own is None else own.why,
    )


def _not_modelled(agent: str, title: str) -> str:
    return (
        f"{title}'s listing is not modelled: skillsd does not know its budget or how it "
        "shortens its listing (docs/agents.md)"
    )


def compute_listing(
    skills: Sequence[SkillMetadata],
    agent: str,
    cwd: str,
    *,
    home: str,
    env: Mapping[str, str],
    context_window: int | None,
    agent_paths: Mapping[str, str] | None = None,
    with_agent_text: bool = True,
) -> ListingResult:
    """``skills.listing`` for ``skills`` (the agent's view of the catalog), reading what the
    agent reads (blocking: run it off the loop); ``agent_paths``: where the user's config says
    each agent is installed (else its command on ``PATH``), for the agent's own text, which
    is not read when ``with_agent_text`` is false (counts alone do not need it)."""
    rules = known_agent(agent)
    if rules.name not in MODELLED:
        return ListingResult(
            agent=rules.name,
            modelled=False,
            budget_chars=0,
            used_chars=0,
            text="",
            entries=[],
            full=0,
            shown=0,
            why=_not_modelled(rules.name, rules.title),
        )
    own = (
        agent_text(rules.name, env, (agent_paths or {}).get(rules.name))
        if with_agent_text
        else AgentText(rules.name, why="not read: only the counts were asked for")
    )
    if rules.name == "codex":
        codex_home = expand_folder("$CODEX_HOME", home=home, env=env)
        found = codex_listing(
            skills,
            codex_home=codex_home,
            context_window=context_window,
            preamble=own.preamble,
        )
        return _listing_result(found, (), own)
    inputs = _claude_inputs(cwd, home, env)
    result = claude_code_listing(
        skills,
        inputs.settings,
        context_window=context_window,
        usage=inputs.usage,
        bundled_text=own.bundled,
    )
    return _listing_result(result, inputs.problems, own)


def _bad(field: str, why: str) -> SkillsdError:
    return SkillsdError(f"`{field}` {why}", InvalidParamsData(field=field))


#: Listings already computed: one per (working directory, agent, context window), each kept
#: with the catalog and the versions of the files it was computed from, and the forms a face
#: made of it, so an unchanged catalog and unchanged settings answer without recomputing.
_LISTINGS: dict[tuple[str, str, int | None], _Slot] = {}
_MAX_LISTINGS = 16
#: Requests run in file-operation threads: one at a time reads or changes the cache.
_LISTINGS_LOCK = threading.Lock()


@dataclass(slots=True)
class _Slot:
    catalog: Catalog
    version: tuple[Any, ...]
    result: ListingResult
    shaped: dict[str, Any]


def _inputs_version(
    cwd: str, home: str, env: Mapping[str, str], agent_paths: Mapping[str, str]
) -> tuple[Any, ...]:
    paths = [*claude_paths(cwd, home, env).values(), _claude_record(home, env)]
    return (
        *(stat_key(p) for p in paths),
        env.get("SLASH_COMMAND_TOOL_CHAR_BUDGET"),
        *(command_version(agent, env, agent_paths.get(agent)) for agent in MODELLED),
    )


def _slot(
    catalog: Catalog,
    agent: str,
    home: str,
    env: Mapping[str, str],
    context_window: int | None,
    agent_paths: Mapping[str, str],
) -> _Slot:
    cwd = catalog.plan.cwd
    key = (cwd, agent, context_window)
    version = _inputs_version(cwd, home, env, agent_paths)
    with _LISTINGS_LOCK:
        hit = _LISTINGS.get(key)
    if hit is not None and hit.catalog is catalog and hit.version == version:
        return hit
    result = compute_listing(
        catalog.seen_by(agent),
        agent,
        cwd,
        home=home,
        env=env,
        context_window=context_window,
        agent_paths=agent_paths,
    )
    slot = _Slot(catalog, version, result, {})
    with _LISTINGS_LOCK:
        _LISTINGS.pop(key, None)
        while len(_LISTINGS) >= _MAX_LISTINGS:
            _LISTINGS.pop(next(iter(_LISTINGS)))
        _LISTINGS[key] = slot
    return slot


def cached_listing(
    catalog: Catalog,
    agent: str,
    *,
    home: str,
    env: Mapping[str, str],
    context_window: int | None,
    agent_paths: Mapping[str, str] | None = None,
) -> ListingResult:
    """``skills.listing`` of ``catalog`` for ``agent`` (blocking), computed once per catalog
    and version of the agent's settings files and of the installed agent."""
    return _slot(catalog, agent, home, env, context_window, agent_paths or {}).result


async def listing(
    svc: Services,
    params: ListingParams,
    caller: Caller = NOBODY,
    shape: Callable[[ListingResult], Any] | None = None,
    *,
    key: str = "",
) -> Any:
    """``skills.listing``; with ``shape``, in the form a face sends it (an encoding), made once
    per listing under ``key``: at 10 000 skills the answer is over a megabyte."""
    if params.context_window is not None and not 1 <= params.context_window <= 100_000_000:
        raise _bad("contextWindow", "must be between 1 and 100000000 tokens")
    rules = known_agent(params.agent)
    view = await view_for(svc, caller, params.cwd, params.session_id)

    def work() -> Any:
        # The user's config alone: a repository cannot choose a file for skillsd to read.
        paths = svc.catalogs.configs.user().listing.paths()
        slot = _slot(view.seen.catalog, rules.name, svc.home, svc.env, params.context_window, paths)
        if shape is None:
            return slot.result
        shaped = slot.shaped.get(key)
        if shaped is None:
            # Two requests may both shape it: the same bytes, the last one kept.
            shaped = slot.shaped[key] = shape(slot.result)
        return shaped

    return await svc.file_ops.run(work)


# -- profiles -------------------------------------------------------------------------------


def _read_records(path: str) -> dict[str, Any]:
    data, _problem = _read_json(path)
    records = data.get("records") if isinstance(data, dict) else None
    return records if isinstance(records, dict) else {}


def _write_records(path: str, records: dict[str, Any]) -> None:
    text = json.dumps({"version": 1, "records": records}, indent=2, sort_keys=True) + "\n"
    try:
        atomic_write(path, text.encode(), mode=0o600, dir_mode=0o700)
    except OSError as exc:
        raise SkillsdError(
            f"{path}: could not record the profile: {exc.strerror or exc}",
            StateWriteFailedData(path=path),
        ) from None


def _agents_for(agent: str | None) -> list[str]:
    if agent is None:
        return list(PROFILED)
    return [known_agent(agent).name]


def _profile(
    agent: str,
    skills: Sequence[SkillMetadata],
    cwd: str,
    root: str,
    pinned: Sequence[str],
    budget_fraction: float | None,
    ours: Mapping[str, str],
    *,
    home: str,
    env: Mapping[str, str],
    uses: Mapping[str, int] | None = None,
) -> tuple[AgentProfile, Plan | None]:
    rules = known_agent(agent)
    if rules.name not in PROFILED:
        why = (
            f"{rules.title}: no per-skill switch skillsd can write for one project "
            '(docs/agents.md, "Profiles")'
        )
        return AgentProfile(agent=rules.name, supported=False, why=why), None
    inputs = _claude_inputs(cwd, home, env, drop=ours)
    settings = inputs.settings
    if budget_fraction is not None:
        settings = replace(settings, budget_fraction=budget_fraction)
    scores = relevance(skills, read_repo_facts(root), uses)
    plan = plan_claude_code(skills, settings, scores, pinned=pinned, usage=inputs.usage)
    full_before, shown = plan.before.counts()
    full_after, _ = plan.after.counts()
    choices = [
        ProfileChoice(
            name=c.name, shown=c.shown, why=c.why, id=c.skill_id, score=c.score, pinned=c.pinned
        )
        for c in plan.choices
    ]
    return (
        AgentProfile(
            agent=rules.name,
            supported=True,
            target=inputs.local_path,
            budget_chars=plan.after.budget_chars,
            full_before=full_before,
            full_after=full_after,
            shown=shown,
            choices=choices,
            changes=dict(plan.changes),
        ),
        plan,
    )


@dataclass(frozen=True, slots=True)
class ProfileRequest:
    """What a profile request sees: the agents asked for, each agent's view of the catalog,
    the working directory, the repository root, the user's pins, and how often each skill (by
    name) was used in this repository (:func:`profile_uses`; empty when not known)."""

    agents: list[str]
    skills: dict[str, list[SkillMetadata]]
    cwd: str
    root: str
    pinned: tuple[str, ...]
    budget_fraction: float | None = None
    uses: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls, catalog: Catalog, agent: str | None, budget_fraction: float | None
    ) -> ProfileRequest:
        """The request for ``catalog``; a bad ``agent`` or ``budgetFraction`` is a bad param."""
        if budget_fraction is not None and not 0 < budget_fraction <= 1:
            raise _bad("budgetFraction", "must be more than 0 and at most 1")
        agents = _agents_for(agent)
        return cls(
            agents=agents,
            skills={a: catalog.seen_by(a) for a in agents},
            cwd=catalog.plan.cwd,
            root=catalog.plan.repo_root,
            pinned=catalog.config.profiles.pinned,
            budget_fraction=budget_fraction,
        )


def _plan_all(
    req: ProfileRequest, records: Mapping[str, Any], home: str, env: Mapping[str, str]
) -> list[tuple[AgentProfile, Plan | None]]:
    out = []
    for agent in req.agents:
        local = claude_paths(req.cwd, home, env)["local"]
        record = records.get(local) if agent == "claude-code" else None
        ours = record.get("written", {}) if isinstance(record, dict) else {}
        out.append(
            _profile(
                agent,
                req.skills[agent],
                req.cwd,
                req.root,
                req.pinned,
                req.budget_fraction,
                ours,
                home=home,
                env=env,
                uses=req.uses,
            )
        )
    return out


def profile_uses(
    root: str, ledger: LedgerConfig, *, state_path: str, home: str, env: Mapping[str, str]
) -> dict[str, int]:
    """How often each skill was used in the repository at ``root``, for a profile (blocking):
    the use ledger beside ``state_path``, and Claude Code's transcripts when ``ledger`` allows
    them; nothing when the user turned the ledger off (``ledger.enabled = false``)."""
    if not ledger.enabled:
        return {}
    return skill_use_counts(root, state_path=state_path, ledger=ledger, home=home, env=env)


def plan_profiles(
    req: ProfileRequest, records_path: str, *, home: str, env: Mapping[str, str]
) -> ProfilePlanResult:
    """``skills.profile.plan`` (blocking): nothing is written."""
    records = _read_records(records_path)
    return ProfilePlanResult(profiles=[p for p, _ in _plan_all(req, records, home, env)])


def _settings_text(path: str) -> str | None:
    try:
        data, over = read_file(path, limits.MAX_CONFIG_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SkillsdError(
            f"{path}: not read ({exc.strerror or exc})", InvalidConfigData(path=path)
        ) from None
    if over:
        raise SkillsdError(
            f"{path}: larger than {limits.MAX_CONFIG_FILE_BYTES} bytes",
            InvalidConfigData(path=path),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillsdError(f"{path}: not UTF-8", InvalidConfigData(path=path)) from None


def _in_repository(cwd: str, path: str) -> str:
    """``path`` (the project's local settings) after checking it lies beneath ``cwd`` with no
    symlinked folder on the way leading out: a repository's ``.claude`` linked elsewhere must
    not make a profile read or write a file outside it."""
    try:
        return beneath(cwd, path)
    except OutsideRoot as exc:
        raise SkillsdError(
            f"{path}: not read or written: {exc}", StateWriteFailedData(path=path)
        ) from None


def _write_settings(path: str, text: str | None) -> None:
    try:
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        else:
            mode = 0o644
            with contextlib.suppress(OSError):
                mode = os.stat(path).st_mode & 0o777
            atomic_write(path, text.encode(), mode=mode)
    except OSError as exc:
        raise SkillsdError(
            f"{path}: could not write: {exc.strerror or exc}; it is unchanged",
            StateWriteFailedData(path=path),
        ) from None


def _left(left: Mapping[str, str]) -> list[ProfileLeft]:
    return [ProfileLeft(name=name, why=why) for name, why in sorted(left.items())]


def apply_profiles(
    req: ProfileRequest, records_path: str, *, home: str, env: Mapping[str, str]
) -> ProfileApplyResult:
    """``skills.profile.apply`` (blocking): the plan, written into each agent's own settings,
    and what was written recorded at ``records_path``."""
    records = _read_records(records_path)
    planned = _plan_all(req, records, home, env)
    applied = []
    for profile, plan in planned:
        if plan is None or profile.target is None:
            continue
        path = _in_repository(req.cwd, profile.target)
        found = records.get(path)
        record: dict[str, Any] | None = found if isinstance(found, dict) else None
        ours = dict(record.get("written", {})) if record else {}
        text = _settings_text(path)
        try:
            edit = add_keys(text, path, plan.changes, ours)
        except SettingsError as exc:
            raise SkillsdError(str(exc), InvalidConfigData(path=path)) from None
        if record is None:
            record = {"agent": profile.agent, "created": text is None, "original": text}
        records[path] = {**record, "written": edit.changed}
        # The record first: a crash between the two writes leaves keys reset can find.
        _write_records(records_path, records)
        if edit.text != text:
            _write_settings(path, edit.text)
        applied.append(
            ProfileApplied(
                agent=profile.agent, path=path, written=edit.changed, left=_left(edit.left)
            )
        )
    return ProfileApplyResult(applied=applied, profiles=[p for p, _ in planned])


def reset_profiles(
    req: ProfileRequest, records_path: str, *, home: str, env: Mapping[str, str]
) -> ProfileResetResult:
    """``skills.profile.reset`` (blocking): removes exactly the keys ``apply`` wrote here."""
    records = _read_records(records_path)
    done = []
    for agent in req.agents:
        if agent != "claude-code":
            continue
        path = _in_repository(req.cwd, claude_paths(req.cwd, home, env)["local"])
        record = records.get(path)
        if not isinstance(record, dict):
            continue
        text = _settings_text(path)
        try:
            edit = remove_keys(
                text,
                path,
                record.get("written", {}),
                record.get("original"),
                bool(record.get("created")),
            )
        except SettingsError as exc:
            raise SkillsdError(str(exc), InvalidConfigData(path=path)) from None
        if edit.text != text:
            _write_settings(path, edit.text)
        del records[path]
        _write_records(records_path, records)
        done.append(
            ProfileReset(
                agent=agent, path=path, removed=sorted(edit.changed), left=_left(edit.left)
            )
        )
    return ProfileResetResult(reset=done)


def records_path_for(state_path: str) -> str:
    """Where profiles are recorded for the state file at ``state_path``."""
    return os.path.join(os.path.dirname(state_path), PROFILES_FILE)


async def _profile_request(svc: Services, params: ProfileParams, caller: Caller) -> ProfileRequest:
    view = await view_for(svc, caller, params.cwd, None)
    return ProfileRequest.of(view.seen.catalog, params.agent, params.budget_fraction)


#: How long a profile waits for the use ledger's writer to catch up.
_FLUSH_SECONDS = 5.0


async def _with_uses(svc: Services, req: ProfileRequest) -> ProfileRequest:
    """``req`` with the repository's use counts, read in a file-operation thread after what
    was served before this request reached the ledger (its writer is a thread)."""
    if svc.ledger is not None:
        await svc.file_ops.run(svc.ledger.flush, _FLUSH_SECONDS)

    def count() -> dict[str, int]:
        ledger = svc.catalogs.configs.user().ledger  # the user's alone: a repository's is not read
        return profile_uses(req.root, ledger, state_path=svc.state.path, home=svc.home, env=svc.env)

    return replace(req, uses=await svc.file_ops.run(count))


async def _profile_use_case(
    svc: Services,
    params: ProfileParams,
    caller: Caller,
    run: Callable[..., _Profiled],
    *,
    uses: bool,
) -> _Profiled:
    """A profile use case: the request (with the repository's use counts when ``uses``), then
    ``run`` with skillsd's record of what profiles wrote, in a file-operation thread."""
    req = await _profile_request(svc, params, caller)
    if uses:
        req = await _with_uses(svc, req)
    path = records_path_for(svc.state.path)
    return await svc.file_ops.run(run, req, path, home=svc.home, env=svc.env)


async def profile_plan(
    svc: Services, params: ProfileParams, caller: Caller = NOBODY
) -> ProfilePlanResult:
    """``skills.profile.plan``."""
    return await _profile_use_case(svc, params, caller, plan_profiles, uses=True)


async def profile_apply(
    svc: Services, params: ProfileParams, caller: Caller = NOBODY
) -> ProfileApplyResult:
    """``skills.profile.apply``."""
    return await _profile_use_case(svc, params, caller, apply_profiles, uses=True)


async def profile_reset(
    svc: Services, params: ProfileParams, caller: Caller = NOBODY
) -> ProfileResetResult:
    """``skills.profile.reset`` (what was written is taken back: use counts play no part)."""
    return await _profile_use_case(svc, params, caller, reset_profiles, uses=False)


def listing_warnings(
    catalog: Catalog,
    agents: Sequence[str],
    *,
    home: str,
    env: Mapping[str, str],
) -> list[str]:
    """For ``skillsd doctor``: one line per agent of ``agents`` whose model is shown some skill
    without its description here (blocking)."""
    lines = []
    for agent in agents:
        rules = known_agent(agent)
        if rules.name not in MODELLED:
            continue
        result = compute_listing(
            catalog.seen_by(rules.name),
            rules.name,
            catalog.plan.cwd,
            home=home,
            env=env,
            context_window=None,
            with_agent_text=False,  # the doctor counts; it does not need the agent's text
        )
        cut = sum(1 for e in result.entries if e.cut and not e.bundled)
        if cut:
            lines.append(
                f"{rules.title} shortens the descriptions of {cut} of {result.shown} skills in "
                f"this folder to fit its budget (`skillsd listing --agent {rules.name}`)"
            )
        elif result.full < result.shown:
            lines.append(
                f"{rules.title} shows {result.full} of {result.shown} skills in full in this "
                f"folder: the other {result.shown - result.full} reach its model as bare names "
                f"(`skillsd listing --agent {rules.name}`, `skillsd profile`)"
            )
    return lines
