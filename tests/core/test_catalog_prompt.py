"""Catalog prompt rendering: the four formats, escaping and the budget stages (docs/protocol.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import msgspec
import pytest

from skillsd.core import limits
from skillsd.core.catalog.catalog_prompt import (
    ELLIPSIS,
    clean_text,
    render_active_skills,
    render_catalog,
    xml_attr,
    xml_text,
)
from skillsd.core.errors import SkillsdError
from skillsd_protocol import SkillMetadata
from tests.core.skill_fixtures import make_skill

FORMATS = ("xml", "codelia", "attributes", "markdown")


def _pair() -> list[SkillMetadata]:
    return [
        make_skill("pdf-processing", "Extract text from PDFs.", root="/r/.agents/skills"),
        make_skill("data-analysis", "Analyze data.", scope="user", root="/u/.agents/skills"),
    ]


def test_xml_golden() -> None:
    r = render_catalog(_pair())
    assert r.text == (
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>pdf-processing</name>\n"
        "    <description>Extract text from PDFs.</description>\n"
        "    <location>/r/.agents/skills/pdf-processing/SKILL.md</location>\n"
        "  </skill>\n"
        "  <skill>\n"
        "    <name>data-analysis</name>\n"
        "    <description>Analyze data.</description>\n"
        "    <location>/u/.agents/skills/data-analysis/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )
    assert (r.shown, r.total, r.truncated, r.bytes) == (2, 2, False, len(r.text.encode()))


def test_xml_without_location() -> None:
    text = render_catalog(_pair()[:1], include_location=False).text
    assert text == (
        "<available_skills>\n  <skill>\n    <name>pdf-processing</name>\n"
        "    <description>Extract text from PDFs.</description>\n  </skill>\n</available_skills>"
    )


def test_attributes_golden() -> None:
    assert render_catalog(_pair(), format="attributes").text == (
        "<available_skills>\n"
        '  <skill name="pdf-processing" description="Extract text from PDFs." '
        'location="/r/.agents/skills/pdf-processing/SKILL.md"/>\n'
        '  <skill name="data-analysis" description="Analyze data." '
        'location="/u/.agents/skills/data-analysis/SKILL.md"/>\n'
        "</available_skills>"
    )
    no_loc = render_catalog(_pair()[:1], format="attributes", include_location=False).text
    assert '<skill name="pdf-processing" description="Extract text from PDFs."/>' in no_loc


def test_codelia_shape() -> None:
    text = render_catalog(_pair(), format="codelia").text
    assert text.startswith("<skills_context>\n<skills_usage>\n  <rule>")
    assert '</skills_usage>\n<skills_catalog scope="initial" truncated="false">\n' in text
    assert text.endswith(
        "  <skill>\n"
        "    <name>data-analysis</name>\n"
        "    <description>Analyze data.</description>\n"
        "    <path>/u/.agents/skills/data-analysis/SKILL.md</path>\n"
        "    <scope>user</scope>\n"
        "  </skill>\n"
        "</skills_catalog>\n"
        "</skills_context>"
    )
    assert "skill_load" in text
    root = ET.fromstring(text)
    catalog = root.find("skills_catalog")
    assert catalog is not None
    assert [s.findtext("scope") for s in catalog] == ["repo", "user"]
    no_path = render_catalog(_pair(), format="codelia", include_location=False).text
    assert "<path>" not in no_path and "<scope>repo</scope>" in no_path


def test_markdown_golden_lines() -> None:
    text = render_catalog(_pair(), format="markdown").text
    header, _, items = text.partition("\n\n- ")
    assert header.startswith("## Available skills\n\n") and "skill_load" in header
    assert "- " + items == (
        "- pdf-processing: Extract text from PDFs."
        " (file: /r/.agents/skills/pdf-processing/SKILL.md)\n"
        "- data-analysis: Analyze data. (file: /u/.agents/skills/data-analysis/SKILL.md)"
    )
    no_loc = render_catalog(_pair(), format="markdown", include_location=False).text
    assert no_loc.endswith(
        "- pdf-processing: Extract text from PDFs.\n- data-analysis: Analyze data."
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_and_disabled(fmt: str) -> None:
    assert render_catalog([], format=fmt).text == ""  # type: ignore[arg-type]
    off = make_skill("off", enabled=False)
    r = render_catalog([off], format=fmt)  # type: ignore[arg-type]
    assert (r.text, r.shown, r.total, r.truncated, r.bytes) == ("", 0, 0, False, 0)
    r = render_catalog([off, *_pair()], format=fmt)  # type: ignore[arg-type]
    assert (r.shown, r.total) == (2, 2) and "off" not in r.text.replace("of", "")


def test_escaping_helpers() -> None:
    assert xml_text("a<b>&\"'") == "a&lt;b&gt;&amp;\"'"
    assert xml_attr("a<b>&\"'\n\t") == "a&lt;b&gt;&amp;&quot;&apos;&#10;&#9;"
    assert clean_text("a\x00b\x1bc\ud800d\ufffee\tf\n") == "a\ufffdb\ufffdc\ufffdd\ufffde\tf\n"


@pytest.mark.parametrize("fmt", ["xml", "codelia", "attributes"])
def test_hostile_text_stays_well_formed_xml(fmt: str) -> None:
    nasty = make_skill(
        "x",
        "Use <b>bold</b> & \"quotes\" 'single' ]]> \x00\x07 bell\nnew line",
        root="/tmp/<odd>&'dir\"",
    )
    text = render_catalog([nasty], format=fmt).text  # type: ignore[arg-type]
    text.encode("utf-8")
    root = ET.fromstring(text)
    node = root.find(".//skill")
    assert node is not None
    desc = node.get("description") if fmt == "attributes" else node.findtext("description")
    assert desc == "Use <b>bold</b> & \"quotes\" 'single' ]]> \ufffd\ufffd bell new line"
    loc = (
        node.get("location")
        if fmt == "attributes"
        else node.findtext("location") or node.findtext("path")
    )
    assert loc == "/tmp/<odd>&'dir\"/x/SKILL.md"


def test_lone_surrogate_in_path_is_replaced() -> None:
    # A non-UTF-8 file name decoded with surrogateescape, as os.fsdecode gives it.
    skill = msgspec.structs.replace(make_skill("s"), path="/tmp/bad\udcff/s/SKILL.md")
    for fmt in FORMATS:
        text = render_catalog([skill], format=fmt).text  # type: ignore[arg-type]
        assert "/tmp/bad\ufffd/s/SKILL.md" in text


def test_invalid_parameters() -> None:
    with pytest.raises(SkillsdError) as err:
        render_catalog(_pair(), format="html")  # type: ignore[arg-type]
    assert err.value.kind == "invalid_params" and "format" in err.value.message
    for kwargs in ({"max_entries": -1}, {"max_bytes": -1}):
        with pytest.raises(SkillsdError) as err:
            render_catalog(_pair(), **kwargs)  # type: ignore[arg-type]
        assert err.value.kind == "invalid_params"


# -- budget -------------------------------------------------------------------------------------


def _many(n: int, desc_len: int = 80) -> list[SkillMetadata]:
    scopes = ["repo"] * (n // 3) + ["user"] * (n // 3) + ["extra"] * (n - 2 * (n // 3))
    return [
        make_skill(
            f"skill-{i:03d}",
            ("word " * desc_len)[:desc_len].strip() + f" {i}",
            scope=scope,
            root=f"/{scope}/skills",
        )
        for i, scope in enumerate(scopes)
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_fits_untouched(fmt: str) -> None:
    skills = _many(6)
    r = render_catalog(skills, format=fmt)  # type: ignore[arg-type]
    assert (r.shown, r.total, r.truncated) == (6, 6, False)
    assert "skill_search" not in r.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_max_entries_drops_from_the_end(fmt: str) -> None:
    skills = _many(9)
    r = render_catalog(skills, format=fmt, max_entries=4)  # type: ignore[arg-type]
    assert (r.shown, r.total, r.truncated) == (4, 9, True)
    assert "skill-003" in r.text and "skill-004" not in r.text
    assert "Only 4 of 9 skills" in r.text and "skill_search" in r.text
    if fmt == "codelia":
        assert 'truncated="true"' in r.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_stage_shorten_descriptions_evenly(fmt: str) -> None:
    skills = _many(6, desc_len=300)
    full = render_catalog(skills, format=fmt)  # type: ignore[arg-type]
    budget = full.bytes - 400
    r = render_catalog(skills, format=fmt, max_bytes=budget)  # type: ignore[arg-type]
    assert (r.shown, r.total, r.truncated) == (6, 6, True)
    assert r.bytes <= budget and r.bytes == len(r.text.encode())
    assert r.text.count(ELLIPSIS) == 6  # every description cut to the same cap
    assert "shortened" in r.text and "skill_search" in r.text
    # The cap is the largest that fits: one more character per description would not.
    assert budget - r.bytes < 6 * 4 + 20


def test_shortened_descriptions_share_one_cap() -> None:
    skills = [
        make_skill("a", "short one"),
        make_skill("b", "x" * 500),
        make_skill("c", "y" * 300),
    ]
    full = render_catalog(skills)
    r = render_catalog(skills, max_bytes=full.bytes - 200)
    root = ET.fromstring(r.text.split("\n\n")[0])
    descs = [s.findtext("description") or "" for s in root]
    assert descs[0] == "short one"  # already under the cap: untouched
    assert descs[1].endswith(ELLIPSIS) and descs[2].endswith(ELLIPSIS)
    assert len(descs[1]) == len(descs[2])


def test_cut_is_at_character_boundary_for_multibyte_text() -> None:
    skills = [make_skill("ja", "日本語の説明文です。" * 30), make_skill("en", "é" * 300)]
    full = render_catalog(skills)
    r = render_catalog(skills, max_bytes=full.bytes // 2)
    assert r.bytes <= full.bytes // 2
    r.text.encode("utf-8")
    assert r.text.count(ELLIPSIS) == 2


def _xml_names_only(skills: list[SkillMetadata], notice: str) -> str:
    entries = "".join(
        f"\n  <skill>\n    <name>{s.name}</name>\n    <location>{s.path}</location>\n  </skill>"
        for s in skills
    )
    return f"<available_skills>{entries}\n</available_skills>\n\n{notice}"


DROPPED_DESCRIPTIONS = (
    "Skill descriptions are left out to fit; use the skill_search tool to see what a skill is for."
)


def test_budget_stage_drop_descriptions_golden() -> None:
    skills = _many(6, desc_len=300)
    expected = _xml_names_only(skills, DROPPED_DESCRIPTIONS)
    budget = len(expected.encode())
    # Names fit exactly; descriptions of even the minimum length would not.
    r = render_catalog(skills, max_bytes=budget)
    assert r.text == expected
    assert (r.shown, r.total, r.truncated, r.bytes) == (6, 6, True, budget)


def test_budget_stage_drop_skills_golden() -> None:
    skills = _many(9)  # 3 repo, 3 user, 3 extra, in catalog order
    expected_all = _xml_names_only(skills, DROPPED_DESCRIPTIONS)
    r = render_catalog(skills, max_bytes=len(expected_all.encode()) - 1)
    notice = (
        "Only 8 of 9 skills are listed here, names only. "
        "Use the skill_search tool to find the others."
    )
    assert r.text == _xml_names_only(skills[:8], notice)  # the last extra skill went first
    assert (r.shown, r.total, r.truncated) == (8, 9, True)
    five = _xml_names_only(skills[:5], notice.replace("8 of", "5 of"))
    r = render_catalog(skills, max_bytes=len(five.encode()))
    assert r.text == five  # all extra skills, then the farthest user skill, were dropped
    assert r.shown == 5
    r = render_catalog(skills, max_bytes=len(five.encode()) - 1)
    assert r.shown == 4


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_stages_in_every_format(fmt: str) -> None:
    skills = _many(9, desc_len=300)
    previous_shown = 9
    saw = set()
    full = render_catalog(skills, format=fmt).bytes  # type: ignore[arg-type]
    for budget in range(full, 0, -97):
        r = render_catalog(skills, format=fmt, max_bytes=budget)  # type: ignore[arg-type]
        assert r.bytes <= budget and r.bytes == len(r.text.encode())
        assert r.shown <= previous_shown  # tighter budgets never show more
        previous_shown = r.shown
        if r.shown == 9 and ELLIPSIS in r.text:
            saw.add("short")
        elif r.shown == 9 and r.truncated and "word" not in r.text:
            saw.add("names")
        elif 0 < r.shown < 9:
            saw.add("dropped")
            assert "word" not in r.text
            assert all(f"skill-{i:03d}" in r.text for i in range(r.shown))
            assert f"skill-{r.shown:03d}" not in r.text
        if r.truncated and r.text:
            assert "skill_search" in r.text
    assert saw == {"short", "names", "dropped"}


def test_drop_order_within_scope_follows_list_order() -> None:
    near = make_skill("near", scope="repo", root="/repo/sub/.agents/skills")
    far = make_skill("far", scope="repo", root="/repo/.agents/skills")
    user = make_skill("usr", scope="user", root="/home/u/.agents/skills")
    catalog = [near, far, user]  # catalog order: nearer roots first, then user
    one = render_catalog(catalog, max_entries=1)
    assert "near" in one.text and "far" not in one.text
    two = render_catalog(catalog, max_entries=2)
    assert "far" in two.text and "usr" not in two.text


def test_max_entries_zero() -> None:
    r = render_catalog(_pair(), max_entries=0)
    assert (r.shown, r.total, r.truncated) == (0, 2, True)
    assert "Only 0 of 2 skills" in r.text and "skill_search" in r.text


def test_default_budget_holds_a_large_catalog() -> None:
    skills = _many(2000)
    r = render_catalog(skills)
    assert r.total == 2000
    assert r.shown <= limits.DEFAULT_PROMPT_MAX_ENTRIES
    assert r.bytes <= limits.DEFAULT_PROMPT_MAX_BYTES
    assert r.truncated and "skill_search" in r.text


# -- active skills ------------------------------------------------------------------------------


def test_active_skills_xml_and_markdown() -> None:
    a, b = _pair()
    r = render_active_skills([(a, "# A\nDo a.\n"), (b, "Do b & <c>.")])
    assert r.text == (
        "<active_skills>\n"
        '<skill name="pdf-processing" location="/r/.agents/skills/pdf-processing/SKILL.md">\n'
        "# A\nDo a.\n</skill>\n"
        '<skill name="data-analysis" location="/u/.agents/skills/data-analysis/SKILL.md">\n'
        "Do b & <c>.\n</skill>\n"
        "</active_skills>"
    )
    assert (r.shown, r.total, r.truncated) == (2, 2, False)
    md = render_active_skills([(a, "Do a."), (b, "Do b.")], format="markdown")
    assert md.text == (
        "# Skill Activated: pdf-processing\n\nDo a.\n\n# Skill Activated: data-analysis\n\nDo b."
    )
    assert render_active_skills([]).text == ""


def test_active_skills_budget_drops_whole_skills() -> None:
    a, b = _pair()
    loaded = [(a, "A" * 100), (b, "B" * 100)]
    full = render_active_skills(loaded)
    r = render_active_skills(loaded, max_bytes=full.bytes - 10)
    assert (r.shown, r.total, r.truncated) == (1, 2, True)
    assert "A" * 100 in r.text and "B" * 100 not in r.text
    assert "data-analysis" in r.text  # named in the closing note
    assert r.bytes <= full.bytes - 10
    assert render_active_skills(loaded, max_entries=1).shown == 1
