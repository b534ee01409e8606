"""Generate ``docs/config.md``: every configuration key with its type, default and an example.

    python docs/gen_config.py            rewrite docs/config.md
    python docs/gen_config.py --check    exit 1 when docs/config.md is stale

Keys, types and defaults come from the config types in ``skillsd/core/policy/config.py`` (the same
msgspec Structs that validate the files); only the one-line meaning and the example of each key
are written here. ``tests/test_config_doc.py`` regenerates the page, fails when a key has no
description (or a description names a key that no longer exists), and parses every example
with the real config parser, so the page cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from skillsd.core.policy.config import config_keys, describe_type

OUTPUT = Path(__file__).resolve().parent / "config.md"

#: Key path -> (what it does, an example value in TOML).
KEYS: dict[str, tuple[str, str]] = {
    "validation": (
        "How the catalog treats skills that break the spec. `lenient` (as Claude Code does) keeps "
        "a skill whose name differs from its folder or whose name/description is too long, with "
        "a warning; `strict` leaves it out and lists it in `errors[]`. `skillsd validate` and "
        "`skills.validate` are strict unless told otherwise.",
        '"strict"',
    ),
    "discovery.auto": (
        "Scan the repo and user scopes. `false` keeps only extra roots.",
        "false",
    ),
    "discovery.compatRoots": (
        "Also scan the other agents' folders (`.agent`, `.claude`, `.codex`, `.opencode`, "
        "`~/.config/opencode`, `$CODEX_HOME`), not only `.agents/skills`.",
        "false",
    ),
    "discovery.markers": (
        "Names whose presence marks the repository root (the top of the repo chain). Replaces "
        "the default list.",
        '[".git", ".hg", "WORKSPACE"]',
    ),
    "discovery.maxDepth": (
        "How deep below a root skills are searched (a skill directly in the root is depth 1). "
        "A project file may only lower it.",
        "3",
    ),
    "discovery.maxDirs": (
        "How many directories are listed per root before the scan stops with a warning. A "
        "project file may only lower it.",
        "500",
    ),
    "roots.extra": (
        "More skill roots (scope `extra`); `~` is the home directory. Relative entries start "
        "at the repository root in the project file, at the config file's directory in the "
        "user file, never at the process's working directory. A project file's list replaces "
        "the user's, and its entries outside the repository are ignored with a warning "
        "(`config.root_outside_repository`).",
        '["tools/skills", "~/shared-skills"]',
    ),
    "prompt.maxEntries": (
        "The most skills `skills.prompt` renders before it drops some.",
        "50",
    ),
    "prompt.maxBytes": (
        "The byte budget of `skills.prompt`'s text (descriptions are shortened first).",
        "8192",
    ),
    "prompt.format": (
        "The default format of `skills.prompt`.",
        '"markdown"',
    ),
    "search.defaultLimit": (
        "How many hits `skills.search` returns without a `limit`.",
        "5",
    ),
    "search.maxLimit": (
        "The largest `limit` honoured; larger ones are clamped.",
        "20",
    ),
    "suggest.threshold": (
        "The score (0 to 1) a suggestion needs to activate (`skills.suggest`, `skillsd hook`): "
        "lower activates more skills, and more wrongly (docs/hooks.md). Compared, like the "
        "scores, at two decimals.",
        "0.5",
    ),
    "profiles.pinned": (
        "Skill names a profile always shows its agents' models in full (`skillsd profile`, "
        "docs/agents.md). A project file's list replaces the user's.",
        '["deploy", "db-migrations"]',
    ),
    "suggest.candidateThreshold": (
        "When no suggestion activates and the best scores at least this, up to three within 0.1 "
        "of the best are offered as candidates (the hook asks the model to check them), not a "
        "skill that does not mention a technology the request names unless it scores 0.50; "
        "under it, a best suggestion that scores at least 0.30 and leads the next by 0.15 is "
        "offered alone; above `suggest.threshold`, none is (docs/hooks.md).",
        "0.3",
    ),
    "suggest.semantic": (
        "Whether suggestions add what the request and each skill mean (the semantic stage: the "
        "cosine of their meaning vectors, shipped with skillsd) to their matching words; off, "
        "suggestions are lexical only (docs/hooks.md).",
        "false",
    ),
    "permissions.finalDeny": (
        "Rules nothing overrides, not even a remembered answer.",
        '["Bash(rm:*)"]',
    ),
    "permissions.override": (
        "Rules that allow even where a `deny` rule matches.",
        '["Bash(git status:*)"]',
    ),
    "permissions.deny": (
        "Rules that refuse a tool (a skill's `allowed-tools` cannot lift them).",
        '["skill_load(experimental-*)"]',
    ),
    "permissions.allow": (
        "Rules that allow a tool without asking; `skill_load` allows every skill load.",
        '["skill_load", "Read"]',
    ),
    "permissions.defaultAction": (
        "The answer when no rule matches.",
        '"allow"',
    ),
    "trust.default": (
        "Whether a repository you have not decided about is trusted: `untrusted` withholds its "
        "skills' `allowed-tools` grants and its project file's `allow` rules "
        "(docs/permissions.md). Read "
        "from the user's file only.",
        '"untrusted"',
    ),
    "limits.maxCatalogs": (
        "How many catalogs (distinct working directories) a daemon keeps at once; past it the "
        "least recently used one no connected client has listed is dropped with its watches. "
        "Read from the user's file only.",
        "128",
    ),
    "limits.maxReplyBytes": (
        "The largest reply skillsd builds (an invocation's text, an MCP read): a larger one is "
        "refused with `too_large` before it is built. Read from the user's file only.",
        "33554432",
    ),
    "limits.maxInstallFiles": (
        "Files one installed skill may hold; an install past it is refused with `too_large` "
        "(docs/install-skills.md). Read from the user's file only.",
        "5000",
    ),
    "limits.maxInstallBytes": (
        "Bytes one installed skill may hold (default 50 MiB); an install past it is refused "
        "with `too_large`. Read from the user's file only.",
        "104857600",
    ),
    "limits.fetchSeconds": (
        "The longest one download of an archive source may take in all (default 300), "
        "however slowly the server sends; past it the install fails at step `fetch`. Each "
        "wait for the server is bounded apart (60 s). Read from the user's file only.",
        "600",
    ),
    "ledger.enabled": (
        "Record each skill load, invocation and suggestion skillsd serves in a local, "
        "private, bounded file in the state directory (`skillsd usage`, docs/usage.md). "
        "`false` records nothing; nothing ever leaves the machine. Read from the user's file "
        "only.",
        "false",
    ),
    "ledger.agentTranscripts": (
        "Let `skillsd usage` also read Claude Code's own transcripts (`~/.claude/projects`) "
        "for the skills its model used there. Off unless you turn it on. Read from the user's "
        "file only.",
        "true",
    ),
    "ledger.maxBytes": (
        "Bytes each of the ledger's two files may hold (default 1 MiB): past it the current "
        "file replaces the previous one and a new one starts, so the ledger never takes more "
        "than twice this. Read from the user's file only.",
        "262144",
    ),
    "listing.claudeCodePath": (
        "Where Claude Code is installed, when not the `claude` on `PATH`: its command or its "
        "npm package's file. `skills.listing` reads Claude Code's own text (its bundled "
        "skills' descriptions) from it, never running it (docs/agents.md). Read from the "
        "user's file only.",
        '"~/.local/bin/claude"',
    ),
    "listing.codexPath": (
        "Where Codex is installed, when not the `codex` on `PATH`: its npm launcher or its "
        "native binary, read (never run) for Codex's own opening sentences of its skill "
        "listing (docs/agents.md). Read from the user's file only.",
        '"~/.npm-global/bin/codex"',
    ),
    "remote": (
        "Skills servers whose skills join every catalog (`[[remote]]`, docs/remote.md): "
        "`name` (qualifies its skills as `name:skill`), `url` (https, or http on a loopback "
        "address), `tokenFile` (a file only you may read, holding the bearer token), "
        "`trusted` (its skills' `allowed-tools` may grant; default false) and "
        "`refreshSeconds` (ask again at least this often, even when its `ttlMs` allows "
        "longer). A project file's remotes count only once you trust the repository.",
        '[{ name = "team", url = "https://skills.acme.dev/mcp", '
        'tokenFile = "~/.config/skillsd/team.token" }]',
    ),
    "trust.roots": (
        "Repository roots trusted by configuration: paths or globs (`*` spans `/`), `~` is "
        "the home directory. A decision made with `skillsd trust` or `trust.set` comes first. "
        "Read from the user's file only.",
        '["~/src/mine/*", "/work/company-repo"]',
    ),
}

HEADER = """\
# Configuration

