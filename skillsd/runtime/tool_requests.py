"""``tools.call`` (and the MCP tools): a model's decoded tool call run as the request it
names, answered as model text."""

from __future__ import annotations

from dataclasses import dataclass

from skillsd.core import limits
from skillsd.core.catalog.model_tools import (
    ToolRequest,
    decode_tool_call,
    error_text,
    read_file_text,
    user_only_text,
)
from skillsd.core.catalog.search import SearchIndex
from skillsd.core.errors import SkillsdError
from skillsd.core.skill.fs_loading import record_load
from skillsd.runtime.caller import NOBODY, Caller, note_uses, view_for
from skillsd.runtime.catalog_requests import render_prompt
from skillsd.runtime.loading_requests import read_and_render, read_window
from skillsd.runtime.remote_ready import remote_ready
from skillsd.runtime.request_view import (
    RequestView,
    resolve,
)
from skillsd.runtime.search_answers import answer_search, search_tool
from skillsd.runtime.services import Services
from skillsd_protocol.errors import (
    PermissionDeniedData,
    PermissionRequiredData,
)
from skillsd_protocol.messages import (
    LoadParams,
    LoadResult,
    PermissionPrompt,
    PromptParams,
    ReadFileParams,
    RefParams,
    ToolsCallParams,
    ToolsCallResult,
)


async def tools_call(
    svc: Services, params: ToolsCallParams, caller: Caller = NOBODY
) -> ToolsCallResult:
    """``tools.call`` (and the MCP tools): whatever goes wrong becomes model text, in the order a
    model can fix it: the call itself, then the session it names."""
    try:
        request = decode_tool_call(params.name, params.arguments)
        view = await view_for(svc, caller, params.cwd, params.session_id)
        index = await svc.search_index(view) if request.operation == "search" else None
        if request.operation in ("load", "read_file"):
            await remote_ready(svc, view, RefParams(name=request.name, path=request.path))
    except SkillsdError as exc:
        return tool_failure(exc)
    if index is not None:  # in memory: answered on the loop, remembered per catalog
        try:
            return search_tool(view, request, index)
        except SkillsdError as exc:
            return tool_failure(exc)
    call = await svc.file_ops.run(answer_tool_call, view.seen, request, index)
    if call.loaded is not None:
        record_load(view.session, call.loaded, view.catalog)
        note_uses(svc, caller, view, "load", [call.loaded.skill])
    return call.result


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tools.call`` outcome: the model's text, and the load to record in the session."""

    result: ToolsCallResult
    loaded: LoadResult | None = None


def tool_failure(exc: SkillsdError) -> ToolsCallResult:
    """A failed tool call as model text (with the approval to ask for, if that is why)."""
    permission = None
    data = exc.data
    if isinstance(data, PermissionDeniedData | PermissionRequiredData) and data.rule is not None:
        permission = PermissionPrompt(
            decision="deny" if isinstance(data, PermissionDeniedData) else "ask", rule=data.rule
        )
    return ToolsCallResult(content=error_text(exc), is_error=True, permission=permission)


def answer_tool_call(
    view: RequestView,
    request: ToolRequest,
    index: tuple[SearchIndex, frozenset[str]] | None = None,
) -> ToolCall:
    """``tools.call``: the operation a model's decoded tool call names, as model text. A search
    needs ``index`` (and the ids it must treat as disabled). Never raises a ``SkillsdError``."""
    try:
        catalog = view.catalog
        if request.operation == "list":
            # The same budgeted catalog as `skills.prompt` (docs/embedding.md), within the config's
            # prompt bytes: on a large catalog the model is told to search for the rest.
            listed = render_prompt(
                view,
                PromptParams(
                    format="markdown", max_description_chars=limits.PROMPT_DESCRIPTION_CHARS
                ),
            )
            text = listed.text or "No skills are available."
            return ToolCall(ToolsCallResult(content=text, is_error=False))
        if request.operation == "search":
            assert index is not None, "a search needs the view's search index"
            return ToolCall(answer_search(view, request, index))
        ref = RefParams(path=request.path, name=request.name)
        if request.operation == "load":
            skill = resolve(catalog, ref)
            if not skill.invocation.model:
                return ToolCall(ToolsCallResult(content=user_only_text(skill), is_error=True))
            loaded = read_and_render(view, LoadParams(path=ref.path, name=ref.name))
            return ToolCall(ToolsCallResult(content=loaded.content, is_error=False), loaded)
        window = read_window(
            view, ReadFileParams(path=ref.path, name=ref.name, file=request.file or ""), model=True
        )
        return ToolCall(ToolsCallResult(content=read_file_text(window), is_error=False))
    except SkillsdError as exc:
        return ToolCall(tool_failure(exc))
