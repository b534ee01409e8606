"""One agent's view of a catalog: what that agent's model is shown here, not everything it
loads. Only the skills the agent discovers, and of two skills of one name the one its model is
shown (docs/agents.md). Pure: the folders come from the plan.

``skills.list {agent}`` and ``skills.prompt {agent}`` use it, so a frontend can show "what Claude
Code will see here"; ``skillsd doctor --agents`` prints every agent's column, and where an agent
loads a skill its model is not shown.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from skillsd.core.discovery.agent_folders import (
    AGENTS,
    AgentRules,
    accepted_agent_names,
    canonical_agent,
    env_folders,
    expand_folder,
    rules_of,
)
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.name_distance import closest_names
from skillsd_protocol import SkillMetadata

__all__ = ["agent_precedence", "agent_view", "known_agent"]


def known_agent(agent: str) -> AgentRules:
    """The rules of ``agent`` (its canonical name or a short one: ``claude``, ``gemini``); an
    unknown name is a bad ``agent`` param naming the close ones and every accepted name."""
    name = canonical_agent(agent)
    rules = None if name is None else rules_of(name)
    if rules is None:
        close = closest_names(agent, AGENTS)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise SkillsdError(
            f"agent {agent!r} is not one skillsd knows{hint} (accepted: {accepted_agent_names()})",
            InvalidParamsData(field="agent"),
        )
    return rules


def agent_precedence(
    rules: AgentRules, *, chain: Sequence[str], home: str, env: Mapping[str, str]
) -> tuple[str, ...]:
    """The absolute folders ``rules`` reads for a repo ``chain`` (the working directory first),
    highest precedence first."""
    directories = chain if rules.walk == "chain" else chain[:1]
    project = [os.path.join(d, p) for d in directories for p in rules.project]
    user = [expand_folder(t, home=home, env=env) for t in (*rules.system, *rules.user)]
    user += [folder for folder, agent in env_folders(env, home=home) if agent == rules.name]
    ordered = [*user, *project] if rules.user_first else [*project, *user]
    return tuple(dict.fromkeys(os.path.normpath(p) for p in ordered))


def agent_view(
    skills: Iterable[SkillMetadata], rules: AgentRules, precedence: Sequence[str]
) -> list[SkillMetadata]:
    """The skills ``rules``'s agent shows its model, in catalog order: each name once where the
    agent shows one (the skill of its highest-precedence folder)."""
    visible = [s for s in skills if rules.name in s.agents]
    if rules.clash == "all":
        return visible
    prefixes = [folder.rstrip(os.sep) + os.sep for folder in precedence]

    def rank(skill: SkillMetadata) -> int:
        return next(
            (i for i, prefix in enumerate(prefixes) if skill.path.startswith(prefix)),
            len(prefixes),
        )

    best: dict[str, tuple[int, SkillMetadata]] = {}
    for skill in visible:
        # A plugin's skills are namespaced (plugin:skill): they never clash with others.
        key = skill.qualified_name or skill.name
        ranked = (rank(skill), skill)
        if key not in best or ranked[0] < best[key][0]:
            best[key] = ranked
    kept = {id(pair[1]) for pair in best.values()}
    return [s for s in visible if id(s) in kept]
