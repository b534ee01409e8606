"""Loaded-skill rendering in the three formats, and the reload reminders (docs/protocol.md)."""

from __future__ import annotations

import msgspec
import pytest

from skillsd.core.skill.skill_render import dir_uri, render_reminder, render_skill
from skillsd_protocol import ResourceCounts
from tests.core.skill_fixtures import make_skill

TEXT = "---\nname: repo-review\ndescription: Review PRs\n---\n# Review\n\nUse `a < b && c`.\n"
BODY = "# Review\n\nUse `a < b && c`.\n"
FILES = ["references/checklist.md", "scripts/run.sh"]


def _skill():  # type: ignore[no-untyped-def]
    return make_skill("repo-review", "Review PRs", root="/repo/.agents/skills")


def test_codelia_golden() -> None:
    assert render_skill(_skill(), TEXT, BODY, FILES) == (
        '<skill_context name="repo-review" path="/repo/.agents/skills/repo-review/SKILL.md">\n'
        "---\nname: repo-review\ndescription: Review PRs\n---\n# Review\n\nUse `a < b && c`.\n\n"
        "Base directory: file:///repo/.agents/skills/repo-review/\n"
        "Relative paths in this skill are resolved from this directory.\n"
        "<skill_files>\n"
        "<file>/repo/.agents/skills/repo-review/references/checklist.md</file>\n"
        "<file>/repo/.agents/skills/repo-review/scripts/run.sh</file>\n"
        "</skill_files>\n"
        "</skill_context>"
    )


def test_spec_golden() -> None:
    assert render_skill(_skill(), TEXT, BODY, FILES, format="spec") == (
        '<skill_content name="repo-review">\n'
        "# Review\n\nUse `a < b && c`.\n\n"
        "Skill directory: /repo/.agents/skills/repo-review\n"
        "Relative paths in this skill are relative to the skill directory.\n\n"
        "<skill_resources>\n"
        "  <file>references/checklist.md</file>\n"
        "  <file>scripts/run.sh</file>\n"
        "</skill_resources>\n"
        "</skill_content>"
    )


def test_markdown_golden() -> None:
    assert render_skill(_skill(), TEXT, BODY, FILES, format="markdown") == (
        "# Skill Activated: repo-review\n\n"
        "# Review\n\nUse `a < b && c`.\n\n"
        "## Available Resources\n"
        "- Scripts: yes\n"
        "- References: yes\n"
        "- Assets: no"
    )


def test_markdown_resources_also_use_catalog_counts() -> None:
    skill = msgspec.structs.replace(
        _skill(), resources=ResourceCounts(scripts=0, references=0, assets=3, other=0)
    )
    out = render_skill(skill, TEXT, BODY, [], format="markdown")
    assert out.endswith("- Scripts: no\n- References: no\n- Assets: yes")


def test_empty_file_lists() -> None:
    assert "<skill_files>\n</skill_files>" in render_skill(_skill(), TEXT, BODY, [])
    assert "<skill_resources>\n</skill_resources>" in render_skill(
        _skill(), TEXT, BODY, [], format="spec"
    )


def test_attributes_and_listed_paths_are_escaped() -> None:
    skill = make_skill('we"ird<&>', root="/tmp/a&b")
    out = render_skill(skill, TEXT, BODY, ["x<y>&.md"])
    assert 'name="we&quot;ird&lt;&amp;&gt;"' in out
    assert 'path="/tmp/a&amp;b/we&quot;ird&lt;&amp;&gt;/SKILL.md"' in out
    assert '<file>/tmp/a&amp;b/we"ird&lt;&amp;&gt;/x&lt;y&gt;&amp;.md</file>' in out
    spec = render_skill(skill, TEXT, BODY, ["x<y>&.md"], format="spec")
    assert "<file>x&lt;y&gt;&amp;.md</file>" in spec
    # The instructions themselves are verbatim.
    assert "Use `a < b && c`." in out and "Use `a < b && c`." in spec


def test_base_directory_uri_is_percent_encoded() -> None:
    assert dir_uri("/home/me/my skills/café#1") == "file:///home/me/my%20skills/caf%C3%A9%231/"
    assert dir_uri("/home/me/x/") == "file:///home/me/x/"
    skill = make_skill("s", root="/p q")
    assert "Base directory: file:///p%20q/s/\n" in render_skill(skill, TEXT, BODY, [])


def test_reminders() -> None:
    skill = _skill()
    codelia = render_reminder(skill)
    assert codelia.startswith(
        '<skill_context_reminder name="repo-review" '
        'path="/repo/.agents/skills/repo-review/SKILL.md">\n'
    )
    assert "already loaded" in codelia and "not changed" in codelia
    assert codelia.endswith(
        "Base directory: file:///repo/.agents/skills/repo-review/\n</skill_context_reminder>"
    )
    assert BODY not in codelia
    spec = render_reminder(skill, format="spec")
    assert spec.startswith('<skill_content_reminder name="repo-review">\n')
    assert spec.endswith("</skill_content_reminder>")
    markdown = render_reminder(skill, format="markdown")
    assert markdown.startswith("# Skill Already Active: repo-review\n\n")


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown load format"):
        render_skill(_skill(), TEXT, BODY, [], format="html")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown load format"):
        render_reminder(_skill(), format="html")  # type: ignore[arg-type]
