"""The one exception the core raises for a request it cannot satisfy.

Problems *with a skill* are never exceptions: they are diagnostics collected in the catalog.
"""

from __future__ import annotations

from typing import Any


class SkillsdError(Exception):
    """A failed operation with a stable ``kind`` (SPEC 9's ``data.kind``) and extra ``data``."""

    def __init__(self, kind: str, message: str, **data: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"SkillsdError({self.kind!r}, {self.message!r})"
