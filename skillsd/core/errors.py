"""The one exception the core raises for a request it cannot satisfy, carrying its data as a
typed Struct.

Problems *with a skill* are never exceptions: they are diagnostics collected in the catalog.
Application errors carry one of the protocol's ``ERROR_DATA`` Structs (their tag is the
``kind``); the few kinds that never reach the wire as application errors (a bad parameter, a
model's bad tool call) have their own Structs here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from skillsd_protocol.errors import ErrorData, TooLargeData

__all__ = [
    "InvalidArgumentsData",
    "InvalidParamsData",
    "SkillFileTooLargeData",
    "SkillsdError",
    "UnknownToolData",
]


class InvalidParamsData(ErrorData, tag="invalid_params", kw_only=True):
    """A request parameter the core refuses (sent as JSON-RPC ``-32602`` with ``data.field``)."""

    field: str | None = None


class UnknownToolData(ErrorData, tag="unknown_tool", kw_only=True):
    """``tools.call`` named no model-facing tool (becomes model text, never a wire error)."""


class InvalidArgumentsData(ErrorData, tag="invalid_arguments", kw_only=True):
    """A model's tool arguments do not fit the tool (becomes model text, never a wire error)."""


class SkillFileTooLargeData(TooLargeData, kw_only=True):
    """``too_large`` for a SKILL.md, with the byte ``limit`` it went over.

    The wire has always carried ``limit`` here; the protocol's ``TooLargeData`` does not declare
    it yet, so it lives in this subclass (same tag) until it does."""

    limit: int | None = None


class SkillsdError(Exception):
    """A failed operation: a message for people and typed ``data`` whose tag is the ``kind``."""

    def __init__(self, message: str, data: ErrorData) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    @property
    def kind(self) -> str:
        """The protocol's ``data.kind``: the tag of the data's Struct type."""
        tag = type(self.data).__struct_config__.tag
        assert isinstance(tag, str)  # every ErrorData subclass declares a string tag
        return tag

    def wire_data(self) -> dict[str, Any]:
        """``data`` as sent: ``kind`` first, then every member that applies.

        A member that does not apply is None and left out; an empty list is sent (an empty
        ``suggestions`` says "no close names", which is not the same as saying nothing)."""
        members = {
            f.encode_name: value
            for f in msgspec.structs.fields(self.data)
            if (value := getattr(self.data, f.name)) is not None
        }
        return {"kind": self.kind, **members}

    def __repr__(self) -> str:
        return f"SkillsdError({self.kind!r}, {self.message!r})"
