"""Source strings and the skill layouts of real collections."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillsd.core.install.fs_install_source import (
    SourceError,
    find_skills,
    parse_source,
    select_skills,
)
from tests.corpora import CORPORA, needs_corpora


def _skill(folder: Path, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name or folder.name}\ndescription: d\n---\nb\n")
    return folder


@pytest.mark.parametrize(
    ("text", "kind", "location", "lock_text"),
    [
        ("owner/repo", "git", "https://github.com/owner/repo", "owner/repo"),
        ("git@github.com:o/r.git", "git", "git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("ssh://git@host/r.git", "git", "ssh://git@host/r.git", "ssh://git@host/r.git"),
        ("https://host/r.git", "git", "https://host/r.git", "https://host/r.git"),
        ("file:///srv/r.git", "git", "file:///srv/r.git", "file:///srv/r.git"),
        ("https://host/a.tar.gz", "archive", "https://host/a.tar.gz", "https://host/a.tar.gz"),
        ("http://127.0.0.1:8080/a.zip", "archive", "http://127.0.0.1:8080/a.zip", None),
        ("http://[::1]/a.skill", "archive", "http://[::1]/a.skill", None),
        ("http://localhost/r.git", "git", "http://localhost/r.git", None),
    ],
)
def test_url_forms(text: str, kind: str, location: str, lock_text: str | None) -> None:
    source = parse_source(text, base="/nowhere", home="/home/u")
    assert (source.kind, source.location, source.text) == (kind, location, lock_text or text)


def test_github_folder_address_gives_ref_and_path() -> None:
    source = parse_source(
        "https://github.com/anthropics/skills/tree/main/skills/pdf", base="/", home="/"
    )
    assert (source.location, source.ref, source.path) == (
        "https://github.com/anthropics/skills",
        "main",
        "skills/pdf",
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("http://example.com/a.zip", "loopback"),
        ("git://example.com/r.git", "not supported"),
        ("https://user:secret@host/r.git", "credentials"),
        ("./missing", "no such file"),
        ("", "empty"),
    ],
)
def test_refused_sources(text: str, words: str) -> None:
    with pytest.raises(SourceError, match=words):
        parse_source(text, base="/nowhere", home="/home/u")


def test_local_paths(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "plain").mkdir()
    (tmp_path / "pack.skill").write_bytes(b"PK")
    (tmp_path / "notes.txt").write_text("x")
    repo = parse_source("repo", base=str(tmp_path), home="/h")
    assert (repo.kind, repo.location, repo.text) == ("git", str(tmp_path / "repo"), "./repo")
    assert parse_source("./plain", base=str(tmp_path), home="/h").kind == "local"
    (tmp_path / "elsewhere").mkdir()
    outside = parse_source(str(tmp_path / "plain"), base=str(tmp_path / "elsewhere"), home="/h")
    assert outside.text == str(tmp_path / "plain")
    assert parse_source("pack.skill", base=str(tmp_path), home="/h").kind == "archive"
    assert parse_source("~/plain", base="/", home=str(tmp_path)).location == str(tmp_path / "plain")
    with pytest.raises(SourceError, match="not an archive"):
        parse_source("notes.txt", base=str(tmp_path), home="/h")
    # An existing folder wins over the owner/repo shorthand.
    (tmp_path / "owner" / "repo").mkdir(parents=True)
    assert parse_source("owner/repo", base=str(tmp_path), home="/h").kind == "local"


@needs_corpora
@pytest.mark.parametrize(
    ("collection", "count"),
    [("anthropics-skills", 12), ("openai-skills", 6), ("vercel-agent-skills", 7)],
)
def test_corpora_layouts_without_flags(collection: str, count: int) -> None:
    found = find_skills(str(CORPORA / collection))
    assert len(found) == count
    if collection == "openai-skills":
        assert all(s.rel.startswith("skills/.curated/") for s in found)
    if collection == "vercel-agent-skills":
        # Installed under the frontmatter name; selectable by either.
        names = {s.name: s.dir_name for s in found}
        assert names["vercel-react-best-practices"] == "react-best-practices"
        assert select_skills(found, ["react-best-practices"])[0].name == (
            "vercel-react-best-practices"
        )


@needs_corpora
def test_hidden_collections_by_path() -> None:
    found = find_skills(str(CORPORA / "openai-skills"), path="skills/.system")
    assert sorted(s.name for s in found) == ["skill-creator", "skill-installer"]


def test_repository_that_is_one_skill(tmp_path: Path) -> None:
    _skill(tmp_path / "checkout", name="my-skill")
    [found] = find_skills(str(tmp_path / "checkout"), default_name="my-skill-repo")
    assert (found.name, found.rel) == ("my-skill", ".")
    (tmp_path / "checkout" / "SKILL.md").write_text("---\nname: Not Valid!\ndescription: d\n---\n")
    [found] = find_skills(str(tmp_path / "checkout"), default_name="my-skill-repo")
    assert found.name == "my-skill-repo"


def test_marketplace_repository(tmp_path: Path) -> None:
    root = tmp_path / "market"
    _skill(root / "plugins" / "docs" / "skills" / "pdf")
    _skill(root / "vendor" / "xlsx")
    _skill(root / "plugins" / "other" / "skills" / "csv")
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(
            {
                "name": "m",
                "plugins": [
                    {"name": "docs", "source": "./plugins/docs", "skills": ["../../vendor/xlsx"]},
                    {"name": "other", "source": "./plugins/other"},
                    {"name": "remote", "source": {"source": "github", "repo": "o/r"}},
                    {"name": "escape", "source": "../../etc"},
                ],
            }
        )
    )
    found = find_skills(str(root))
    assert sorted(s.rel for s in found) == [
        "plugins/docs/skills/pdf",
        "plugins/other/skills/csv",
        "vendor/xlsx",
    ]


def test_agent_folders_and_fallback_search(tmp_path: Path) -> None:
    _skill(tmp_path / "proj" / ".claude" / "skills" / "a")
    _skill(tmp_path / "proj" / ".agents" / "skills" / "b")
    assert sorted(s.name for s in find_skills(str(tmp_path / "proj"))) == ["a", "b"]
    _skill(tmp_path / "deep" / "x" / "y" / "c")
    _skill(tmp_path / "deep" / "node_modules" / "d")
    assert [s.rel for s in find_skills(str(tmp_path / "deep"))] == ["x/y/c"]
    _skill(tmp_path / "top" / "e")
    assert [s.rel for s in find_skills(str(tmp_path / "top"))] == ["e"]


def test_selection_and_clashes(tmp_path: Path) -> None:
    _skill(tmp_path / "t" / "skills" / "one", name="same")
    _skill(tmp_path / "t" / "skills" / "two", name="same")
    found = find_skills(str(tmp_path / "t"))
    with pytest.raises(SourceError, match="two skills would be installed as 'same'"):
        select_skills(found, None)
    assert [s.rel for s in select_skills(found, ["one"])] == ["skills/one"]
    with pytest.raises(SourceError, match=r"'three' is not in the source \(found: same\)"):
        select_skills(found, ["three"])


def test_path_must_stay_inside(tmp_path: Path) -> None:
    _skill(tmp_path / "t" / "skills" / "one")
    (tmp_path / "t" / "up").symlink_to(tmp_path)
    for bad in ("../x", "/etc", "up"):
        with pytest.raises(SourceError):
            find_skills(str(tmp_path / "t"), path=bad)
    shutil.rmtree(tmp_path / "t" / "skills")
