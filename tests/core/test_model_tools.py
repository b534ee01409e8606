from __future__ import annotations

from pathlib import Path

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.catalog.model_tools import (
    ToolRequest,
    decode_tool_call,
    error_text,
    tool_definitions,
)
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.errors import SkillsdError
from skillsd_protocol.errors import (
    AmbiguousSkillData,
    PermissionDeniedData,
    PermissionRequiredData,
    SkillCandidate,
)


def test_default_style_tools_and_schemas() -> None:
    tools = {t.name: t for t in tool_definitions()}
    assert list(tools) == ["skill_search", "skill_load", "skill_read_file"]
    search = tools["skill_search"].input_schema
    assert search["type"] == "object" and search["required"] == ["query"]
    assert search["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "description": "How many results (default 8).",
    }
    assert search["additionalProperties"] is False
    assert tools["skill_read_file"].input_schema["required"] == ["file"]
    for tool in tools.values():
        assert "$ref" not in str(tool.input_schema) and tool.description


def test_other_styles() -> None:
    assert [t.name for t in tool_definitions("swiftagent")] == ["activate_skill"]
    assert [t.name for t in tool_definitions("tavernkit")] == [
        "skills_list",
        "skills_load",
        "skills_read_file",
    ]


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("skill_search", {"query": "pdf"}, ToolRequest("search", query="pdf")),
        ("skill_load", {"name": "pdf"}, ToolRequest("load", name="pdf")),
        ("skill_load", {"path": "/a/SKILL.md"}, ToolRequest("load", path="/a/SKILL.md")),
        (
            "skill_read_file",
            {"name": "p", "file": "a.md"},
            ToolRequest("read_file", "p", file="a.md"),
        ),
        ("activate_skill", {"skillName": "pdf"}, ToolRequest("load", name="pdf")),
        ("skills_list", {}, ToolRequest("list")),
        ("skills_load", {"name": "pdf"}, ToolRequest("load", name="pdf")),
        (
            "skills_read_file",
            {"name": "p", "path": "r.md"},
            ToolRequest("read_file", "p", file="r.md"),
        ),
    ],
)
def test_decoding(tool: str, args: dict[str, object], expected: ToolRequest) -> None:
    assert decode_tool_call(tool, args) == expected


@pytest.mark.parametrize(
    ("tool", "args", "kind", "fragment"),
    [
        ("skill_load", {}, "invalid_arguments", "needs `name` or `path`"),
        ("skill_search", {"query": 3}, "invalid_arguments", "$.query"),
        ("skill_search", {"query": "x", "limit": 0}, "invalid_arguments", "limit"),
        ("skill_search", {"q": "x"}, "invalid_arguments", "skill_search(query, limit?, scope?)"),
        ("nope", {}, "unknown_tool", "Available tools"),
    ],
)
def test_bad_calls_explain_themselves(
    tool: str, args: dict[str, object], kind: str, fragment: str
) -> None:
    with pytest.raises(SkillsdError) as info:
        decode_tool_call(tool, args)
    assert info.value.kind == kind and fragment in info.value.message


def test_error_text_tells_the_model_what_to_do() -> None:
    ambiguous = SkillsdError(
        "2 skills are named 'x'",
        AmbiguousSkillData(
            candidates=[SkillCandidate(id="a" * 24, path="/a/SKILL.md", scope="repo")]
        ),
    )
    assert "pass `path` instead, one of: /a/SKILL.md" in error_text(ambiguous)
    ask = SkillsdError(
        "needs approval", PermissionRequiredData(skill="pdf", rule="skill_load(pdf)")
    )
    assert "needs the user's approval" in error_text(ask)
    denied = SkillsdError("loading skill 'pdf' is denied", PermissionDeniedData())
    assert error_text(denied).endswith("Do not retry; continue without this skill")


def test_error_text_suggests_close_names_once(tmp_path: Path) -> None:
    skill = tmp_path / "pdf-forms"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n")
    root = str(tmp_path)
    catalog = build_catalog(RootPlan(cwd=root, repo_root=root, roots=(Root(root, "extra"),)))
    with pytest.raises(SkillsdError) as info:
        catalog.resolve(name="pdf-form")
    text = error_text(info.value)
    assert "pdf-forms" in text and text.lower().count("did you mean") == 1
