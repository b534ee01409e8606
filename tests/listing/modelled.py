"""The model's listings of the capture fixtures, and which fixtures have a stored capture: what
the captured-listing tests and the real-agent tests both check."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd.runtime.listing_requests import compute_listing
from skillsd_protocol.listing import ListingResult
from tests.listing.capture import CAPTURED
from tests.listing.fixtures import build

__all__ = ["CODEX", "STORED", "modelled"]

STORED = sorted(p.stem for p in (CAPTURED / "claude-code").glob("*.txt"))


def modelled(name: str, base: Path, path: str | None = None) -> tuple[ListingResult, Path]:
    """The model's Claude Code listing for fixture ``name`` built under ``base``; ``path``:
    the ``PATH`` the agent is found on (its own text is then read from it; by default none, so
    an agent installed on this machine does not change what is checked)."""
    home, project = build(name, base)
    env = {"HOME": str(home), "PATH": path or ""}
    # Past skillsd's default scan bound (discovery.maxDirs) for the 3 000-skill tree.
    config = Config(discovery=DiscoveryConfig(max_dirs=100_000))
    plan = compute_roots(str(project), config, home=str(home), env=env)
    skills = build_catalog(plan, config).seen_by("claude-code")
    result = compute_listing(
        skills, "claude-code", str(project), home=str(home), env=env, context_window=None
    )
    return result, home


CODEX = sorted(p.stem for p in (CAPTURED / "codex").glob("*.txt"))
