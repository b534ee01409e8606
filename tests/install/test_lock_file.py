"""skills-lock.json: the exact bytes written, and refusals that name the file and field."""

from __future__ import annotations

import json

import pytest

from skillsd.core.install.lock_file import LockEntry, LockError, LockFile, decode_lock, encode_lock

DIGEST = "sha256:" + "ab" * 32
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _lock() -> LockFile:
    return LockFile(
        skills={
            "zeta": LockEntry(
                source="./vendor/skills",
                source_type="local",
                digest=DIGEST,
                agents=["claude-code"],
                mode="copy",
                installed_at="2026-11-25T00:00:00Z",
            ),
            "alpha": LockEntry(
                source="https://github.com/o/r",
                source_type="git",
                ref="v1",
                commit=COMMIT,
                path="skills/alpha",
                digest=DIGEST,
                agents=[],
                installed_at="2026-11-25T00:00:00Z",
            ),
        }
    )


def test_encoding_is_sorted_two_space_indented_with_a_trailing_newline() -> None:
    data = encode_lock(_lock())
    expected = {
        "version": 1,
        "skills": {
            "alpha": {
                "source": "https://github.com/o/r",
                "sourceType": "git",
                "ref": "v1",
                "commit": COMMIT,
                "path": "skills/alpha",
                "digest": DIGEST,
                "agents": [],
                "mode": "link",
                "installedAt": "2026-11-25T00:00:00Z",
            },
            "zeta": {
                "source": "./vendor/skills",
                "sourceType": "local",
                "digest": DIGEST,
                "agents": ["claude-code"],
                "mode": "copy",
                "installedAt": "2026-11-25T00:00:00Z",
            },
        },
    }
    assert data == (json.dumps(expected, indent=2, sort_keys=True) + "\n").encode()
    assert data.endswith(b"}\n") and b'\n  "skills": {\n    "alpha": {\n' in data
    assert decode_lock(data, path="skills-lock.json") == _lock()
    # Absent optional members stay out of the file (no nulls).
    assert b"null" not in data


def test_unknown_members_are_ignored() -> None:
    doc = json.loads(encode_lock(_lock()))
    doc["skills"]["alpha"]["future"] = {"x": 1}
    doc["generator"] = "other-tool"
    assert decode_lock(json.dumps(doc).encode(), path="p").skills["alpha"].commit == COMMIT


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d.update(version=2), "version", "expected 1"),
        (lambda d: d["skills"]["alpha"].update(digest="md5:x"), "skills.alpha.digest", "sha256"),
        (lambda d: d["skills"]["alpha"].update(sourceType="svn"), "skills.alpha.sourceType", "svn"),
        (lambda d: d["skills"]["alpha"].pop("source"), "skills.alpha", "source"),
        (lambda d: d["skills"]["alpha"].update(agents="all"), "skills.alpha.agents", "array"),
        (lambda d: d["skills"]["alpha"].update(commit="HEAD"), "skills.alpha.commit", "commit"),
        (lambda d: d["skills"]["alpha"].update(path="../x"), "skills.alpha.path", "'..'"),
        (lambda d: d["skills"].update({"../evil": d["skills"]["alpha"]}), "skills.../evil", "name"),
        (lambda d: d.update(skills=[]), "skills", "object"),
    ],
)
def test_refusals_name_the_file_and_the_field(change, field, words) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(encode_lock(_lock()))
    change(doc)
    with pytest.raises(LockError) as caught:
        decode_lock(json.dumps(doc).encode(), path="/repo/skills-lock.json")
    assert caught.value.field == field
    assert str(caught.value).startswith(f"/repo/skills-lock.json: {field}")
    assert words in str(caught.value)


def test_not_json() -> None:
    with pytest.raises(LockError, match=r"^/r/skills-lock\.json: not valid JSON"):
        decode_lock(b"{oops", path="/r/skills-lock.json")
    with pytest.raises(LockError, match="expected a JSON object"):
        decode_lock(b"[]", path="/r/skills-lock.json")
