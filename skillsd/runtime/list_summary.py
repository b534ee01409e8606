"""The last line of ``skillsd list``: how many skills are listed, how many were left out and why,
and how to see them (a user must never wonder where a skill went)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.skill.validation import LENIENT_DEMOTED
from skillsd_protocol import SkillMetadata

__all__ = ["list_summary"]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def list_summary(
    catalog: Catalog, shown: list[SkillMetadata], scanned: Mapping[str, str] | None = None
) -> str:
    """One line: listed skills (with warnings, disabled, flagged by the scan), left-out ones by
    reason, next step. ``scanned``: skill folder -> its worst scan finding, when scanned."""
    listed = _count(len(shown), "skill")
    details = []
    warned = sum(1 for s in shown if any(d.severity == "warning" for d in s.diagnostics))
    if warned:
        details.append(f"{warned} with warnings")
    disabled = sum(1 for s in shown if not s.enabled)
    if disabled:
        details.append(f"{disabled} disabled")
    flagged = [scanned[s.dir] for s in shown if s.dir in scanned] if scanned else []
    for severity in ("danger", "warning"):
        if count := flagged.count(severity):
            details.append(f"{count} with scan {severity}s")
    if details:
        listed += f" ({', '.join(details)})"
    errors = catalog.errors
    if not errors:
        return f"{listed}; none left out (root: {catalog.repo_root})"
    codes: Counter[str] = Counter()
    for error in errors:
        first = next((d.code for d in error.diagnostics if d.severity == "error"), "invalid")
        codes[first] += 1
    reasons = ", ".join(f"{n} {code}" for code, n in codes.most_common())
    line = f"{listed}; {len(errors)} left out as invalid ({reasons})"
    rescuable = sum(
        1
        for e in errors
        if {d.code for d in e.diagnostics if d.severity == "error"} <= LENIENT_DEMOTED
    )
    if catalog.mode == "strict" and rescuable:
        line += f'; validation = "lenient" in the config would keep {rescuable}'
    return line + "; see why with `skillsd doctor` or `skillsd validate PATH`"
