"""What ``skillsd mcp`` answers, as plain JSON values: the runtime's results turned into MCP
results and its refusals into MCP errors, with no MCP SDK and no pydantic.

Every face that serves MCP says the same things: the stdio face writes these dicts as they are,
and a face built on the SDK can hand them to it. Nothing here reads a file or a catalog; the
callers run the use cases (:mod:`skillsd.runtime.use_cases`) and pass their results in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.jsonrpc.rpc_errors import code_of
from skillsd.runtime.file_ops import RequestCancelled
from skillsd_protocol import KIND_CODES, ErrorCode, SkillMetadata
from skillsd_protocol.messages import (
    Command,
    InvokeResult,
    ReadFileResult,
    ToolDefinition,
    ToolsCallResult,
)

if TYPE_CHECKING:  # at run time only their instances come in: this module imports fast
    from skillsd.mcp_bridge.skill_uris import SkillUris, UriTarget
    from skillsd.runtime.loading_requests import SkillContents
    from skillsd.runtime.services import View

__all__ = [
    "DIRECTORY_MIME",
    "INSTRUCTIONS",
    "PAGE",
    "SKILLS_EXTENSION",
    "SKILLS_SETTINGS",
    "TTL_MS",
    "McpFailure",
    "directory_listing",
    "failure",
    "mime",
    "not_a_directory",
    "page_start",
    "prompt_list",
    "prompt_names",
    "prompt_result",
    "prompt_target",
    "read_result",
    "resource_entries",
    "resource_page",
    "resource_templates",
    "skill_entry",
    "skills_page",
    "tool_list",
    "tool_result",
    "unknown_resource",
    "unknown_tool",
]

#: The MCP skills extension (SEP-2640) this server implements.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: Its settings: the optional ``resources/directory/read`` is served, and hosts call it only when
#: this says so.
SKILLS_SETTINGS: dict[str, Any] = {"directoryRead": True}
#: What a directory resource's ``mimeType`` is.
DIRECTORY_MIME = "inode/directory"
#: Entries per page of ``resources/list`` and ``skills/list``.
PAGE = 100
#: How long a client may cache ``skills/list`` (changes are announced anyway).
TTL_MS = 60_000
#: The longest cursor this server gives out (a page offset).
MAX_CURSOR_CHARS = 20
#: What the server tells the model about itself (``instructions``).
INSTRUCTIONS = (
    "Agent Skills from this project and the user's skill folders. Search with "
    "skill_search, load one with skill_load before following it, read its files "
    "with skill_read_file."
)

INVALID_PARAMS = int(ErrorCode.INVALID_PARAMS)
REQUEST_CANCELLED = int(ErrorCode.REQUEST_CANCELLED)


class McpFailure(Exception):
    """A request refused with a JSON-RPC error: its code (never 0), a one-line message and,
    when there is one, ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def failure(exc: SkillsdError | RequestCancelled) -> McpFailure:
    """The MCP error for a refusal of the runtime: the code of its kind and its message."""
    if isinstance(exc, RequestCancelled):
        return McpFailure(REQUEST_CANCELLED, exc.message)
    return McpFailure(int(code_of(exc)), exc.message)


def unknown_resource(uri: str) -> McpFailure:
    """A read of a resource this server does not serve: ``-32602`` naming it in ``data.uri``."""
    return McpFailure(INVALID_PARAMS, f"no skill resource {uri!r}", {"uri": uri})


def mime(file: str) -> str | None:
    """The ``mimeType`` a skill's file is served with (Markdown is the only one it names)."""
    return "text/markdown" if file.endswith(".md") else None


def page_start(cursor: str | None) -> int:
    """The offset a cursor this server gave names; anything else is ``-32602`` naming
    ``cursor``."""
    if cursor is None:
        return 0
    if len(cursor) > MAX_CURSOR_CHARS or not (cursor.isascii() and cursor.isdigit()):
        raise McpFailure(INVALID_PARAMS, "`cursor` is not one this server gave")
    return int(cursor)


def _next_cursor(start: int, total: int) -> str | None:
    return str(start + PAGE) if start + PAGE < total else None


# -- tools ----------------------------------------------------------------------------------


def tool_list(definitions: Iterable[ToolDefinition]) -> dict[str, Any]:
    """``tools/list``."""
    return {
        "tools": [
            {"name": d.name, "description": d.description, "inputSchema": d.input_schema}
            for d in definitions
        ]
    }


def unknown_tool(name: str, served: Sequence[str]) -> McpFailure | None:
    """The error for a call of a tool this server does not list (the client's mistake, a
    protocol error: the runtime also knows other hosts' names for these tools, but MCP clients
    get these), or None."""
    if name in served:
        return None
    return McpFailure(
        INVALID_PARAMS, f"Unknown tool {name!r}; this server's tools are {', '.join(served)}"
    )


def tool_result(result: ToolsCallResult) -> dict[str, Any]:
    """``tools/call``: the tool's text; its failures are results the model reads."""
    return {"content": [{"type": "text", "text": result.content}], "isError": result.is_error}


# -- resources ------------------------------------------------------------------------------


def resource_entries(skills: Sequence[SkillMetadata], uris: SkillUris) -> list[dict[str, Any]]:
    """Every entry of ``resources/list``, each skill's ``SKILL.md`` (shared by the pages:
    treat them as read-only)."""
    return [
        {
            "uri": uris.skill_uri(s),
            "name": s.name,
            "description": s.description,
            "mimeType": "text/markdown",
        }
        for s in skills
    ]


