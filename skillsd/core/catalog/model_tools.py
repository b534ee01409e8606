"""Model-facing tool definitions (docs/protocol.md) and the decoding of their arguments.

Each tool's arguments are a msgspec Struct: the JSON Schema the model sees is generated from it,
and ``tools.call`` decodes with the same type, so the schema and the checks never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from skillsd.core.errors import InvalidArgumentsData, SkillsdError, UnknownToolData
from skillsd.core.skill.host_fields import model_description
from skillsd_protocol import Scope, SkillMetadata
from skillsd_protocol.errors import (
    AmbiguousSkillData,
    PermissionDeniedData,
    PermissionRequiredData,
    SessionNotFoundData,
)
from skillsd_protocol.messages import MAX_QUERY_CHARS, ReadFileResult, SearchResult, ToolDefinition

Operation = Literal["search", "load", "read_file", "list"]


class _Args(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


_SkillName = Annotated[str, msgspec.Meta(description="The skill's name, e.g. pdf-forms.")]
_SkillPath = Annotated[
    str, msgspec.Meta(description="The path of the skill's SKILL.md (or its directory).")
]
_File = Annotated[
    str, msgspec.Meta(description="A file inside the skill, relative to its directory.")
]


class SearchArgs(_Args):
    query: Annotated[
        str,
        msgspec.Meta(max_length=MAX_QUERY_CHARS, description="Words describing the task or skill."),
    ]
    limit: (
        Annotated[int, msgspec.Meta(ge=1, description="How many results (default 8).")] | None
    ) = None
    scope: Literal["repo", "user", "extra"] | None = None


class LoadArgs(_Args):
    name: _SkillName | None = None
    path: _SkillPath | None = None


class ReadFileArgs(_Args):
    file: _File
    name: _SkillName | None = None
    path: _SkillPath | None = None


class ActivateArgs(_Args):
    skillName: _SkillName  # the SwiftAgent wire name


class ListArgs(_Args):
    pass


class TavernLoadArgs(_Args):
    name: _SkillName


class TavernReadArgs(_Args):
    name: _SkillName
    path: _File


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One model-facing tool: its name, what it does, its argument type and operation."""

    name: str
    description: str
    args: type[_Args]
    operation: Operation


_DEFAULT = (
    ToolSpec(
        "skill_search",
        "Search the available Agent Skills by name, description and tags. Returns the best "
        "matches with their names and paths; load one with skill_load.",
        SearchArgs,
        "search",
    ),
    ToolSpec(
        "skill_load",
        "Load an Agent Skill's full instructions (its SKILL.md) by name or by path, plus the "
        "list of files bundled with it. Follow the instructions once loaded.",
        LoadArgs,
        "load",
    ),
    ToolSpec(
        "skill_read_file",
        "Read a file bundled with a skill (e.g. references/guide.md), given relative to the "
        "skill's directory. Identify the skill by name or path.",
        ReadFileArgs,
        "read_file",
    ),
)
_SWIFTAGENT = (
    ToolSpec(
        "activate_skill",
        "Activate a skill from <available_skills> when it is relevant to the task, to receive "
        "its full instructions.",
        ActivateArgs,
        "load",
    ),
)
_TAVERNKIT = (
    ToolSpec("skills_list", "List the available skills with their descriptions.", ListArgs, "list"),
    ToolSpec("skills_load", "Load a skill's full instructions by name.", TavernLoadArgs, "load"),
    ToolSpec(
        "skills_read_file",
        "Read a file inside a skill; `path` is relative to the skill's directory.",
        TavernReadArgs,
        "read_file",
    ),
)
STYLES: dict[str, tuple[ToolSpec, ...]] = {
    "default": _DEFAULT,
    "swiftagent": _SWIFTAGENT,
    "tavernkit": _TAVERNKIT,
}
_BY_NAME = {spec.name: spec for specs in STYLES.values() for spec in specs}
# Works each tool's argument type out at import, on one thread (tool calls are decoded in
# file-operation threads too): see `skillsd.core.policy.config`.
for _spec in _BY_NAME.values():
    msgspec.json.Decoder(_spec.args)


def input_schema(args: type[_Args]) -> dict[str, Any]:
    """A self-contained JSON Schema object for a tool's arguments (no ``$ref``)."""
    schema = msgspec.json.schema(args)
    defs = schema.pop("$defs", {})
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    schema = dict(schema)
    schema.pop("title", None)
    schema.pop("description", None)
    # Models handle `{"type": "integer"}` on an optional property better than anyOf-with-null.
    for name, prop in schema.get("properties", {}).items():
        options = prop.get("anyOf", [])
        if prop.get("default", 0) is None and len(options) == 2 and {"type": "null"} in options:
            schema["properties"][name] = next(o for o in options if o != {"type": "null"})
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return schema


