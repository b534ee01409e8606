"""The "installed" view (key ``i``): every skill of the cwd's lock file with its state (ok,
modified, missing, links broken), and update, check and remove actions (``skills.installed``,
``skills.update``, ``skills.remove``; see ``docs/install-skills.md``)."""

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
from skillsd.tui.dialogs import Choice, ChoiceDialog
from skillsd_client import AsyncClient, ClientError
from skillsd_protocol.install import LockedSkill, ScanFinding, UpdateResult

__all__ = ["InstalledScreen"]

_STATUS_STYLE = {"ok": "green", "modified": "yellow", "missing": "red", "links-broken": "red"}


def _row(skill: LockedSkill) -> Text:
    row = Text()
    row.append(f"{escape_controls(skill.name):30} ")
    row.append(f"{skill.status:13}", style=_STATUS_STYLE.get(skill.status, ""))
    pin = f"@{skill.commit[:12]}" if skill.commit else ""
    row.append(escape_controls(f"{skill.source}{pin}"), style="dim")
    return row


def _details(skill: LockedSkill) -> str:
    lines = [f"{skill.name}: {skill.status}", f"  {skill.path}"]
    lines += [f"  modified {path}" for path in skill.files]
    if skill.status == "modified" and not skill.files:
        lines.append("  (which files: this machine has no record of the installed files)")
    lines += [f"  broken {link}" for link in skill.broken_links]
    if skill.ref:
        lines.append(f"  ref {skill.ref}")
    return escape_controls("\n".join(lines), multiline=True)


def _findings_text(findings: list[ScanFinding]) -> str:
    """The scan's warnings and dangers of one skill, for its details."""
    notable = [f for f in findings if f.severity != "info"]
    if not notable:
        return "  scan: nothing to warn about"
    lines = [f"  scan: {len(notable)} finding(s)"]
    for f in notable:
        where = f"{f.file}:{f.line}" if f.line is not None else f.file
        lines.append(f"    {f.severity} {where}: [{f.code}] {f.message}")
    return escape_controls("\n".join(lines), multiline=True)


def _update_summary(result: UpdateResult) -> str:
    if not result.updates:
        return "everything is up to date"
    lines = []
    for u in result.updates:
        state = "updated" if u.applied else f"not applied: {u.skipped}"
        lines.append(f"{u.name}: {u.from_[:12]} -> {u.to[:12]} ({state})")
        lines += [f"  + {p}" for p in u.files.added]
        lines += [f"  ~ {p}" for p in u.files.changed]
        lines += [f"  - {p}" for p in u.files.removed]
    return escape_controls("\n".join(lines), multiline=True)


class InstalledScreen(ModalScreen[None]):
    """The skills the cwd's lock file installed, with their state and actions."""

    DEFAULT_CSS = """
    InstalledScreen { align: center middle; }
    InstalledScreen > Vertical {
        width: 100; max-width: 100%; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    InstalledScreen #installed-title { text-style: bold; height: 1; }
    InstalledScreen #installed-list { height: 1fr; border: none; }
    InstalledScreen #installed-detail { height: auto; max-height: 12; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "update", "Update"),
        Binding("k", "check", "Check updates"),
        Binding("x", "remove", "Remove"),
        Binding("r", "reload", "Reload"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, client: AsyncClient, cwd: str) -> None:
        super().__init__()
        self.client = client
        self.cwd = cwd
        self.skills: list[LockedSkill] = []
        self.lock_path = ""
        #: The scan's findings per installed skill path, asked once per reload.
        self.findings: dict[str, list[ScanFinding]] = {}

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Installed skills", id="installed-title")
            yield OptionList(id="installed-list")
            yield Static("", id="installed-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @property
    def selected(self) -> LockedSkill | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.skills):
            return None
        return self.skills[index]

    def _say(self, text: str) -> None:
        self.query_one("#installed-detail", Static).update(Text(text))

    def _report(self, what: str, exc: ClientError) -> None:
        self.notify(escape_controls(f"{what}: {exc}"), severity="error", timeout=8, markup=False)

    @work(group="installed", exclusive=True)
    async def reload(self) -> None:
        try:
            result = await self.client.installed(cwd=self.cwd)
        except ClientError as exc:
            self._report("listing installed skills failed", exc)
            return
        self.skills = result.skills
        self.lock_path = result.lock
        self.findings = {}
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        options.add_options([Option(_row(s), id=s.name) for s in self.skills])
        title = f"Installed skills · {len(self.skills)} in {escape_controls(result.lock)}"
        self.query_one("#installed-title", Static).update(Text(title))
        if self.skills:
            options.highlighted = min(keep or 0, len(self.skills) - 1)
            self._show(self.skills[options.highlighted])
        else:
            self._say("No skills installed here yet: `skillsd add SOURCE` installs some.")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        skill = self.selected
        if skill is not None:
            self._show(skill)

    def _show(self, skill: LockedSkill) -> None:
        """The skill's details, then what the scan sees in it (asked once)."""
        findings = self.findings.get(skill.path)
        if findings is not None:
            self._say(f"{_details(skill)}\n{_findings_text(findings)}")
            return
        self._say(_details(skill))
        if skill.status != "missing":
            self._scan(skill)

    @work(group="installed-scan", exclusive=True)
    async def _scan(self, skill: LockedSkill) -> None:
        try:
            result = await self.client.scan(path=skill.path, cwd=self.cwd)
        except ClientError as exc:
            self._report(f"scanning {skill.name} failed", exc)
            return
        self.findings[skill.path] = result.findings
        if self.selected == skill:
            self._show(skill)

    @work(group="installed-action", exclusive=True)
    async def _update(self, names: list[str] | None, check: bool) -> None:
        self._say("checking sources..." if check else "updating...")
        try:
            result = await self.client.update(names=names, check=check, cwd=self.cwd)
        except ClientError as exc:
            self._report("update failed", exc)
            return
        self._say(_update_summary(result))
        if not check:
            self.reload()

    @work(group="installed-action", exclusive=True)
    async def _remove(self, name: str) -> None:
        try:
            await self.client.remove(name=name, cwd=self.cwd)
        except ClientError as exc:
            self._report(f"removing {name} failed", exc)
            return
        self.notify(escape_controls(f"removed {name}"), markup=False)
        self.reload()

    def action_update(self) -> None:
        skill = self.selected
        if skill is not None:
            self._update([skill.name], False)

    def action_check(self) -> None:
        self._update(None, True)

    def action_remove(self) -> None:
        skill = self.selected
        if skill is None:
            return
        name = skill.name

        def answered(value: str | None) -> None:
            if value == "remove":
                self._remove(name)

        self.app.push_screen(
            ChoiceDialog(
                f"Remove {name}?",
                "Its folder, the links made for it and its lock entry go.",
                [Choice("y", "remove it", "remove")],
            ),
            answered,
        )

    def action_reload(self) -> None:
        self.reload()

    def action_close(self) -> None:
        self.dismiss(None)
