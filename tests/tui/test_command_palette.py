"""The TUI's command palette (key ``c``) against a real shared daemon on a copy of the
Claude Code-style fixture project: completion, the argument hint, invocation and refusals."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from skillsd.tui import SkillsApp
from skillsd.tui.command_palette import CommandPalette
from skillsd_client import AsyncClient
from tests.fixtures.host_project import copy_host_project
from tests.support.env import daemon_env
from tests.support.picker import rows, started, sync, until

pytestmark = pytest.mark.process


@pytest.fixture
def make_app(tmp_path: Path, short_dir: Path) -> Callable[[], SkillsApp]:
    project = copy_host_project(tmp_path)
    (tmp_path / "config.toml").write_text("")
    tree = {"tmp": tmp_path, "project": project, "home": tmp_path / "home"}
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(short_dir / "run"))

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=environ, idle_timeout=60, timeout=20)

    return lambda: SkillsApp(project, connect=connect)


def hint(palette: CommandPalette) -> str:
    return str(palette.query_one("#command-hint", Static).content)


@sync
async def test_palette_completes_hints_and_invokes(make_app: Callable[[], SkillsApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot, app)
        listed = "\n".join(rows(app))
        assert "deploy" in listed and "user only" in listed and "model only" in listed
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        box = palette.query_one("#command-input", Input)
        box.value = ""
        await pilot.press(*"/fi")
        assert hint(palette).startswith("/fix-issue [issue-number] [priority]")
        await pilot.press("tab")
        assert box.value == "/fix-issue "
        await pilot.press(*"42 high")
        # The argument hint stays in view while arguments are typed.
        assert "[issue-number] [priority]" in hint(palette)
        await pilot.press("enter")
        await until(pilot, lambda: palette.result is not None, "the invocation")
        assert palette.result is not None
        assert palette.result.arguments == ["42", "high"]
        shown = str(palette.query_one("#command-result", Static).content)
        assert "Fix GitHub issue #42 (priority: high)." in shown
        assert "Dynamic context (not run):" in shown and "gh issue view 42" in shown

        # Both kinds of commands are offered; a model-only skill is refused with the reason.
        box.value = "/"
        await until(pilot, lambda: "/review [focus]" in hint(palette), "every command")
        assert "/frontend:component" in hint(palette)
        assert "api-conventions" not in hint(palette)
        box.value = "/api-conventions"
        await pilot.press("enter")
        await until(pilot, lambda: palette.error is not None, "the refusal")
        assert "for the model only" in str(palette.query_one("#command-result", Static).content)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette), "closing")
