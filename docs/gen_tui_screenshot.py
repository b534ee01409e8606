"""Generate ``docs/tui.svg``: the skills picker on a copy of ``examples/`` at 100x30.

    python docs/gen_tui_screenshot.py

    python docs/gen_tui_screenshot.py --png   only convert docs/tui.svg to docs/tui.png

The PNG needs ``cairosvg``, which is not a project dependency: run the ``--png`` step with the
Python of a throwaway venv that has it (this step imports nothing from skillsd). Without
``--png``, the PNG is also written when cairosvg happens to be importable.

The picker runs headless (Textual's pilot) against a real daemon that its own connect-or-start
launches in a temporary runtime directory, with HOME, config and state inside a temporary copy
of ``examples/`` (the project sits at ``~/src/project``). The config allows loading
``pdf-forms`` and the ``Read`` tool and denies ``Bash(rm:*)``, so the detail pane shows loaded
content and decisions of every kind. The daemon is started with a one-second idle timeout and
exits on its own once the picker has closed its connection.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
EXAMPLES = DOCS.parent / "examples"
SIZE = (100, 30)
CONFIG = """\
[permissions]
allow = ["skill_load(pdf-forms)", "Read"]
deny = ["Bash(rm:*)"]
"""


async def shoot(tmp: Path) -> None:
    """Run the picker headless on a copy of the examples and save its screenshot."""
    from skillsd.tui import SkillsApp
    from skillsd_client import AsyncClient

    home = tmp / "home"
    shutil.copytree(EXAMPLES / "home", home)
    project = home / "src" / "project"
    shutil.copytree(EXAMPLES / "project", project)
    (tmp / "config.toml").write_text(CONFIG, encoding="utf-8")
    runtime = tmp / "run"
    env = {
        **os.environ,
        "HOME": os.fspath(home),
        "SKILLSD_CONFIG": os.fspath(tmp / "config.toml"),
        "XDG_STATE_HOME": os.fspath(tmp / "state"),
        "XDG_CONFIG_HOME": os.fspath(tmp / "xdg-config"),
        "SKILLSD_RUNTIME_DIR": os.fspath(runtime),
    }
    for name in ("SKILLSD_ROOT", "AGENT_SKILLS_PATH"):
        env.pop(name, None)
    # The picker shows paths under HOME with "~".
    os.environ["HOME"] = env["HOME"]

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=env, idle_timeout=1, timeout=20)

    app = SkillsApp(project, connect=connect)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 20
        while app.detail is None or app.detail.loaded is None:
            if time.monotonic() > deadline:
                raise SystemExit("the picker did not show a loaded skill in time")
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        app.save_screenshot("tui.svg", path=os.fspath(DOCS))
    # Wait for the idle daemon to exit before its directory goes away (another process: only
    # its socket's file tells, so it is polled).
    deadline = time.monotonic() + 10
    while (runtime / "skillsd.sock").exists() and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)


def to_png(svg: Path, png: Path) -> bool:
    """Render ``svg`` as ``png`` with cairosvg, if it is installed."""
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        return False
    # Textual's SVG asks for the Fira Code web font; a local monospace font keeps the grid.
    text = svg.read_text(encoding="utf-8").replace(
        "Fira Code, monospace", "DejaVu Sans Mono, monospace"
    )
    cairosvg.svg2png(bytestring=text.encode(), write_to=os.fspath(png), output_width=1400)
    return True


def main(argv: list[str]) -> None:
    if "--png" in argv:
        if not to_png(DOCS / "tui.svg", DOCS / "tui.png"):
            raise SystemExit("--png needs cairosvg (pip install cairosvg)")
        print(f"wrote {DOCS / 'tui.png'}")
        return
    with tempfile.TemporaryDirectory(prefix="sdui-") as tmp:
        asyncio.run(shoot(Path(tmp)))
    print(f"wrote {DOCS / 'tui.svg'}")
    if to_png(DOCS / "tui.svg", DOCS / "tui.png"):
        print(f"wrote {DOCS / 'tui.png'}")


if __name__ == "__main__":
    main(sys.argv[1:])
