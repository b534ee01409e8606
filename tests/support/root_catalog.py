"""The enabled skills of a few folders given as extra roots (no discovery, no home): the
catalog the suggestion tests rank."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.policy.config import Config, DiscoveryConfig, RootsConfig
from skillsd_protocol import SkillMetadata

__all__ = ["catalog"]


def catalog(*roots: Path) -> list[SkillMetadata]:
    """The enabled skills of ``roots``, found as extra roots only."""
    config = Config(
        discovery=DiscoveryConfig(auto=False), roots=RootsConfig(extra=tuple(map(str, roots)))
    )
    plan = compute_roots(str(roots[0]), config, home="/nonexistent", env={})
    return [s for s in build_catalog(plan, config).skills if s.enabled]
