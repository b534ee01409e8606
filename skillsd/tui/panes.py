"""The picker's panes: the skill list, the detail pane and the errors pane.

Everything shown is built as `rich.text.Text` rather than markup, so a skill's description or
body containing ``[brackets]`` is shown as written, never interpreted; control characters in
names, descriptions, paths and contents are shown escaped (:func:`escape_controls`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static, Tree
from textual.widgets.option_list import Option, OptionDoesNotExist

from skillsd.core.display_text import escape_controls
from skillsd.core.skill.host_fields import invocation_marks, slash_usage
from skillsd.tui.detail import SkillDetail, ToolDecision
from skillsd.tui.scans import ScanState
from skillsd_protocol import Diagnostic, SkillLoadError, SkillMetadata
from skillsd_protocol.install import ScanFinding
from skillsd_protocol.messages import CheckResult, SearchHit
from skillsd_protocol.model import SCOPE_ORDER

__all__ = ["DetailPane", "ErrorsPane", "SkillList", "TopBar", "display_path"]

_DECISION_STYLE = {"allow": "green", "ask": "yellow", "deny": "red"}
_SEVERITY_STYLE = {"error": "bold red", "danger": "bold red", "warning": "yellow", "info": "cyan"}
#: The list's mark of a skill whose scan found something, by the worst severity found.
SCAN_MARKS = {"danger": ("!", "bold red"), "warning": ("?", "dim yellow")}


def display_path(path: str, cwd: str | None = None) -> str:
    """``path`` relative to ``cwd`` when inside it, else with the home directory as ``~``;
    control characters escaped."""
    if cwd:
        if path == cwd:
            return "."
        if path.startswith(cwd.rstrip(os.sep) + os.sep):
            return escape_controls(os.path.relpath(path, cwd))
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home + os.sep):
        return escape_controls("~" + path[len(home) :])
    return escape_controls(path)


#: A part of the top bar: its text and style.
Part = tuple[str, str]
#: The fewest cells the top bar shortens the directory to before it drops the generation.
PATH_MIN = 16


def _left_cut(text: str, cells: int) -> str:
    """``text`` cut from the left to at most ``cells`` cells, the cut marked with ``…``."""
    if cell_len(text) <= cells:
        return text
    if cells <= 1:
        return "…"[:cells]
    start = 0
    while cell_len(text[start:]) > cells - 1:
        start += 1
    return "…" + text[start:]


class TopBar(Static):
    """The line above the search box, fitted to its width: past the width, the directory is
    shortened from the left (its last folders are what tell projects apart), then the least
    useful parts are dropped; what comes first is cut last."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: tuple[list[Part], str, list[Part], list[Part]] = ([], "", [], [])

    def show(self, head: list[Part], path: str, tail: list[Part], spare: list[Part]) -> None:
        """``head``, the directory ``path``, ``tail`` and the ``spare`` parts (dropped first)."""
        self._parts = (head, path, tail, spare)
        self.update(self._fit())

    def on_resize(self) -> None:
        self.update(self._fit())

    def _fit(self) -> Text:
        head, path, tail, spare = self._parts
        width = self.content_size.width or max(self.app.size.width - 2, 0)

        def cells(parts: list[Part]) -> int:
            return sum(cell_len(t) for t, _ in parts)

        room = width - cells(head + tail + spare)
        if room < min(cell_len(path), PATH_MIN):
            spare, room = [], width - cells(head + tail)
        text = Text(no_wrap=True, overflow="ellipsis")
        for part, style in [*head, (_left_cut(path, max(room, 1)), ""), *tail, *spare]:
            text.append(part, style=style)
        return text


def _warnings(skill: SkillMetadata) -> int:
    return sum(d.severity != "info" for d in skill.diagnostics)


