"""The skill methods of ``skillsd mcp``: each request's params become a use case of
:mod:`skillsd.runtime.use_cases`, and its result an MCP result
(:mod:`skillsd.mcp_bridge.mcp_results`), nothing more.

One instance serves one client, which is one skillsd session (reload suppression, grants and
compaction work as in the daemon): on stdio the process, from start to exit, whatever the
protocol version; over HTTP one ``Mcp-Session-Id`` (``stateless``: the 2026-07-28 requests,
each of which stands alone, in no session). The session opens with the first request that needs
it, in the project named by ``--cwd``, else by the client's first root, else the process's cwd;
watching starts then too, so a subscription made right after ``initialize`` hears the next edit.

The MCP client's approval of a tool call stands in for ``ask`` (the host asked its user before
calling); ``deny`` and ``finalDeny`` still refuse, and a skill only the user may invoke is
refused on every model-facing path.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote

import msgspec

from skillsd.core import limits
from skillsd.core.catalog.model_tools import tool_definitions
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.errors import SkillsdError
from skillsd.core.skill.host_fields import model_may_see
from skillsd.mcp_bridge import mcp_results as mr
from skillsd.mcp_bridge.exchange import ClientRefused, Exchange, Peer
from skillsd.mcp_bridge.skill_uris import TEMPLATES, SkillUris
from skillsd.runtime import use_cases as rq
from skillsd.runtime.file_ops import RequestCancelled
from skillsd.runtime.services import Services, View
from skillsd_protocol import KIND_CODES, SkillMetadata
from skillsd_protocol.messages import (
    Command,
    CommandsParams,
    InvokeParams,
    ReadFileParams,
    SessionOpenParams,
    SkillsChangedParams,
    ToolsCallParams,
)

__all__ = ["NativeSkills"]

log = logging.getLogger(__name__)

_Wire = dict[str, Any]
_P = TypeVar("_P")


class _Page(msgspec.Struct):
    cursor: str | None = None


class _Uri(msgspec.Struct):
    uri: str


class _ToolCall(msgspec.Struct):
    name: str
    arguments: dict[str, Any] | None = None


class _PromptGet(msgspec.Struct):
    name: str
    arguments: dict[str, str] | None = None


def _listed(catalog: Catalog) -> tuple[list[SkillMetadata], SkillUris]:
    """The skills the model may see of ``catalog`` and their URIs, worked out once per
    catalog (a changed catalog, or a session's own enable flags, is another catalog)."""

    def build() -> tuple[list[SkillMetadata], SkillUris]:
        skills = [s for s in catalog.skills if model_may_see(s)]
        return skills, SkillUris(catalog.skills)

    return catalog.derived("mcp:visible", build)


def _params(ex: Exchange, shape: type[_P]) -> _P:
    """The request's params in ``shape``; ``-32602`` saying what does not fit."""
    try:
        return msgspec.convert(ex.params, shape)
    except msgspec.ValidationError as exc:
        raise mr.McpFailure(-32602, f"Invalid params for {ex.method}: {exc}") from None


@dataclass(eq=False)
class _Client:
    """The client: its project, its skillsd session and the URIs it subscribed to."""

    cwd: str
    #: None: requests that stand alone (HTTP on 2026-07-28), with no session.
    session_id: str | None
    subscribed: set[str] = field(default_factory=set)


class NativeSkills:
    """The skill methods of one project, over the runtime's services."""

    def __init__(
        self,
        services: Services,
        cwd: str,
        *,
        cwd_given: bool,
        peer: Peer,
        stateless: bool = False,
    ) -> None:
        self.services = services
        #: Each request stands alone, in no skillsd session (HTTP on 2026-07-28).
        self.stateless = stateless
        self.cwd = cwd
        #: Without ``--cwd``, a client that offers roots names the project (its first root).
        self.cwd_given = cwd_given
        self.peer = peer
        self._client: _Client | None = None
        #: The skillsd session this client holds (its lease: released when it goes).
        self._held: set[str] = set()
        self._opening: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._tools = [d.name for d in tool_definitions("default")]
        self._methods: dict[str, Callable[[Exchange], Awaitable[_Wire]]] = {
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "skills/list": self._skills_list,
            "skills/get": self._skills_get,
            "resources/directory/read": self._directory_read,
        }

    @property
    def _caller(self) -> rq.Caller:
        """What every request of this face tells the runtime about itself: its client's name
        is known once the handshake gave one."""
        return rq.Caller(listener=self, host_approves=True, client=self.peer.client_name)

    async def call(self, ex: Exchange) -> _Wire:
        """Serve one request; every refusal is an `~skillsd.mcp_bridge.mcp_results.McpFailure`
        with its JSON-RPC code."""
        try:
            return await self._methods[ex.method](ex)
        except (SkillsdError, RequestCancelled) as exc:
            raise mr.failure(exc) from None

    async def watch(self, ex: Exchange) -> None:
        """Make sure the client's project is watched (a listen stream hears its changes)."""
        await self._connection(ex)

    def end(self) -> None:
        """The client is gone (an HTTP session deleted or expired): its skillsd session
        closes and its catalogs stop telling it of changes."""
        self.services.catalogs.forget_listener(self)
        self._client = None
        rq.release_sessions(self.services, self._held, close=True)

    # -- the client --------------------------------------------------------------------------

    async def _connection(self, ex: Exchange) -> _Client:
        """The client, its skillsd session opened (and held, so the session cap never drops
        it) by its first request that needs one."""
        if self._client is not None:
            return self._client
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # two first requests at once open one session
            if self._client is not None:
                return self._client
            cwd = self.cwd if self.cwd_given else await self._first_root(ex) or self.cwd
            if self.stateless:
                client = self._client = _Client(cwd, None)
            else:
                # The same lease as a daemon connection's, the same cwd check.
                opened = SessionOpenParams(cwd=cwd)
                session, _resumed = await rq.lease_session(self.services, opened, self._held)
                client = self._client = _Client(cwd, session.id)
            # Watching starts with the client, not with its first list: a subscription made
            # right after `initialize` hears the next edit.
            await self.services.view(cwd=cwd, session_id=None, listener=self)
            return client

    async def _first_root(self, ex: Exchange) -> str | None:
        """The directory of the client's first ``file://`` root when it offers roots, asked
        with ``roots/list`` in the handshake era (a 2026-07-28 server asks its client nothing)."""
        if ex.modern or not isinstance((ex.capabilities or {}).get("roots"), dict):
            return None
        try:
            listed = await self.peer.request("roots/list")
        except ClientRefused:
            return None
        roots = listed.get("roots") if isinstance(listed, dict) else None
        if not isinstance(roots, list) or not all(
            isinstance(r, dict) and isinstance(r.get("uri"), str) and r["uri"].startswith("file://")
            for r in roots
        ):
            return None  # no roots answer: the process's cwd it is
        paths = [unquote(root["uri"][len("file://") :]) for root in roots]
        # Probing folders waits on the filesystem: never on the loop.
        return await asyncio.to_thread(_first_folder, paths)

    async def _view(self, client: _Client) -> View:
        """What the client sees, for the listings this face renders itself."""
        view = await self.services.view(cwd=client.cwd, session_id=client.session_id, listener=self)
        return rq.model_view(view)

    async def _visible(self, ex: Exchange) -> tuple[_Client, list[SkillMetadata], SkillUris]:
        client = await self._connection(ex)
        view = await self._view(client)
        skills, uris = _listed(view.catalog)
        return client, skills, uris

    # -- change notifications (catalog cache -> the client) ----------------------------------

    def notify(self, method: str, params: SkillsChangedParams) -> None:
        """A catalog changed on disk: tell the client once (the handshake era: notifications;
        2026-07-28: events on its ``subscriptions/listen`` streams)."""
        client = self._client
        if (
            client is not None
            and self.peer.era != "modern"
            and os.path.realpath(client.cwd) == params.cwd
        ):
            self._spawn(self._announce(client, params))
        self._spawn(self._publish(params))

    async def _announce(self, client: _Client, params: SkillsChangedParams) -> None:
        try:
            self.peer.send_notification("notifications/resources/list_changed")
            self.peer.send_notification("notifications/prompts/list_changed")
            if client.subscribed:
                view = await self.services.view(cwd=client.cwd, session_id=client.session_id)
                uris = SkillUris(view.catalog.skills)
                touched = set(params.changed) | set(params.removed)
                for uri in list(client.subscribed):
                    target = uris.resolve(uri)
                    if target is None or target.skill.id in touched:
                        self.peer.send_notification("notifications/resources/updated", {"uri": uri})
        except Exception:  # the client gone meanwhile: nothing to tell
            log.debug("could not send a change notification", exc_info=True)

    async def _publish(self, params: SkillsChangedParams) -> None:
        listeners = self.peer.listeners
        listeners.publish("resources")
        listeners.publish("prompts")
        if not listeners.wants_updates():
            return
        try:
            view = await self.services.view(cwd=params.cwd, session_id=None)
        except SkillsdError:  # a catalog that cannot be read now: the next change tells
            log.debug("could not find the updated skills", exc_info=True)
            return
        uris = SkillUris(view.catalog.skills)
        for sid in params.changed:
            skill = view.catalog.get(sid)
            if skill is not None and skill.enabled:
                listeners.publish("updated", uris.skill_uri(skill))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        # In a context of its own: a change noticed while some request runs is no part of that
        # request (over HTTP it would go out in that request's reply).
        task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- tools -------------------------------------------------------------------------------

    async def _call_tool(self, ex: Exchange) -> _Wire:
        params = _params(ex, _ToolCall)
        unknown = mr.unknown_tool(params.name, self._tools)
        if unknown is not None:
            raise unknown
        client = await self._connection(ex)
        call = ToolsCallParams(
            name=params.name,
            arguments=dict(params.arguments or {}),
            cwd=client.cwd,
            session_id=client.session_id,
        )
        return mr.tool_result(await rq.tools_call(self.services, call, self._caller))

    # -- resources ---------------------------------------------------------------------------

    async def _list_resources(self, ex: Exchange) -> _Wire:
        params = _params(ex, _Page)
        client = await self._connection(ex)
        catalog = (await self._view(client)).catalog
        entries = catalog.derived("mcp:resources", lambda: mr.resource_entries(*_listed(catalog)))
        return mr.resource_page(entries, mr.page_start(params.cursor))

    async def _list_templates(self, ex: Exchange) -> _Wire:
        _params(ex, _Page)
        return mr.resource_templates(TEMPLATES)

    async def _read_resource(self, ex: Exchange) -> _Wire:
        uri = _params(ex, _Uri).uri
        client = await self._connection(ex)
        view = await self._view(client)
        target = _listed(view.catalog)[1].resolve(uri)
        if target is None:
            raise mr.unknown_resource(uri)
        read = ReadFileParams(
            id=target.skill.id,
            file=target.file,
            length=limits.MAX_READ_BYTES,
            cwd=client.cwd,
            session_id=client.session_id,
        )
        try:
            window = await rq.read_file(self.services, read, self._caller, model=True, seen=view)
        except SkillsdError as exc:
            if exc.kind == "resource_not_found":
                raise mr.unknown_resource(uri) from None
            raise
        return mr.read_result(uri, target.file, window)

    async def _subscribe(self, ex: Exchange) -> _Wire:
        uri = _params(ex, _Uri).uri
        client = await self._connection(ex)
        if len(client.subscribed) >= limits.MAX_MCP_SUBSCRIPTIONS:
            raise mr.McpFailure(
                int(KIND_CODES["too_large"]),
                f"this session already holds {limits.MAX_MCP_SUBSCRIPTIONS} subscriptions "
                "(the limit): unsubscribe from some first",
            )
        client.subscribed.add(uri)
        return {}

    async def _unsubscribe(self, ex: Exchange) -> _Wire:
        uri = _params(ex, _Uri).uri
        (await self._connection(ex)).subscribed.discard(uri)
        return {}

    # -- prompts: the slash commands ---------------------------------------------------------

    async def _prompts(self, client: _Client, view: View | None = None) -> dict[str, Command]:
        params = CommandsParams(cwd=client.cwd, session_id=client.session_id)
        return await rq.commands(
            self.services,
            params,
            self._caller,
            lambda view, listed: mr.prompt_names(listed.commands, view),
            key="mcp:prompts",
            seen=view,
        )

    async def _list_prompts(self, ex: Exchange) -> _Wire:
        _params(ex, _Page)
        return mr.prompt_list(await self._prompts(await self._connection(ex)))

    async def _get_prompt(self, ex: Exchange) -> _Wire:
        params = _params(ex, _PromptGet)
        client = await self._connection(ex)
        view = await self._view(client)  # one view for the name and the invocation
        command = (await self._prompts(client, view)).get(params.name)
        skill_id, name = mr.prompt_target(params.name, command)
        invoke = InvokeParams(
            id=skill_id,
            name=name,
            arguments=(params.arguments or {}).get("arguments", ""),
            cwd=client.cwd,
            session_id=client.session_id,
        )
        return mr.prompt_result(await rq.invoke(self.services, invoke, self._caller, seen=view))

    # -- the skills extension (SEP-2640) -----------------------------------------------------

    @staticmethod
    def _with_result_type(ex: Exchange, result: _Wire) -> _Wire:
        """From 2026-07-28 on every result names its type; the skills extension's are complete."""
        if ex.modern:
            result["resultType"] = "complete"
        return result

    async def _skills_list(self, ex: Exchange) -> _Wire:
        params = _params(ex, _Page)
        client, skills, uris = await self._visible(ex)
        start = mr.page_start(params.cursor)
        page = skills[start : start + mr.PAGE]
        contents = await rq.skill_contents(
            self.services, client.cwd, client.session_id, page, self._caller
        )
        entries = [mr.skill_entry(c, uris) for c in contents]
        return self._with_result_type(ex, mr.skills_page(entries, start, len(skills)))

    async def _skills_get(self, ex: Exchange) -> _Wire:
        uri = _params(ex, _Uri).uri
        client, _skills, uris = await self._visible(ex)
        target = uris.resolve(uri)
        if target is None:
            raise mr.McpFailure(-32602, f"no skill {uri!r}")
        contents = await rq.skill_contents(
            self.services, client.cwd, client.session_id, [target.skill], self._caller, strict=True
        )
        entry = mr.skill_entry(contents[0], uris)
        return self._with_result_type(
            ex, {"skill": entry, "ttlMs": mr.TTL_MS, "cacheScope": "private"}
        )

    async def _directory_read(self, ex: Exchange) -> _Wire:
        uri = _params(ex, _Uri).uri
        client, _skills, uris = await self._visible(ex)
        # Folders are written without a trailing slash; one is accepted all the same.
        target = uris.resolve(uri.rstrip("/") + "/")
        if target is None:
            raise mr.not_a_directory(uri)
        files = await rq.skill_files(
            self.services, client.cwd, client.session_id, target.skill, self._caller
        )
        return self._with_result_type(ex, mr.directory_listing(uri, target, files, uris))


def _first_folder(paths: list[str]) -> str | None:
    """The real path of the first of ``paths`` that is a folder (a client's first root)."""
    for path in paths:
        if os.path.isdir(path):
            return os.path.realpath(path)
    return None
