"""The skills picker (``skillsd ui``) driven by Textual's headless pilot against a real shared
daemon on a temporary tree: it is started by the app's own connect-or-start, in a runtime
directory under the test, and killed afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, TabbedContent

from skillsd.tui import SkillsApp
from skillsd.tui.dialogs import ChoiceDialog, FileDialog
from skillsd.tui.panes import DetailPane, ErrorsPane, SkillList
from skillsd_client import AsyncClient, ConnectError
from tests.support.daemons import daemon_pids, kill_pid
from tests.support.env import daemon_env
from tests.support.picker import (
    CONFIG,
    highlight,
    row_of,
    rows,
    scanned,
    started,
    sync,
    text_of,
    until,
)
from tests.support.skill_tree import make_project, write_skill


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    tree = make_project(tmp_path)
    # A skill asking for a denied tool, to show that its grant cannot get past the deny.
    write_skill(
        tree["skills"],
        "cleanup",
        "Remove build outputs.",
        extra="allowed-tools: Bash(rm:*)\n",
    )
    return tree


@pytest.fixture
def socket_path(short_dir: Path) -> Path:
    return short_dir / "run" / "skillsd.sock"


@pytest.fixture
def make_app(tree: dict[str, Path], socket_path: Path) -> Callable[[], SkillsApp]:
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(socket_path.parent))

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=environ, idle_timeout=60, timeout=20)

    return lambda: SkillsApp(tree["project"], connect=connect)


@pytest.mark.process
@sync
async def test_catalog_by_scope_and_detail_at_80x24(make_app: Callable[[], SkillsApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await scanned(pilot, app)
        listed = rows(app)
        # Grouped by scope with counts; the invalid skill is not a row. pdf-forms has a symlink
        # the scan warns about (?).
        assert listed[0] == "repo · 3 skills, 3 enabled"
        assert "user · 2 skills, 2 enabled" in listed
        assert [r.split("\n")[0] for r in listed[1:4]] == [
            "[x] cleanup",
            "[x] ? pdf-forms",
            "[x] release-notes ⚠1",
        ]
        assert "Draft release notes from merged PRs." in row_of(app, "release-notes")
        assert not any("Broken" in r for r in listed)

        # The first skill is selected; loading pdf-forms is allowed, so its content is rendered.
        assert app.selected is not None and app.selected.name == "cleanup"
        await highlight(pilot, app, "pdf-forms")
        permissions = text_of(app, "#permissions")
        assert "skill_load(pdf-forms)  allow (allow: skill_load(pdf-forms))" in permissions
        assert "Read  allow (allow: Read)" in permissions
        assert "Bash(python:*)  ask (default) → allow while loaded" in permissions
        content = text_of(app, "#content")
        assert '<skill_context name="pdf-forms"' in content and "Run scripts/fill.py." in content
        summary = text_of(app, "#summary")
        assert "scope repo" in summary and ".agents/skills/pdf-forms/SKILL.md" in summary

        # The resource tree lists what skills.load listed (not the symlink leaving the skill).
        tree = app.query_one(DetailPane).resource_tree
        nodes = list(tree.root.children)
        nodes += [child for node in nodes for child in node.children]
        leaves = {n.data for n in nodes if n.data is not None}
        assert leaves == {"assets/logo.bin", "references/fields.md", "scripts/fill.py"}

        # It all fits 80 columns: the list, the detail pane and the key footer.
        skills, detail = app.query_one(SkillList), app.query_one(DetailPane)
        assert skills.region.width >= 30 and detail.region.right <= 80
        assert skills.region.right <= detail.region.x
        assert "Toggle" in app.export_screenshot()

        # enter moves to the resource tree; enter on a file opens it through skills.readFile.
        await pilot.press("enter")
        assert app.focused is tree
        for _ in range(10):
            if tree.cursor_node is not None and tree.cursor_node.data == "references/fields.md":
                break
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, FileDialog), "the file viewer")
        assert "# Fields\nf1: name" in text_of(app, "#file-body Static")
        await pilot.press("escape")
        assert not isinstance(app.screen, FileDialog)

        # A skill whose load is `ask`: the decision is shown with the SKILL.md as readFile
        # returns it; the user's answer (this session) makes it loadable.
        await pilot.press("escape")
        await highlight(pilot, app, "release-notes")
        permissions = text_of(app, "#permissions")
        assert "skill_load(release-notes)  ask (default)" in permissions
        content = text_of(app, "#content")
        assert "as read by skills.readFile: loading is ask" in content
        assert "name: release-notes" in content and "<skill_context" not in content
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the dialog")
        await pilot.press("s")
        await until(
            pilot,
            lambda: app.detail is not None and app.detail.load_check.decision == "allow",
            "the remembered decision",
        )
        assert "allow (memory: skill_load(release-notes))" in text_of(app, "#permissions")
        assert '<skill_context name="release-notes"' in text_of(app, "#content")

        # A grant never gets past a deny rule.
        await highlight(pilot, app, "cleanup")
        assert "Bash(rm:*)  deny (deny: Bash(rm:*))" in text_of(app, "#permissions")
        assert "while loaded" not in text_of(app, "#permissions")


@pytest.mark.process
@sync
async def test_search_narrows_with_reason_and_score(make_app: Callable[[], SkillsApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await scanned(pilot, app)
        everything = len([r for r in rows(app) if r.startswith("[")])
        assert everything == 5
        await pilot.press("slash")
        await pilot.press(*"release")
        await until(pilot, lambda: app.search_result is not None, "search hits")
        await until(pilot, lambda: rows(app)[0].startswith("2 matches"), "two hits")
        hits = rows(app)[1:]
        assert [h.split("\n")[0] for h in hits] == ["[x] release-notes ⚠1"] * 2
        assert app.search_result is not None
        for hit, shown in zip(app.search_result.results, hits, strict=True):
            assert f"{hit.reason} {hit.score:.2f} · {hit.skill.scope}" in shown
        assert {h.skill.scope for h in app.search_result.results} == {"repo", "user"}

        # A description word ranks by relevance: the repo skill mentions merged PRs.
        await pilot.press(*" merged")
        await until(pilot, lambda: "token_overlap" in rows(app)[1], "relevance hits")
        assert "release-notes" in rows(app)[1] and "repo" in rows(app)[1]
        # The detail follows the highlighted (first) hit.
        await until(
            pilot,
            lambda: app.detail is not None and app.detail.skill.scope == "repo",
            "the hit's detail",
        )
        # A prefix narrows to one skill.
        search = app.query_one("#search", Input)
        search.value = ""
        await pilot.press(*"pdf")
        await until(pilot, lambda: rows(app)[0] == "1 match", "one hit")
        assert rows(app)[1].startswith("[x] ? pdf-forms\n    prefix ")

        await pilot.press(*"zzz")
        await until(pilot, lambda: "no skill matches" in rows(app)[0], "no hits")

        # A request (three words or more): what skills.suggest would activate is marked.
        search.value = ""
        await pilot.press(*"fill the pdf form")
        await until(pilot, lambda: "would activate" in rows(app)[0], "the suggestions")
        assert rows(app)[0].endswith("1 would activate (▶)")
        marked = [r for r in rows(app)[1:] if "▶ " in r]
        assert len(marked) == 1 and marked[0].startswith("[x] ? pdf-forms")

        # escape leaves the box, a second escape clears the search: the catalog is back.
        await pilot.press("escape")
        assert isinstance(app.focused, SkillList)
        await pilot.press("escape")
        await until(pilot, lambda: rows(app)[0].startswith("repo ·"), "the whole catalog")
        assert len([r for r in rows(app) if r.startswith("[")]) == everything


@pytest.mark.process
@sync
async def test_toggle_persists_across_a_daemon_restart(
    make_app: Callable[[], SkillsApp], socket_path: Path, tree: dict[str, Path]
) -> None:
    state_file = tree["tmp"] / "state" / "skillsd" / "state.json"
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await highlight(pilot, app, "commit-message", "user")
        await pilot.press("space")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the dialog")
        await pilot.press("u")
        await until(
            pilot, lambda: "disabled" in row_of(app, "commit-message", "user"), "the disabled row"
        )
        assert row_of(app, "commit-message", "user").startswith("[ ] commit-message disabled")
        disabled = json.loads(state_file.read_text(encoding="utf-8"))["disabled"]
        assert disabled == [os.fspath(tree["home"] / ".agents/skills/commit-message/SKILL.md")]

        # The daemon goes away; r reconnects, which starts a new daemon.
        (first,) = daemon_pids(socket_path)
        kill_pid(first)
        await until(pilot, lambda: app.client is None, "the lost connection")
        assert "connection lost: r reconnects" in text_of(app, "#topbar")
        before = app.catalog
        await pilot.press("r")
        # Connected means a session is open and the new daemon's listing is shown: the old
        # listing stays up while reconnecting, and a toggle then has no session yet.
        await until(
            pilot,
            lambda: app.session_id is not None and app.catalog is not before,
            "reconnect",
        )
        await until(pilot, lambda: daemon_pids(socket_path) not in ([], [first]), "new daemon")
        assert row_of(app, "commit-message", "user").startswith("[ ] commit-message disabled")
        assert app.selected is not None and not app.selected.enabled

        # Enabling it for this session only leaves the user's state file as it was.
        await highlight(pilot, app, "commit-message", "user")
        await pilot.press("space")
        # The dialog must be up before its key: on a busy machine an early "s" went to the
        # picker (scope) and the row never changed.
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the dialog")
        await pilot.press("s")
        await until(
            pilot, lambda: row_of(app, "commit-message", "user").startswith("[x]"), "enabled row"
        )
        assert json.loads(state_file.read_text(encoding="utf-8"))["disabled"] == disabled


@pytest.mark.process
@sync
async def test_a_file_edit_updates_the_view_live(
    make_app: Callable[[], SkillsApp], tree: dict[str, Path]
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        assert app.catalog is not None
        generation = app.catalog.generation
        await highlight(pilot, app, "pdf-forms")
        # Another editor saves the selected skill with a new description and body.
        skill_md = tree["pdf"] / "SKILL.md"
        text = skill_md.read_text(encoding="utf-8")
        temp = skill_md.with_name(".SKILL.md.swp")
        temp.write_text(
            text.replace(
                "Fill and inspect PDF forms.", "Fill, sign and flatten PDF forms."
            ).replace("Run scripts/fill.py.", "Run scripts/sign.py first."),
            encoding="utf-8",
        )
        os.replace(temp, skill_md)  # an atomic save, as editors do
        # Nothing but the daemon's skills.changed tells the app.
        await until(pilot, lambda: "Fill, sign and flatten" in row_of(app, "pdf-forms"), "row")
        assert app.catalog.generation > generation
        await until(pilot, lambda: "sign.py first" in text_of(app, "#content"), "new content")
        assert "Fill, sign and flatten PDF forms." in text_of(app, "#summary")
        # A new skill appears too.
        write_skill(tree["skills"], "lint-fix", "Fix lint findings.")
        await until(pilot, lambda: any("lint-fix" in r for r in rows(app)), "the new skill")
        assert rows(app)[0] == "repo · 4 skills, 4 enabled"


@pytest.mark.process
@sync
async def test_invalid_skills_in_the_errors_tab(
    make_app: Callable[[], SkillsApp], tree: dict[str, Path]
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await scanned(pilot, app)
        tabs = app.query_one(TabbedContent)
        # The invalid skill and pdf-forms, whose scan warns about a symlink.
        assert tabs.get_tab("errors-tab").label_text == "Errors (2)"
        await pilot.press("e")
        assert tabs.active == "errors-tab" and isinstance(app.focused, ErrorsPane)
        errors = text_of(app, "#errors-text")
        assert ".agents/skills/broken/SKILL.md" in errors
        assert "error description.missing: required field 'description' is missing" in errors
        # The catalog is lenient by default: a name/folder mismatch alone would not exclude it.
        assert "warning name.mismatch" in errors

        # Breaking a listed skill moves it from the list to the errors tab, live.
        (tree["skills"] / "cleanup" / "SKILL.md").write_text(
            "---\nname: cleanup\n---\nno description any more\n", encoding="utf-8"
        )
        await until(pilot, lambda: "cleanup/SKILL.md" in text_of(app, "#errors-text"), "error")
        assert tabs.get_tab("errors-tab").label_text == "Errors (3)"
        assert not any("cleanup" in r for r in rows(app))
        # A new broken SKILL.md (no skill added, removed or changed) still updates the count.
        fresh = tree["skills"] / "fresh"
        fresh.mkdir()
        (fresh / "SKILL.md").write_text("---\nname: fresh\n---\n", encoding="utf-8")
        await until(
            pilot, lambda: tabs.get_tab("errors-tab").label_text == "Errors (4)", "a third error"
        )
        await pilot.press("e")
        assert tabs.active == "skills-tab" and isinstance(app.focused, SkillList)


@pytest.mark.process
@sync
async def test_quitting_closes_the_session_and_connection(
    make_app: Callable[[], SkillsApp],
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        client = app.client
        assert client is not None and app.session_id is not None
        await pilot.press("q")
    # Leaving closed the session and the connection (the shared daemon keeps running).
    assert client.closed and app.client is None and app.session_id is None
    assert app.return_code == 0


@pytest.mark.process
def test_ui_says_how_to_install_textual_when_it_is_missing(tmp_path: Path) -> None:
    # Importing Textual fails, as on an install without the extra.
    script = (
        "import sys\n"
        "sys.modules['textual'] = None\n"
        "from skillsd.cli import main\n"
        "sys.exit(main(['ui', '--cwd', sys.argv[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, os.fspath(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "the extra skillsd[tui]" in done.stderr


@pytest.mark.process
@sync
async def test_scope_filter_and_disabled_skills_found_by_search(
    make_app: Callable[[], SkillsApp],
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        await pilot.press("s")  # every scope -> repo
        await until(pilot, lambda: rows(app)[0].startswith("repo ·"), "repo rows")
        assert not any(r.startswith("user ·") for r in rows(app))
        assert "repo only" in text_of(app, "#topbar")
        await pilot.press("s")  # -> user
        await until(pilot, lambda: rows(app)[0].startswith("user ·"), "user rows")
        assert [r.split("\n")[0] for r in rows(app)[1:]] == [
            "[x] commit-message",
            "[x] release-notes ⚠1",
        ]
        # Search stays inside the scope.
        await pilot.press("slash", *"release")
        await until(pilot, lambda: rows(app)[0] == "1 match", "one user hit")
        assert app.search_result is not None
        assert [h.skill.scope for h in app.search_result.results] == ["user"]
        await pilot.press("escape", "escape", "s", "s")  # back to every scope
        await until(pilot, lambda: rows(app)[0].startswith("repo ·"), "every scope")
        assert any(r.startswith("user ·") for r in rows(app))

        # A disabled skill is still found by search, marked, and can be enabled again.
        await highlight(pilot, app, "commit-message", "user")
        await pilot.press("space", "u")
        await until(
            pilot, lambda: "disabled" in row_of(app, "commit-message", "user"), "disabled row"
        )
        await pilot.press("slash", *"commit")
        await until(pilot, lambda: rows(app)[0] == "1 match", "the disabled hit")
        assert rows(app)[1].startswith("[ ] commit-message disabled")
        await pilot.press("escape")
        await until(pilot, lambda: app.selected is not None, "a selection")
        assert app.selected is not None and app.selected.name == "commit-message"
        await pilot.press("space", "u")
        await until(pilot, lambda: rows(app)[1].startswith("[x] commit-message"), "enabled hit")


@pytest.mark.process
def test_ui_refuses_without_a_terminal_and_starts_nothing(
    tree: dict[str, Path], short_dir: Path
) -> None:
    runtime = short_dir / "run"
    started_at = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", "ui", "--cwd", os.fspath(tree["project"])],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(runtime)),
    )
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr
    assert done.stdout == ""  # no escape codes
    assert time.monotonic() - started_at < 20
    assert not runtime.exists() and daemon_pids(runtime / "skillsd.sock") == []


def test_install_hint_for_a_clone_and_for_an_installed_package(tmp_path: Path) -> None:
    from skillsd.cli.extras import extra_hint

    checkout = Path(__file__).resolve().parents[2]
    assert extra_hint("tui", checkout / "skillsd", "/py") == (
        f"/py -m pip install -e '{checkout}[tui]'"
    )
    # Installed, skillsd is on no index: the extra's own requirements are, from its metadata.
    installed = tmp_path / "site-packages" / "skillsd"
    installed.mkdir(parents=True)
    assert extra_hint("tui", installed, "/py") == "/py -m pip install 'textual>=0.80'"
    assert extra_hint("mcp", installed, "/py") == (
        "/py -m pip install 'httptools>=0.6' 'uvloop>=0.19; sys_platform != \"win32\"'"
    )


@pytest.mark.process
def test_ui_refuses_a_cwd_that_is_not_a_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", "ui", "--cwd", os.fspath(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a directory" in done.stderr


@sync
async def test_an_unreachable_daemon_is_reported_and_retried(short_dir: Path) -> None:
    attempts: list[int] = []

    async def refuse() -> AsyncClient:
        attempts.append(1)
        raise ConnectError(f"cannot connect to {short_dir / 'nothing.sock'}: refused")

    app = SkillsApp(short_dir, connect=refuse)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "cannot reach skillsd" in rows(app)[0], "the error row")
        assert "nothing.sock" in rows(app)[0] and app.status == "not connected: r retries"
        await pilot.press("r")
        await until(pilot, lambda: len(attempts) == 2, "a second attempt")
        # Keys that need a daemon do nothing rather than fail.
        await pilot.press("space", "a")
        assert app.screen is app.screen_stack[0]


def test_the_daemon_and_core_never_import_the_tui() -> None:
    package = Path(__file__).resolve().parents[2] / "skillsd"
    for layer in ("core", "daemon"):
        for module in (package / layer).rglob("*.py"):
            source = module.read_text(encoding="utf-8")
            assert "skillsd.tui" not in source and "textual" not in source, module


@pytest.mark.process
@sync
async def test_the_top_bar_shows_trust_and_t_trusts_the_repository(
    make_app: Callable[[], SkillsApp], tree: dict[str, Path]
) -> None:
    state_file = tree["tmp"] / "state" / "skillsd" / "state.json"
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)
        assert "untrusted (t)" in text_of(app, "#topbar")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the dialog")
        await pilot.press("y")
        await until(pilot, lambda: app.catalog is not None and app.catalog.trusted, "trusted")
        assert "· trusted" in text_of(app, "#topbar")
        saved = json.loads(state_file.read_text(encoding="utf-8"))["trust"]
        assert saved == {os.path.realpath(tree["project"]): True}


@pytest.mark.process
@sync
async def test_the_footer_fits_80_columns(make_app: Callable[[], SkillsApp]) -> None:
    """Every key the footer shows is inside an 80x24 terminal, on the picker and the installed
    view: none is cut off at the right edge."""
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, app)

        def keys() -> list[tuple[str, int]]:
            shown = app.screen.query(FooterKey)
            return [(k.description, k.region.right) for k in shown if k.display]

        await until(pilot, lambda: bool(keys()), "the footer")
        assert {d for d, _ in keys()} >= {"Search", "Toggle", "Quit"}
        assert all(right <= 80 for _, right in keys()), keys()
        await pilot.press("i")
        await until(pilot, lambda: "Remove" in {d for d, _ in keys()}, "the installed view")
        assert all(right <= 80 for _, right in keys()), keys()
