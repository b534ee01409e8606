"""The command palette (key ``c``): type ``/name arguments``, see matching commands and the
argument hint as you type, tab to complete the name, enter to invoke (``skills.invoke``) and read
what the model would receive. Escape closes it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from skillsd.core.display_text import escape_controls
from skillsd.core.skill.invocation import parse_command
from skillsd_protocol.messages import Command, InvokeResult

__all__ = ["CommandPalette", "matching_commands"]

#: Suggestions shown under the input at once.
SHOWN = 8

#: Invokes the typed command text; raises on a refusal (its message is shown).
Invoke = Callable[[str], Awaitable[InvokeResult]]


def matching_commands(commands: Sequence[Command], typed: str) -> list[Command]:
    """The commands for what is typed so far: an exact name alone once arguments begin, else
    names starting with the typed name, then names containing it."""
    name, _rest = parse_command(typed)
    started_arguments = typed.lstrip().lstrip("/") != name
    if started_arguments:
        return [c for c in commands if c.name == name]
    prefix = [c for c in commands if c.name.startswith(name)]
    inside = [c for c in commands if name and name in c.name and c not in prefix]
    return prefix + inside


class CommandPalette(ModalScreen[None]):
    """Slash commands of the app's cwd, run as the user would type them."""

    DEFAULT_CSS = """
    CommandPalette { align: center top; }
    CommandPalette > Vertical {
        width: 100%; height: 1fr; border: round $accent; background: $surface;
    }
    CommandPalette #command-input { border: none; height: 1; padding: 0 1; }
    CommandPalette #command-hint { height: auto; padding: 0 1; color: $text-muted; }
    CommandPalette VerticalScroll { padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("tab", "complete", "Complete", priority=True),
    ]

    def __init__(self, commands: Sequence[Command], invoke: Invoke) -> None:
        super().__init__()
        self.commands = list(commands)
        self._invoke = invoke
        #: The last invocation shown (None before the first, or after a refusal).
        self.result: InvokeResult | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(placeholder="/command arguments (tab completes)", id="command-input")
            yield Static(id="command-hint")
            with VerticalScroll(id="command-output"):
                yield Static(id="command-result")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#command-input", Input).focus()
        self._show_hint("")

    @on(Input.Changed, "#command-input")
    def _typed(self, event: Input.Changed) -> None:
        self._show_hint(event.value)

    def _show_hint(self, typed: str) -> None:
        found = matching_commands(self.commands, typed)
        text = Text()
        if not found:
            text.append("no command matches", style="italic")
        elif len(found) == 1:
            command = found[0]
            text.append(escape_controls(f"/{command.name}"), style="bold")
            if command.argument_hint:
                text.append(escape_controls(f" {command.argument_hint}"), style="bold cyan")
            text.append(escape_controls(f"  {command.description}"))
            if command.source == "command":
                text.append("  (.claude/commands)", style="dim")
        else:
            for command in found[:SHOWN]:
                text.append(escape_controls(f"/{command.name}"), style="bold")
                if command.argument_hint:
                    text.append(escape_controls(f" {command.argument_hint}"), style="cyan")
                text.append(escape_controls(f"  {command.description}") + "\n", style="dim")
            if len(found) > SHOWN:
                text.append(f"… {len(found) - SHOWN} more", style="dim")
        self.query_one("#command-hint", Static).update(text)

    def action_complete(self) -> None:
        box = self.query_one("#command-input", Input)
        found = matching_commands(self.commands, box.value)
        if found:
            box.value = f"/{found[0].name} "
            box.cursor_position = len(box.value)

    @on(Input.Submitted, "#command-input")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.run_invocation(event.value)

    @work(exclusive=True, group="invoke")
    async def run_invocation(self, typed: str) -> None:
        """Invoke ``typed`` and show the result (or why it was refused)."""
        output = self.query_one("#command-result", Static)
        try:
            result = await self._invoke(typed)
        except Exception as exc:  # a refusal or a lost connection: say it, keep the palette
            self.result, self.error = None, str(exc)
            output.update(Text(escape_controls(f"refused: {exc}"), style="bold red"))
            return
        self.result, self.error = result, None
        shown = Text()
        shown.append(escape_controls(result.content, multiline=True))
        if result.dynamic_context:
            shown.append("\n\nDynamic context (not run):\n", style="bold")
            for entry in result.dynamic_context:
                shown.append(escape_controls(f"  {entry.decision:<5} {entry.command}") + "\n")
        if result.withheld_grants:
            shown.append("\nWithheld until the repository is trusted: ", style="bold yellow")
            shown.append(escape_controls(", ".join(result.withheld_grants)))
        output.update(shown)

    def action_close(self) -> None:
        self.dismiss(None)
