"""Modal screens: a question answered with one key, and a file viewer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from skillsd.core.display_text import escape_controls
from skillsd_protocol.messages import ReadFileResult

__all__ = ["Choice", "ChoiceDialog", "FileDialog"]


@dataclass(frozen=True, slots=True)
class Choice:
    """One answer: the key that picks it, what it means, and the value the dialog returns."""

    key: str
    label: str
    value: str


class ChoiceDialog(ModalScreen[str | None]):
    """A question answered by pressing one of its choices' keys; escape answers None."""

    DEFAULT_CSS = """
    ChoiceDialog { align: center middle; }
    ChoiceDialog > Vertical {
        width: 64; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ChoiceDialog .question { text-style: bold; margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, explanation: str, choices: Sequence[Choice]) -> None:
        super().__init__()
        self._question = question
        self._explanation = explanation
        self._choices = tuple(choices)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(escape_controls(self._question)), classes="question")
            if self._explanation:
                yield Static(Text(escape_controls(self._explanation), style="dim"))
            lines = Text()
            for choice in self._choices:
                lines.append(f"\n {choice.key} ", style="bold reverse")
                lines.append(f" {choice.label}")
            lines.append("\n esc ", style="bold reverse")
            lines.append(" cancel")
            yield Static(lines)

    def on_key(self, event: events.Key) -> None:
        for choice in self._choices:
            if event.key == choice.key:
                event.stop()
                self.dismiss(choice.value)
                return

    def action_cancel(self) -> None:
        self.dismiss(None)


class FileDialog(ModalScreen[None]):
    """A file read with ``skills.readFile``, scrollable with the keyboard; escape closes it."""

    DEFAULT_CSS = """
    FileDialog { align: center middle; }
    FileDialog > Vertical {
        width: 100%; height: 1fr; border: round $accent; background: $surface;
    }
    FileDialog .file-title { background: $accent 30%; padding: 0 1; }
    FileDialog VerticalScroll { padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, skill_name: str, result: ReadFileResult) -> None:
        super().__init__()
        self._skill_name = skill_name
        self._result = result

    def compose(self) -> ComposeResult:
        result = self._result
        title = f"{self._skill_name}/{result.file} · {result.size} bytes · {result.encoding}"
        if result.truncated:
            title += " · truncated: only the first window is shown"
        with Vertical():
            shown = escape_controls(title)
            yield Static(Text(shown, no_wrap=True, overflow="ellipsis"), classes="file-title")
            body = (
                Text(escape_controls(result.content, multiline=True))
                if result.encoding == "utf-8"
                else Text(f"binary file ({result.size} bytes): not shown", style="italic")
            )
            with VerticalScroll(id="file-body"):
                yield Static(body)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#file-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
