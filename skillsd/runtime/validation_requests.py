"""``skills.validate``: one skill folder or SKILL.md judged, and the skill as a catalog would
list it."""

from __future__ import annotations

import asyncio
import os

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import Config, DiscoveryConfig
from skillsd.core.skill.fs_skillfile import (
    SKILL_FILE,
    Mode,
    ParsedSkillFile,
    read_skill_file,
)
from skillsd.runtime.services import Services
from skillsd_protocol.errors import (
    SkillNotFoundData,
)
from skillsd_protocol.messages import (
    ValidateParams,
    ValidateResult,
)


def skill_file_verdict(
    skill_md: str, mode: Mode, *, fail_on_warnings: bool = False
) -> tuple[ParsedSkillFile, bool]:
    """Read one SKILL.md in full and judge it: valid when it has fields and no error (with
    ``fail_on_warnings``, no warning either)."""
    parsed = read_skill_file(skill_md, mode=mode, read_body=True)
    failing = {"error", "warning"} if fail_on_warnings else {"error"}
    valid = parsed.fields is not None and not any(d.severity in failing for d in parsed.diagnostics)
    return parsed, valid


def validation_result(params: ValidateParams) -> ValidateResult:
    """``skills.validate``: one skill dir or SKILL.md, and the skill as a catalog would list it."""
    path = os.path.abspath(params.path)
    skill_md = path if os.path.basename(path) == SKILL_FILE else os.path.join(path, SKILL_FILE)
    if not os.path.exists(skill_md):
        raise SkillsdError(
            f"{skill_md}: no SKILL.md there to validate", SkillNotFoundData(suggestions=[])
        )
    mode = params.mode or "strict"
    parsed, valid = skill_file_verdict(skill_md, mode)
    skill = None
    if valid:
        # The skill as a catalog would list it: an extra root that is itself a skill.
        skill_dir = os.path.dirname(skill_md)
        config = Config(validation=mode, discovery=DiscoveryConfig(auto=False))
        plan = RootPlan(cwd=skill_dir, repo_root=skill_dir, roots=(Root(skill_dir, "extra"),))
        listed = build_catalog(plan, config).skills
        skill = listed[0] if listed else None
    return ValidateResult(valid=valid, skill=skill, diagnostics=parsed.diagnostics)


async def validate(svc: Services, params: ValidateParams) -> ValidateResult:
    """``skills.validate``: reads one SKILL.md in full, off the loop."""
    return await asyncio.to_thread(validation_result, params)
