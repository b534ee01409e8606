"""`SkillsApp`: the terminal skills picker, a Textual app driving the daemon as a client.

It is a host like any other: it connects through ``skillsd_client`` (by default to the shared
per-user daemon, started if needed), opens its own session, lists the cwd's catalog with that
session, searches with ``skills.search`` as the user types, toggles skills with
``skills.setEnabled`` and re-lists whenever the daemon sends ``skills.changed``. The listed
skills are scanned with ``skills.scan`` in the background (`skillsd.tui.scans`), so that what
``skillsd doctor`` warns about shows in the list, the detail and the Errors tab. Nothing here
reads skill files itself.

Every daemon call runs in a Textual worker; the workers of one kind are exclusive, so a newer
keystroke or selection cancels the older request (the client cancels it at the daemon too).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable
from typing import ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, TabbedContent, TabPane, Tree

from skillsd import __version__
from skillsd.core.display_text import escape_controls
from skillsd.tui.command_palette import CommandPalette
from skillsd.tui.detail import SkillDetail, fetch_detail
from skillsd.tui.dialogs import Choice, ChoiceDialog, FileDialog
from skillsd.tui.installed import InstalledScreen
from skillsd.tui.listing import ListingScreen
from skillsd.tui.panes import DetailPane, ErrorsPane, SkillList, TopBar, display_path
from skillsd.tui.scans import ScanQueue
from skillsd_client import AsyncClient, ClientError, ConnectError, Notification
from skillsd_protocol import Scope, SkillMetadata
from skillsd_protocol.install import ScanResult
from skillsd_protocol.messages import (
    ClientInfo,
    InvokeResult,
    ListResult,
    SearchResult,
    SkillsChangedParams,
)

__all__ = ["Connector", "SkillsApp", "shared_connector"]

#: Opens a connection to a daemon; the app calls it on start and on every reconnect.
Connector = Callable[[], Awaitable[AsyncClient]]

#: Seconds any one request may take before the picker gives up on it (and says so).
REQUEST_TIMEOUT = 30.0
#: The status while all is well (the top bar shows any other status first).
CONNECTED = "connected"
#: The most hits one search shows (the daemon clamps larger limits to this anyway).
SEARCH_LIMIT = 50
#: Rows from the highlighted one down scanned first when the highlight moves (about a page).
SCAN_AHEAD = 12
#: Seconds scan results are gathered before the rows they change are redrawn together.
SCAN_REDRAW_DELAY = 0.1


def shared_connector(socket_path: str | os.PathLike[str] | None = None) -> Connector:
    """Connect to the shared per-user daemon (or the one on ``socket_path``), starting it
    when nobody is listening."""

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(socket_path, timeout=REQUEST_TIMEOUT)

    return connect


#: A search of at least this many words is taken for a request: its suggestions are marked.
REQUEST_WORDS = 3


class SearchInput(Input):
    """The search box: down or enter moves to the results."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "app.focus_list", "Results", show=False),
        Binding("enter", "app.focus_list", "Results", show=False),
    ]