def _row(skill: SkillMetadata, tag: Text | None = None, scan: ScanState | None = None) -> Text:
    """Two lines: a checkbox, the scan's mark, the name and warnings; then ``tag`` (if any)
    and the description."""
    line = Text()
    line.append("[x] " if skill.enabled else "[ ] ", style="green" if skill.enabled else "dim")
    mark = SCAN_MARKS.get(scan.worst or "") if scan is not None else None
    if mark is not None:
        # Before the name, so that a long name cut at the list's edge never hides it.
        symbol, style = mark
        line.append(f"{symbol} ", style=style)
    line.append(escape_controls(skill.name), style="bold" if skill.enabled else "dim strike")
    count = _warnings(skill)
    if count:
        line.append(f" ⚠{count}", style="yellow")
    if not skill.enabled:
        line.append(" disabled", style="dim italic")
    for invocation in invocation_marks(skill):
        line.append(f" {invocation}", style="magenta")
    line.append("\n    ")
    if tag is not None:
        line.append_text(tag)
        line.append(" ")
    line.append(escape_controls(skill.description.replace("\n", " ")), style="dim")
    return line


class SkillList(OptionList):
    """The catalog grouped by scope, or the ranked search hits, one two-line row per skill;
    an option's id is the skill's id (group headers have none and are disabled)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Details", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: The scans known so far, by skill id (the app's `ScanQueue.results`).
        self.scans: Mapping[str, ScanState] = {}
        #: Each shown skill and its tag, to redraw its row when its scan arrives.
        self._shown: dict[str, tuple[SkillMetadata, Text | None]] = {}

    @property
    def shown_ids(self) -> list[str]:
        """The ids of the skills shown, in list order."""
        return list(self._shown)

    def ids_from_highlight(self, count: int) -> list[str]:
        """Up to ``count`` ids of shown skills, from the highlighted one down."""
        ids = self.shown_ids
        current = self.highlighted_id
        start = ids.index(current) if current in ids else 0
        return ids[start : start + count]

    def redraw(self, ids: Iterable[str]) -> None:
        """Redraw the rows of ``ids`` (their scan arrived)."""
        for skill_id in ids:
            shown = self._shown.get(skill_id)
            if shown is not None:
                skill, tag = shown
                self.replace_option_prompt(skill_id, self._row(skill, tag))

    def _row(self, skill: SkillMetadata, tag: Text | None = None) -> Text:
        self._shown[skill.id] = (skill, tag)
        return _row(skill, tag, self.scans.get(skill.id))

    def show_catalog(self, skills: Sequence[SkillMetadata], keep: str | None) -> None:
        """Show ``skills`` under one header per scope, keeping skill ``keep`` highlighted;
        disabled ones are marked (and found by search too, so they can be enabled again)."""
        self._shown = {}
        options: list[Option | None] = []
        for scope in sorted(SCOPE_ORDER, key=SCOPE_ORDER.__getitem__):
            members = [s for s in skills if s.scope == scope]
            if not members:
                continue
            enabled = sum(s.enabled for s in members)
            header = Text(f"{scope} · {len(members)} skills, {enabled} enabled", style="bold")
            options.append(Option(header, disabled=True))
            options.extend(Option(self._row(s), id=s.id) for s in members)
        self._replace(options, keep)

    def show_hits(
        self,
        hits: Sequence[SearchHit],
        count: int,
        truncated: bool,
        keep: str | None,
        activates: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """Show search hits in rank order, each with its scope, match reason and score; the
        ones ``skills.suggest`` would activate for the request (ids in ``activates``) marked."""
        shown = f"{len(hits)} of {count}" if truncated else str(count)
        header = Text(f"{shown} {'match' if count == 1 else 'matches'}")
        if activates:
            header.append(f" · {len(activates)} would activate (▶)")
        header.stylize("bold")
        self._shown = {}
        options: list[Option | None] = [Option(header, disabled=True)]
        for hit in hits:
            mark = "▶ " if hit.skill.id in activates else ""
            tag = Text(f"{mark}{hit.reason} {hit.score:.2f} · {hit.skill.scope}", style="cyan")
            options.append(Option(self._row(hit.skill, tag), id=hit.skill.id))
        self._replace(options, keep)

    def show_message(self, message: str) -> None:
        """Replace the rows with one line of text (not connected, nothing found...)."""
        self._shown = {}
        self._replace([Option(Text(escape_controls(message), style="italic"), disabled=True)], None)

    @property
    def highlighted_id(self) -> str | None:
        """The id of the highlighted skill, if a skill row is highlighted."""
        option = self.highlighted_option
        return None if option is None else option.id

    def _replace(self, options: Iterable[Option | None], keep: str | None) -> None:
        self.set_options(options)
        target = None
        if keep is not None:
            try:
                target = self.get_option_index(keep)
            except OptionDoesNotExist:
                target = None
        if target is None:
            target = next((i for i, option in enumerate(self.options) if not option.disabled), None)
        self.highlighted = target


def _decision(check: CheckResult) -> Text:
    text = Text(check.decision, style=f"bold {_DECISION_STYLE[check.decision]}")
    via = check.layer if check.rule is None else f"{check.layer}: {check.rule}"
    text.append(escape_controls(f" ({via})"), style="dim")
    if check.granted_by:
        text.append(escape_controls(f" granted by {', '.join(check.granted_by)}"), style="dim")
    return text


def _tool_line(tool: ToolDecision) -> Text:
    line = Text("  ")
    line.append(escape_controls(tool.rule), style="bold")
    line.append("  ")
    if tool.check is None:
        line.append(escape_controls(f"not checked: {tool.problem}"), style="red")
        return line
    line.append_text(_decision(tool.check))
    loaded = tool.when_loaded
    if loaded != tool.check.decision:
        line.append(" → ", style="dim")
        line.append(f"{loaded} while loaded", style=_DECISION_STYLE.get(loaded or "", ""))
    return line


def _diagnostic_line(diagnostic: Diagnostic, indent: str = "  ") -> Text:
    line = Text(indent)
    line.append(diagnostic.severity, style=_SEVERITY_STYLE.get(diagnostic.severity, ""))
    line.append(f" {diagnostic.code}", style="bold")
    line.append(escape_controls(f": {diagnostic.message}"))
    return line


def _finding_line(finding: ScanFinding, indent: str = "  ") -> Text:
    """``severity file:line: [code] message``, as ``skillsd doctor`` says it."""
    line = Text(indent)
    line.append(finding.severity, style=_SEVERITY_STYLE.get(finding.severity, ""))
    where = finding.file if finding.line is None else f"{finding.file}:{finding.line}"
    line.append(escape_controls(f" {where}: "))
    line.append(escape_controls(f"[{finding.code}]"), style="bold")
    line.append(escape_controls(f" {finding.message}"))
    return line


def scan_text(scan: ScanState | None) -> Text:
    """The detail pane's scan section for one skill (None: not scanned yet)."""
    text = Text()
    text.append("Scan", style="bold underline")
    if scan is None:
        text.append("  scanning (skills.scan)…\n", style="dim")
        return text
    if scan.error is not None:
        text.append(escape_controls(f"  failed: {scan.error}") + "\n", style="red")
        return text
    notable = scan.notable
    info = len(scan.findings) - len(notable)
    also = f" (and {info} info)" if info else ""
    if not notable:
        text.append(f"  nothing to warn about{also}\n", style="dim")
        return text
    count = f"{len(notable)} finding{'' if len(notable) == 1 else 's'}{also}"
    text.append(f"  {count}\n", style="dim")
    for finding in notable:
        text.append_text(_finding_line(finding))
        text.append("\n")
    return text


