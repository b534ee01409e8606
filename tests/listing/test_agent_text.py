"""Reading an agent's own listing text out of its installed package, on packages made here:
a stand-in of Claude Code's npm package (its file holding JavaScript source) and of Codex's
(a launcher and a native binary in a platform package), holding made-up strings of our own,
with recipes for them written the way the real recipes are. The real agents are checked by
``test_real_agent_listings.py`` where they are installed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillsd.core.listing import agent_text as recipes
from skillsd.core.listing import fs_agent_text
from skillsd.core.listing.agent_listing import (
    CLAUDE_CODE_BUNDLED,
    ClaudeCodeSettings,
    claude_code_listing,
)
from skillsd.core.listing.agent_text import (
    AgentTextRecipe,
    BundledText,
    Piece,
    decode_js_string,
    digest,
)
from skillsd.core.listing.codex_listing import codex_listing
from skillsd.core.listing.fs_agent_text import agent_text, find_installed, read_pieces
from tests.core.skill_fixtures import make_skill

VERSION = "0.0.1-test"

#: Our own made-up source: two skills' descriptions as JavaScript literals, one a template.
SOURCE = (
    b'function a(){rc({name:"tidy",description:"Tidies a made-up tree \\u2014 for tests.",'
    b'whenToUse:\'When the test says "tidy".\'})}var k="Q";'
    b'function b(){rc({name:"sort",description:`Sorts ${k} things (see ~/.fake/sort.json).`})}'
)


def _js_piece(source: bytes, literal: bytes, marker: bytes) -> Piece:
    assert literal in source
    return Piece(marker, literal.index(marker), len(literal), digest(literal))


TIDY = b'"Tidies a made-up tree \\u2014 for tests."'
TIDY_WHEN = b"'When the test says \"tidy\".'"
SORT = b"`Sorts ${k} things (see ~/.fake/sort.json).`"


def _claude_recipe() -> AgentTextRecipe:
    return AgentTextRecipe(
        agent="claude-code",
        version=VERSION,
        bundled=(
            BundledText(
                "tidy",
                (
                    # A marker before the piece (code, negative offset) and one inside it.
                    Piece(b'name:"tidy",description:', -24, len(TIDY), digest(TIDY)),
                    " - ",
                    _js_piece(SOURCE, TIDY_WHEN, b"the test"),
                ),
            ),
            BundledText("sort", (_js_piece(SOURCE, SORT, b"~/.fake/"),), {"k": "Q"}),
        ),
        env_switches=("FAKE_SWITCH",),
        from_end=True,
    )


def _claude_package(base: Path, body: bytes, version: str = VERSION) -> str:
    """A stand-in npm package of Claude Code under ``base`` and a PATH folder with its
    command; the package's file holds ``body`` between runs of padding."""
    package = base / "node_modules/@anthropic-ai/claude-code"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@anthropic-ai/claude-code", "version": version})
    )
    binary = package / "bin/claude.exe"
    binary.write_bytes(b"\x7fELF" + b"\0" * 5000 + body + b"\0" * 3000)
    binary.chmod(0o755)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(binary)
    return str(bin_dir)


@pytest.fixture
def claude_recipe(monkeypatch: pytest.MonkeyPatch) -> AgentTextRecipe:
    recipe = _claude_recipe()
    monkeypatch.setitem(recipes.RECIPES, ("claude-code", VERSION), recipe)
    return recipe


def test_js_literals_decode_as_javascript_does() -> None:
    assert decode_js_string('"a\\u2014b\\x41\\n\\"q\\""') == 'a\u2014bA\n"q"'
    assert decode_js_string("'it\\'s'") == "it's"
    assert decode_js_string('"\\uD83D\\uDE00 \\u{1F600}"') == "\U0001f600 \U0001f600"
    assert decode_js_string("`a ${x} b`", {"x": "X"}) == "a X b"
    # What is not one whole literal, or needs what the recipe does not give, is refused.
    assert decode_js_string("`a ${y}`", {"x": "X"}) is None
    assert decode_js_string('"a"+"b"') is None
    assert decode_js_string('"a\nb"') is None
    assert decode_js_string('"\\1"') is None


