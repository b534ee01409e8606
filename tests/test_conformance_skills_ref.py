"""Differential test: ``skillsd validate --strict`` against the reference library ``skills-ref``.

Both judge every real skill in ``shared/corpora`` and every case of ``CASES`` (built under
``tmp_path``). They must reach the same valid/invalid verdict, except for the cases that carry a
``disagrees`` reason: there skills-ref is wrong or looser than the skill format, and the test checks
that the two really do disagree, in the direction stated (so the list in ``docs/conformance.md``
stays true). skillsd runs as the real CLI, once per batch, with ``--json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.corpora import CORPORA, needs_corpora

skills_ref_validator = pytest.importorskip("skills_ref.validator")

SKILLSD = Path(sys.executable).with_name("skillsd")


@dataclass(frozen=True)
class Case:
    id: str
    #: Directory holding the file (the name check compares against it).
    dir_name: str
    content: bytes
    #: skillsd's verdict under ``validate --strict``.
    valid: bool
    #: Why skills-ref reaches the opposite verdict; None means both must agree.
    disagrees: str | None = None
    file_name: str = "SKILL.md"


def fm(body: str, *, after: str = "Body.\n") -> bytes:
    return f"---\n{body}---\n{after}".encode()


D = "description: Does things.\n"

CASES: list[Case] = [
    Case("minimal", "demo", fm("name: demo\n" + D), True),
    Case(
        "all-fields",
        "demo",
        fm(
            "name: demo\n" + D + "license: MIT\ncompatibility: Needs git\n"
            "metadata:\n  author: me\n  version: 1.0\nallowed-tools: Bash(git add:*) Read\n"
        ),
        True,
    ),
    Case("crlf", "demo", fm("name: demo\n" + D).replace(b"\n", b"\r\n"), True),
    Case(
        "delimiter-trailing-spaces", "demo", b"---  \nname: demo\n" + D.encode() + b"---   \n", True
    ),
    Case("closing-at-eof", "demo", b"---\nname: demo\n" + D.encode() + b"---", True),
    Case("comments", "demo", fm("# a comment\nname: demo  # trailing\n" + D), True),
    Case("quoted-values", "demo", fm("name: 'demo'\ndescription: \"Does: things\"\n"), True),
    Case("name-no", "no", fm("name: no\n" + D), True),
    Case("digits-name", "123", fm("name: 123\n" + D), True),
    Case("unicode-cafe", "café", fm("name: café\n" + D), True),
    Case("unicode-japanese", "日本語", fm("name: 日本語\n" + D), True),
    Case("nfkc-fullwidth-name", "abc", fm("name: \uff41\uff42\uff43\n" + D), True),
    Case("nfd-directory", "cafe\u0301", fm("name: café\n" + D), True),
    Case("name-64", "n" * 64, fm(f"name: {'n' * 64}\n" + D), True),
    Case("name-65", "n" * 65, fm(f"name: {'n' * 65}\n" + D), False),
    Case("name-uppercase", "Demo", fm("name: Demo\n" + D), False),
    Case("name-underscore", "my_skill", fm("name: my_skill\n" + D), False),
    Case("name-leading-hyphen", "-demo", fm("name: -demo\n" + D), False),
    Case("name-double-hyphen", "my--skill", fm("name: my--skill\n" + D), False),
    Case("name-mismatch", "demo", fm("name: other\n" + D), False),
    Case("name-missing", "demo", fm(D), False),
    Case(
        "description-1024-multibyte",
        "demo",
        fm("name: demo\ndescription: " + "é" * 1024 + "\n"),
        True,
    ),
    Case("description-1025", "demo", fm("name: demo\ndescription: " + "d" * 1025 + "\n"), False),
    Case("description-missing", "demo", fm("name: demo\n"), False),
    Case("description-empty", "demo", fm("name: demo\ndescription: ''\n"), False),
    Case(
        "compatibility-500", "demo", fm("name: demo\n" + D + f"compatibility: {'c' * 500}\n"), True
    ),
    Case(
        "compatibility-501", "demo", fm("name: demo\n" + D + f"compatibility: {'c' * 501}\n"), False
    ),
    Case("unknown-field", "demo", fm("name: demo\n" + D + "model: opus\n"), False),
    Case("version-top-level", "demo", fm("name: demo\n" + D + "version: 1.0\n"), False),
    Case("duplicate-key", "demo", fm("name: demo\nname: demo\n" + D), False),
    Case("not-a-mapping", "demo", fm("- name\n- demo\n"), False),
    Case("empty-frontmatter", "demo", fm(""), False),
    Case("no-frontmatter", "demo", b"# Demo\n\nNo frontmatter.\n", False),
    Case("unclosed", "demo", b"---\nname: demo\n" + D.encode() + b"\nBody.\n", False),
    Case("unquoted-colon", "demo", fm("name: demo\ndescription: Use when: asked\n"), False),
    Case("invalid-utf8", "demo", b"---\nname: demo\ndescription: caf\xe9\n---\n", False),
    Case(
        "list-allowed-tools",
        "demo",
        fm("name: demo\n" + D + "allowed-tools:\n  - Read\n  - Bash(ls:*)\n"),
        True,
    ),
    # --- expected disagreements (each listed in docs/conformance.md) ---
    Case(
        "bom",
        "demo",
        b"\xef\xbb\xbf" + fm("name: demo\n" + D),
        True,
        disagrees="skills-ref does not skip a UTF-8 BOM, so the file does not start with '---'",
    ),
    Case(
        "dashes-in-value-first",
        "demo",
        fm("description: a --- b\nname: demo\n"),
        True,
        disagrees="skills-ref splits at the first '---' anywhere, truncating the description "
        "and losing 'name'",
    ),
    Case(
        "dashes-in-block-scalar",
        "demo",
        fm("description: |\n  Part one\n  ---\n  Part two\nname: demo\n"),
        True,
        disagrees="skills-ref treats the indented '---' inside a block scalar as the closing "
        "line, losing 'name' after it",
    ),
    Case(
        "flow-metadata",
        "demo",
        fm("name: demo\n" + D + "metadata: {author: me}\n"),
        True,
        disagrees="skills-ref (strictyaml) rejects YAML flow style, which is valid YAML",
    ),
    Case(
        "flow-allowed-tools",
        "demo",
        fm("name: demo\n" + D + "allowed-tools: [Read, Grep]\n"),
        True,
        disagrees="skills-ref (strictyaml) rejects YAML flow style, which is valid YAML",
    ),
    Case(
        "alias",
        "demo",
        fm("name: &n demo\ndescription: *n\n"),
        True,
        disagrees="skills-ref (strictyaml) rejects anchors and aliases; skillsd allows them "
        "within its expansion budget",
    ),
    Case(
        "compatibility-empty",
        "demo",
        fm("name: demo\n" + D + "compatibility: ''\n"),
        False,
        disagrees="the skill format requires 1-500 characters; "
        "skills-ref only checks the upper bound",
    ),
    Case(
        "nested-metadata",
        "demo",
        fm("name: demo\n" + D + "metadata:\n  author:\n    name: me\n"),
        False,
        disagrees="the skill format makes nested metadata values an error; "
        "skills-ref stringifies them",
    ),
    Case(
        "allowed-tools-unbalanced",
        "demo",
        fm("name: demo\n" + D + "allowed-tools: Bash(git:* Read\n"),
        False,
        disagrees="skills-ref does not check allowed-tools; skillsd cannot split unbalanced "
        "parentheses into rules",
    ),
    Case(
        "lowercase-skill-md",
        "demo",
        fm("name: demo\n" + D),
        False,
        disagrees="the skill format requires the file to be named exactly SKILL.md; "
        "skills-ref also "
        "accepts skill.md",
        file_name="skill.md",
    ),
]


def skills_ref_valid(skill_dir: Path) -> bool:
    try:
        return not skills_ref_validator.validate(skill_dir)
    except Exception:  # e.g. UnicodeDecodeError on non-UTF-8 files: a crash is not a pass
        return False


def skillsd_verdicts(skill_dirs: list[Path]) -> dict[Path, bool]:
    """Run ``skillsd validate --strict --json`` once over all dirs; verdict per skill dir."""
    # The console script is what users run; its absence is a packaging bug, not a skip.
    assert SKILLSD.exists(), f"{SKILLSD} is not installed (pip install -e .)"
    proc = subprocess.run(
        [str(SKILLSD), "validate", "--strict", "--json", *map(str, skill_dirs)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    verdicts: dict[Path, bool] = {}
    for result in json.loads(proc.stdout):
        path = Path(result["path"])
        verdicts[path if path.name != "SKILL.md" else path.parent] = result["valid"]
    assert set(verdicts) == set(skill_dirs)
    return verdicts


def test_case_table_is_large_and_unique() -> None:
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.process
def test_edge_cases(tmp_path: Path) -> None:
    dirs: dict[str, Path] = {}
    for case in CASES:
        skill_dir = tmp_path / case.id / case.dir_name
        skill_dir.mkdir(parents=True)
        (skill_dir / case.file_name).write_bytes(case.content)
        dirs[case.id] = skill_dir
    ours = skillsd_verdicts(list(dirs.values()))
    problems = []
    for case in CASES:
        mine = ours[dirs[case.id]]
        theirs = skills_ref_valid(dirs[case.id])
        if mine != case.valid:
            problems.append(f"{case.id}: skillsd says valid={mine}, expected {case.valid}")
        expected_theirs = case.valid if case.disagrees is None else not case.valid
        if theirs != expected_theirs:
            problems.append(
                f"{case.id}: skills-ref says valid={theirs}, expected {expected_theirs}"
                + (" (listed as a disagreement)" if case.disagrees else "")
            )
    assert not problems, "\n".join(problems)


@pytest.mark.process
@needs_corpora
def test_corpora_agree() -> None:
    skill_dirs = sorted(p.parent for p in CORPORA.rglob("SKILL.md"))
    assert len(skill_dirs) == 30
    ours = skillsd_verdicts(skill_dirs)
    disagreements = [
        f"{d.relative_to(CORPORA)}: skillsd valid={ours[d]}, skills-ref valid={skills_ref_valid(d)}"
        for d in skill_dirs
        if ours[d] != skills_ref_valid(d)
    ]
    assert not disagreements, "\n".join(disagreements)