class SkillsApp(App[None]):
    """The skills picker for one cwd. ``connect`` opens the daemon connection (default: the
    shared daemon); tests inject one that reaches a daemon on a temporary tree."""

    TITLE = "skillsd"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #topbar { height: 1; background: $panel; padding: 0 1; }
    #search { height: 1; border: none; padding: 0 1; background: $surface; }
    #search:focus { background: $boost; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    SkillList {
        width: 2fr; min-width: 30; height: 1fr; border: none;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    SkillList:focus { border: none; }
    DetailPane { width: 3fr; height: 1fr; padding: 0 1; border-left: solid $panel-lighten-2; }
    #resources { height: auto; max-height: 12; }
    ErrorsPane { padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_search", "Search"),
        Binding("s", "next_scope", "Scope"),
        Binding("c", "commands", "Run"),
        Binding("space", "toggle_enabled", "Toggle"),
        Binding("a", "approve", "Allow"),
        Binding("t", "trust", "Trust"),
        Binding("e", "errors", "Errors"),
        Binding("i", "installed", "Installed"),
        Binding("l", "listing", "Listing", show=False),
        # Left out of the footer so the rest fits 80 columns: the list reloads by itself when
        # files change, and enter on a skill is what anyone tries first.
        Binding("r", "reload", "Reload", show=False),
        Binding("q", "quit", "Quit"),
        Binding("escape", "leave", "Back", show=False),
    ]

    class CatalogChanged(Message):
        """The daemon sent ``skills.changed`` for some cwd."""

        def __init__(self, params: SkillsChangedParams) -> None:
            super().__init__()
            self.params = params

    class Disconnected(Message):
        """The connection to the daemon ended without the app closing it."""

    def __init__(self, cwd: str | os.PathLike[str] = ".", *, connect: Connector | None = None):
        super().__init__()
        self.cwd = os.path.abspath(os.fspath(cwd))
        self._connector = connect or shared_connector()
        self.client: AsyncClient | None = None
        self.session_id: str | None = None
        #: The last ``skills.list`` result, and the last search (None while the box is empty).
        self.catalog: ListResult | None = None
        #: Listings asked for so far: a reply is shown only when no later listing was asked for
        #: meanwhile (a listing sent before a toggle can be answered after the one sent after it).
        self._listings = 0
        self.search_result: SearchResult | None = None
        self.search_text = ""
        #: The scope filter (None: every scope), cycled with ``s``.
        self.scope: Scope | None = None
        #: What the detail pane shows.
        self.detail: SkillDetail | None = None
        self.status = "starting"
        #: The static scans of the listed skills, run in the background.
        self.scans = ScanQueue(self._scan_skill, self._scan_done)
        #: Skills whose scan arrived since the rows were last redrawn.
        self._scanned_since: set[str] = set()

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar")
        yield SearchInput(placeholder="/ search skills (skills.search)", id="search")
        with TabbedContent(initial="skills-tab"):
            with TabPane("Skills", id="skills-tab"), Horizontal():
                yield SkillList(id="skills")
                yield DetailPane(id="detail")
            with TabPane("Errors", id="errors-tab"):
                yield ErrorsPane(id="errors")
        yield Footer(compact=True)

    @property
    def _main(self) -> Screen[object]:
        """The picker's own screen: updates arrive while a dialog is on top of it too."""
        return self.screen_stack[0]

    def on_mount(self) -> None:
        skills = self._main.query_one(SkillList)
        skills.scans = self.scans.results
        skills.show_message("connecting to skillsd…")
        self._main.query_one(DetailPane).show_message("")
        self._show_topbar()
        skills.focus()
        self.run_scans()
        self.connect()

    def _show_topbar(self) -> None:
        # The connection state first, so that a narrow terminal cuts the counts, never it.
        head = [("skillsd ", "bold")]
        if self.status != CONNECTED:
            head.append((f"{self.status} · ", "bold yellow"))
        tail = []
        catalog = self.catalog
        if catalog is not None:
            # workspace trust: an untrusted repository's skills grant nothing; say so (before the
            # counts) and how to change it.
            if catalog.trusted:
                tail.append((" · trusted", "green"))
            else:
                tail.append((" · untrusted (t)", "bold yellow"))
        if self.scope is not None:
            tail.append((f" · {self.scope} only", "bold cyan"))
        spare = []
        if catalog is not None:
            valid = len(catalog.skills)
            enabled = sum(s.enabled for s in catalog.skills)
            tail.append((f" · {valid} skills, {enabled} on", "dim"))
            if catalog.errors:
                tail.append((f" · {len(catalog.errors)} invalid", "red"))
            spare.append((f" · gen {catalog.generation}", "dim"))
        self._main.query_one(TopBar).show(head, display_path(self.cwd), tail, spare)

    def _set_status(self, status: str) -> None:
        self.status = status
        self._show_topbar()

    # -- connection ------------------------------------------------------------------------

    @work(exclusive=True, group="connection")
    async def connect(self) -> None:
        """(Re)connect to the daemon, open the picker's session and list the catalog."""
        await self._close_client()
        self._set_status("connecting")
        try:
            client = await self._connector()
        except (ClientError, OSError) as exc:
            self._set_status("not connected: r retries")
            self._main.query_one(SkillList).show_message(f"cannot reach skillsd: {exc}")
            return
        self.client = client
        # Another daemon (or the same after a restart) may see the files differently.
        self.scans.clear()
        client.on_notification(self._on_skills_changed, "skills.changed")
        client.on_close(lambda: self._on_client_closed(client))
        try:
            await client.initialize(client_info=ClientInfo(name="skillsd-ui", version=__version__))
            self.session_id = (await client.session_open(cwd=self.cwd)).session_id
        except ClientError as exc:
            self._set_status("not connected: r retries")
            self._main.query_one(SkillList).show_message(f"skillsd refused the session: {exc}")
            return
        self._set_status(CONNECTED)
        await self._refresh(force=False)

    def _on_skills_changed(self, note: Notification) -> None:
        # Runs in the client's reader task: hand over to the app's message queue.
        if isinstance(note.params, SkillsChangedParams):
            self.post_message(self.CatalogChanged(note.params))

    def _on_client_closed(self, client: AsyncClient) -> None:
        if client is self.client:
            self.post_message(self.Disconnected())

    @on(Disconnected)
    async def _disconnected(self) -> None:
        await self._close_client()  # releases the dead connection's transport
        self._set_status("daemon connection lost: r reconnects")

    @on(CatalogChanged)
    def _catalog_changed(self, message: CatalogChanged) -> None:
        listed = self.catalog
        if listed is None or message.params.cwd in (listed.cwd, self.cwd):
            self.scans.forget([*message.params.changed, *message.params.removed])
            self.refresh_catalog()

    async def _close_client(self) -> None:
        client, session_id = self.client, self.session_id
        self.client = self.session_id = None
        if client is None:
            return
        if session_id is not None and not client.closed:
            # The daemon forgets the session when it exits anyway.
            with contextlib.suppress(ClientError):
                await client.session_close(session_id=session_id, timeout=2.0)
        await client.close()

    async def on_unmount(self) -> None:
        await self._close_client()

    # -- catalog and search ----------------------------------------------------------------

    @work(exclusive=True, group="catalog")
    async def refresh_catalog(self, force: bool = False) -> None:
        """Re-list the catalog (and re-run the search) and update every pane."""
        await self._refresh(force=force)

    async def _refresh(self, *, force: bool) -> None:
        client = self.client
        if client is None:
            return
        self._listings += 1
        asked = self._listings
        try:
            catalog = await client.list_skills(
                cwd=self.cwd, session_id=self.session_id, force_reload=force
            )
        except ClientError as exc:
            self._report("listing skills failed", exc)
            return
        if asked != self._listings:
            return  # a later listing is on its way: this one may predate a change
        self.catalog = catalog
        self._show_topbar()
        self._show_errors()
        if self.search_text:
            await self._search()
        else:
            self._show_catalog()

    def _show_catalog(self) -> None:
        skills = self._main.query_one(SkillList)
        if self.catalog is None:
            return
        shown = [s for s in self.catalog.skills if self.scope in (None, s.scope)]
        if not shown:
            where = "here" if self.scope is None else f"in the {self.scope} scope (s: next scope)"
            skills.show_message(f"no skills {where} (see the Errors tab for invalid ones)")
            self._main.query_one(DetailPane).show_message("")
            self.detail = None
            return
        skills.show_catalog(shown, keep=skills.highlighted_id)
        self._want_scans()
        self._refresh_detail()

    def _show_errors(self) -> None:
        """The Errors tab and its label: invalid skills, discovery problems, scan findings."""
        catalog = self.catalog
        if catalog is None:
            return
        results = self.scans.results
        scanned = [(s, results[s.id]) for s in catalog.skills if s.id in results]
        progress = f"{len(scanned)} of {len(catalog.skills)} skills scanned"
        if self.scans.busy:
            progress += ", scanning…"
        self._main.query_one(ErrorsPane).show(
            catalog.errors, catalog.diagnostics, catalog.cwd, scanned, progress
        )
        flagged = sum(bool(scan.notable or scan.error) for _, scan in scanned)
        problems = len(catalog.errors) + len(catalog.diagnostics) + flagged
        self._main.query_one(TabbedContent).get_tab("errors-tab").label = f"Errors ({problems})"

    # -- the static scan -------------------------------------------------------------------

    @property
    def scanning(self) -> bool:
        """Whether a scan is waiting, in flight, or not yet shown."""
        return self.scans.busy or bool(self._scanned_since)

    @work(group="scans")
    async def run_scans(self) -> None:
        """Scan what the list asks for, for as long as the app runs."""
        await self.scans.run()

    async def _scan_skill(self, skill_id: str) -> ScanResult:
        client = self.client
        if client is None:
            raise ConnectError("not connected to skillsd")
        return await client.scan(id=skill_id, cwd=self.cwd)

    def _want_scans(self) -> None:
        """Ask for the scans of the shown skills, the highlighted one and those below first."""
        skills = self._main.query_one(SkillList)
        ids = skills.shown_ids
        start = ids.index(skills.highlighted_id) if skills.highlighted_id in ids else 0
        self.scans.want(ids[start:] + ids[:start])

    def _scan_done(self, skill_id: str) -> None:
        # Results come in bursts: redraw their rows once, shortly after the first.
        if not self._scanned_since:
            self.set_timer(SCAN_REDRAW_DELAY, self._show_scans)
        self._scanned_since.add(skill_id)

    def _show_scans(self) -> None:
        done, self._scanned_since = self._scanned_since, set()
        if not self.screen_stack:
            return  # the app is closing
        self._main.query_one(SkillList).redraw(done)
        detail = self.detail
        if detail is not None and detail.skill.id in done:
            self._main.query_one(DetailPane).show_scan(self.scans.results.get(detail.skill.id))
        self._show_errors()

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.search_text = event.value.strip()
        self.run_search()

    @work(exclusive=True, group="search")
    async def run_search(self) -> None:
        """Show the ranked hits for the search box (or the whole catalog when it is empty)."""
        await self._search()

    async def _search(self) -> None:
        skills = self._main.query_one(SkillList)
        query, client = self.search_text, self.client
        if not query:
            self.search_result = None
            self._show_catalog()
            return
        if client is None:
            return
        try:
            # Disabled skills too (marked): the user may be looking for one to enable again.
            result = await client.search(
                query=query,
                cwd=self.cwd,
                limit=SEARCH_LIMIT,
                scope=self.scope,
                session_id=self.session_id,
                include_disabled=True,
            )
            # A request rather than a name: what skills.suggest would activate is marked.
            suggested = None
            if len(query.split()) >= REQUEST_WORDS:
                suggested = await client.suggest(
                    prompt=query, cwd=self.cwd, session_id=self.session_id
                )
        except ClientError as exc:
            self._report("search failed", exc)
            return
        if query != self.search_text:
            return  # typed on meanwhile; the newer search shows its own hits
        self.search_result = result
        activates = {
            s.skill.id
            for s in (suggested.suggestions if suggested is not None else ())
            if s.activate
        }
        if result.results:
            skills.show_hits(
                result.results, result.count, result.truncated, skills.highlighted_id, activates
            )
            self._want_scans()
        else:
            where = "" if self.scope is None else f" in the {self.scope} scope"
            skills.show_message(f"no skill matches {query!r}{where}")
        self._refresh_detail()

    # -- the detail pane -------------------------------------------------------------------

    def _skill(self, skill_id: str | None) -> SkillMetadata | None:
        if skill_id is None:
            return None
        if self.catalog is not None:
            for skill in self.catalog.skills:
                if skill.id == skill_id:
                    return skill
        if self.search_result is not None:
            for hit in self.search_result.results:
                if hit.skill.id == skill_id:
                    return hit.skill
        return None

    @property
    def selected(self) -> SkillMetadata | None:
        """The highlighted skill, as the last catalog listed it."""
        return self._skill(self._main.query_one(SkillList).highlighted_id)

    def _refresh_detail(self, force: bool = False) -> None:
        skill = self.selected
        if skill is None:
            self.detail = None
            self._main.query_one(DetailPane).show_message("no skill selected")
            return
        # Unchanged metadata means an unchanged file (mtime and size are in it).
        if force or self.detail is None or self.detail.skill != skill:
            self.load_detail(skill)

    @on(OptionList.OptionHighlighted, "#skills")
    def _highlighted(self) -> None:
        # What the user looks at is scanned before the rest (a large list is scanned lazily).
        self.scans.want(self._main.query_one(SkillList).ids_from_highlight(SCAN_AHEAD))
        self._refresh_detail()

    @work(exclusive=True, group="detail")
    async def load_detail(self, skill: SkillMetadata) -> None:
        """Fetch and show the decisions and content of ``skill``."""
        client = self.client
        if client is None:
            return
        try:
            detail = await fetch_detail(client, skill, cwd=self.cwd, session_id=self.session_id)
        except ClientError as exc:
            self._main.query_one(DetailPane).show_message(f"{skill.name}: {exc}")
            return
        previous, self.detail = self.detail, detail
        pane = self._main.query_one(DetailPane)
        pane.show(detail, self.cwd, self.scans.results.get(skill.id))
        if previous is None or previous.skill.id != skill.id:
            # Another skill opens at its top; the same one, reloaded, stays where it was read.
            pane.scroll_home(animate=False)

    @on(OptionList.OptionSelected, "#skills")
    def _selected(self) -> None:
        pane = self._main.query_one(DetailPane)
        if pane.resource_tree.display:
            pane.resource_tree.focus()
        else:
            pane.focus()

    @on(Tree.NodeSelected, "#resources")
    def _open_resource(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data is not None and self.detail is not None:
            self.open_file(self.detail.skill, event.node.data)

    @work(group="files")
    async def open_file(self, skill: SkillMetadata, file: str) -> None:
        """Read ``file`` of ``skill`` with ``skills.readFile`` and show it."""
        client = self.client
        if client is None:
            return
        try:
            result = await client.read_file(id=skill.id, file=file, cwd=self.cwd)
        except ClientError as exc:
            self._report(f"cannot open {file}", exc)
            return
        await self.push_screen(FileDialog(skill.name, result))

    @work(group="commands")
    async def open_commands(self) -> None:
        """The command palette for this cwd, on the selected skill when the user may invoke it
        (docs/protocol.md: the TUI invokes the selected skill with the arguments typed)."""
        client = self.client
        if client is None:
            return
        try:
            listed = await client.commands(cwd=self.cwd, session_id=self.session_id)
        except ClientError as exc:
            self._report("listing commands failed", exc)
            return

        async def invoke(typed: str) -> InvokeResult:
            if self.client is None:
                raise ConnectionError("not connected to skillsd")
            return await self.client.invoke(command=typed, cwd=self.cwd, session_id=self.session_id)

        palette = CommandPalette(listed.commands, invoke)
        await self.push_screen(palette)
        skill = self.selected
        if skill is not None and skill.invocation.user and skill.enabled:
            box = palette.query_one("#command-input", Input)
            box.value = f"/{skill.name} "
            box.cursor_position = len(box.value)

    # -- actions ---------------------------------------------------------------------------

    def action_commands(self) -> None:
        self.open_commands()

    def action_installed(self) -> None:
        """The skills the cwd's lock file installed, with update and remove."""
        if self.client is not None:
            self.push_screen(InstalledScreen(self.client, self.cwd))

    def action_listing(self) -> None:
        """What each agent shows its model here (docs/agents.md)."""
        if self.client is not None:
            self.push_screen(ListingScreen(self.client, self.cwd))

    def action_focus_search(self) -> None:
        self._main.query_one(TabbedContent).active = "skills-tab"
        self._main.query_one("#search", Input).focus()

    def action_focus_list(self) -> None:
        self._main.query_one(TabbedContent).active = "skills-tab"
        self._main.query_one(SkillList).focus()

    def action_next_scope(self) -> None:
        """Cycle the scope filter: every scope, repo, user, extra."""
        order: list[Scope | None] = [None, "repo", "user", "extra"]
        self.scope = order[(order.index(self.scope) + 1) % len(order)]
        self._show_topbar()
        self.run_search()

    def action_leave(self) -> None:
        search = self._main.query_one("#search", Input)
        if isinstance(self.focused, SkillList) and search.value:
            search.value = ""  # a second escape clears the search
        else:
            self.action_focus_list()

    def action_errors(self) -> None:
        tabs = self._main.query_one(TabbedContent)
        if tabs.active == "errors-tab":
            self.action_focus_list()
        else:
            tabs.active = "errors-tab"
            self._main.query_one(ErrorsPane).focus()

    def action_reload(self) -> None:
        if self.client is None:
            self.connect()
        else:
            # A scan reads every file of a skill, and only SKILL.md edits are announced.
            self.scans.clear()
            self.refresh_catalog(force=True)
            self._refresh_detail(force=True)

    def action_toggle_enabled(self) -> None:
        skill = self.selected
        if skill is None or self.client is None:
            return
        if self.session_id is None:
            # Reconnecting: a session-only change would have no session to go to.
            self.notify("still connecting: try again in a moment", severity="warning")
            return
        verb = "Disable" if skill.enabled else "Enable"
        dialog = ChoiceDialog(
            f"{verb} {skill.name}?",
            display_path(skill.path, self.cwd),
            [
                Choice("u", "for you: every session and host (saved in the state file)", "user"),
                Choice("p", "in this repository only (saved in your state file)", "project"),
                Choice("s", "for this picker session only", "session"),
            ],
        )

        def answered(persist: str | None) -> None:
            if persist in ("user", "project", "session"):
                self.set_enabled(skill, not skill.enabled, persist)

        self.push_screen(dialog, answered)

    @work(group="changes")
    async def set_enabled(self, skill: SkillMetadata, enabled: bool, persist: str) -> None:
        """Enable or disable ``skill`` (``persist``: "user", "project" or "session"), then
        re-list."""
        client = self.client
        if client is None:
            return
        try:
            if persist == "session":
                await client.set_enabled(
                    id=skill.id,
                    enabled=enabled,
                    cwd=self.cwd,
                    persist="session",
                    session_id=self.session_id,
                )
            else:
                await client.set_enabled(
                    id=skill.id,
                    enabled=enabled,
                    cwd=self.cwd,
                    persist="project" if persist == "project" else "user",
                )
        except ClientError as exc:
            self._report(f"cannot change {skill.name}", exc)
            return
        where = {"user": "for you", "project": "in this repository"}.get(
            persist, "for this session"
        )
        done = f"{skill.name} {'enabled' if enabled else 'disabled'} {where}"
        self.notify(escape_controls(done), markup=False)
        await self._refresh(force=False)

    def action_approve(self) -> None:
        detail = self.detail
        if detail is None or self.client is None:
            return
        if self.session_id is None:
            self.notify("still connecting: try again in a moment", severity="warning")
            return
        check = detail.load_check
        dialog = ChoiceDialog(
            f"Load {detail.skill.name}? ({detail.load_rule})",
            f"now: {check.decision} by the {check.layer} layer"
            + (f" ({check.rule})" if check.rule else ""),
            [
                Choice("s", "allow for this picker session", "allow session"),
                Choice("a", "allow always (saved for every session and host)", "allow always"),
                Choice("d", "deny always (saved for every session and host)", "deny always"),
            ],
        )

        def answered(answer: str | None) -> None:
            if answer is not None:
                decision, persist = answer.split()
                self.remember(detail.load_rule, decision, persist)

        self.push_screen(dialog, answered)

    def action_trust(self) -> None:
        catalog = self.catalog
        if catalog is None or self.client is None:
            return
        trusted = bool(catalog.trusted)
        dialog = ChoiceDialog(
            f"{'Stop trusting' if trusted else 'Trust'} this repository?",
            display_path(catalog.repo_root),
            [
                Choice(
                    "y",
                    "yes: its skills' allowed-tools and its project config's allow rules "
                    + ("stop counting" if trusted else "count, in every session"),
                    "yes",
                ),
                Choice("n", "no", "no"),
            ],
        )

        def answered(answer: str | None) -> None:
            if answer == "yes":
                self.set_trust(not trusted)

        self.push_screen(dialog, answered)

    @work(group="changes")
    async def set_trust(self, trusted: bool) -> None:
        """Trust (or stop trusting) the cwd's repository root through ``trust.set``."""
        client = self.client
        if client is None:
            return
        try:
            info = await client.trust_set(cwd=self.cwd, trusted=trusted)
        except ClientError as exc:
            self._report("cannot change trust", exc)
            return
        done = f"{info.root}: {'trusted' if info.trusted else 'not trusted'}"
        self.notify(escape_controls(done), markup=False)
        await self._refresh(force=False)
        self._refresh_detail(force=True)

    @work(group="changes")
    async def remember(self, rule: str, decision: str, persist: str) -> None:
        """Remember the user's answer for ``rule`` and show the new decision."""
        client, session_id = self.client, self.session_id
        if client is None or session_id is None:
            return
        try:
            await client.permissions_remember(
                session_id=session_id,
                rule=rule,
                decision="allow" if decision == "allow" else "deny",
                persist="always" if persist == "always" else "session",
            )
        except ClientError as exc:
            self._report(f"cannot remember {rule}", exc)
            return
        self.notify(escape_controls(f"{rule}: {decision} ({persist})"), markup=False)
        self._refresh_detail(force=True)

    def _report(self, what: str, exc: ClientError) -> None:
        self.notify(escape_controls(f"{what}: {exc}"), severity="error", timeout=8, markup=False)
