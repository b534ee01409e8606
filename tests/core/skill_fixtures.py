"""Small builders for SkillMetadata values used by pure-core unit tests."""

from __future__ import annotations

import hashlib

from skillsd_protocol import ResourceCounts, SkillMetadata


def make_skill(
    name: str,
    description: str = "A test skill.",
    *,
    root: str = "/repo/.agents/skills",
    scope: str = "repo",
    mtime_ms: float = 1.0,
    allowed_tools: list[str] | None = None,
    tags: str | None = None,
    enabled: bool = True,
) -> SkillMetadata:
    """A SkillMetadata for ``root/name/SKILL.md`` with a realistic id."""
    path = f"{root}/{name}/SKILL.md"
    return SkillMetadata(
        id=hashlib.sha256(path.encode()).hexdigest()[:24],
        name=name,
        description=description,
        path=path,
        dir=f"{root}/{name}",
        scope=scope,  # type: ignore[arg-type]
        root=root,
        mtime_ms=mtime_ms,
        size=100,
        enabled=enabled,
        allowed_tools=allowed_tools,
        metadata={"tags": tags} if tags is not None else None,
        resources=ResourceCounts(scripts=0, references=0, assets=0, other=0),
        diagnostics=[],
    )
