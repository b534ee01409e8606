"""The skill trees behind the captured listings in ``tests/listing/captured/``: each fixture is
a HOME and a git repository, built the same way every time, so the model of an agent's listing
can be checked against what the real agent sent for the same tree (``capture.py``)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from skillsd.core.catalog_build import build_catalog
from skillsd.core.config import Config, DiscoveryConfig
from skillsd.core.discovery import compute_roots
from skillsd.runtime.listing_requests import compute_listing
from skillsd_protocol.listing import ListingResult

CAPTURED = Path(__file__).with_name("captured")

__all__ = ["FIXTURES", "REPO_NEEDS", "build", "skill_name", "write_skill"]

_WORDS = [
    "alpha",
    "amber",
    "anchor",
    "arrow",
    "aspen",
    "atlas",
    "badge",
    "banner",
    "basil",
    "beacon",
    "birch",
    "blaze",
    "bloom",
    "bolt",
    "border",
    "bramble",
    "brook",
    "cable",
    "cactus",
    "candle",
    "canyon",
    "cedar",
    "chalk",
    "cipher",
    "citrus",
    "clover",
    "cobalt",
    "comet",
    "copper",
    "coral",
    "crane",
    "crystal",
    "delta",
    "dune",
    "ember",
    "falcon",
    "fern",
    "fjord",
    "flint",
    "forge",
    "frost",
    "garnet",
    "glacier",
    "granite",
    "harbor",
    "hazel",
    "heron",
    "indigo",
    "iris",
    "ivory",
    "jade",
    "juniper",
    "kestrel",
    "lagoon",
    "lantern",
    "larch",
    "lemon",
    "lilac",
    "linen",
    "lotus",
    "lunar",
    "maple",
    "marble",
    "meadow",
    "mercury",
    "mint",
    "mosaic",
    "nectar",
    "nimbus",
    "nova",
    "oasis",
    "obsidian",
    "olive",
    "onyx",
    "opal",
    "orbit",
    "orchid",
    "otter",
    "pebble",
    "pepper",
    "pine",
    "plume",
    "polar",
    "prism",
    "quartz",
    "quill",
    "raven",
    "reed",
    "ridge",
    "river",
    "robin",
    "saffron",
    "sage",
    "sierra",
    "silver",
    "sorrel",
    "spruce",
    "summit",
    "tango",
    "thistle",
    "tidal",
    "topaz",
    "tulip",
    "umber",
    "valley",
    "velvet",
    "willow",
    "zephyr",
]

_TOPICS = (
    "database migrations",
    "release notes",
    "terraform plans",
    "python packaging",
    "react components",
    "rust crates",
    "kubernetes manifests",
    "sql query tuning",
    "api documentation",
    "incident reviews",
)


def skill_name(i: int) -> str:
    """A skill name of words, not numbered in listing order (so sorting by name matters)."""
    return f"{_WORDS[(i * 7) % len(_WORDS)]}-{i}"


def _description(i: int, length: int = 254) -> str:
    topic = _TOPICS[i % len(_TOPICS)]
    text = (
        f"Helps with {topic} in skill {i}: reads the project, checks the usual mistakes, "
        f"proposes a plan and applies it step by step, then reports what changed and what "
        f"to review. Use when the user asks about {topic}, mentions them by name, or works "
        f"on files that hold them; not for unrelated chores or general questions at all."
    )
    return (text * 2)[:length].rstrip()


def write_skill(folder: Path, name: str, description: str, extra: str = "") -> None:
    skill = folder / name
    skill.mkdir(parents=True, exist_ok=True)
    head = f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\n"
    (skill / "SKILL.md").write_text(f"{head}\nBody of {name}.\n")


def _settings(path: Path, value: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def _personal(home: Path, count: int) -> list[str]:
    names = [skill_name(i) for i in range(count)]
    for i, name in enumerate(names):
        write_skill(home / ".claude/skills", name, _description(i))
        write_skill(home / ".agents/skills", name, _description(i))
    return names


def _small(home: Path, project: Path) -> None:
    for name in ("zeta", "alpha", "dup"):
        write_skill(home / ".claude/skills", name, f"The {name} skill, the user's.")
        write_skill(home / ".agents/skills", name, f"The {name} skill, the user's.")
    for name in ("gamma", "dup"):
        write_skill(project / ".claude/skills", name, f"The {name} skill, the project's.")
        write_skill(project / ".agents/skills", name, f"The {name} skill, the project's.")
    write_skill(
        project / ".claude/skills",
        "hidden",
        "Only for the user.",
        "disable-model-invocation: true\n",
    )
    write_skill(
        project / ".claude/skills",
        "when",
        "Writes changelogs.",
        "when_to_use: When a release is cut.\n",
    )


def _three_hundred(home: Path, project: Path) -> None:
    _personal(home, 300)


def _three_thousand(home: Path, project: Path) -> None:
    _personal(home, 3000)


def _overrides(home: Path, project: Path) -> None:
    names = _personal(home, 300)
    _settings(home / ".claude/settings.json", {"skillOverrides": {names[0]: "off"}})
    _settings(
        project / ".claude/settings.json",
        {"skillOverrides": {names[1]: "name-only", names[2]: "user-invocable-only"}},
    )
    _settings(
        project / ".claude/settings.local.json",
        {"skillOverrides": {names[3]: "off", names[1]: "on"}},
    )


def _raised(home: Path, project: Path) -> None:
    _personal(home, 300)
    _settings(home / ".claude/settings.json", {"skillListingBudgetFraction": 0.02})


def _long(home: Path, project: Path) -> None:
    _personal(home, 5)
    write_skill(home / ".claude/skills", "wordy", "x" * 2000)
    _settings(home / ".claude/settings.json", {"skillListingMaxDescChars": 100})


def _plugins(home: Path, project: Path) -> None:
    """Two personal skills, a project skill and a plugin of two skills from a local directory
    marketplace (Claude Code reads a directory marketplace's plugin where it is)."""
    for name in ("zulu", "delta"):
        write_skill(home / ".claude/skills", name, f"The {name} skill, the user's.")
    write_skill(project / ".claude/skills", "echo", "The echo skill, the project's.")
    market = home / ".claude/plugins/marketplaces/acme-market"
    plugin = market / "tools"
    for name in ("fmt", "lint"):
        write_skill(plugin / "skills", name, f"The {name} skill of the tools plugin.")
    _settings(plugin / ".claude-plugin/plugin.json", {"name": "tools", "version": "1.2.0"})
    _settings(
        market / ".claude-plugin/marketplace.json",
        {
            "name": "acme-market",
            "owner": {"name": "acme"},
            "plugins": [{"name": "tools", "source": "./tools", "version": "1.2.0"}],
        },
    )
    when = "2026-11-01T00:00:00.000Z"
    _settings(
        home / ".claude/plugins/known_marketplaces.json",
        {
            "acme-market": {
                "source": {"source": "directory", "path": str(market)},
                "installLocation": str(market),
                "lastUpdated": when,
            }
        },
    )
    record = {
        "scope": "user",
        "installPath": str(plugin),
        "version": "1.2.0",
        "installedAt": when,
        "lastUpdated": when,
    }
    _settings(
        home / ".claude/plugins/installed_plugins.json",
        {"version": 2, "plugins": {"tools@acme-market": [record]}},
    )
    _settings(home / ".claude/settings.json", {"enabledPlugins": {"tools@acme-market": True}})


#: Fixture name -> builder(home, project).
FIXTURES: dict[str, Callable[[Path, Path], None]] = {
    "small": _small,
    "three-hundred": _three_hundred,
    "three-thousand": _three_thousand,
    "overrides": _overrides,
    "raised-fraction": _raised,
    "long-descriptions": _long,
    "plugins": _plugins,
}

#: The 30 skills of the 300 that the profile repository needs (their topic is in its README).
REPO_NEEDS = "database migrations"


def build(name: str, base: Path) -> tuple[Path, Path]:
    """Build fixture ``name`` under ``base``: (home, project)."""
    home, project = base / "home", base / "project"
    home.mkdir(parents=True)
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    FIXTURES[name](home, project)
    return home, project


README = (
    "# ledger\n\nA billing service. Its schema changes ship as database migrations (alembic); "
    "run the migrations before each deploy.\n"
)
#: The user's own local settings: a permission and an override of their own.
LOCAL = (
    '{\n    "permissions": {"allow": ["Bash(git status)"]},\n'
    '    "skillOverrides": {"alpha-0": "on"}\n}\n'
)


STORED = sorted(p.stem for p in (CAPTURED / "claude-code").glob("*.txt"))


def modelled(name: str, base: Path) -> tuple[ListingResult, Path]:
    """The model's Claude Code listing for fixture ``name`` built under ``base``."""
    home, project = build(name, base)
    env = {"HOME": str(home)}
    # Past skillsd's default scan bound (discovery.maxDirs) for the 3 000-skill tree.
    config = Config(discovery=DiscoveryConfig(max_dirs=100_000))
    plan = compute_roots(str(project), config, home=str(home), env=env)
    skills = build_catalog(plan, config).seen_by("claude-code")
    result = compute_listing(
        skills, "claude-code", str(project), home=str(home), env=env, context_window=None
    )
    return result, home


CODEX = sorted(p.stem for p in (CAPTURED / "codex").glob("*.txt"))
