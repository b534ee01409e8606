"""Generate a synthetic, deterministic corpus of Agent Skills for the benchmark.

    python bench/gen_corpus.py OUT --n 10000 --seed 1

The same ``--n``, ``--seed`` and shape options always produce byte-identical files (only file
times differ). The mix imitates the real skills in ``/work/shared/corpora`` (Anthropic, OpenAI and
Vercel skill repositories); every share below is a default and can be changed on the command line:

- **Layout**: skills grouped in category folders. Depth 1 (a skill directly under OUT) 25 %,
  depth 2 (one category) 50 %, depth 3 20 %, depth 4 5 %. About 5 % of top-level categories are
  dot-folders (``.curated``, ``.system``, ``.experimental``), as in the OpenAI repository.
- **Resources**: 30 % of skills have ``scripts/``, 35 % ``references/``, 15 % ``assets/``, 30 % a
  ``LICENSE.txt`` (an "other" entry); each folder holds one to three small files.
- **Frontmatter**: ``name`` and ``description`` always (the description is short in 30 %,
  a paragraph in 57 %, near the 1024-character limit in 13 %; written plain, quoted, folded or as an
  indented multi-line plain scalar); ``license`` 40 %; ``compatibility`` 8 %; ``metadata``
  (author/version/short-description, ``tags`` as a comma-separated string in 60 % of those) 50 %;
  ``allowed-tools`` 20 % (a space-separated string, or a block YAML list in 30 % of those).
  3 % of descriptions are Japanese.
- **Unknown fields**: 8 % carry Claude Code fields (``model``, ``disable-model-invocation``,
  ``user-invocable``, ``argument-hint``, ``when_to_use``): still valid, reported as warnings.
- **Invalid skills**: 3 %, rejected in strict mode. Kinds (weights): name/directory mismatch (30),
  description over 1024 characters (15), missing description (10), unquoted ``key: value: more``
  YAML (15), unclosed frontmatter (8), no frontmatter (7), upper-case name (7), duplicate key (5),
  nested ``metadata`` value (3).
- **Other real-world quirks**: 1 % of skills share their name with another skill in a different
  folder (kept, with a warning); 2 % use CRLF line endings; 0.5 % start with a UTF-8 BOM; 0.5 %
  have a frontmatter larger than 4 KiB (many ``metadata`` keys), which forces a second read.
- **Bodies**: Markdown (headings, lists, code blocks, some ``---`` rules) whose size follows a
  log-normal law, median 3 000 bytes, clipped to 200 B .. 120 KiB (the real corpora range from
  140 B to 74 KiB).

A manifest, ``OUT/corpus.json``, records the parameters, the totals and one entry per skill (its
directory, whether strict validation must accept it, the invalid kind, expected warnings, quirks
and resource counts), so the benchmark and the tests can check that every contender saw the same
corpus.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Bumped whenever the output for a given (n, seed, shape) changes, so cached corpora are rebuilt.
GENERATOR_VERSION = 1
MANIFEST_NAME = "corpus.json"

INVALID_KINDS: dict[str, int] = {
    "name_mismatch": 30,
    "description_too_long": 15,
    "description_missing": 10,
    "yaml_invalid": 15,
    "frontmatter_unclosed": 8,
    "frontmatter_missing": 7,
    "name_uppercase": 7,
    "duplicate_key": 5,
    "metadata_nested": 3,
}
#: Invalid kinds that skills-ref 0.1.1 accepts anyway (it stringifies nested metadata values),
#: and quirks it rejects although the spec allows them (it does not skip a BOM).
SKILLS_REF_DISAGREES_KINDS = frozenset({"metadata_nested"})
SKILLS_REF_DISAGREES_QUIRKS = frozenset({"bom"})

UNKNOWN_FIELDS = (
    "model",
    "disable-model-invocation",
    "user-invocable",
    "argument-hint",
    "when_to_use",
)


@dataclass(frozen=True)
class Shape:
    """Every knob of the corpus; the defaults are the documented realistic mix."""

    depth_weights: tuple[float, ...] = (0.25, 0.50, 0.20, 0.05)
    dot_category_share: float = 0.05
    scripts_share: float = 0.30
    references_share: float = 0.35
    assets_share: float = 0.15
    other_share: float = 0.30
    license_share: float = 0.40
    compatibility_share: float = 0.08
    metadata_share: float = 0.50
    tags_share: float = 0.60
    allowed_tools_share: float = 0.20
    allowed_tools_list_share: float = 0.30
    japanese_share: float = 0.03
    unknown_field_share: float = 0.08
    invalid_share: float = 0.03
    duplicate_name_share: float = 0.01
    crlf_share: float = 0.02
    bom_share: float = 0.005
    big_frontmatter_share: float = 0.005
    description_weights: tuple[float, float, float] = (0.30, 0.57, 0.13)
    body_median_bytes: int = 3000
    body_sigma: float = 0.9
    body_min_bytes: int = 200
    body_max_bytes: int = 120 * 1024

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if name.endswith("_share") and not 0.0 <= value <= 1.0:
                raise ValueError(f"shape: {name} must be within 0..1, got {value}")
        if not self.depth_weights or any(w < 0 for w in self.depth_weights):
            raise ValueError("shape: depth_weights must be non-negative and not empty")
        if sum(self.depth_weights) <= 0:
            raise ValueError("shape: depth_weights must not all be zero")
        if len(self.depth_weights) > 5:
            raise ValueError("shape: at most 5 depth levels (discovery's default max depth is 6)")
        if not 0 < self.body_min_bytes <= self.body_median_bytes <= self.body_max_bytes:
            raise ValueError(
                "shape: need 0 < body_min_bytes <= body_median_bytes <= body_max_bytes"
            )


@dataclass
class SkillEntry:
    """What the manifest records about one generated skill."""

    dir: str
    name: str | None
    valid: bool
    invalid_kind: str | None = None
    warnings: list[str] = field(default_factory=list)
    quirks: list[str] = field(default_factory=list)
    resources: dict[str, int] = field(default_factory=dict)
    skill_md_bytes: int = 0


# --- vocabulary -------------------------------------------------------------------------------

_DOMAINS = (
    "pdf", "docx", "xlsx", "pptx", "csv", "json", "yaml", "sql", "git", "github", "gitlab", "ci",
    "docker", "k8s", "terraform", "aws", "gcp", "azure", "react", "vue", "svelte", "nextjs", "node",
    "python", "rust", "go", "java", "swift", "kotlin", "ios", "android", "figma", "slack", "notion",
    "linear", "jira", "stripe", "postgres", "redis", "kafka", "graphql", "openapi", "http", "css",
    "svg", "canvas", "gif", "video", "audio", "i18n", "a11y", "seo", "auth", "oauth", "llm", "mcp",
    "data", "ml", "api", "web", "mobile", "cli", "shell", "log", "metrics", "security", "release",
)  # fmt: skip
_ACTIONS = (
    "build", "review", "audit", "deploy", "test", "lint", "format", "migrate", "debug", "profile",
    "refactor", "document", "design", "generate", "convert", "extract", "summarize", "triage",
    "monitor", "optimize", "validate", "scaffold", "publish", "sync", "backup", "analyze", "fix",
    "plan", "translate", "render", "index", "search", "bundle", "package", "upgrade", "secure",
)  # fmt: skip
_OBJECTS = (
    "forms", "tables", "reports", "charts", "components", "pipelines", "workflows", "changelog",
    "notes", "specs", "schemas", "queries", "prompts", "tests", "fixtures", "docs", "assets",
    "themes", "icons", "layouts", "routes", "hooks", "models", "jobs", "alerts", "dashboards",
    "issues", "comments", "commits", "branches", "images", "slides", "emails", "tokens", "configs",
    "helpers", "guidelines", "patterns", "checks", "records",
)  # fmt: skip
_TOP_CATEGORIES = (
    "engineering", "design", "data", "ops", "writing", "security", "research", "product",
    "finance", "marketing", "support", "platform", "mobile", "web", "infra", "quality",
)  # fmt: skip
_DOT_CATEGORIES = (".curated", ".system", ".experimental")
_SUB_CATEGORIES = (
    "frontend", "backend", "tooling", "review", "docs", "automation", "testing", "release",
    "analytics", "internal", "team-a", "team-b", "shared", "legacy", "labs", "core",
)  # fmt: skip
_WORDS = (
    "the", "user", "asks", "project", "files", "code", "changes", "request", "output", "review",
    "check", "repository", "build", "before", "after", "each", "step", "run", "command", "result",
    "when", "working", "with", "existing", "new", "structured", "clear", "summary", "context",
    "workflow", "template", "draft", "update", "validate", "report", "issue", "error", "module",
    "service", "config", "option", "value", "table", "list", "section", "format", "style", "team",
    "release", "version", "branch", "test", "page", "document", "data", "query", "field", "record",
)  # fmt: skip
_JA_SENTENCES = (
    "リポジトリの変更内容を確認し、レビューコメントを作成します。",
    "ユーザーがデプロイを依頼したときに使用します。",
    "設定ファイルを検証し、問題点を一覧にして報告します。",
    "議事録を要約し、決定事項と次のアクションを整理します。",
    "テストを実行して失敗の原因を調査します。",
)
_LICENSES = ("MIT", "Apache-2.0", "Complete terms in LICENSE.txt", "BSD-3-Clause", "Proprietary")
_COMPAT = (
    "Requires git and the gh CLI on PATH.",
    "Designed for Claude Code; needs Python 3.10+ and network access.",
    "Works with any agent that can run shell commands.",
    "Needs Node.js 20 or newer.",
)
_TOOLS = (
    "Read", "Write", "Edit", "Grep", "Glob", "WebFetch", "Bash(git:*)", "Bash(gh pr view:*)",
    "Bash(npm run test:*)", "Bash(python scripts/*.py)", "Bash(docker compose:*)", "Bash(make:*)",
)  # fmt: skip
_AUTHORS = ("vercel", "anthropic", "openai", "acme", "platform-team", "jdoe", "docs-guild")


class _Gen:
    """One generation run: the seeded RNG, the names used so far and the paragraph pool."""

    def __init__(self, seed: int, shape: Shape) -> None:
        self.rng = random.Random(seed)
        self.shape = shape
        self.used_names: list[str] = []
        self.used_name_set: set[str] = set()
        self.used_paths: set[str] = set()
        # Bodies are assembled from a fixed pool so generating 10 000 of them stays fast.
        self.paragraphs = [self._paragraph() for _ in range(160)]

    # -- small pieces -----------------------------------------------------------------------

    def _sentence(self, lo: int = 6, hi: int = 16) -> str:
        words = [self.rng.choice(_WORDS) for _ in range(self.rng.randint(lo, hi))]
        return " ".join(words).capitalize() + "."

    def _paragraph(self) -> str:
        kind = self.rng.random()
        if kind < 0.55:
            return " ".join(self._sentence() for _ in range(self.rng.randint(2, 6)))
        if kind < 0.8:
            return "\n".join(f"- {self._sentence(3, 9)}" for _ in range(self.rng.randint(2, 6)))
        if kind < 0.95:
            lang = self.rng.choice(("bash", "python", "json", ""))
            lines = [
                f"    {self.rng.choice(_WORDS)}_{i} = {self.rng.randint(0, 999)}" for i in range(4)
            ]
            return f"```{lang}\n" + "\n".join(line.strip() for line in lines) + "\n```"
        return "---"

    def _new_name(self) -> str:
        for _ in range(8):
            parts = [self.rng.choice(_DOMAINS), self.rng.choice(_ACTIONS)]
            if self.rng.random() < 0.7:
                parts.append(self.rng.choice(_OBJECTS))
            name = "-".join(parts)
            if name not in self.used_name_set:
                break
        else:
            name = f"{name}-{len(self.used_names)}"
        self.used_names.append(name)
        self.used_name_set.add(name)
        return name

    def _category_path(self, depth: int) -> list[str]:
        parts: list[str] = []
        if depth >= 2:
            if self.rng.random() < self.shape.dot_category_share:
                parts.append(self.rng.choice(_DOT_CATEGORIES))
            else:
                parts.append(self.rng.choice(_TOP_CATEGORIES))
        for _ in range(depth - 2):
            parts.append(self.rng.choice(_SUB_CATEGORIES))
        return parts

    def _description(self, name: str) -> str:
        if self.rng.random() < self.shape.japanese_share:
            n = self.rng.randint(1, 3)
            return "".join(self.rng.choice(_JA_SENTENCES) for _ in range(n))
        what = " ".join(name.split("-")).capitalize()
        kind = self.rng.choices(range(3), weights=self.shape.description_weights)[0]
        target = (
            self.rng.randint(40, 120),
            self.rng.randint(120, 400),
            self.rng.randint(600, 1000),
        )[kind]
        text = f"{what} for the current project. Use when the user asks to {name.replace('-', ' ')}"
        while len(text) < target:
            text += " " + self._sentence().lower().rstrip(".") + ","
        # Cut at a word boundary so the text reads like prose.
        text = text[: text.rfind(" ", 0, target + 1)].rstrip(" ,") + "."
        return text

    def _yaml_scalar(self, key: str, value: str, indent: str = "") -> str:
        """Write ``key: value`` in one of the styles real skills use, always valid YAML."""
        style = self.rng.random()
        needs_quotes = ": " in value or " #" in value or value[:1] in "!&*[]{}|>'\"%@`,?:-#"
        if (style < 0.55 and not needs_quotes) or "\n" in value:
            return f"{indent}{key}: {value}"
        if style < 0.75 or len(value) < 80:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            return f'{indent}{key}: "{escaped}"'
        if style < 0.85:
            return f"{indent}{key}: '" + value.replace("'", "''") + "'"
        # A folded block scalar (``>-``) wrapped near 80 columns, or an indented plain scalar
        # continued over several lines (as in the Vercel skills).
        lines, line = [], ""
        for word in value.split(" "):
            if line and len(line) + 1 + len(word) > 78:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        body = "\n".join(f"{indent}  {chunk}" for chunk in lines)
        if style < 0.93 or needs_quotes:
            return f"{indent}{key}: >-\n{body}"
        return f"{indent}{key}:\n{body}"

    def _body(self, name: str) -> str:
        sh = self.shape
        size = math.exp(self.rng.gauss(math.log(sh.body_median_bytes), sh.body_sigma))
        size = int(min(max(size, sh.body_min_bytes), sh.body_max_bytes))
        title = " ".join(name.split("-")).title()
        parts = [f"# {title}", "", "## When to use", "", self._sentence(), ""]
        length = sum(len(p) + 1 for p in parts)
        section = 0
        while length < size:
            if self.rng.random() < 0.15:
                section += 1
                parts.extend([f"## Step {section}", ""])
            paragraph = self.rng.choice(self.paragraphs)
            parts.extend([paragraph, ""])
            length += len(paragraph) + 2
        return "\n".join(parts)

    # -- one skill --------------------------------------------------------------------------

    # Complex by design: a synthetic skill: a branch per kind of oddity it may carry.
    def skill(self, index: int) -> tuple[SkillEntry, bytes, dict[str, bytes]]:  # noqa: C901
        """Build one skill: its manifest entry, SKILL.md bytes and resource files."""
        sh, rng = self.shape, self.rng
        depth = rng.choices(range(1, len(sh.depth_weights) + 1), weights=sh.depth_weights)[0]
        categories = self._category_path(depth)
        duplicate = bool(self.used_names) and rng.random() < sh.duplicate_name_share
        name = rng.choice(self.used_names) if duplicate else self._new_name()
        invalid_kind: str | None = None
        if rng.random() < sh.invalid_share:
            invalid_kind = rng.choices(list(INVALID_KINDS), weights=list(INVALID_KINDS.values()))[0]
        dir_name = name
        fm_name = name
        if invalid_kind == "name_uppercase":
            dir_name = fm_name = "-".join(p.capitalize() for p in name.split("-"))
        elif invalid_kind == "name_mismatch":
            fm_name = rng.choice((f"{name}-skill", f"acme-{name}", name.replace("-", "_")))
        rel = "/".join([*categories, dir_name])
        if rel in self.used_paths:  # a duplicate name landed in the same folder: move it
            dir_name = fm_name = f"{dir_name}-copy{index}"
            rel = "/".join([*categories, dir_name])
            if invalid_kind == "name_mismatch":
                fm_name = f"{dir_name}-skill"
        self.used_paths.add(rel)

        entry = SkillEntry(dir=rel, name=fm_name, valid=invalid_kind is None)
        entry.invalid_kind = invalid_kind

        quote_name = rng.random() < 0.1
        lines = [f'name: "{fm_name}"' if quote_name else f"name: {fm_name}"]
        description = self._description(name)
        if invalid_kind == "description_too_long":
            while len(description) <= 1024:
                description += " " + self._sentence().lower()
            description = description[: rng.randint(1030, 1400)].rstrip() + "."
        if invalid_kind == "yaml_invalid":
            # The classic mistake: an unquoted value containing ": ".
            lines.append(f"description: {description.rstrip('.')}. Use when: {self._sentence()}")
        elif invalid_kind == "description_missing":
            if rng.random() < 0.5:
                lines.append("description:")
        else:
            lines.append(self._yaml_scalar("description", description))
        if invalid_kind == "duplicate_key":
            lines.append(self._yaml_scalar("name", fm_name))
        if rng.random() < sh.license_share:
            lines.append(self._yaml_scalar("license", rng.choice(_LICENSES)))
        if rng.random() < sh.compatibility_share:
            lines.append(self._yaml_scalar("compatibility", rng.choice(_COMPAT)))
        if rng.random() < sh.allowed_tools_share:
            tools = rng.sample(_TOOLS, rng.randint(1, 4))
            if rng.random() < sh.allowed_tools_list_share:
                lines.append("allowed-tools:")
                lines.extend(f"  - {t}" for t in tools)
            else:
                lines.append(f"allowed-tools: {' '.join(tools)}")
        big = rng.random() < sh.big_frontmatter_share
        if rng.random() < sh.metadata_share or big or invalid_kind == "metadata_nested":
            lines.append("metadata:")
            lines.append(f"  author: {rng.choice(_AUTHORS)}")
            lines.append(f'  version: "{rng.randint(0, 3)}.{rng.randint(0, 9)}.0"')
            if rng.random() < 0.5:
                lines.append(self._yaml_scalar("short-description", self._sentence(3, 7), "  "))
            if rng.random() < sh.tags_share:
                tags = ",".join(sorted(set(rng.sample(_DOMAINS + _OBJECTS, rng.randint(1, 4)))))
                lines.append(f'  tags: "{tags}"')
            if invalid_kind == "metadata_nested":
                lines.append("  owner:")
                lines.append(f"    team: {rng.choice(_SUB_CATEGORIES)}")
            if big:
                entry.quirks.append("big_frontmatter")
                for i in range(60):
                    lines.append(f'  changelog-{i:02d}: "{self._sentence(8, 14)}"')
        if rng.random() < sh.unknown_field_share:
            chosen = rng.sample(UNKNOWN_FIELDS, rng.randint(1, 2))
            for key in chosen:
                if key in ("disable-model-invocation", "user-invocable"):
                    lines.append(f"{key}: {rng.choice(('true', 'false'))}")
                elif key == "model":
                    lines.append(f"model: {rng.choice(('sonnet', 'opus', 'haiku', 'inherit'))}")
                elif key == "argument-hint":
                    lines.append('argument-hint: "[file-or-pattern]"')
                else:
                    lines.append(self._yaml_scalar(key, self._sentence()))
            entry.warnings.extend("field.unknown" for _ in chosen)

        body = self._body(name)
        if invalid_kind == "frontmatter_missing":
            text = body if rng.random() < 0.5 else "\n".join(lines) + "\n\n" + body
        elif invalid_kind == "frontmatter_unclosed":
            text = "---\n" + "\n".join(lines) + "\n\n" + body.replace("\n---\n", "\n***\n")
        else:
            text = "---\n" + "\n".join(lines) + "\n---\n\n" + body + "\n"
        if rng.random() < sh.crlf_share:
            text = text.replace("\n", "\r\n")
            entry.quirks.append("crlf")
        data = text.encode("utf-8")
        if rng.random() < sh.bom_share:
            data = b"\xef\xbb\xbf" + data
            entry.quirks.append("bom")
        entry.skill_md_bytes = len(data)

        files: dict[str, bytes] = {}
        counts = {"scripts": 0, "references": 0, "assets": 0, "other": 0}
        if rng.random() < sh.scripts_share:
            for fname in rng.sample(
                ("run.py", "helper.sh", "validate.py", "extract.py"), rng.randint(1, 3)
            ):
                files[f"scripts/{fname}"] = f"#!/usr/bin/env sh\n# {self._sentence()}\n".encode()
            counts["scripts"] = sum(1 for f in files if f.startswith("scripts/"))
        if rng.random() < sh.references_share:
            for fname in rng.sample(
                ("REFERENCE.md", "api.md", "examples.md", "forms.md"), rng.randint(1, 3)
            ):
                files[f"references/{fname}"] = (self.rng.choice(self.paragraphs) + "\n").encode()
            counts["references"] = sum(1 for f in files if f.startswith("references/"))
        if rng.random() < sh.assets_share:
            for fname in rng.sample(("template.html", "logo.svg", "style.css"), rng.randint(1, 2)):
                files[f"assets/{fname}"] = f"<!-- {self._sentence()} -->\n".encode()
            counts["assets"] = sum(1 for f in files if f.startswith("assets/"))
        if rng.random() < sh.other_share:
            files["LICENSE.txt"] = f"{rng.choice(_LICENSES)}\n".encode()
            counts["other"] = 1
        entry.resources = counts
        return entry, data, files


def generate(
    out: str | os.PathLike[str], n: int, seed: int = 1, shape: Shape | None = None
) -> dict[str, Any]:
    """Write ``n`` skills under ``out`` (which must not exist or be empty); return the manifest."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    shape = shape or Shape()
    root = Path(out)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root}: output directory is not empty")
    root.mkdir(parents=True, exist_ok=True)
    gen = _Gen(seed, shape)
    entries: list[SkillEntry] = []
    made_dirs: set[Path] = set()
    for index in range(n):
        entry, skill_md, files = gen.skill(index)
        skill_dir = root / entry.dir
        for path in (skill_dir, *{(skill_dir / f).parent for f in files}):
            if path not in made_dirs:
                path.mkdir(parents=True, exist_ok=True)
                made_dirs.add(path)
        (skill_dir / "SKILL.md").write_bytes(skill_md)
        for rel, content in files.items():
            (skill_dir / rel).write_bytes(content)
        entries.append(entry)
    # Same-name skills are marked afterwards: only valid skills can collide in a catalog.
    by_name: dict[str, list[SkillEntry]] = {}
    for entry in entries:
        if entry.valid and entry.name is not None:
            by_name.setdefault(entry.name, []).append(entry)
    for group in by_name.values():
        if len(group) > 1:
            for entry in group:
                entry.quirks.append("same_name")
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "n": n,
        "seed": seed,
        "shape": asdict(shape),
        "totals": _totals(entries),
        "skills": [asdict(e) for e in entries],
    }
    text = json.dumps(manifest, indent=1, sort_keys=True)
    (root / MANIFEST_NAME).write_text(text + "\n")
    reread: dict[str, Any] = json.loads(text)  # as read_manifest returns it: lists, not tuples
    return reread


