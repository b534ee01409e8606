"""The TUI's installed view (key ``i``) against a real shared daemon: the lock's skills with
their state, a local edit shown with the file, remove after confirming."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from skillsd.installing import InstallContext, install
from skillsd.tui import SkillsApp
from skillsd.tui.installed import InstalledScreen
from skillsd_client import AsyncClient
from skillsd_protocol.install import InstallParams
from tests.support.env import daemon_env
from tests.support.picker import started, sync, until
from tests.support.skill_tree import make_project

pytestmark = pytest.mark.process


@pytest.fixture
def project_and_app(tmp_path: Path, short_dir: Path) -> tuple[Path, Callable[[], SkillsApp]]:
    (tmp_path / "config.toml").write_text("")
    tree = make_project(tmp_path)
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(short_dir / "run"))
    vendor = tmp_path / "vendor" / "tidy-imports"
    vendor.mkdir(parents=True)
    (vendor / "SKILL.md").write_text(
        "---\nname: tidy-imports\ndescription: Sorts.\nallowed-tools: Bash\n---\nb\n"
    )
    ctx = InstallContext(cwd=str(tree["project"]), env=environ, home=environ["HOME"])
    install(InstallParams(source=str(vendor.parent), agents=["claude-code"]), ctx)

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=environ, idle_timeout=60, timeout=20)

    return tree["project"], lambda: SkillsApp(tree["project"], connect=connect)


def _rows(screen: InstalledScreen) -> list[str]:
    return [str(o.prompt) for o in screen.query_one(OptionList).options]


@sync
async def test_installed_view_states_and_remove(
    project_and_app: tuple[Path, Callable[[], SkillsApp]],
) -> None:
    project, make_app = project_and_app
    app = make_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await started(pilot, app)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InstalledScreen), "the view")
        screen = app.screen
        assert isinstance(screen, InstalledScreen)
        await until(pilot, lambda: _rows(screen), "the rows")
        assert "tidy-imports" in _rows(screen)[0] and " ok " in _rows(screen)[0]

        def detail() -> str:
            return str(screen.query_one("#installed-detail", Static).content)

        # What the scan sees in the installed skill comes with its details.
        await until(pilot, lambda: "scan: 1 finding(s)" in detail(), "the scan findings")
        assert "warning SKILL.md:4: [scan.broad-grant]" in detail()
        (project / ".agents" / "skills" / "tidy-imports" / "notes.md").write_text("mine")
        await pilot.press("r")
        await until(pilot, lambda: "modified" in _rows(screen)[0], "the modified state")
        assert "modified notes.md" in detail()
        await pilot.press("x")
        await pilot.press("y")
        await until(pilot, lambda: not _rows(screen), "the removal")
        lock = json.loads((project / "skills-lock.json").read_text())
        assert lock["skills"] == {}
        assert not (project / ".claude" / "skills" / "tidy-imports").exists()
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InstalledScreen), "closing")
