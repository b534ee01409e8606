"""The protocol package: self-contained, schema checked in and current, types round-trip."""

from __future__ import annotations

import json

import msgspec
import pytest

from skillsd_protocol import METHODS, NOTIFICATIONS, ResourceCounts, SkillMetadata
from skillsd_protocol.errors import KIND_CODES, ErrorCode
from skillsd_protocol.messages import SearchParams
from skillsd_protocol.schema import SCHEMA_PATH, build_schema, render_schema
from tests.import_isolation import imported_in_isolation


def test_checked_in_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "schema.json is stale: run `python -m skillsd_protocol.schema > " + str(SCHEMA_PATH) + "`"
    )


def test_schema_covers_every_method_and_notification() -> None:
    schema = build_schema()
    assert set(schema["methods"]) == set(METHODS)
    assert set(schema["notifications"]) == set(NOTIFICATIONS)
    for entry in [*schema["methods"].values(), *schema["notifications"].values()]:
        for part in entry.values():
            if "$ref" in part:
                assert part["$ref"].removeprefix("#/$defs/") in schema["$defs"]
    assert schema["errorKinds"]["skill_not_found"] == 1001


@pytest.mark.process
def test_protocol_imports_nothing_but_msgspec() -> None:
    out = imported_in_isolation(
        {"msgspec", "skillsd_protocol"},
        "import skillsd_protocol, skillsd_protocol.schema, skillsd_protocol.messages\nprint('ok')",
    )
    assert out.strip() == "ok"


def test_wire_names_are_camel_case_and_optional_fields_omitted() -> None:
    raw = msgspec.json.encode(
        SkillMetadata(
            id="0" * 24,
            name="pdf",
            description="d",
            path="/s/pdf/SKILL.md",
            dir="/s/pdf",
            scope="repo",
            root="/s",
            mtime_ms=1.0,
            size=10,
            enabled=True,
            resources=ResourceCounts(scripts=0, references=0, assets=0, other=0),
            diagnostics=[],
        )
    )
    data = json.loads(raw)
    assert data["mtimeMs"] == 1.0 and data["enabled"] is True and data["diagnostics"] == []
    assert "license" not in data and "sameName" not in data
    assert data["resources"] == {"scripts": 0, "references": 0, "assets": 0, "other": 0}


def test_params_errors_name_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.limit"):
        msgspec.json.decode(b'{"query": "x", "limit": "ten"}', type=SearchParams)
    decoded = msgspec.json.decode(
        b'{"query": "x", "_meta": {"progressToken": 7}, "sessionId": "s"}', type=SearchParams
    )
    assert decoded.meta is not None and decoded.meta.progress_token == 7
    assert decoded.session_id == "s"


def test_every_error_kind_has_an_application_code() -> None:
    assert all(code >= 1001 for code in KIND_CODES.values())
    assert len(set(KIND_CODES.values())) == len(KIND_CODES)
    assert ErrorCode.REQUEST_CANCELLED == -32800


def test_every_spec_error_kind_is_defined() -> None:
    # The protocol's list of application error kinds, literally.
    spec_kinds = {
        "skill_not_found",
        "ambiguous_skill",
        "invalid_skill",
        "permission_denied",
        "permission_required",
        "path_not_allowed",
        "resource_not_found",
        "too_large",
        "session_not_found",
        "agent_not_found",
        "unknown_skill_reference",
    }
    assert spec_kinds <= set(KIND_CODES)