def _file_tree_paths(files: Sequence[str]) -> dict[str, list[str]]:
    """Directory (``""`` for the skill's top level) -> the files directly in it."""
    tree: dict[str, list[str]] = {}
    for file in files:
        tree.setdefault(os.path.dirname(file), []).append(file)
    return tree


class DetailPane(VerticalScroll, can_focus=True):
    """One skill: summary, diagnostics, load permission, allowed tools with their decisions,
    resource tree (enter opens a file) and the content ``skills.load`` renders."""

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        yield Static(id="scan")
        yield Static(id="permissions")
        yield Static(id="resources-title")
        tree: Tree[str] = Tree("files", id="resources")
        tree.show_root = False
        yield tree
        yield Static(id="content")

    def show_message(self, message: str) -> None:
        """Clear the pane and show ``message``."""
        self.query_one("#summary", Static).update(Text(escape_controls(message), style="italic"))
        for name in ("scan", "permissions", "resources-title", "content"):
            self.query_one(f"#{name}", Static).update("")
        self.query_one("#resources", Tree).display = False

    def show(self, detail: SkillDetail, cwd: str, scan: ScanState | None) -> None:
        """Render ``detail`` (paths shown relative to ``cwd``) and its ``scan``."""
        skill = detail.skill
        self.query_one("#summary", Static).update(self._summary(skill, cwd))
        self.show_scan(scan)
        self.query_one("#permissions", Static).update(self._permissions(detail))
        tree: Tree[str] = self.query_one("#resources", Tree)
        tree.clear()
        title = self.query_one("#resources-title", Static)
        counts = skill.resources
        summary = (
            f"scripts {counts.scripts} · references {counts.references} · "
            f"assets {counts.assets} · other {counts.other}"
        )
        if detail.loaded is not None:
            files = detail.loaded.files
            title.update(
                Text.assemble(
                    ("\nResources", "bold underline"),
                    (f"  {len(files)} files; enter opens one\n", "dim"),
                )
            )
            for directory, names in sorted(_file_tree_paths(files).items()):
                # Text, not a str: Tree parses str labels as markup.
                label = Text(escape_controls(directory + "/"))
                parent = tree.root if not directory else tree.root.add(label, expand=True)
                for name in names:
                    parent.add_leaf(Text(escape_controls(os.path.basename(name))), data=name)
            tree.display = bool(files)
        else:
            title.update(
                Text.assemble(
                    ("\nResources", "bold underline"),
                    (f"  {summary}\n", "dim"),
                    ("  the file list comes with skills.load (press a to approve loading)", "dim"),
                )
            )
            tree.display = False
        self.query_one("#content", Static).update(self._content(detail))

    def show_scan(self, scan: ScanState | None) -> None:
        """Render the scan section (None: still scanning)."""
        self.query_one("#scan", Static).update(scan_text(scan))

    @property
    def resource_tree(self) -> Tree[str]:
        """The resource tree (hidden when there is nothing to open)."""
        tree: Tree[str] = self.query_one("#resources", Tree)
        return tree

    @staticmethod
    def _summary(skill: SkillMetadata, cwd: str) -> Text:
        text = Text()
        text.append(escape_controls(skill.name), style="bold")
        text.append("  ")
        text.append(
            "enabled" if skill.enabled else "disabled",
            style="green" if skill.enabled else "red",
        )
        text.append(f"\n{escape_controls(skill.description, multiline=True)}\n")
        text.append(f"scope {skill.scope} · root {display_path(skill.root, cwd)}\n", style="dim")
        text.append(f"{display_path(skill.path, cwd)}\n", style="dim")
        extras = []
        if skill.license:
            extras.append(f"license {skill.license}")
        if skill.compatibility:
            extras.append(f"compat {skill.compatibility}")
        if skill.metadata and skill.metadata.get("tags"):
            extras.append(f"tags {skill.metadata['tags']}")
        if skill.same_name:
            extras.append(f"same name as {len(skill.same_name)} other skill(s)")
        extras += invocation_marks(skill)
        usage = slash_usage(skill)
        if usage is not None and skill.host is not None and skill.host.argument_hint:
            extras.append(f"c runs {usage}")
        if extras:
            text.append(escape_controls(" · ".join(extras)) + "\n", style="dim")
        if skill.diagnostics:
            text.append("Warnings\n", style="bold underline")
            for diagnostic in skill.diagnostics:
                text.append_text(_diagnostic_line(diagnostic))
                text.append("\n")
        return text

    @staticmethod
    def _permissions(detail: SkillDetail) -> Text:
        text = Text()
        text.append("Load permission\n", style="bold underline")
        text.append(f"  {escape_controls(detail.load_rule)}  ")
        text.append_text(_decision(detail.load_check))
        if detail.load_check.decision != "allow":
            text.append("\n  press a to answer for this skill", style="dim")
        text.append("\n")
        text.append("\nAllowed tools", style="bold underline")
        if not detail.tools:
            text.append("  none requested\n", style="dim")
            return text
        text.append("  decision now → while the skill is loaded\n", style="dim")
        for tool in detail.tools:
            text.append_text(_tool_line(tool))
            text.append("\n")
        return text

    @staticmethod
    def _content(detail: SkillDetail) -> Text:
        text = Text()
        if detail.loaded is not None:
            text.append("\nContent", style="bold underline")
            text.append("  rendered by skills.load (codelia)\n", style="dim")
            text.append(escape_controls(detail.loaded.content, multiline=True))
        elif detail.source is not None:
            text.append("\nSKILL.md", style="bold underline")
            text.append(
                f"  as read by skills.readFile: loading is {detail.load_check.decision}\n",
                style="dim",
            )
            if detail.source.encoding == "utf-8":
                text.append(escape_controls(detail.source.content, multiline=True))
            else:
                text.append("(not UTF-8 text)", style="italic")
        if detail.content_error:
            text.append(f"\n{escape_controls(detail.content_error)}", style="red")
        return text