def tool_definitions(style: str = "default") -> list[ToolDefinition]:
    """The tools of one naming style, ready to hand to a model."""
    return [
        ToolDefinition(name=s.name, description=s.description, input_schema=input_schema(s.args))
        for s in STYLES[style]
    ]


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A decoded tool call in the runtime's own terms."""

    operation: Operation
    name: str | None = None
    path: str | None = None
    file: str | None = None
    query: str | None = None
    limit: int | None = None
    scope: Scope | None = None


def decode_tool_call(tool: str, arguments: dict[str, Any]) -> ToolRequest:
    """Map a model's tool call to a request; bad input raises ``invalid_arguments``."""
    spec = _BY_NAME.get(tool)
    if spec is None:
        known = ", ".join(sorted(_BY_NAME))
        raise SkillsdError(f"Unknown tool {tool!r}. Available tools: {known}.", UnknownToolData())
    try:
        args = msgspec.convert(arguments, spec.args)
    except msgspec.ValidationError as exc:
        raise SkillsdError(
            f"Invalid arguments for {tool}: {exc}. Expected: {_signature(spec)}.",
            InvalidArgumentsData(),
        ) from None
    if isinstance(args, SearchArgs):
        if not args.query.strip():
            raise SkillsdError(
                f"{tool} needs words in `query` (what the task is about). "
                f"Expected: {_signature(spec)}.",
                InvalidArgumentsData(),
            )
        return ToolRequest("search", query=args.query, limit=args.limit, scope=args.scope)
    if isinstance(args, LoadArgs | ReadFileArgs):
        if args.name is None and args.path is None:
            raise SkillsdError(
                f"{tool} needs `name` or `path` to say which skill.", InvalidArgumentsData()
            )
        file = args.file if isinstance(args, ReadFileArgs) else None
        return ToolRequest(spec.operation, name=args.name, path=args.path, file=file)
    if isinstance(args, ActivateArgs):
        return ToolRequest("load", name=args.skillName)
    if isinstance(args, TavernLoadArgs):
        return ToolRequest("load", name=args.name)
    if isinstance(args, TavernReadArgs):
        return ToolRequest("read_file", name=args.name, file=args.path)
    return ToolRequest("list")


def _signature(spec: ToolSpec) -> str:
    fields = msgspec.structs.fields(spec.args)
    parts = [f.encode_name + ("" if f.required else "?") for f in fields]
    return f"{spec.name}({', '.join(parts)})"


def search_text(result: SearchResult) -> str:
    """A search result as the model reads it."""
    if not result.results:
        return "No skills match. Try other words, or skills_list/skill_search with a broader query."
    lines = [f"{result.count} skill(s) match; best first:"]
    for n, hit in enumerate(result.results, 1):
        s = hit.skill
        lines.append(f"{n}. {s.name} ({s.scope}) - {model_description(s)}\n   path: {s.path}")
    if result.truncated:
        lines.append(f"({result.count - len(result.results)} more not shown; refine the query.)")
    lines.append("Load one with skill_load to get its instructions.")
    return "\n".join(lines)


def user_only_text(skill: SkillMetadata) -> str:
    """Why the model's ``skill_load`` of a user-only skill (``invocation.model`` false) fails."""
    return (
        f"Skill {skill.name!r} can only be invoked by the user (as /{skill.name}); its author "
        "disabled model invocation. Do not retry; ask the user to invoke it if it is needed"
    )


def read_file_text(result: ReadFileResult) -> str:
    """A ``readFile`` window as the model reads it (binary content is announced as base64)."""
    head = f"File {result.file} ({result.size} bytes)"
    if result.encoding == "base64":
        head += ", binary, shown base64-encoded"
    tail = ""
    if result.truncated:
        tail = "\n[truncated: the file continues; read again with a larger offset]"
    return f"{head}:\n{result.content}{tail}"


def error_text(exc: SkillsdError) -> str:
    """An error the model can act on: what went wrong and what to try instead."""
    text = exc.message
    data = exc.data
    if isinstance(data, AmbiguousSkillData) and data.candidates:
        paths = ", ".join(c.path for c in data.candidates)
        text += f". Several skills have that name; pass `path` instead, one of: {paths}"
    if isinstance(data, SessionNotFoundData):
        text += " (the host must open a session before passing its id)"
    if isinstance(data, PermissionRequiredData):
        text = (
            f"Loading skill {data.skill!r} needs the user's approval; the host will ask "
            "them. Continue without it or try again after they answer."
        )
    if isinstance(data, PermissionDeniedData):
        text += ". Do not retry; continue without this skill"
    return text
