"""The search tool's answers, remembered per catalog.

A model's ``skill_search`` is a pure function of the search index (built from one catalog), the
query, its limit and scope, and the skills the view hides from the model; the config's search
limits and the cwd come with the catalog. So an answer is kept on the catalog it was computed
for (:meth:`~skillsd.core.catalog.skill_catalog.Catalog.derived`): a changed catalog is a new object
with nothing remembered, and the old answers go with the old catalog. At most
:data:`MAX_ANSWERS` per catalog, the least recently asked dropped first.

The search runs on the event loop, as ``skills.search`` does: the index is in memory, and
handing it to a thread cost more than the search of a small catalog.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from skillsd.core.catalog.model_tools import ToolRequest, search_text
from skillsd.core.catalog.search import SearchIndex
from skillsd.runtime.catalog_requests import search_in
from skillsd.runtime.request_view import RequestView
from skillsd.runtime.services import View
from skillsd_protocol.messages import SearchParams, ToolsCallResult

__all__ = ["MAX_ANSWERS", "Answers", "answer_search", "search_tool"]

#: Search answers kept per catalog.
MAX_ANSWERS = 256
_DERIVED_KEY = "runtime:search-answers"


class Answers:
    """A bounded memory of answers by key (least recently used dropped first)."""

    def __init__(self, most: int = MAX_ANSWERS) -> None:
        self._most = most
        self._known: OrderedDict[Hashable, ToolsCallResult] = OrderedDict()

    def __len__(self) -> int:
        return len(self._known)

    def get(self, key: Hashable, make: Callable[[], ToolsCallResult]) -> ToolsCallResult:
        known = self._known.get(key)
        if known is not None:
            self._known.move_to_end(key)
            return known
        answer = self._known[key] = make()
        if len(self._known) > self._most:
            self._known.popitem(last=False)
        return answer


def answer_search(
    view: RequestView, request: ToolRequest, index: tuple[SearchIndex, frozenset[str]]
) -> ToolsCallResult:
    """The search tool's answer as model text, computed now. Raises ``SkillsdError`` (a query
    the search refuses); the tool call turns it into model text."""
    found = search_in(
        view,
        index[0],
        SearchParams(query=request.query or "", limit=request.limit, scope=request.scope),
        # The model never sees the skills only the user may invoke (docs/conformance.md).
        disabled_ids=index[1] | view.catalog.model_hidden,
    )
    return ToolsCallResult(content=search_text(found), is_error=False)


def search_tool(
    view: View, request: ToolRequest, index: tuple[SearchIndex, frozenset[str]]
) -> ToolsCallResult:
    """The search tool's answer to ``request`` over ``index`` (the view's search index and the
    ids it must treat as disabled), remembered when the index is the catalog's shared one.
    Raises as :func:`answer_search` does (nothing is remembered then)."""

    def make() -> ToolsCallResult:
        return answer_search(view.seen, request, index)

    shared = view.entry.search_index
    if shared is None or shared[1] is not index[0]:
        return make()  # an index made for this request alone (a session re-enabled a skill)
    hidden = index[1] | view.catalog.model_hidden
    key = (request.query, request.limit, request.scope, hidden)
    return shared[0].derived(_DERIVED_KEY, Answers).get(key, make)
