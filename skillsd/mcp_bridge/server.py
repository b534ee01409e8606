"""The MCP server: the SDK's low-level ``Server`` over the runtime's use cases.

One process serves one project (``--cwd``, else the client's first root). Sessions, as in the
daemon, carry reload suppression, grants and compaction: on stdio the process serves one client
and is one skillsd session from start to exit, whatever the protocol version; over HTTP one
``Mcp-Session-Id`` is one session, and a request without one (the stateless 2026-07-28 era)
stands alone, with no session. Every request translates MCP params into a use case of
:mod:`skillsd.runtime.requests` and its result back, nothing more.

The MCP client's approval of a tool call stands in for ``ask`` (the host asked its user before
calling); ``deny`` and ``finalDeny`` still refuse, and a skill only the user may invoke is
refused on every model-facing path.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated
from pydantic import ValidationError

from skillsd import __version__
from skillsd import operations as ops
from skillsd.core import limits
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.model_tools import tool_definitions
from skillsd.mcp_bridge.skill_uris import TEMPLATES, SkillUris
from skillsd.runtime import requests as rq
from skillsd.runtime.file_ops import RequestCancelled
from skillsd.runtime.services import Services, View
from skillsd_protocol import KIND_CODES, SkillMetadata
from skillsd_protocol.messages import (
    Command,
    CommandsParams,
    InvokeParams,
    ReadFileParams,
    SkillsChangedParams,
    ToolsCallParams,
)

__all__ = ["SKILLS_EXTENSION", "SKILLS_SETTINGS", "SkillsBridge"]

log = logging.getLogger(__name__)

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
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
#: The protocol version from which results carry ``resultType``.
RESULT_TYPE_SINCE = "2026-07-28"
#: The longest cursor this server gives out (a page offset).
MAX_CURSOR_CHARS = 20

Transport = Literal["stdio", "http"]


class SkillsListParams(types.RequestParams):
    cursor: str | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class DirectoryReadParams(types.RequestParams):
    uri: str


@dataclass(eq=False)
class _Connection:
    """One MCP client: its project, its skillsd session (None: a stateless request) and the
    URIs it subscribed to; ``outbound`` sends it notifications."""

    cwd: str
    session_id: str | None
    outbound: Any = None
    subscribed: set[str] = field(default_factory=set)


def _mcp_error(exc: SkillsdError | RequestCancelled) -> MCPError:
    """The MCP error for a refusal: its JSON-RPC code (never 0) and its one-line message."""
    if isinstance(exc, RequestCancelled):
        return MCPError(REQUEST_CANCELLED, exc.message)
    if isinstance(exc.data, InvalidParamsData):
        return MCPError(INVALID_PARAMS, exc.message)
    return MCPError(int(KIND_CODES.get(exc.kind, INVALID_PARAMS)), exc.message)


class SkillsBridge:
    """The MCP server of one project, over the runtime."""

    def __init__(
        self,
        services: Services,
        cwd: str,
        *,
        cwd_given: bool = True,
        transport: Transport = "stdio",
    ) -> None:
        self.services = services
        self.cwd = cwd
        #: Without ``--cwd``, a client that offers roots names the project (its first root).
        self.cwd_given = cwd_given
        self.transport = transport
        #: stdio: the one client; HTTP: one per ``Mcp-Session-Id``.
        self._stdio: _Connection | None = None
        self._http: dict[str, _Connection] = {}
        self._opening: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: Change events for `subscriptions/listen` streams (the 2026-07-28 era).
        self._bus = InMemorySubscriptionBus()
        #: What every request of this bridge tells the runtime about itself.
        self._caller = rq.Caller(listener=self, host_approves=True)

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
            on_list_resource_templates=self._list_resource_templates,
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
        server.extensions[SKILLS_EXTENSION] = dict(SKILLS_SETTINGS)
        server.middleware.append(_advertise_extension)
        server.middleware.append(_real_errors)
        return server

    @staticmethod
    def initialization_options(server: Server[Any]) -> Any:
        return server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True)
        )

    # -- per connection ----------------------------------------------------------------------

    async def _connection(self, ctx: Any) -> _Connection:
        """The client a request comes from, its skillsd session opened (and held, so the
        session cap never drops it) on its first request."""
        key = self._session_key(ctx)
        conn = self._stdio if self.transport == "stdio" else self._http.get(key or "")
        if conn is not None:
            return conn
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # two first requests at once open one session
            conn = self._stdio if self.transport == "stdio" else self._http.get(key or "")
            if conn is not None:
                return conn
            cwd = self.cwd if self.cwd_given else await self._first_root(ctx) or self.cwd
            session_id = None
            if self.transport == "stdio" or key is not None:
                session, _resumed = self.services.sessions.open(None, cwd)
                self.services.sessions.hold(session.id)
                session_id = session.id
            conn = _Connection(cwd, session_id, ctx.session)
            if self.transport == "stdio":
                self._stdio = conn
            elif key is not None:
                self._http[key] = conn
            # Watching starts with the client, not with its first list: a subscription made
            # right after `initialize` hears the next edit.
            await self.services.view(cwd=cwd, session_id=None, listener=self)
            return conn

    @staticmethod
    def _session_key(ctx: Any) -> str | None:
        """The HTTP client's ``Mcp-Session-Id`` (None on stdio and for stateless requests)."""
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        return headers.get("mcp-session-id") if headers is not None else None

    def end_session(self, mcp_session_id: str) -> None:
        """An HTTP client's session ended (deleted, or expired): its skillsd session goes."""
        conn = self._http.pop(mcp_session_id, None)
        if conn is not None and conn.session_id is not None:
            self.services.sessions.release(conn.session_id)
            self.services.sessions.close(conn.session_id)

    def keep_sessions(self, live: set[str]) -> None:
        """End the skillsd session of every HTTP session not in ``live`` (the transport's)."""
        for ended in [key for key in self._http if key not in live]:
            self.end_session(ended)

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

    async def _view(self, conn: _Connection) -> View:
        """What the client sees, for the listings a face renders itself (resources, prompts)."""
        try:
            view = await self.services.view(cwd=conn.cwd, session_id=conn.session_id, listener=self)
        except SkillsdError as exc:
            raise _mcp_error(exc) from None
        return rq.model_view(view)

    # -- change notifications (catalog cache -> MCP clients) ----------------------------------

    def notify(self, method: str, params: SkillsChangedParams) -> None:
        """A catalog changed on disk: tell each client of that project once (2025-11-25:
        notifications; 2026-07-28: events on the ``subscriptions/listen`` streams)."""
        clients = [self._stdio] if self._stdio is not None else list(self._http.values())
        for conn in clients:
            if conn is not None and os.path.realpath(conn.cwd) == params.cwd:
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
            await conn.outbound.send_resource_list_changed()
            await conn.outbound.send_prompt_list_changed()
            if conn.subscribed:
                view = await self.services.view(cwd=conn.cwd, session_id=conn.session_id)
                uris = SkillUris(view.catalog.skills)
                touched = set(params.changed) | set(params.removed)
                for uri in list(conn.subscribed):
                    target = uris.resolve(uri)
                    if target is None or target.skill.id in touched:
                        await conn.outbound.send_resource_updated(uri)
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
        served = [d.name for d in tool_definitions("default")]
        if params.name not in served:
            # A tool this server does not list is the client's mistake, a protocol error (the
            # runtime also knows other hosts' names for these tools, but MCP clients get these).
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool {params.name!r}; this server's tools are {', '.join(served)}",
            )
        conn = await self._connection(ctx)
        call = ToolsCallParams(
            name=params.name,
            arguments=dict(params.arguments or {}),
            cwd=conn.cwd,
            session_id=conn.session_id,
        )
        try:
            result = await rq.tools_call(self.services, call, self._caller)
        except RequestCancelled as exc:
            raise _mcp_error(exc) from None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)],
            is_error=result.is_error,
        )

    # -- resources ---------------------------------------------------------------------------

    async def _visible(self, ctx: Any) -> tuple[_Connection, list[SkillMetadata], SkillUris]:
        conn = await self._connection(ctx)
        view = await self._view(conn)
        skills = [s for s in view.catalog.skills if s.enabled and s.invocation.model]
        return conn, skills, SkillUris(view.catalog.skills)

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        _conn, skills, uris = await self._visible(ctx)
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

    async def _list_resource_templates(
        self, ctx: Any, params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(uri_template=template, name=name, description=description)
                for template, name, description in TEMPLATES
            ]
        )

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        conn, _skills, uris = await self._visible(ctx)
        uri = str(params.uri)
        target = uris.resolve(uri)
        if target is None:
            raise _unknown_resource(uri)
        read = ReadFileParams(
            id=target.skill.id,
            file=target.file,
            length=limits.MAX_READ_BYTES,
            cwd=conn.cwd,
            session_id=conn.session_id,
        )
        try:
            window = await rq.read_file(self.services, read, self._caller, model=True)
        except SkillsdError as exc:
            if exc.kind == "resource_not_found":
                raise _unknown_resource(uri) from None
            raise _mcp_error(exc) from None
        except RequestCancelled as exc:
            raise _mcp_error(exc) from None
        if window.truncated:
            # Never a silent cut: a file past the read limit is refused, naming it.
            raise MCPError(
                int(KIND_CODES["too_large"]),
                f"{uri}: {window.size} bytes is over the {limits.MAX_READ_BYTES}-byte read "
                "limit; read it in windows with the skill_read_file tool",
            )
        mime = _mime(target.file)
        contents: types.TextResourceContents | types.BlobResourceContents
        if window.encoding == "utf-8":
            contents = types.TextResourceContents(uri=uri, mime_type=mime, text=window.content)
        else:
            contents = types.BlobResourceContents(uri=uri, mime_type=mime, blob=window.content)
        return types.ReadResourceResult(contents=[contents])

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> Any:
        conn = await self._connection(ctx)
        if len(conn.subscribed) >= limits.MAX_MCP_SUBSCRIPTIONS:
            raise MCPError(
                int(KIND_CODES["too_large"]),
                f"this session already holds {limits.MAX_MCP_SUBSCRIPTIONS} subscriptions "
                "(the limit): unsubscribe from some first",
            )
        conn.subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: Any) -> Any:
        (await self._connection(ctx)).subscribed.discard(str(params.uri))
        return types.EmptyResult()

    # -- prompts: the slash commands ---------------------------------------------------------

    async def _prompts(self, conn: _Connection) -> dict[str, Command]:
        """Each command under a unique prompt name: the first of a name in catalog order keeps
        it, the others get ``<name>@<scope>`` so that none hides another."""
        params = CommandsParams(cwd=conn.cwd, session_id=conn.session_id)
        try:
            return await rq.commands(
                self.services,
                params,
                self._caller,
                lambda view, listed: _prompt_names(listed.commands, view),
                key="mcp:prompts",
            )
        except SkillsdError as exc:
            raise _mcp_error(exc) from None

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        prompts = await self._prompts(await self._connection(ctx))
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=name,
                    description=c.description,
                    arguments=[
                        types.PromptArgument(
                            name="arguments",
                            description=c.argument_hint or "what follows the command",
                            required=False,
                        )
                    ],
                )
                for name, c in prompts.items()
            ]
        )

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> Any:
        conn = await self._connection(ctx)
        command = (await self._prompts(conn)).get(params.name)
        arguments = (params.arguments or {}).get("arguments", "")
        invoke = InvokeParams(
            # A skill by its id (its name may be shared); a command file, or an unknown
            # name (answered with suggestions), by name.
            id=command.skill if command is not None else None,
            name=None if command is not None and command.skill else _plain(params.name, command),
            arguments=arguments,
            cwd=conn.cwd,
            session_id=conn.session_id,
        )
        try:
            result = await rq.invoke(self.services, invoke, self._caller)
        except (SkillsdError, RequestCancelled) as exc:
            raise _mcp_error(exc) from None
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

    def _with_result_type(self, ctx: Any, result: dict[str, Any]) -> dict[str, Any]:
        """From 2026-07-28 on every result names its type; the skills extension's are complete."""
        version = getattr(ctx, "protocol_version", None) or ""
        if version >= RESULT_TYPE_SINCE:
            result["resultType"] = "complete"
        return result

    async def _skills_list(self, ctx: Any, params: SkillsListParams) -> dict[str, Any]:
        conn, skills, uris = await self._visible(ctx)
        start = _page_start(params.cursor)
        page = skills[start : start + PAGE]
        contents = await rq.skill_contents(
            self.services, conn.cwd, conn.session_id, page, self._caller
        )
        result: dict[str, Any] = {
            "skills": [_skill_entry(c, uris) for c in contents],
            "ttlMs": TTL_MS,
            "cacheScope": "private",
        }
        if start + PAGE < len(skills):
            result["nextCursor"] = str(start + PAGE)
        return self._with_result_type(ctx, result)

    async def _skills_get(self, ctx: Any, params: SkillsGetParams) -> dict[str, Any]:
        conn, _skills, uris = await self._visible(ctx)
        target = uris.resolve(params.uri)
        if target is None:
            raise MCPError(INVALID_PARAMS, f"no skill {params.uri!r}")
        try:
            contents = await rq.skill_contents(
                self.services, conn.cwd, conn.session_id, [target.skill], self._caller, strict=True
            )
        except (SkillsdError, RequestCancelled) as exc:
            raise _mcp_error(exc) from None
        entry = _skill_entry(contents[0], uris)
        return self._with_result_type(
            ctx, {"skill": entry, "ttlMs": TTL_MS, "cacheScope": "private"}
        )

    async def _directory_read(self, ctx: Any, params: DirectoryReadParams) -> dict[str, Any]:
        """The direct children of a skill's folder: its files, and its subfolders as directory
        resources; a URI that is no folder of a skill (a file, say) is ``-32602``."""
        conn, _skills, uris = await self._visible(ctx)
        # Folders are written without a trailing slash; one is accepted all the same.
        target = uris.resolve(params.uri.rstrip("/") + "/")
        if target is None:
            raise MCPError(INVALID_PARAMS, f"{params.uri} is not a directory resource")
        try:
            files = await rq.skill_files(
                self.services, conn.cwd, conn.session_id, target.skill, self._caller
            )
        except (SkillsdError, RequestCancelled) as exc:
            raise _mcp_error(exc) from None
        folder = target.file.strip("/")
        prefix = folder + "/" if folder else ""
        children: dict[str, dict[str, Any]] = {}
        for file in files:
            if not file.startswith(prefix):
                continue
            name, below, _rest = file[len(prefix) :].partition("/")
            if name in children:
                continue
            child: dict[str, Any] = {
                "uri": uris.file_uri(target.skill, prefix + name),
                "name": name,
            }
            mime = DIRECTORY_MIME if below else _mime(name)
            if mime is not None:
                child["mimeType"] = mime
            children[name] = child
        if not children:  # a folder is known by the files in it: this is a file, or nothing
            raise MCPError(INVALID_PARAMS, f"{params.uri} is not a directory resource")
        return self._with_result_type(
            ctx, {"resources": [children[name] for name in sorted(children)]}
        )