def resource_page(entries: Sequence[dict[str, Any]], start: int) -> dict[str, Any]:
    """The page of ``entries`` from ``start`` on, with the cursor of the next one."""
    result: dict[str, Any] = {"resources": list(entries[start : start + PAGE])}
    cursor = _next_cursor(start, len(entries))
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


def resource_templates(templates: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """``resources/templates/list`` from ``(uriTemplate, name, description)`` triples."""
    return {
        "resourceTemplates": [
            {"uriTemplate": template, "name": name, "description": description}
            for template, name, description in templates
        ]
    }


def read_result(uri: str, file: str, window: ReadFileResult) -> dict[str, Any]:
    """``resources/read`` of one file read whole: text, or a base64 blob."""
    if window.truncated:
        # Never a silent cut: a file past the read limit is refused, naming it.
        raise McpFailure(
            int(KIND_CODES["too_large"]),
            f"{uri}: {window.size} bytes is over the {limits.MAX_READ_BYTES}-byte read "
            "limit; read it in windows with the skill_read_file tool",
        )
    contents: dict[str, Any] = {"uri": uri}
    kind = mime(file)
    if kind is not None:
        contents["mimeType"] = kind
    contents["text" if window.encoding == "utf-8" else "blob"] = window.content
    return {"contents": [contents]}


def directory_listing(
    uri: str, target: UriTarget, files: Iterable[str], uris: SkillUris
) -> dict[str, Any]:
    """``resources/directory/read``: the direct children of a skill's folder, its subfolders
    as directory resources; a folder is known by the files in it, so none is ``-32602``."""
    folder = target.file.strip("/")
    prefix = folder + "/" if folder else ""
    children: dict[str, dict[str, Any]] = {}
    for file in files:
        if not file.startswith(prefix):
            continue
        name, below, _rest = file[len(prefix) :].partition("/")
        if name in children:
            continue
        child: dict[str, Any] = {"uri": uris.file_uri(target.skill, prefix + name), "name": name}
        kind = DIRECTORY_MIME if below else mime(name)
        if kind is not None:
            child["mimeType"] = kind
        children[name] = child
    if not children:
        raise not_a_directory(uri)
    return {"resources": [children[name] for name in sorted(children)]}


def not_a_directory(uri: str) -> McpFailure:
    return McpFailure(INVALID_PARAMS, f"{uri} is not a directory resource")


# -- prompts: the slash commands ------------------------------------------------------------


def prompt_names(commands: list[Command], view: View) -> dict[str, Command]:
    """Each command under a unique prompt name: the first of a name in catalog order keeps
    it, the others get ``<name>@<scope>`` so that none hides another."""
    order = {s.id: i for i, s in enumerate(view.catalog.skills)}
    first: dict[str, Command] = {}
    for command in sorted(commands, key=lambda c: order.get(c.skill or "", len(order))):
        name = command.name
        if name in first:
            skill = view.catalog.get(command.skill) if command.skill else None
            scope = skill.scope if skill is not None else "command"
            name = f"{command.name}@{scope}"
            n = 2
            while name in first:
                name, n = f"{command.name}@{scope}{n}", n + 1
        first[name] = command
    return dict(sorted(first.items()))


def prompt_list(prompts: dict[str, Command]) -> dict[str, Any]:
    """``prompts/list``: one prompt per command, its arguments one free-text argument."""
    return {
        "prompts": [
            {
                "name": name,
                "description": c.description,
                "arguments": [
                    {
                        "name": "arguments",
                        "description": c.argument_hint or "what follows the command",
                        "required": False,
                    }
                ],
            }
            for name, c in prompts.items()
        ]
    }


def prompt_target(prompt: str, command: Command | None) -> tuple[str | None, str | None]:
    """What ``prompts/get`` invokes, as ``(id, name)``: a skill by its id (its name may be
    shared); a command file, or an unknown name (answered with suggestions), by name."""
    if command is not None and command.skill:
        return command.skill, None
    return None, command.name if command is not None else prompt


def prompt_result(result: InvokeResult) -> dict[str, Any]:
    """``prompts/get``: the invocation as one user message."""
    source = result.skill or result.command
    answer: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": result.content}}]
    }
    if source is not None:
        answer["description"] = source.description
    return answer


# -- the skills extension (SEP-2640) -------------------------------------------------------


def skill_entry(contents: SkillContents, uris: SkillUris) -> dict[str, Any]:
    """One ``skills/list`` entry: the URI, the frontmatter as written and every file with its
    digest and size (``"dynamic"`` past the listing bounds)."""
    skill = contents.skill
    resources: list[dict[str, Any]] | str = "dynamic"
    if contents.files is not None:
        resources = [
            {"uri": uris.file_uri(skill, f.file), "digest": "sha256:" + f.sha256, "size": f.size}
            for f in contents.files
        ]
    return {
        "uri": uris.skill_uri(skill),
        "frontmatter": contents.frontmatter,
        "resources": resources,
    }


def skills_page(entries: list[dict[str, Any]], start: int, total: int) -> dict[str, Any]:
    """One page of ``skills/list``."""
    result: dict[str, Any] = {"skills": entries, "ttlMs": TTL_MS, "cacheScope": "private"}
    cursor = _next_cursor(start, total)
    if cursor is not None:
        result["nextCursor"] = cursor
    return result
