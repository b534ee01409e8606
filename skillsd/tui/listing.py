"""The "listing" view (key ``l``): what each agent shows its model in this folder, skill by
skill (``skills.listing``; docs/agents.md): in full, by name only, or not at all, and why.
``n`` moves to the next agent."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from skillsd.core.display_text import escape_controls
from skillsd_client import AsyncClient, ClientError
from skillsd_protocol.listing import ListingEntry, ListingResult

__all__ = ["AGENTS", "ListingScreen", "summary"]

#: The agents the view goes through, with their titles.
AGENTS: tuple[tuple[str, str], ...] = (("claude-code", "Claude Code"), ("codex", "Codex"))

_STYLE = {"full": "green", "name-only": "yellow", "user-only": "dim", "off": "dim"}


def summary(title: str, result: ListingResult) -> str:
    """The view's title line for one agent's listing."""
    if not result.modelled:
        return escape_controls(result.why or f"{title}: not modelled")
    return (
        f"{title}: {result.full} of {result.shown} skills in full; budget "
        f"{result.budget_chars} characters, {result.used_chars} used"
    )


def _row(entry: ListingEntry) -> Text:
    row = Text()
    row.append(f"{entry.shown:10} ", style=_STYLE.get(entry.shown, ""))
    name = escape_controls(entry.name) + (" (bundled)" if entry.bundled else "")
    row.append(f"{name:34} ")
    row.append(escape_controls(entry.why), style="dim")
    return row


class ListingScreen(ModalScreen[None]):
    """One agent's listing at a time; ``n`` for the next agent."""

    DEFAULT_CSS = """
    ListingScreen { align: center middle; }
    ListingScreen > Vertical {
        width: 110; max-width: 100%; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ListingScreen #listing-title { text-style: bold; height: auto; }
    ListingScreen #listing-list { height: 1fr; border: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_agent", "Next agent"),
        Binding("r", "reload", "Reload"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, client: AsyncClient, cwd: str) -> None:
        super().__init__()
        self.client = client
        self.cwd = cwd
        self.agent = 0
        self.result: ListingResult | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="listing-title")
            yield OptionList(id="listing-list")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @work(group="listing", exclusive=True)
    async def reload(self) -> None:
        agent, title = AGENTS[self.agent]
        header = self.query_one("#listing-title", Static)
        try:
            result = await self.client.listing(agent=agent, cwd=self.cwd)
        except ClientError as exc:
            header.update(Text(escape_controls(f"{title}: {exc}")))
            return
        self.result = result
        header.update(Text(summary(title, result)))
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(_row(e)) for e in result.entries])

    def action_next_agent(self) -> None:
        self.agent = (self.agent + 1) % len(AGENTS)
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    def action_close(self) -> None:
        self.dismiss(None)
