"""The method table: each method's params and result types. Dispatcher, clients and the JSON
Schema are all derived from it."""

from __future__ import annotations

from typing import Any

import msgspec

from skillsd_protocol import messages as m

PROTOCOL_VERSION = "1.0"


class MethodSpec(msgspec.Struct, frozen=True):
    """A method's params type and result type (``None`` result means JSON ``null``)."""

    params: type[msgspec.Struct]
    result: Any


METHODS: dict[str, MethodSpec] = {
    "initialize": MethodSpec(m.InitializeParams, m.InitializeResult),
    "shutdown": MethodSpec(m.Params, None),
    "ping": MethodSpec(m.Params, m.Empty),
    "skills.list": MethodSpec(m.ListParams, m.ListResult),
    "skills.search": MethodSpec(m.SearchParams, m.SearchResult),
    "skills.load": MethodSpec(m.LoadParams, m.LoadResult),
    "skills.unload": MethodSpec(m.UnloadParams, m.UnloadResult),
    "skills.readFile": MethodSpec(m.ReadFileParams, m.ReadFileResult),
    "skills.validate": MethodSpec(m.ValidateParams, m.ValidateResult),
    "skills.setEnabled": MethodSpec(m.SetEnabledParams, m.SetEnabledResult),
    "skills.prompt": MethodSpec(m.PromptParams, m.PromptResult),
    "skills.mentions": MethodSpec(m.MentionsParams, m.MentionsResult),
    "tools.list": MethodSpec(m.ToolsListParams, m.ToolsListResult),
    "tools.call": MethodSpec(m.ToolsCallParams, m.ToolsCallResult),
    "session.open": MethodSpec(m.SessionOpenParams, m.SessionOpenResult),
    "session.close": MethodSpec(m.SessionCloseParams, m.Empty),
    "session.compacted": MethodSpec(m.SessionCompactedParams, m.SessionCompactedResult),
    "context.inspect": MethodSpec(m.InspectParams, m.InspectResult),
    "permissions.check": MethodSpec(m.CheckParams, m.CheckResult),
    "permissions.remember": MethodSpec(m.RememberParams, m.Empty),
    "agents.list": MethodSpec(m.AgentsListParams, m.AgentsListResult),
    "agents.get": MethodSpec(m.AgentsGetParams, m.AgentsGetResult),
}

#: Notifications: client->server ones first, then the server's.
NOTIFICATIONS: dict[str, type[msgspec.Struct]] = {
    "initialized": m.Params,
    "exit": m.Params,
    "$/cancelRequest": m.CancelParams,
    "$/progress": m.ProgressParams,
    "skills.changed": m.SkillsChangedParams,
}