<!-- GENERATED by docs/gen_config.py from skillsd/core/policy/config.py: do not edit. -->

skillsd reads two TOML files, both optional:

- the user's: `config.toml` in the platform's user config directory
  (`~/.config/skillsd/config.toml` on Linux), or the file `$SKILLSD_CONFIG` names;
- the project's: `.agents/skillsd.toml` at the repository root (the nearest ancestor holding
  one of `discovery.markers`, or `$SKILLSD_ROOT`).

The project file is read after the user's: a key it sets replaces the user's value, except
`permissions`, `trust`, `limits`, `ledger`, `listing` and what widens the scan. A project's
`permissions` may only tighten the user's (its `finalDeny` and `deny` rules add up with the
user's, its `defaultAction` applies only when stricter, its `override` never, its `allow` only
once you trust the repository); its `trust`, `limits`, `ledger` and `listing` tables are
ignored; its
`discovery.maxDepth` and `maxDirs` may only lower the user's, and its `roots.extra` entries
outside the repository are ignored with a warning: see `docs/security.md`. An unknown key is
ignored with a warning that names the closest setting (`` `promt.maxBytes` is not a setting;
did you mean `prompt.maxBytes`? ``) and every command goes on; a wrong type or a value out of
range makes the file invalid, and the error names the file, the key and what is allowed
(`skillsd doctor` shows both, and exits 1 on an invalid file). Changes apply at the next
request, without a restart.

