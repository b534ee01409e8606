"""The TUI's listing view (key ``l``) against a real shared daemon: Claude Code's listing of
the folder with its budget line, then the next agent's."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from skillsd.tui import SkillsApp
from skillsd.tui.listing import ListingScreen
from skillsd_client import AsyncClient
from tests.support.env import daemon_env
from tests.support.picker import started, sync, until
from tests.support.skill_tree import make_project, write_skill

pytestmark = pytest.mark.process


@pytest.fixture
def make_app(tmp_path: Path, short_dir: Path) -> Callable[[], SkillsApp]:
    (tmp_path / "config.toml").write_text("")
    tree = make_project(tmp_path)
    for i in range(150):
        write_skill(tree["home"] / ".claude/skills", f"s{i:03d}", "d" * 400)
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(short_dir / "run"))

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=environ, idle_timeout=60, timeout=20)

    return lambda: SkillsApp(tree["project"], connect=connect)


@sync
async def test_listing_view_per_agent(make_app: Callable[[], SkillsApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot, app)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, ListingScreen), "the view")
        screen = app.screen
        assert isinstance(screen, ListingScreen)

        def title() -> str:
            return str(screen.query_one("#listing-title", Static).content)

        await until(pilot, lambda: title().startswith("Claude Code:"), "Claude Code's listing")
        assert "of 150 skills in full; budget 30000 characters" in title()
        rows = [str(o.prompt) for o in screen.query_one(OptionList).options]
        assert any(r.startswith("full") and "s000" in r for r in rows)
        assert any(r.startswith("name-only") and "s149" in r for r in rows)
        await pilot.press("n")
        await until(pilot, lambda: title().startswith("Codex:"), "Codex's listing")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ListingScreen), "closing")