def _totals(entries: list[SkillEntry]) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    quirks: dict[str, int] = {}
    depths: dict[str, int] = {}
    for e in entries:
        if e.invalid_kind:
            by_kind[e.invalid_kind] = by_kind.get(e.invalid_kind, 0) + 1
        for q in e.quirks:
            quirks[q] = quirks.get(q, 0) + 1
        d = str(e.dir.count("/") + 1)
        depths[d] = depths.get(d, 0) + 1
    return {
        "skills": len(entries),
        "valid": sum(e.valid for e in entries),
        "invalid": sum(not e.valid for e in entries),
        "invalid_by_kind": dict(sorted(by_kind.items())),
        "with_unknown_fields": sum("field.unknown" in e.warnings for e in entries),
        "with_scripts": sum(e.resources["scripts"] > 0 for e in entries),
        "with_references": sum(e.resources["references"] > 0 for e in entries),
        "with_assets": sum(e.resources["assets"] > 0 for e in entries),
        "quirks": dict(sorted(quirks.items())),
        "depths": dict(sorted(depths.items())),
        "skill_md_bytes": sum(e.skill_md_bytes for e in entries),
    }


def read_manifest(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of a generated corpus, or None when ``root`` holds none (or a broken one)."""
    try:
        with open(Path(root) / MANIFEST_NAME, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def ensure_corpus(
    root: str | os.PathLike[str], n: int, seed: int = 1, shape: Shape | None = None
) -> dict[str, Any]:
    """Reuse the corpus at ``root`` if it was generated with the same inputs, else regenerate it.

    Only a directory this generator made (it holds ``corpus.json``) is ever deleted.
    """
    shape = shape or Shape()
    path = Path(root)
    manifest = read_manifest(path)
    wanted = {"generator_version": GENERATOR_VERSION, "n": n, "seed": seed, "shape": asdict(shape)}
    # JSON turns tuples into lists; compare through a JSON round trip.
    if manifest is not None and all(
        json.loads(json.dumps(manifest.get(k))) == json.loads(json.dumps(v))
        for k, v in wanted.items()
    ):
        return manifest
    remove_generated(path)
    return generate(path, n, seed, shape)


def remove_generated(path: Path) -> None:
    """Delete the corpus at ``path`` (nothing when it is missing or empty).

    Only a directory this generator made (it holds ``corpus.json``) is ever deleted; any other
    non-empty directory raises ``FileExistsError``.
    """
    if path.exists() and any(path.iterdir()):
        if read_manifest(path) is None:
            raise FileExistsError(
                f"{path}: not a generated corpus (no {MANIFEST_NAME}); refusing to delete it"
            )
        shutil.rmtree(path)


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="output directory (created; must be empty unless --force)")
    parser.add_argument("--n", type=int, default=1000, help="number of skills (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--force", action="store_true", help="replace an existing generated corpus")
    defaults = Shape()
    for name, value in asdict(defaults).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, tuple):
            parser.add_argument(
                flag, type=_floats, default=value, help=f"default {','.join(map(str, value))}"
            )
        else:
            parser.add_argument(flag, type=type(value), default=value, help=f"default {value}")
    args = parser.parse_args(argv)
    try:
        shape = Shape(**{name: getattr(args, name) for name in asdict(defaults)})
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    out = Path(args.out)
    try:
        if args.force:
            remove_generated(out)
        manifest = generate(out, args.n, args.seed, shape)
    except (FileExistsError, ValueError) as exc:
        parser.error(str(exc))
    print(json.dumps(manifest["totals"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
