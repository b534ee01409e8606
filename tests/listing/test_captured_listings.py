"""The model of Claude Code's listing against what Claude Code 2.1.328 sent its model for the
same skill trees (``captured/claude-code``, made by ``capture.py`` offline): the lines of the
skills on disk byte for byte, the form and length of each of its bundled skills, and the
characters the whole listing takes. No agent is needed here; the real-agent test re-captures.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.listing.agent_listing import CLAUDE_CODE_BUNDLED
from skillsd.core.listing.fs_agent_text import AgentText
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd.runtime import listing_requests
from skillsd.runtime.listing_requests import compute_listing
from skillsd_protocol.listing import ListingResult
from tests.listing.capture import CAPTURED, strip_codex_system
from tests.listing.compare import claude_differences
from tests.listing.fixtures import build, write_skill
from tests.listing.modelled import CODEX, STORED, modelled

#: Codex's own skills as the stored captures hold them: name and description length (their
#: text ships inside Codex; stand-ins of the same length cost what they cost).
CODEX_SYSTEM = re.findall(
    r"(?m)^- ([a-z-]+): <(\d+) characters> \(file: r1/",
    (CAPTURED / "codex" / "small.txt").read_text(),
)


def codex_modelled(name: str, base: Path) -> ListingResult:
    """The model's Codex listing for fixture ``name`` under ``base``, with stand-ins for
    Codex's own skills (which Codex writes into ``$CODEX_HOME/skills/.system``)."""
    home, project = build(name, base)
    for skill, length in CODEX_SYSTEM:
        write_skill(home / ".codex/skills/.system", skill, "x" * int(length))
    env = {"HOME": str(home), "PATH": ""}  # the agent's own text: stand-ins, not this machine's
    config = Config(discovery=DiscoveryConfig(max_dirs=100_000))
    plan = compute_roots(str(project), config, home=str(home), env=env)
    skills = build_catalog(plan, config).seen_by("codex")
    return compute_listing(
        skills, "codex", str(project), home=str(home), env=env, context_window=None
    )


#: What the stored captures hold in place of each text of the agent's own.
_PLACEHOLDER = re.compile(r"<(\d+) characters>")


def _stand_in(length: int) -> str:
    """Our made-up text standing for ``length`` characters of an agent's own text."""
    return "z" * length


def _filled(stored: str) -> str:
    return _PLACEHOLDER.sub(lambda m: _stand_in(int(m.group(1))), stored)


@pytest.mark.parametrize("name", CODEX)
def test_with_its_own_text_the_model_is_the_whole_message_codex_sent(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Codex's opening sentences (read from the installed Codex where there is one;
    stand-ins of their length here), ``text`` is the whole ``<skills_instructions>``
    message, byte for byte."""
    stored = (CAPTURED / "codex" / f"{name}.txt").read_text()
    sentence = int(_PLACEHOLDER.search(stored.split("\n")[2]).group(1))  # type: ignore[union-attr]
    preamble = f"<skills_instructions>\n## Skills\n{_stand_in(sentence)}"
    monkeypatch.setattr(
        listing_requests,
        "agent_text",
        lambda agent, env, configured=None: AgentText(agent, preamble=preamble),
    )
    with tempfile.TemporaryDirectory(prefix="listing-", dir="/tmp") as base:
        result = codex_modelled(name, Path(base))
        system = str(Path(base) / "home/.codex/skills/.system")
        ours = strip_codex_system(result.text, system).replace(base, "$FIXTURE")
    assert result.agent_text
    assert _filled(ours) == _filled(stored)


@pytest.mark.parametrize("name", STORED)
def test_with_its_own_text_the_model_is_the_whole_block_claude_code_sent(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Claude Code's bundled skills' descriptions (read from the installed agent where
    there is one; stand-ins of their measured lengths here), ``text`` is the whole block."""
    stored = (CAPTURED / "claude-code" / f"{name}.txt").read_text()
    small = (CAPTURED / "claude-code" / "small.txt").read_text()
    lengths = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"(?m)^- ([a-z-]+): <(\d+) characters>$", small)
    }
    assert set(lengths) == {b.name for b in CLAUDE_CODE_BUNDLED}
    bundled = {name: _stand_in(length) for name, length in lengths.items()}
    monkeypatch.setattr(
        listing_requests,
        "agent_text",
        lambda agent, env, configured=None: AgentText(agent, bundled=bundled),
    )
    result, _home = modelled(name, tmp_path)
    assert result.agent_text and result.agent_text_why is None

    def fill(m: re.Match[str]) -> str:
        # A description Claude Code cut (skillListingMaxDescChars) ends with an ellipsis.
        shown, full = int(m.group(2)), lengths[m.group(1)]
        text = _stand_in(shown) if shown == full else _stand_in(shown - 1) + "\u2026"
        return f"- {m.group(1)}: {text}"

    block = re.sub(r"(?m)^- ([a-z-]+): <(\d+) characters>", fill, stored)
    block = block.replace("$FIXTURE", str(tmp_path))
    assert result.text == block
    assert result.used_chars == len(block)


