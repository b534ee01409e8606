"""The MCP server: the SDK's low-level ``Server`` wired to the operations layer (SPEC 16).

One process serves one project (``--cwd``, else each connection's first root). Each MCP
connection is one skillsd session (reload suppression, grants, trust as in the daemon).
Catalogs come from the daemon's own
:class:`~skillsd.daemon.services.Services` (cache, watcher, policy), so what an MCP client sees is
what a skillsd client sees; every request below translates MCP params to an operation and its
result back, nothing more.

The MCP client's approval of a tool call stands in for ``ask`` (the host asked its user before
calling); ``deny`` and ``finalDeny`` still refuse.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import weakref
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated

from skillsd import __version__
from skillsd import operations as ops
from skillsd.core import limits
from skillsd.core.bounded_read import read_regular_file
from skillsd.core.errors import SkillsdError
from skillsd.core.frontmatter import decode_frontmatter, load_frontmatter, locate_frontmatter
from skillsd.core.model_tools import decode_tool_call, tool_definitions
from skillsd.core.permissions import Check
from skillsd.core.resources import list_skill_files
from skillsd.core.skillfile import SKILL_FILE
from skillsd.daemon.services import Services, View
from skillsd.mcp_bridge.skill_uris import SkillUris
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    CommandsParams,
    InvokeParams,
    ReadFileParams,
    SkillsChangedParams,
)

__all__ = ["SKILLS_EXTENSION", "SkillsBridge"]

log = logging.getLogger(__name__)

#: The MCP skills extension (SEP-2640) this server implements.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: Entries per page of ``resources/list`` and ``skills/list``.
PAGE = 100
#: A skill lists its files in ``skills/list`` up to these bounds, else ``"dynamic"`` (SPEC 16).
MAX_LISTED = 512
MAX_LISTED_BYTES = 16 * 1024 * 1024
#: How long a client may cache ``skills/list`` (changes are announced anyway).
TTL_MS = 60_000
INVALID_PARAMS = -32602


class SkillsListParams(types.RequestParams):
    cursor: str | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class DirectoryReadParams(types.RequestParams):
    uri: str


@dataclass(eq=False)
class _Connection:
    """One MCP connection: its project, its skillsd session and the URIs it subscribed to."""

    cwd: str
    session_id: str
    mcp_session: Any
    subscribed: set[str] = field(default_factory=set)


class SkillsBridge:
    """The MCP server of one project, over the daemon's services."""

    def __init__(self, services: Services, cwd: str, *, cwd_given: bool = True) -> None:
        self.services = services
        self.cwd = cwd
        #: Without ``--cwd``, a client that offers roots names the project (its first root).
        self.cwd_given = cwd_given
        self._connections: weakref.WeakKeyDictionary[Any, _Connection] = weakref.WeakKeyDictionary()
        self._tasks: set[asyncio.Task[None]] = set()
        #: Change events for `subscriptions/listen` streams (the 2026-07-28 era).
        self._bus = InMemorySubscriptionBus()

    # -- the SDK server ----------------------------------------------------------------------

    def server(self) -> Server[Any]:
        server: Server[Any] = Server(
            "skillsd",
            version=__version__,
            instructions=(
                "Agent Skills from this project and the user's skill folders. Search with "
                "skill_search, load one with skill_load before following it, read its files "
                "with skill_read_file."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        server.add_request_handler("skills/list", SkillsListParams, self._skills_list)
        server.add_request_handler("skills/get", SkillsGetParams, self._skills_get)
        server.add_request_handler(
            "resources/directory/read", DirectoryReadParams, self._directory_read
        )
        # Declared for server/discover (the 2026-07-28 era) and initialize alike.
        server.extensions[SKILLS_EXTENSION] = {}
        server.middleware.append(_advertise_extension)
        return server

    @staticmethod
    def initialization_options(server: Server[Any]) -> Any:
        return server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True)
        )

    # -- per connection ----------------------------------------------------------------------

    async def _connection(self, ctx: Any) -> _Connection:
        conn = self._connections.get(ctx.session)
        if conn is None:
            cwd = self.cwd if self.cwd_given else await self._first_root(ctx) or self.cwd
            session, _resumed = self.services.sessions.open(None, cwd)
            conn = _Connection(cwd, session.id, ctx.session)
            self._connections[ctx.session] = conn
        return conn

    @staticmethod
    async def _first_root(ctx: Any) -> str | None:
        """The directory of the client's first ``file://`` root, if it offers roots."""
        roots_capability = types.ClientCapabilities(roots=types.RootsCapability())
        try:
            if not ctx.session.check_client_capability(roots_capability):
                return None
            roots = (await ctx.session.list_roots()).roots
        except Exception:  # no back channel, or the client refused: the process cwd it is
            return None
        for root in roots:
            uri = str(root.uri)
            if uri.startswith("file://"):
                path = unquote(uri[len("file://") :])
                if os.path.isdir(path):
                    return os.path.realpath(path)
        return None

    async def _view(self, ctx: Any) -> View:
        conn = await self._connection(ctx)
        view = await self.services.view(cwd=conn.cwd, session_id=conn.session_id, listener=self)
        seen = view.seen
        check = seen.check
        if check is not None:

            def approved(session: Any, tool: str, input: str | None) -> Check:
                # The host asked its user before calling the tool: that answers `ask`.
                result = check(session, tool, input)
                if result.decision == "ask":
                    return Check("allow", result.layer, result.rule)
                return result

            seen = ops.OperationView(
                seen.catalog, seen.session, approved, seen.trust, seen.is_trusted
            )
        return View(seen, view.entry)

    # -- change notifications (catalog cache -> MCP clients) ----------------------------------

    def notify(self, method: str, params: SkillsChangedParams) -> None:
        """A catalog changed on disk (``skills.changed``): tell every connection (2025-11-25:
        notifications; 2026-07-28: events on the ``subscriptions/listen`` streams)."""
        for conn in list(self._connections.values()):
            self._spawn(self._announce(conn, params))
        self._spawn(self._publish(params))

    async def _publish(self, params: SkillsChangedParams) -> None:
        await self._bus.publish(ResourcesListChanged())
        await self._bus.publish(PromptsListChanged())
        view = await self.services.view(cwd=params.cwd, session_id=None)
        uris = SkillUris(view.catalog.skills)
        for sid in params.changed:
            skill = view.catalog.get(sid)
            if skill is not None and skill.enabled:
                await self._bus.publish(ResourceUpdated(uris.skill_uri(skill)))

    async def _announce(self, conn: _Connection, params: SkillsChangedParams) -> None:
        try:
            await conn.mcp_session.send_resource_list_changed()
            await conn.mcp_session.send_prompt_list_changed()
            if conn.subscribed:
                view = await self.services.view(cwd=conn.cwd, session_id=conn.session_id)
                uris = SkillUris(view.catalog.skills)
                touched = set(params.changed) | set(params.removed)
                for uri in list(conn.subscribed):
                    target = uris.resolve(uri)
                    if target is None or target.skill.id in touched:
                        await conn.mcp_session.send_resource_updated(uri)
        except Exception:  # a client gone meanwhile: nothing to tell
            log.debug("could not send a change notification", exc_info=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- tools -------------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=d.name, description=d.description, input_schema=d.input_schema)
                for d in tool_definitions("default")
            ]
        )

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        try:
            request = decode_tool_call(params.name, dict(params.arguments or {}))
            view = await self._view(ctx)
            index = (
                await self.services.search_index(view) if request.operation == "search" else None
            )
        except SkillsdError as exc:
            result = ops.tool_failure(exc)
        else:
            call = await self.services.run_file_op(ops.tools_call, view.seen, request, index)
            if call.loaded is not None:
                ops.record_load(view.session, call.loaded, view.catalog)
            result = call.result
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)],
            is_error=result.is_error,
        )

    # -- resources ---------------------------------------------------------------------------

    async def _visible(self, ctx: Any) -> tuple[View, list[SkillMetadata], SkillUris]:
        view = await self._view(ctx)
        skills = [s for s in view.catalog.skills if s.enabled and s.invocation.model]
        return view, skills, SkillUris(view.catalog.skills)

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        _view, skills, uris = await self._visible(ctx)
        start = _page_start(params.cursor if params is not None else None)
        page = skills[start : start + PAGE]
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=uris.skill_uri(s),
                    name=s.name,
                    description=s.description,
                    mime_type="text/markdown",
                )
                for s in page
            ],
            next_cursor=str(start + PAGE) if start + PAGE < len(skills) else None,
        )

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        view, _skills, uris = await self._visible(ctx)
        uri = str(params.uri)
        target = uris.resolve(uri)
        if target is None:
            raise MCPError(INVALID_PARAMS, f"no skill resource {uri!r}")
        read = ReadFileParams(id=target.skill.id, file=target.file, length=limits.MAX_READ_BYTES)
        try:
            window = await self.services.run_file_op(ops.read_file, view.seen, read, model=True)
        except SkillsdError as exc:
            raise MCPError(INVALID_PARAMS, exc.message) from None
        mime = "text/markdown" if target.file.endswith(".md") else None
        contents: types.TextResourceContents | types.BlobResourceContents
        if window.encoding == "utf-8":
            contents = types.TextResourceContents(uri=uri, mime_type=mime, text=window.content)
        else:
            contents = types.BlobResourceContents(uri=uri, mime_type=mime, blob=window.content)
        return types.ReadResourceResult(contents=[contents])

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> Any:
        (await self._connection(ctx)).subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: Any) -> Any:
        (await self._connection(ctx)).subscribed.discard(str(params.uri))
        return types.EmptyResult()

    # -- prompts: the slash commands ---------------------------------------------------------

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        view = await self._view(ctx)
        listed = ops.commands(view.seen, CommandsParams())
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=c.name,
                    description=c.description,
                    arguments=[
                        types.PromptArgument(
                            name="arguments",
                            description=c.argument_hint or "what follows the command",
                            required=False,
                        )
                    ],
                )
                for c in listed.commands
            ]
        )

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> Any:
        view = await self._view(ctx)
        arguments = (params.arguments or {}).get("arguments", "")
        conn = await self._connection(ctx)
        invoke = InvokeParams(name=params.name, arguments=arguments, session_id=conn.session_id)
        try:
            invocation = await self.services.run_file_op(ops.invoke, view.seen, invoke)
        except SkillsdError as exc:
            raise MCPError(INVALID_PARAMS, exc.message) from None
        ops.record_invocation(view.session, invocation)
        result = invocation.result
        source = result.skill or result.command
        return types.GetPromptResult(
            description=source.description if source is not None else None,
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=result.content)
                )
            ],
        )

    # -- the skills extension (SEP-2640) -----------------------------------------------------

    async def _skills_list(self, ctx: Any, params: SkillsListParams) -> dict[str, Any]:
        _view, skills, uris = await self._visible(ctx)
        start = _page_start(params.cursor)
        page = skills[start : start + PAGE]
        entries = await asyncio.to_thread(lambda: [_skill_entry(s, uris) for s in page])
        result: dict[str, Any] = {"skills": entries, "ttlMs": TTL_MS, "cacheScope": "private"}
        if start + PAGE < len(skills):
            result["nextCursor"] = str(start + PAGE)
        return result

    async def _skills_get(self, ctx: Any, params: SkillsGetParams) -> dict[str, Any]:
        _view, skills, uris = await self._visible(ctx)
        target = uris.resolve(params.uri)
        if target is None or target.skill not in skills:
            raise MCPError(INVALID_PARAMS, f"no skill {params.uri!r}")
        entry = await asyncio.to_thread(_skill_entry, target.skill, uris)
        return {"skill": entry, "ttlMs": TTL_MS, "cacheScope": "private"}

    async def _directory_read(self, ctx: Any, params: DirectoryReadParams) -> dict[str, Any]:
        _view, skills, uris = await self._visible(ctx)
        target = uris.resolve(params.uri if params.uri.endswith("/") else params.uri + "/")
        if target is None or target.skill not in skills:
            raise MCPError(INVALID_PARAMS, f"no skill directory {params.uri!r}")
        folder = target.file.rstrip("/")
        files = await asyncio.to_thread(list_skill_files, target.skill.dir)
        inside = [f for f in [SKILL_FILE, *files] if not folder or f.startswith(folder + "/")]
        return {
            "resources": [
                {"uri": uris.file_uri(target.skill, f), "name": f.rsplit("/", 1)[-1]}
                for f in inside
            ]
        }