def test_bundled_text_is_read_from_the_installed_package(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    path = _claude_package(tmp_path, SOURCE)
    found = agent_text("claude-code", {"PATH": path})
    assert found.why is None and found.version == VERSION
    assert found.bundled == {
        "tidy": 'Tidies a made-up tree \u2014 for tests. - When the test says "tidy".',
        "sort": "Sorts Q things (see ~/.fake/sort.json).",
    }
    assert found.path is not None and found.path.endswith("claude.exe")


def test_a_configured_path_is_used_instead_of_path(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    bin_dir = _claude_package(tmp_path, SOURCE)
    found = agent_text("claude-code", {"PATH": ""}, os.path.join(bin_dir, "claude"))
    assert found.why is None and found.bundled is not None and "tidy" in found.bundled
    # The package's own file named directly works too.
    binary = os.path.realpath(os.path.join(bin_dir, "claude"))
    assert agent_text("claude-code", {"PATH": ""}, binary).bundled == found.bundled


def test_pieces_across_windows_are_found(
    tmp_path: Path, claude_recipe: AgentTextRecipe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read in windows smaller than a piece, from either end, every piece is still found."""
    path = _claude_package(tmp_path, SOURCE)
    binary = os.path.realpath(os.path.join(path, "claude"))
    pieces = tuple(p for b in claude_recipe.bundled for p in b.parts if isinstance(p, Piece))
    monkeypatch.setattr(fs_agent_text, "_WINDOW", 17)
    for from_end in (True, False):
        found, _key = read_pieces(binary, pieces, from_end=from_end)
        assert set(found) == set(pieces)


def test_a_file_that_differs_gives_no_text_and_says_why(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    path = _claude_package(tmp_path, SOURCE.replace(b"made-up tree", b"made-up wood"))
    found = agent_text("claude-code", {"PATH": path})
    assert found.bundled is None
    assert found.why is not None and "1 of the agent's own texts" in found.why
    assert "(tidy)" in found.why


def test_a_version_without_a_recipe_is_not_guessed(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    path = _claude_package(tmp_path, SOURCE, version="0.0.2-test")
    found = agent_text("claude-code", {"PATH": path})
    assert found.bundled is None
    assert found.why is not None and "version 0.0.2-test" in found.why


def test_not_installed_says_so(tmp_path: Path) -> None:
    found = agent_text("claude-code", {"PATH": str(tmp_path)})
    assert found.bundled is None and found.why is not None and "not found" in found.why


def test_a_switch_that_changes_the_text_leaves_it_out(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    path = _claude_package(tmp_path, SOURCE)
    found = agent_text("claude-code", {"PATH": path, "FAKE_SWITCH": "1"})
    assert found.bundled is None and found.why is not None and "FAKE_SWITCH" in found.why


def test_the_text_is_read_again_when_the_file_changes(
    tmp_path: Path, claude_recipe: AgentTextRecipe
) -> None:
    path = _claude_package(tmp_path, SOURCE)
    env = {"PATH": path}
    assert agent_text("claude-code", env).bundled is not None
    binary = Path(os.path.realpath(os.path.join(path, "claude")))
    binary.write_bytes(b"\0" * 100)  # a new version of the file: no longer holds the text
    assert agent_text("claude-code", env).bundled is None


def test_a_file_past_the_bound_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"\0" * 4096)
    piece = Piece(b"x", 0, 1, digest(b"x"))
    with pytest.raises(OSError, match="larger than"):
        read_pieces(str(big), (piece,), from_end=False, max_bytes=1024)


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        read_pieces(str(fifo), (Piece(b"x", 0, 1, digest(b"x")),), from_end=False)


# -- Codex ---------------------------------------------------------------------------------

SENTENCE = b"Our made-up opening line names `FAKE.md` for a test."


def _codex_package(base: Path, body: bytes) -> str:
    launcher = base / "node_modules/@openai/codex"
    (launcher / "bin").mkdir(parents=True)
    (launcher / "package.json").write_text(
        json.dumps({"name": "@openai/codex", "version": VERSION})
    )
    (launcher / "bin/codex.js").write_text("// launcher\n")
    (launcher / "bin/codex.js").chmod(0o755)
    plat = fs_agent_text._codex_platform()
    assert plat is not None
    native = base / f"node_modules/@openai/codex-{plat}/vendor/some-triple/bin/codex"
    native.parent.mkdir(parents=True)
    native.write_bytes(b"\0" * 300 + b"other strings" + body + b"more strings" + b"\0" * 300)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").symlink_to(launcher / "bin/codex.js")
    return str(bin_dir)


def test_codex_preamble_is_read_from_its_native_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = AgentTextRecipe(
        agent="codex",
        version=VERSION,
        preamble=(
            "<skills_instructions>",
            "## Skills",
            Piece(
                b"`FAKE.md`",
                SENTENCE.index(b"`FAKE.md`"),
                len(SENTENCE),
                digest(SENTENCE),
                js=False,
            ),
        ),
    )
    monkeypatch.setitem(recipes.RECIPES, ("codex", VERSION), recipe)
    path = _codex_package(tmp_path, SENTENCE)
    installed = find_installed("codex", {"PATH": path})
    assert installed is not None and installed.path.endswith("some-triple/bin/codex")
    found = agent_text("codex", {"PATH": path})
    assert found.preamble == "<skills_instructions>\n## Skills\n" + SENTENCE.decode()

    skill = make_skill("alpha", "Alpha skill.", root=str(tmp_path / "skills"), scope="user")
    listing = codex_listing([skill], codex_home=str(tmp_path / "codex"), preamble=found.preamble)
    assert listing.agent_text
    assert listing.text.startswith(found.preamble + "\n### Skill roots\n")
    assert listing.text.endswith("(file: r0/alpha/SKILL.md)\n</skills_instructions>")
    without = codex_listing([skill], codex_home=str(tmp_path / "codex"))
    assert not without.agent_text and without.text.startswith("### Skill roots")


# -- the listing with the agent's own text --------------------------------------------------


def _stand_ins(length_of: dict[str, int] | None = None) -> dict[str, str]:
    """Made-up descriptions for Claude Code's bundled skills, of their measured lengths."""
    return {
        b.name: ("z" * (length_of or {}).get(b.name, b.description_chars))
        for b in CLAUDE_CODE_BUNDLED
    }


def test_claude_code_text_ends_with_the_bundled_lines() -> None:
    skill = make_skill("alpha", "Alpha skill.", root="/home/u/.claude/skills", scope="user")
    own = claude_code_listing([skill], ClaudeCodeSettings(), bundled_text=_stand_ins())
    lines = own.text.split("\n")
    assert own.agent_text and lines[0] == "- alpha: Alpha skill."
    assert [line.split(":")[0][2:] for line in lines[1:]] == [b.name for b in CLAUDE_CODE_BUNDLED]
    assert own.used_chars == len(own.text)
    without = claude_code_listing([skill], ClaudeCodeSettings())
    assert not without.agent_text and without.text == "- alpha: Alpha skill."
    assert without.used_chars == own.used_chars


def test_bundled_lines_follow_the_budget_and_the_switches() -> None:
    skill = make_skill("alpha", "Alpha skill.", root="/home/u/.claude/skills", scope="user")
    # A budget too small for init's description: it is listed by name alone.
    tight = ClaudeCodeSettings(char_budget=100)
    listing = claude_code_listing([skill], tight, bundled_text=_stand_ins())
    assert "\n- init\n" in listing.text and "- alpha\n" in listing.text
    # Without bundled skills there is nothing of the agent's to add.
    off = ClaudeCodeSettings(disable_bundled=True)
    listing = claude_code_listing([skill], off, bundled_text={})
    assert listing.agent_text and listing.text == "- alpha: Alpha skill."
    # A bundled description past skillListingMaxDescChars is cut as the user's are.
    cut = ClaudeCodeSettings(max_desc_chars=10)
    listing = claude_code_listing([skill], cut, bundled_text=_stand_ins())
    assert "- dataviz: zzzzzzzzz\u2026" in listing.text.split("\n")
    # Some bundled text missing: only the lines from disk.
    partial = {k: v for k, v in _stand_ins().items() if k != "loop"}
    listing = claude_code_listing([skill], ClaudeCodeSettings(), bundled_text=partial)
    assert not listing.agent_text and listing.text == "- alpha: Alpha skill."
