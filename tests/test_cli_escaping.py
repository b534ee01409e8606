"""Human output never passes a control character through raw (docs/security.md, issue 13 item 12).

A skill's description, body, directory name or the project's own path may hold terminal control
sequences. Every human command (real ``python -m skillsd`` subprocesses) and the TUI (Textual's
headless pilot against a real daemon) must show them escaped; ``--json`` keeps the exact text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from skillsd.tui import SkillsApp
from skillsd.tui.panes import DetailPane
from skillsd_client import AsyncClient
from tests.support.env import daemon_env
from tests.support.picker import highlight, row_of, started, sync, text_of, until
from tests.support.skill_tree import make_project, write_skill
from tests.tui.conftest import short_dir

pytestmark = pytest.mark.process

__all__ = ["short_dir"]  # the fixture, shared with the picker's tests

#: The description as the skill file writes it (YAML escapes) and as skillsd reads it.
DESCRIPTION_YAML = '"Red \\e[31malert\\e[0m, bell \\a, cr \\r over, csi \\x9b2J done"'
DESCRIPTION = "Red \x1b[31malert\x1b[0m, bell \x07, cr \r over, csi \x9b2J done"
#: A window-title OSC sequence in a directory name (the skill's name is plain: lenient mode
#: keeps it, with a name.mismatch warning quoting the directory).
EVIL_DIR = "evil\x1b]0;pwned\x07"
#: The whole project lives under a directory whose name switches the terminal to reverse video.
TOP = "top\x1b[7m"


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / TOP).mkdir()
    (tmp_path / TOP / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
    tree = make_project(tmp_path / TOP)
    write_skill(
        tree["skills"],
        "alert",
        DESCRIPTION_YAML,
        extra="argument-hint: <topic>\n",
        body="Body with \x1b[1mbold\x1b[0m, a bell \x07 and a\ttab.\n",
    )
    write_skill(tree["skills"], EVIL_DIR, "Lives in a directory with an escape.")
    (tree["skills"] / EVIL_DIR / "SKILL.md").write_text(
        "---\nname: evil\ndescription: Lives in a directory with an escape.\n---\nx\n"
    )
    return tree


def run(tree: dict[str, Path], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "skillsd", *args],
        cwd=tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        timeout=60,
    )


def shown(out: bytes) -> str:
    """``out`` as text, failing on any raw control character (newlines and, in a skill's
    content, tabs aside) or on bytes that are not UTF-8 (a lone surrogate printed)."""
    text = out.decode("utf-8")
    raw = sorted({c for c in text if c not in "\n\t" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F)})
    assert not raw, f"raw control characters {raw!r} in:\n{text}"
    return text


def test_lenient_mode_keeps_the_skills_and_json_keeps_the_exact_text(
    tree: dict[str, Path],
) -> None:
    out = run(tree, "list", "--json")
    assert out.returncode == 0, out.stderr
    skills = {s["name"]: s for s in json.loads(out.stdout)["skills"]}
    assert skills["alert"]["description"] == DESCRIPTION
    assert skills["evil"]["dir"].endswith(EVIL_DIR)
    assert TOP in skills["alert"]["path"]
    assert [d["code"] for d in skills["evil"]["diagnostics"]] == ["name.mismatch"]


ESCAPED_DESCRIPTION = "Red \\x1b[31malert\\x1b[0m, bell \\x07, cr \\r over, csi \\u009b2J done"
ESCAPED_TOP = "top\\x1b[7m"
ESCAPED_EVIL = "evil\\x1b]0;pwned\\x07"


@pytest.mark.parametrize(
    ("args", "visible"),
    [
        (("list",), [ESCAPED_DESCRIPTION, ESCAPED_TOP, ESCAPED_EVIL]),
        (("search", "alert"), ["Red \\x1b[31malert\\x1b[0m, bell \\x07, cr \\r over"]),
        (
            ("show", "alert"),
            ["Body with \\x1b[1mbold\\x1b[0m, a bell \\x07 and a\ttab."],
        ),
        (("show", "alert", "--format", "markdown"), ["\\x1b[1mbold"]),
        # XML cannot carry ESC or BEL (the renderer writes U+FFFD), but it does carry C1.
        (("prompt",), ["csi \\u009b2J done"]),
        (("doctor",), [ESCAPED_TOP, ESCAPED_EVIL]),
        (("doctor", "--agents"), [ESCAPED_EVIL]),
        (("validate", "--mode", "lenient", "."), [ESCAPED_EVIL]),
        (("trust",), [ESCAPED_TOP]),
        (("run",), ["/alert <topic>", ESCAPED_DESCRIPTION]),
        (("run", "/alert", "now"), ["\\x1b[1mbold"]),
        (("enable", "alert"), [ESCAPED_TOP]),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else "",
)
def test_human_output_shows_controls_escaped(
    tree: dict[str, Path], args: tuple[str, ...], visible: list[str]
) -> None:
    if args[0] == "validate":
        args = (*args[:-1], os.fspath(tree["skills"]))
    out = run(tree, *args)
    failed = 1 if args[0] == "validate" else 0  # the project's own broken skill fails
    assert out.returncode == failed, out.stderr.decode(errors="replace")
    text = shown(out.stdout)
    shown(out.stderr)
    for snippet in visible:
        assert snippet in text, f"{snippet!r} not in:\n{text}"


def test_validate_strict_failure_and_error_messages_are_escaped(tree: dict[str, Path]) -> None:
    out = run(tree, "validate", os.fspath(tree["skills"] / EVIL_DIR))
    assert out.returncode == 1
    assert f"('{ESCAPED_EVIL}')" in shown(out.stdout)
    missing = run(tree, "show", "no-such\x1b[2J")
    assert missing.returncode == 2
    assert "no-such\\x1b[2J" in shown(missing.stderr)


@pytest.fixture
def make_app(tree: dict[str, Path], short_dir: Path) -> Callable[[], SkillsApp]:
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(short_dir / "run"))

    async def connect() -> AsyncClient:
        return await AsyncClient.connect_shared(env=environ, idle_timeout=60, timeout=20)

    return lambda: SkillsApp(tree["project"], connect=connect)


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c not in "\n\t" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F)]


@sync
async def test_tui_shows_controls_escaped(make_app: Callable[[], SkillsApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot, app)
        row = row_of(app, "alert")
        assert ESCAPED_DESCRIPTION in row and not _raw_controls(row)
        await highlight(pilot, app, "alert")
        await until(
            pilot, lambda: "\\x1b[1mbold" in text_of(app, "#content"), "the rendered content"
        )
        for pane in ("#summary", "#content", "#permissions"):
            assert not _raw_controls(text_of(app, pane)), pane
        assert ESCAPED_DESCRIPTION in text_of(app, "#summary")
        await highlight(pilot, app, "evil")
        summary = text_of(app, "#summary")
        assert ESCAPED_EVIL in summary and not _raw_controls(summary)
        tree = app.query_one(DetailPane).resource_tree
        assert not any(_raw_controls(str(node.label)) for node in tree.root.children)
        assert not _raw_controls(app.export_screenshot())