async def _advertise_extension(ctx: Any, call_next: Any) -> Any:
    """Keep the skills extension in the ``initialize`` reply on every protocol version: the
    SDK sieves ``capabilities.extensions`` out of the 2025-11-25 reply (SPEC 16)."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.setdefault("capabilities", {})
        capabilities.setdefault("extensions", {}).setdefault(SKILLS_EXTENSION, {})
    return result


def _page_start(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise MCPError(INVALID_PARAMS, f"cursor {cursor!r} is not one this server gave")
    return int(cursor)


def _skill_entry(skill: SkillMetadata, uris: SkillUris) -> dict[str, Any]:
    """One ``skills/list`` entry: the URI, the frontmatter as written (all strings) and every
    file with its digest and size (``"dynamic"`` past the listing bounds)."""
    files = [SKILL_FILE, *list_skill_files(skill.dir, max_files=MAX_LISTED + 1)]
    resources: list[dict[str, Any]] | str = []
    total = 0
    for name in files:
        if len(files) > MAX_LISTED:
            resources = "dynamic"
            break
        try:
            read = read_regular_file(f"{skill.dir}/{name}", MAX_LISTED_BYTES - total)
        except (OSError, ValueError):
            continue
        total += len(read.data)
        if read.over_cap:
            resources = "dynamic"
            break
        assert isinstance(resources, list)
        resources.append(
            {
                "uri": uris.file_uri(skill, name),
                "digest": "sha256:" + hashlib.sha256(read.data).hexdigest(),
                "size": len(read.data),
            }
        )
    return {
        "uri": uris.skill_uri(skill),
        "frontmatter": _frontmatter(skill.path),
        "resources": resources,
    }


def _frontmatter(path: str) -> dict[str, Any]:
    """A SKILL.md's frontmatter as written (the all-strings YAML of SPEC 1)."""
    try:
        read = read_regular_file(path, limits.MAX_SKILL_FILE_BYTES)
        located = locate_frontmatter(read.data, at_eof=True)
        if located is None:
            return {}
        return dict(load_frontmatter(decode_frontmatter(read.data, located)))
    except Exception:  # changed since it was listed: the next list says so
        return {}
