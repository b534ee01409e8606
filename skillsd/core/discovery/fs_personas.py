"""Agent personas (``agents.list``/``agents.get``): Markdown files whose frontmatter names the
skills they use. Not the coding agents that read skill folders (Claude Code, Codex, ...): those
are :mod:`skillsd.core.discovery.agent_folders`.

An agent is ``<dir>/<file>.md`` in ``.agents/agents/`` of every directory on the repo chain
(nearest to cwd first) and in ``~/.agents/agents/``. Frontmatter: ``name`` (required),
``description``, ``model``, ``tools`` and ``skills`` (YAML lists, or comma/space separated
strings); other fields (editors add their own) are ignored. The body is the agent's
instructions. The nearest definition of a name wins; two files of one directory defining the
same name are an error. A bad file is an :class:`AgentLoadError`, never an exception.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from skillsd.core import limits
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.name_distance import closest_names
from skillsd.core.policy.config import Config
from skillsd.core.skill.frontmatter import (
    FrontmatterError,
    body_text,
    decode_frontmatter,
    load_frontmatter,
    locate_frontmatter,
)
from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd.core.skill.validation import split_allowed_tools
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import (
    AgentNotFoundData,
    AmbiguousSkillData,
    UnknownSkillReferenceData,
)
from skillsd_protocol.messages import AgentDefinition, AgentLoadError

__all__ = [
    "AGENTS_DIR",
    "AgentFileError",
    "ResolvedSkill",
    "agent_dirs",
    "check_references",
    "discover_agents",
    "find_agent",
    "read_agent_file",
    "render_agent",
    "resolve_agent_skills",
]

AGENTS_DIR = (".agents", "agents")


class AgentFileError(Exception):
    """An agent file that cannot be used; the message names the problem."""


def agent_dirs(cwd: str, config: Config, *, home: str, env: Mapping[str, str]) -> list[str]:
    """The agent directories for ``cwd``: the repo chain nearest first, then the user's.

    The chain is the one skill discovery walks (same repo root and markers). ``discovery.auto``
    does not apply: it chooses skill roots, and agents have no other place to come from.
    """
    discovery = msgspec.structs.replace(config.discovery, auto=True, compat_roots=False)
    plan = compute_roots(
        cwd, msgspec.structs.replace(config, discovery=discovery), home=home, env=env
    )
    chain = [
        os.path.dirname(os.path.dirname(root.path)) for root in plan.roots if root.scope == "repo"
    ]
    dirs = [os.path.join(d, *AGENTS_DIR) for d in chain]
    dirs.append(os.path.join(home, *AGENTS_DIR))
    return list(dict.fromkeys(dirs))


def _names(value: Any, field: str) -> list[str]:
    if isinstance(value, str):
        split = split_allowed_tools(value)
        if split is None:
            raise AgentFileError(f"field {field!r} has unbalanced parentheses: {value!r}")
        return split
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise AgentFileError(f"field {field!r} must be a list of strings or a comma-separated string")


def _optional_text(raw: Mapping[str, Any], field: str) -> str | None:
    value = raw.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise AgentFileError(f"field {field!r} must be a string")
    return value.strip() or None


def read_agent_file(path: str, max_bytes: int = limits.MAX_AGENT_FILE_BYTES) -> AgentDefinition:
    """Parse one agent file; raises :class:`AgentFileError` saying what is wrong."""
    try:
        read = read_regular_file(path, max_bytes)
    except OSError as exc:  # NotRegularFile's strerror says what it is instead
        raise AgentFileError(f"cannot read: {exc.strerror or exc}") from None
    if read.over_cap:
        raise AgentFileError(f"larger than {max_bytes} bytes")
    data = read.data
    try:
        located = locate_frontmatter(data, at_eof=True)
        assert located is not None  # at_eof: found, or an error was raised
        raw = load_frontmatter(decode_frontmatter(data, located))
    except FrontmatterError as exc:
        # The frontmatter reader speaks of SKILL.md; here the file is an agent's.
        raise AgentFileError(exc.message.replace(SKILL_FILE, os.path.basename(path))) from None
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise AgentFileError("field 'name' is required (a non-empty string)")
    tools = raw.get("tools")
    body = body_text(data, located)
    return AgentDefinition(
        name=name.strip(),
        path=path,
        skills=list(dict.fromkeys(_names(raw.get("skills") or [], "skills"))),
        description=_optional_text(raw, "description"),
        model=_optional_text(raw, "model"),
        tools=None if tools is None else _names(tools, "tools"),
        body=body,
    )


def _agent_files(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as it:
            names = sorted(e.name for e in it if e.name.endswith(".md") and not e.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [os.path.join(directory, n) for n in names]


def discover_agents(
    dirs: Iterable[str],
) -> tuple[list[AgentDefinition], list[AgentLoadError]]:
    """Every agent in ``dirs`` (in order; the first definition of a name wins) and the errors."""
    agents: dict[str, AgentDefinition] = {}
    errors: list[AgentLoadError] = []
    for directory in dirs:
        try:
            files = _agent_files(directory)
        except OSError as exc:
            errors.append(
                AgentLoadError(path=directory, message=f"cannot list: {exc.strerror or exc}")
            )
            continue
        here: dict[str, str] = {}
        for path in files:
            try:
                agent = read_agent_file(path)
            except AgentFileError as exc:
                errors.append(AgentLoadError(path=path, message=str(exc)))
                continue
            if agent.name in here:
                errors.append(
                    AgentLoadError(
                        path=path,
                        message=f"agent name {agent.name!r} is already defined by "
                        f"{here[agent.name]}",
                    )
                )
                continue
            here[agent.name] = path
            agents.setdefault(agent.name, agent)
    return list(agents.values()), errors


def find_agent(agents: Sequence[AgentDefinition], name: str) -> AgentDefinition:
    """The agent called ``name``; ``agent_not_found`` (with suggestions) otherwise."""
    for agent in agents:
        if agent.name == name:
            return agent
    suggestions = closest_names(name, [a.name for a in agents])
    message = f"no agent named {name!r}"
    if suggestions:
        message += f"; did you mean {', '.join(suggestions)}?"
    raise SkillsdError(message, AgentNotFoundData(suggestions=suggestions))


def resolve_agent_skills(
    agent: AgentDefinition, resolve: Callable[[str], SkillMetadata]
) -> list[SkillMetadata]:
    """The agent's skills, each resolved by name (``resolve`` is the catalog's name lookup).

    A name no enabled skill has is ``unknown_skill_reference`` naming the agent and the skill;
    a name several skills share stays ``ambiguous_skill``, with the agent named.
    """
    skills = []
    for ref in agent.skills:
        try:
            skills.append(resolve(ref))
        except SkillsdError as exc:
            if isinstance(exc.data, AmbiguousSkillData):
                raise SkillsdError(
                    f"agent {agent.name!r} ({agent.path}): {exc.message}",
                    AmbiguousSkillData(candidates=exc.data.candidates, agent=agent.name, skill=ref),
                ) from None
            raise SkillsdError(
                f"agent {agent.name!r} ({agent.path}) references unknown skill {ref!r}: "
                f"{exc.message}",
                UnknownSkillReferenceData(
                    agent=agent.name,
                    skill=ref,
                    path=agent.path,
                    suggestions=getattr(exc.data, "suggestions", []),
                ),
            ) from None
    return skills


def check_references(
    agents: Iterable[AgentDefinition], resolve: Callable[[str], SkillMetadata]
) -> list[AgentLoadError]:
    """One error per agent whose skills do not all resolve (for listings and ``doctor``)."""
    errors = []
    for agent in agents:
        try:
            resolve_agent_skills(agent, resolve)
        except SkillsdError as exc:
            errors.append(AgentLoadError(path=agent.path, message=exc.message))
    return errors


@dataclass(frozen=True, slots=True)
class ResolvedSkill:
    """What rendering needs of one skill: its metadata, body and resource list."""

    skill: SkillMetadata
    body: str
    files: Sequence[str]


def render_agent(agent: AgentDefinition, skills: Sequence[ResolvedSkill]) -> str:
    """The agent's system prompt: its instructions, then each skill's instructions inlined with
    the directory its relative paths resolve from and its resource files listed."""
    parts = [agent.body.strip()]
    if skills:
        parts.append(
            "# Skills\n\nYou have the following skills. Paths in a skill's instructions are "
            "relative to its directory; read a listed resource only when you need it."
        )
    for item in skills:
        skill = item.skill
        section = [f"## {skill.name}", skill.description, f"Skill directory: {skill.dir}"]
        section.append(item.body.strip())
        if item.files:
            section.append("Resources of this skill:\n" + "\n".join(f"- {f}" for f in item.files))
        parts.append("\n\n".join(p for p in section if p))
    return "\n\n".join(p for p in parts if p) + "\n"