async def _advertise_extension(ctx: Any, call_next: Any) -> Any:
    """Keep the skills extension, with its settings, in the ``initialize`` reply on every
    protocol version: the SDK sieves ``capabilities.extensions`` out of the 2025-11-25 reply."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.setdefault("capabilities", {})
        extensions = capabilities.setdefault("extensions", {})
        extensions.setdefault(SKILLS_EXTENSION, dict(SKILLS_SETTINGS))
    return result


def _unknown_resource(uri: str) -> MCPError:
    """A read of a resource this server does not serve: ``-32602`` naming it in ``data.uri``."""
    return MCPError(INVALID_PARAMS, f"no skill resource {uri!r}", {"uri": uri})


def _mime(file: str) -> str | None:
    """The ``mimeType`` a skill's file is served with (Markdown is the only one it names)."""
    return "text/markdown" if file.endswith(".md") else None


async def _real_errors(ctx: Any, call_next: Any) -> Any:
    """Every failure is an MCP error with a JSON-RPC code and one line: the SDK answers any
    other exception with code 0 and the exception's text, so a bug becomes ``-32603`` here and
    its traceback goes to the log on stderr."""
    try:
        return await call_next(ctx)
    except (MCPError, ValidationError):
        raise
    except SkillsdError as exc:
        raise _mcp_error(exc) from None
    except RequestCancelled as exc:
        raise _mcp_error(exc) from None
    except Exception as exc:
        log.exception("%s failed", getattr(ctx, "method", "a request"))
        raise MCPError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}") from None


def _page_start(cursor: str | None) -> int:
    """The offset a cursor this server gave names; anything else is ``-32602`` naming
    ``cursor``."""
    if cursor is None:
        return 0
    if len(cursor) > MAX_CURSOR_CHARS or not (cursor.isascii() and cursor.isdigit()):
        raise MCPError(INVALID_PARAMS, "`cursor` is not one this server gave")
    return int(cursor)


def _prompt_names(commands: list[Command], view: View) -> dict[str, Command]:
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


def _plain(prompt: str, command: Command | None) -> str:
    return command.name if command is not None else prompt


def _skill_entry(contents: ops.SkillContents, uris: SkillUris) -> dict[str, Any]:
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