def test_without_the_agent_the_text_is_what_comes_from_disk_and_says_why(
    tmp_path: Path,
) -> None:
    result, _home = modelled("small", tmp_path, path=str(tmp_path))
    assert not result.agent_text
    assert result.agent_text_why is not None and "not found" in result.agent_text_why
    assert "- dataviz" not in result.text


@pytest.mark.parametrize("name", CODEX)
def test_the_model_is_what_codex_sent(name: str) -> None:
    # The captures' paths were /tmp/listing-XXXXXXXX: path lengths change what fits.
    with tempfile.TemporaryDirectory(prefix="listing-", dir="/tmp") as base:
        result = codex_modelled(name, Path(base))
        system = str(Path(base) / "home/.codex/skills/.system")
        ours = strip_codex_system(result.text, system).replace(base, "$FIXTURE")
    stored = (CAPTURED / "codex" / f"{name}.txt").read_text()
    body = stored[stored.index("### Skill roots") : stored.rindex("\n</skills_instructions>")]
    assert ours == body


def test_codex_shortens_every_description_past_its_budget() -> None:
    with tempfile.TemporaryDirectory(prefix="listing-", dir="/tmp") as base:
        result = codex_modelled("three-hundred", Path(base))
    own = [e for e in result.entries if not e.bundled]
    assert len(own) == 300 and all(e.cut and e.shown == "full" for e in own)
    assert (result.full, result.shown, result.budget_chars) == (0, 300, 40_000)


def test_every_fixture_was_captured() -> None:
    assert set(STORED) >= {
        "small",
        "three-hundred",
        "three-thousand",
        "overrides",
        "raised-fraction",
        "long-descriptions",
    }


@pytest.mark.parametrize("name", STORED)
def test_the_model_is_what_claude_code_sent(name: str, tmp_path: Path) -> None:
    result, _home = modelled(name, tmp_path)
    block = (CAPTURED / "claude-code" / f"{name}.txt").read_text()
    assert claude_differences(block.replace("$FIXTURE", str(tmp_path)), result) == []


def test_three_hundred_skills_79_keep_their_description(tmp_path: Path) -> None:
    """The issue's case: past the 30 000-character budget the descriptions go in listing
    order; 79 of the user's 300 skills keep theirs."""
    result, _home = modelled("three-hundred", tmp_path)
    assert (result.budget_chars, result.full, result.shown) == (30000, 79, 300)
    names = [e.name for e in result.entries if not e.bundled]
    assert names == sorted(names)
    full = [e.name for e in result.entries if e.shown == "full" and not e.bundled]
    assert full == names[:79]


def test_overrides_from_user_project_and_local_settings(tmp_path: Path) -> None:
    result, _home = modelled("overrides", tmp_path)
    shown = {e.name: (e.shown, e.why) for e in result.entries}
    # user: alpha-0 off; project: banner-1 name-only (local turns it on), border-2
    # user-invocable-only; local: cedar-3 off.
    assert shown["alpha-0"][0] == "off" and "settings.json" in shown["alpha-0"][1]
    assert shown["banner-1"][0] == "full"
    assert shown["border-2"][0] == "user-only"
    assert shown["cedar-3"][0] == "off" and "settings.local.json" in shown["cedar-3"][1]
    assert "- alpha-0" not in result.text.split("\n")


def test_a_raised_fraction_raises_the_budget(tmp_path: Path) -> None:
    result, _home = modelled("raised-fraction", tmp_path)
    assert result.budget_chars == 60000 and result.full == 196


def test_the_personal_skill_of_a_name_is_the_one_listed(tmp_path: Path) -> None:
    result, _home = modelled("small", tmp_path)
    assert "- dup: The dup skill, the user's." in result.text.split("\n")
    assert "the project's" not in result.text.split("- dup: ")[1].split("\n")[0]
    hidden = {e.name: e for e in result.entries if e.shown == "user-only"}
    assert hidden["hidden"].why == "disable-model-invocation: true"
    assert "- when: Writes changelogs. - When a release is cut." in result.text