Every key, with its type, its default and an example:
"""

EXAMPLE = """\

## A complete example

```toml
{body}
```
"""


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def documented_keys() -> list[tuple[str, str, str]]:
    """(key path, type, default in TOML) for every key of :class:`Config`, in declaration order."""
    return [
        (key, describe_type(annotation).replace(" | ", " \\| "), _toml(default))
        for key, annotation, default in config_keys()
    ]


def generate() -> str:
    keys = documented_keys()
    missing = [k for k, _, _ in keys if k not in KEYS]
    unknown = sorted(set(KEYS) - {k for k, _, _ in keys})
    if missing or unknown:
        raise SystemExit(f"describe every config key: missing {missing}, unknown {unknown}")
    lines = [HEADER]
    lines.append("| key | type | default | example | meaning |")
    lines.append("|---|---|---|---|---|")
    for key, type_text, default in keys:
        meaning, example = KEYS[key]
        lines.append(f"| `{key}` | {type_text} | `{default}` | `{example}` | {meaning} |")
    body: list[str] = []
    section = None
    # Top-level keys first: after a [table] header they would belong to that table.
    for key, _, _ in sorted(keys, key=lambda k: "." in k[0]):
        table, _, name = key.rpartition(".")
        if table != section and table:
            body.append(f"\n[{table}]")
            section = table
        body.append(f"{name} = {KEYS[key][1]}")
    lines.append(EXAMPLE.format(body="\n".join(body).strip()))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = generate()
    if argv == ["--check"]:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print("docs/config.md is stale: run python docs/gen_config.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