class ErrorsPane(VerticalScroll, can_focus=True):
    """Skills that failed validation, with every diagnostic, the discovery's problems, and
    what the static scan found in the listed skills."""

    def compose(self) -> ComposeResult:
        yield Static(id="errors-text")

    def show(
        self,
        errors: Sequence[SkillLoadError],
        diagnostics: Sequence[Diagnostic],
        cwd: str,
        findings: Sequence[tuple[SkillMetadata, ScanState]] = (),
        progress: str = "",
    ) -> None:
        """Render the catalog's ``errors`` and top-level ``diagnostics``, then each skill's scan
        ``findings`` (skills without warnings or dangers are left out) and the scan's
        ``progress`` (how many listed skills are scanned)."""
        text = Text()
        notable = [(skill, scan) for skill, scan in findings if scan.notable or scan.error]
        if not errors and not diagnostics and not notable:
            text.append("No invalid skills, discovery problems or scan findings.", style="italic")
            if progress:
                text.append(f" ({progress})", style="dim")
            text.append("\n")
        for error in errors:
            text.append(display_path(error.path, cwd), style="bold")
            text.append(f"\n  {escape_controls(error.message)}\n", style="red")
            for diagnostic in error.diagnostics:
                text.append_text(_diagnostic_line(diagnostic, "    "))
                text.append("\n")
            text.append("\n")
        if diagnostics:
            text.append("Discovery diagnostics\n", style="bold underline")
            for diagnostic in diagnostics:
                text.append_text(_diagnostic_line(diagnostic))
                if diagnostic.path:
                    text.append(f" ({display_path(diagnostic.path, cwd)})", style="dim")
                text.append("\n")
            text.append("\n")
        if notable:
            text.append("Scan findings", style="bold underline")
            text.append(
                f"  skills.scan; {progress}\n" if progress else "  skills.scan\n", style="dim"
            )
            for skill, scan in notable:
                text.append(escape_controls(skill.name), style="bold")
                text.append(f" ({skill.scope}) {display_path(skill.dir, cwd)}\n", style="dim")
                if scan.error is not None:
                    text.append(escape_controls(f"  scan failed: {scan.error}") + "\n", style="red")
                for finding in scan.notable:
                    text.append_text(_finding_line(finding))
                    text.append("\n")
        self.query_one("#errors-text", Static).update(text)
