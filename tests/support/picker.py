"""Driving the ``skillsd ui`` picker under Textual's pilot: waiting for rows, highlighting,
reading text."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from skillsd.tui import SkillsApp
from skillsd.tui.panes import SkillList

WAIT = 15.0


DEADLINE = 60.0


CONFIG = """\
[permissions]
allow = ["skill_load(pdf-forms)", "Read"]
deny = ["Bash(rm:*)"]
"""


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body on a fresh event loop, with an overall deadline."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), DEADLINE))

    return run


async def until(pilot: Pilot[None], condition: Callable[[], object], what: str) -> None:
    """Let the app run until ``condition()`` holds (the daemon answers asynchronously)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def rows(app: SkillsApp) -> list[str]:
    return [str(option.prompt) for option in app.query_one(SkillList).options]


def text_of(app: SkillsApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def row_of(app: SkillsApp, name: str, scope: str = "repo") -> str:
    """The list row of the skill ``name`` in ``scope``, found by its id."""
    assert app.catalog is not None
    (skill,) = [s for s in app.catalog.skills if s.name == name and s.scope == scope]
    return str(app.query_one(SkillList).get_option(skill.id).prompt)


async def highlight(pilot: Pilot[None], app: SkillsApp, name: str, scope: str = "repo") -> None:
    """Move the list cursor with the arrow keys to the skill ``name`` of ``scope``."""
    skills = app.query_one(SkillList)
    skills.focus()
    for _ in range(2 * len(skills.options)):
        current = app.selected
        if current is not None and current.name == name and current.scope == scope:
            break
        await pilot.press("down")
    else:
        raise AssertionError(f"{name} ({scope}) is not in the list: {rows(app)}")
    await until(
        pilot,
        lambda: app.detail is not None and app.detail.skill == current,
        f"the detail of {name}",
    )


async def started(pilot: Pilot[None], app: SkillsApp) -> None:
    await until(pilot, lambda: app.catalog is not None and app.detail is not None, "the catalog")


async def scanned(pilot: Pilot[None], app: SkillsApp) -> None:
    """Wait for the background scans of the listed skills (pdf-forms: a symlink warning)."""
    await until(pilot, lambda: not app.scanning, "the scans")
