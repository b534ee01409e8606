"""Catalogs built in-process from given skill roots alone (no agent folders, no home)."""

from __future__ import annotations

from pathlib import Path

from skillsd.core.catalog_build import build_catalog
from skillsd.core.config import Config, DiscoveryConfig, RootsConfig
from skillsd.core.discovery import compute_roots
from skillsd_protocol import SkillMetadata


def catalog(*roots: Path) -> list[SkillMetadata]:
    """The enabled skills under ``roots``, as a catalog with only those roots has them."""
    config = Config(
        discovery=DiscoveryConfig(auto=False), roots=RootsConfig(extra=tuple(map(str, roots)))
    )
    plan = compute_roots(str(roots[0]), config, home="/nonexistent", env={})
    return [s for s in build_catalog(plan, config).skills if s.enabled]
