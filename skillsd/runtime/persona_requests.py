"""Personas (agent definitions): ``personas.list`` and ``personas.get`` (and their deprecated
aliases ``agents.list`` and ``agents.get``, kept for one release)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.discovery.fs_personas import (
    ResolvedSkill,
    agent_dirs,
    check_references,
    discover_agents,
    find_agent,
    render_agent,
    resolve_agent_skills,
)
from skillsd.core.skill.fs_resources import list_skill_files, read_skill_file_content
from skillsd.runtime.caller import NOBODY, Caller, view_for
from skillsd.runtime.gates import gate_load
from skillsd.runtime.request_view import (
    RequestView,
)
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    AgentDefinition,
    AgentLoadError,
    AgentsGetParams,
    AgentsGetResult,
    AgentsListParams,
    AgentsListResult,
)


async def personas_list(
    svc: Services, params: AgentsListParams, caller: Caller = NOBODY
) -> AgentsListResult:
    view = await view_for(svc, caller, params.cwd, None)
    return await svc.file_ops.run(list_personas, view.seen, home=svc.home, env=svc.env)


async def personas_get(
    svc: Services, params: AgentsGetParams, caller: Caller = NOBODY
) -> AgentsGetResult:
    view = await view_for(svc, caller, params.cwd, None)
    return await svc.file_ops.run(get_persona, view.seen, params, home=svc.home, env=svc.env)


def _agents(
    view: RequestView, home: str, env: Mapping[str, str]
) -> tuple[list[AgentDefinition], list[AgentLoadError]]:
    return discover_agents(agent_dirs(view.cwd, view.config, home=home, env=env))


def _by_name(catalog: Catalog) -> Callable[[str], SkillMetadata]:
    return lambda name: catalog.resolve(name=name)


def list_personas(view: RequestView, *, home: str, env: Mapping[str, str]) -> AgentsListResult:
    """``agents.list``: every agent definition, and the ones that cannot be used, with why."""
    agents, errors = _agents(view, home, env)
    errors += check_references(agents, _by_name(view.catalog))
    return AgentsListResult(agents=agents, errors=errors)


def get_persona(
    view: RequestView, params: AgentsGetParams, *, home: str, env: Mapping[str, str]
) -> AgentsGetResult:
    """``agents.get``: one agent, its skills resolved, and (``render``) its prompt; a deny rule
    on one of its skills refuses the render."""
    agents, _errors = _agents(view, home, env)
    agent = find_agent(agents, params.name)
    skills = resolve_agent_skills(agent, _by_name(view.catalog))
    prompt = None
    if params.render:
        for skill in skills:
            refusal = gate_load(view, skill.name, agent=agent.name)
            if refusal is not None:
                raise refusal
        resolved = [
            ResolvedSkill(s, read_skill_file_content(s.path).body, list_skill_files(s.dir))
            for s in skills
        ]
        prompt = render_agent(agent, resolved)
    return AgentsGetResult(agent=agent, skills=skills, prompt=prompt)
