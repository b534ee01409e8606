"""What one request sees (:class:`RequestView`: its catalog, session, policy and trust) and
which skill it names: the inputs every use case of the runtime starts from."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.policy.config import Config
from skillsd.core.policy.permissions import (
    Check,
)
from skillsd.core.policy.sessions import Session
from skillsd.core.policy.trust import TrustState
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import (
    RefParams,
)

#: The policy decision for one call: (session whose memory and grants count, tool, input).
PolicyCheck = Callable[[Session | None, str, str | None], Check]


#: What a skill id looks like (docs/embedding.md: 24 hex digits).
_SKILL_ID = re.compile(r"[0-9a-f]{24}")


@dataclass(frozen=True, slots=True)
class RequestView:
    """What a request sees: its catalog, its session, and the permission policy.

    ``check`` is None when the user acts directly (the CLI): nothing is gated then
    (docs/permissions.md).
    ``trust`` is the trust of the catalog's repository root, and ``is_trusted`` answers it for
    any root (a session may hold skills loaded from another repository): workspace trust.
    """

    catalog: Catalog
    session: Session | None = None
    check: PolicyCheck | None = None
    trust: TrustState | None = None
    is_trusted: Callable[[str], bool] | None = None

    @property
    def trusted(self) -> bool:
        """Whether the catalog's repository root is trusted (not known: not trusted)."""
        return self.trust is not None and self.trust.trusted

    @property
    def cwd(self) -> str:
        return self.catalog.cwd

    @property
    def config(self) -> Config:
        return self.catalog.config

    def withheld_grants(self, skill: SkillMetadata) -> list[str]:
        """The rules of ``skill``'s ``allowed-tools`` that grant nothing here: all of them
        while the repository is untrusted and the skill's grants need its trust, else none
        (a load, an invocation and ``doctor`` all say so from here)."""
        if self.trusted or not self.catalog.grants_need_trust(skill):
            return []
        return list(dict.fromkeys(skill.allowed_tools or ()))


def resolve(catalog: Catalog, ref: RefParams, *, include_disabled: bool = False) -> SkillMetadata:
    """The skill a request names (``path`` > ``id`` > ``name``); naming none is a bad param."""
    if ref.path is None and ref.id is None and ref.name is None:
        raise SkillsdError("give one of `path`, `id` or `name`", InvalidParamsData())
    return catalog.resolve(
        path=ref.path, id=ref.id, name=ref.name, include_disabled=include_disabled
    )


def ref_from_text(catalog: Catalog, text: str) -> RefParams:
    """A skill reference a person typed: a path if it looks like one, an id if one matches, else
    a name."""
    if os.sep in text or os.path.exists(os.path.join(catalog.cwd, text)):
        return RefParams(path=text)
    if _SKILL_ID.fullmatch(text) and catalog.get(text) is not None:
        return RefParams(id=text)
    return RefParams(name=text)
