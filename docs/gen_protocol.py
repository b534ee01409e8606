"""Generate ``docs/protocol.md``: every method and notification with its params, result,
errors and example exchanges.

    python docs/gen_protocol.py            rewrite docs/protocol.md
    python docs/gen_protocol.py --check    exit 1 when docs/protocol.md is stale

Field tables come from the msgspec types of ``skillsd_protocol`` (``METHODS``,
``NOTIFICATIONS``, ``ERROR_DATA``). The example exchanges are not written by hand: they are
played against a real ``skillsd serve`` on a copy of ``examples/`` and recorded, then made
machine-independent (the copy's location becomes ``/home/me``, ids are recomputed for those
paths, file times are fixed). ``tests/test_protocol_doc.py`` regenerates the document and
decodes every recorded message into its protocol type, so neither can drift.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from skillsd_protocol import (
    ERROR_DATA,
    KIND_CODES,
    METHODS,
    NOTIFICATION_SUMMARIES,
    NOTIFICATIONS,
    PROTOCOL_VERSION,
    SERVER_NOTIFICATIONS,
    ErrorCode,
    ErrorObject,
)

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "protocol.md"
EXAMPLES = ROOT / "examples"
#: Where the copy of examples/ appears in the document.
HOME = "/home/me"
PROJECT = f"{HOME}/src/project"
#: Every file time in the document (2026-01-01T00:00:00Z).
FIXED_MTIME_MS = 1767225600000.0
#: ``daemon.status`` values that differ on every run.
FIXED_STATUS = {
    "pid": 4242,
    "startedAt": 1767225600.0,
    "uptimeSeconds": 1.5,
    "rssBytes": 31457280,
    "peakRssBytes": 33554432,
}
#: ``usage.report`` times, which are this run's.
FIXED_ISO_TIME = "2026-01-01T00:00:00.000Z"
_USAGE_TIMES = frozenset({"lastUsed", "lastSuggested"})
#: ``doctor.report`` values that depend on the machine.
FIXED_DOCTOR: dict[str, Any] = {
    "maxUserWatches": 65536,
}
SESSION = "chat-1"
TIMEOUT = 15.0


@dataclass(frozen=True)
class Step:
    """One example: a request (or a file edit followed by the notification it causes)."""

    method: str
    params: dict[str, Any] | None = None
    note: str = ""
    edit: str | None = None  # a file (relative to the project) to append to instead


#: The scripted session, in order. Every method appears at least once.
SCRIPT: list[Step] = [
    Step("initialize", {"clientInfo": {"name": "my-editor", "version": "1.4.0"}}),
    Step("ping"),
    Step(
        "skills.list",
        {"scope": "user", "forceReload": True, "_meta": {"progressToken": "scan-1"}},
        "A forced rescan asking for progress: `$/progress` notifications come before the reply.",
    ),
    Step("skills.search", {"query": "release notes", "limit": 2}),
    Step("skills.search", {}, "Missing a required field: `-32602` names it."),
    Step(
        "skills.suggest",
        {"prompt": "please draft the release notes for v2.1"},
        "What a prompt hook asks before the model sees the request (docs/hooks.md).",
    ),
    Step("session.open", {"sessionId": SESSION}),
    Step(
        "trust.get",
        None,
        "A repository nobody decided about: its skills' `allowed-tools` grant nothing yet.",
    ),
    Step("skills.load", {"name": "changelog-check", "sessionId": SESSION}),
    Step(
        "skills.load",
        {"name": "changelog-check", "sessionId": SESSION},
        "The same file again in the same session: a short reminder instead of the body.",
    ),
    Step(
        "skills.load",
        {"name": "pdf-forms"},
        "Two enabled skills share this name: the error lists both candidates.",
    ),
    Step("skills.load", {"name": "relase-notes"}, "A typo: the error suggests close names."),
    Step("skills.readFile", {"path": ".agents/skills/pdf-forms", "file": "references/fields.md"}),
    Step(
        "skills.readFile",
        {"path": ".agents/skills/pdf-forms", "file": "../../../.git/config"},
        "Paths that leave the skill directory are refused.",
    ),
    Step("skills.unload", {"name": "changelog-check", "sessionId": SESSION}),
    Step(
        "skills.commands",
        None,
        "User-invocable skills and `.claude/commands` files (`frontend/component.md` is "
        "`frontend:component`).",
    ),
    Step(
        "skills.invoke",
        {"command": '/fix-issue 123 "high priority"', "sessionId": SESSION, "format": "spec"},
        "The user typed the command: placeholders substituted, the `!` command listed with its "
        "decision (never run); the repository is not trusted yet, so the grant is withheld.",
    ),
    Step(
        "skills.invoke",
        {"command": "/fix-isue 7"},
        "An unknown command: the error suggests close names.",
    ),
    Step("skills.validate", {"path": ".agents/skills/broken-skill"}),
    Step(
        "skills.setEnabled",
        {"name": "code-review", "enabled": False, "persist": "session", "sessionId": SESSION},
    ),
    Step("skills.prompt", {"format": "markdown", "maxEntries": 3}),
    Step(
        "skills.prompt",
        {"budget": {"tokens": 150}, "query": "fill in a PDF form", "includeLocation": False},
        "A token budget chosen by relevance (docs/embedding.md): the PDF skill keeps its "
        "description, "
        "`omitted` names the rest, and the text points the model to `skill_search`.",
    ),
    Step(
        "skills.mentions",
        {"text": "Use $release-notes, not $HOME; [$pdf-forms](.agents/skills/pdf-forms/SKILL.md)."},
    ),
    Step("tools.list", {"style": "swiftagent"}),
    Step("tools.call", {"name": "skill_search", "arguments": {"query": "pdf", "limit": 1}}),
    Step("tools.call", {"name": "skill_load", "arguments": {"name": "pdf-forms"}}),
    Step("permissions.check", {"tool": "Bash", "input": "git status", "sessionId": SESSION}),
    Step(
        "trust.set",
        {"trusted": True},
        "Trust the repository: from the next check on, in every session, its skills' grants "
        "and its project config's `allow` rules count.",
    ),
    Step(
        "permissions.remember",
        {"sessionId": SESSION, "rule": "Bash(git:*)", "decision": "allow"},
    ),
    Step("context.inspect", {"sessionId": SESSION}),
    Step("session.compacted", {"sessionId": SESSION}),
    Step(
        "daemon.status",
        note="What `skillsd daemon status` prints (pid, times and memory are this machine's).",
    ),
    Step("personas.list"),
    Step("personas.get", {"name": "reviewer"}),
    Step(
        "personas.get", {"name": "reviewr"}, "An unknown persona: the error suggests close names."
    ),
    Step("agents.list", note="The deprecated name of `personas.list`, kept for one release."),
    Step("agents.get", {"name": "reviewer"}, "The deprecated name of `personas.get`."),
    Step(
        "doctor.report",
        note="What `skillsd doctor --json` prints (the inotify limit and the suggestion stages "
        "are this machine's).",
    ),
    Step(
        "agents.matrix",
        {"allAgents": True},
        "What `skillsd doctor --agents --all --json` prints.",
    ),
    Step("session.close", {"sessionId": SESSION}),
    Step("session.close", {"sessionId": SESSION}, "The session is gone now."),
    Step(
        "skills.changed",
        edit=".agents/skills/release/release-notes/SKILL.md",
        note="After `release-notes/SKILL.md` was saved (the connection had listed this cwd).",
    ),
    Step(
        "skills.list",
        {"sinceGeneration": 1, "scope": None},
        "After `skills.changed`: only what changed since the generation the client has "
        "(docs/embedding.md); `errors` and `diagnostics` stay complete.",
    ),
    Step(
        "skills.listing",
        {"agent": "claude-code", "contextWindow": 200000},
        "What Claude Code's model is shown here: at a 200 000-token window its budget is 6 000 "
        "characters; its own bundled skills count but their text is not in `text`.",
    ),
    Step("skills.profile.plan", {"agent": "claude-code"}),
    Step("skills.profile.apply", {"agent": "claude-code"}),
    Step(
        "skills.profile.reset",
        {"agent": "claude-code"},
        "Removes exactly what `skills.profile.apply` wrote.",
    ),
    Step("skills.scan", {"path": ".agents/skills/pdf-forms"}),
    Step("skills.installed", {}, "No lock file yet: nothing installed."),
    Step(
        "skills.install",
        {"source": "packages", "names": ["lint-rules"]},
        "A folder holding no skill: the install stops at the step that failed, having changed "
        "nothing (docs/install-skills.md).",
    ),
    Step("skills.update", {"check": True}),
    Step("skills.restore", {}),
    Step(
        "skills.remove",
        {"name": "pdf-forms"},
        "Only what the lock file owns is removed: `pdf-forms` was not installed by skillsd.",
    ),
    Step(
        "usage.report",
        {},
        "What this session's loads, invocations and suggestions left in the local use ledger "
        "(docs/usage.md); `byAgent` names the client by its `initialize` `clientInfo`.",
    ),
    Step("shutdown"),  # last: after it only `exit` is accepted
]

#: Client notifications cannot be recorded (the daemon does not answer them): these are
#: what a client sends, checked against the types by the tests.
CLIENT_NOTIFICATIONS: dict[str, dict[str, Any] | None] = {
    "initialized": None,
    "exit": None,
    "$/cancelRequest": {"id": 7},
}


@dataclass
class Exchange:
    """Messages of one step as recorded: what was sent, then everything received."""

    step: Step
    sent: dict[str, Any] | None
    received: list[dict[str, Any]] = field(default_factory=list)

    @property
    def reply(self) -> dict[str, Any] | None:
        return next((m for m in self.received if "id" in m), None)


# -- recording ---------------------------------------------------------------------------


class _Daemon:
    """``skillsd serve`` on pipes, read line by line with a deadline."""

    def __init__(self, project: Path, env: dict[str, str], stderr: Path) -> None:
        self._stderr_path = stderr
        self._stderr = open(stderr, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillsd", "serve"],
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._buf = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, remaining))
            chunk = os.read(self.proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                why = "timed out" if not ready else "stream ended"
                log = self._stderr_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"skillsd serve {why} while recording; stderr:\n{log}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()


def _environment(tmp: Path, project: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLSD_", "XDG_"))}
    env.pop("AGENT_SKILLS_PATH", None)
    env.update(
        SKILLSD_ROOT=os.fspath(project),
        HOME=os.fspath(home),
        SKILLSD_CONFIG=os.fspath(tmp / "config.toml"),
        XDG_STATE_HOME=os.fspath(tmp / "state"),
        XDG_CACHE_HOME=os.fspath(tmp / "cache"),
        XDG_CONFIG_HOME=os.fspath(tmp / "xdg-config"),
    )
    return env


def record() -> list[Exchange]:
    """Play `SCRIPT` against a real daemon on a copy of examples/; normalized exchanges."""
    with tempfile.TemporaryDirectory(prefix="skillsd-doc-") as tmp_name:
        tmp = Path(tmp_name).resolve()
        copy = tmp / "examples"
        shutil.copytree(EXAMPLES, copy, symlinks=True)
        project, home = copy / "project", copy / "home"
        # A host that wants silent loads ships this (docs/permissions.md); the default asks the
        # user.
        (tmp / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
        daemon = _Daemon(project, _environment(tmp, project, home), tmp / "stderr.log")
        try:
            played = _play(daemon, project)
            # Everything up to `shutdown` (the last step), then the listing: after `shutdown`
            # the daemon refuses every request but `exit`.
            exchanges = list(itertools.islice(played, len(SCRIPT) - 1))
            listed = _all_skill_paths(daemon, len(SCRIPT) + 1)
            exchanges += played
        finally:
            daemon.close()
        return _normalize(exchanges, {home: HOME, project: PROJECT, tmp: "/tmp/skillsd"}, listed)


def _play(daemon: _Daemon, project: Path) -> Iterator[Exchange]:
    for number, step in enumerate(SCRIPT, start=1):
        if step.edit is not None:
            target = project / step.edit
            with open(target, "a", encoding="utf-8") as fh:
                fh.write("\nMention breaking changes first.\n")
            exchange = Exchange(step, None)
            while not exchange.received or exchange.received[-1].get("method") != step.method:
                exchange.received.append(daemon.receive())
            yield exchange
            continue
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": step.method}
        if step.params is not None:
            message["params"] = step.params
        daemon.send(message)
        exchange = Exchange(step, message)
        while True:
            received = daemon.receive()
            exchange.received.append(received)
            if received.get("id") == number:
                break
        yield exchange


def _all_skill_paths(daemon: _Daemon, id_: int) -> list[str]:
    """Every SKILL.md of the catalog (to recompute ids after moving paths)."""
    daemon.send({"jsonrpc": "2.0", "id": id_, "method": "skills.list"})
    reply = daemon.receive()
    result = reply["result"]
    return [s["path"] for s in result["skills"]] + [e["path"] for e in result["errors"]]


def _skill_id(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()[:24]


def _normalize(
    exchanges: list[Exchange], places: dict[Path, str], skill_paths: list[str]
) -> list[Exchange]:
    """Rewrite machine-specific paths, ids and file times in every recorded message."""
    replacements: list[tuple[str, str]] = []
    for real, shown in sorted(places.items(), key=lambda p: -len(os.fspath(p[0]))):
        replacements.append((os.fspath(real), shown))
        replacements.append((real.as_uri(), "file://" + shown))

    def move(text: str) -> str:
        for old, new in replacements:
            text = text.replace(old, new)
        return text

    ids = {_skill_id(p): _skill_id(move(p)) for p in skill_paths}

    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            if "uptimeSeconds" in value:
                return {k: FIXED_STATUS.get(k, v) for k, v in value.items()}
            return {
                k: FIXED_MTIME_MS
                if k == "mtimeMs"
                else FIXED_ISO_TIME
                if k in _USAGE_TIMES
                else FIXED_DOCTOR[k]
                if k in FIXED_DOCTOR
                else fix(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, str):
            text = move(value)
            for old, new in ids.items():
                text = text.replace(old, new)
            return text
        return value

    return [Exchange(x.step, fix(x.sent), [fix(m) for m in x.received]) for x in exchanges]


# -- rendering ---------------------------------------------------------------------------


def _anchor(name: str) -> str:
    return name.lower().replace(".", "").replace("/", "").replace("$", "")


def type_text(t: Any) -> str:
    """A JSON-flavoured rendering of a field type, linking to Struct sections."""
    if t is type(None) or t is None:
        return "null"
    if t is Any:
        return "any"
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin is typing.Annotated:
        meta = next((a for a in args[1:] if isinstance(a, msgspec.Meta)), None)
        if args[0] is str and meta is not None and meta.pattern == r"\S":
            return "string (not blank)"
        return type_text(args[0])
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_text(a) for a in args)
    if origin is list:
        inner = type_text(args[0])
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin is dict:
        return f"{{string: {type_text(args[1])}}}"
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return f"[{t.__name__}](#{_anchor(t.__name__)})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if t in names:
        return names[t]
    return str(t)


def _default_text(info: msgspec.structs.FieldInfo) -> str:
    if info.required:
        return "**required**"
    if info.default_factory is not msgspec.NODEFAULT:
        return f"`{msgspec.json.encode(info.default_factory()).decode()}`"
    return f"`{json.dumps(info.default)}`"


def field_table(struct: type[msgspec.Struct]) -> list[str]:
    fields = msgspec.structs.fields(struct)
    if not fields:
        return ["No fields: `{}`."]
    rows = ["| field | type | default |", "|---|---|---|"]
    for info in fields:
        rows.append(f"| `{info.encode_name}` | {type_text(info.type)} | {_default_text(info)} |")
    return rows


def _structs_in(t: Any, seen: dict[str, type[msgspec.Struct]]) -> None:
    """Collect every Struct reachable from ``t``."""
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        if t.__name__ in seen:
            return
        seen[t.__name__] = t
        for info in msgspec.structs.fields(t):
            _structs_in(info.type, seen)
        return
    for arg in typing.get_args(t):
        _structs_in(arg, seen)


def _doc_of(struct: type[msgspec.Struct]) -> str:
    doc = struct.__doc__ or ""
    # msgspec gives undocumented Structs a generated signature docstring: skip those.
    if not doc or doc.startswith(struct.__name__ + "("):
        return ""
    return " ".join(line.strip() for line in doc.strip().splitlines() if line.strip())


def _json_block(message: dict[str, Any]) -> list[str]:
    return ["```json", json.dumps(message, indent=2, ensure_ascii=False), "```"]


def _exchange_lines(exchange: Exchange) -> list[str]:
    lines: list[str] = []
    if exchange.step.note:
        lines += [exchange.step.note, ""]
    if exchange.sent is not None:
        lines += ["Request:", "", *_json_block(exchange.sent), ""]
    for message in exchange.received:
        if "id" in message:
            label = "Error response:" if "error" in message else "Response:"
        else:
            label = f"Notification `{message['method']}`:"
        lines += [label, "", *_json_block(message), ""]
    return lines


def _method_errors(method: str) -> str:
    kinds = METHODS[method].errors
    parts = [f"`{kind}` ({int(KIND_CODES[kind])})" for kind in kinds]
    parts.append("`-32602` for bad params")
    return ", ".join(parts)


# Complex by design: a section per method of the scripted session.
def render(exchanges: list[Exchange]) -> str:  # noqa: C901
    """The whole document."""
    by_method: dict[str, list[Exchange]] = {}
    for exchange in exchanges:
        by_method.setdefault(exchange.step.method, []).append(exchange)
    structs: dict[str, type[msgspec.Struct]] = {}
    out: list[str] = [
        "# skillsd protocol reference",
        "",
        "<!-- GENERATED by docs/gen_protocol.py from skillsd_protocol and a recorded session",
        "     with a real daemon: do not edit; run `python docs/gen_protocol.py`. -->",
        "",
        f"Protocol version **{PROTOCOL_VERSION}**. JSON-RPC 2.0, one JSON message per line",
        "(or LSP `Content-Length` framing when the client starts with it).",
        "Field names are camelCase on the wire; optional fields may be omitted, and the daemon",
        "omits a field whose value is its default. Every `cwd` defaults to the daemon's cwd.",
        "Machine-readable: `protocol/skillsd_protocol/schema.json` (`skillsd schema`).",
        "",
        "The examples below were recorded from `skillsd serve` running on `examples/project`",
        f"(shown as `{PROJECT}`, the user's home as `{HOME}`) with",
        '`[permissions] allow = ["skill_load"]`, in this order, on one connection.',
        "",
        "## Methods",
        "",
        "| method | summary |",
        "|---|---|",
    ]
    for method, spec in METHODS.items():
        out.append(f"| [`{method}`](#{_anchor(method)}) | {spec.summary} |")
    out.append("")
    for method, spec in METHODS.items():
        _structs_in(spec.params, structs)
        _structs_in(spec.result, structs)
        result = (
            "`null`"
            if spec.result is None
            else f"[{spec.result.__name__}](#{_anchor(spec.result.__name__)})"
        )
        out += [
            f"### {method}",
            "",
            spec.summary,
            "",
            f"**Params** ([{spec.params.__name__}](#{_anchor(spec.params.__name__)})):",
            "",
            *field_table(spec.params),
            "",
            f"**Result**: {result}.",
            "",
            f"**Errors**: {_method_errors(method)}.",
            "",
        ]
        examples = by_method.get(method)
        if not examples:
            raise SystemExit(f"gen_protocol.py: no example exchange for {method}: add a Step")
        out += ["**Example**:" if len(examples) == 1 else "**Examples**:", ""]
        for exchange in examples:
            out += _exchange_lines(exchange)
    out += ["## Notifications", "", "| notification | direction | summary |", "|---|---|---|"]
    for name in NOTIFICATIONS:
        direction = "daemon → client" if name in SERVER_NOTIFICATIONS else "client → daemon"
        out.append(
            f"| [`{name}`](#{_anchor(name)}) | {direction} | {NOTIFICATION_SUMMARIES[name]} |"
        )
    out.append("")
    for name, params in NOTIFICATIONS.items():
        _structs_in(params, structs)
        out += [
            f"### {name}",
            "",
            NOTIFICATION_SUMMARIES[name],
            "",
            f"**Params** ([{params.__name__}](#{_anchor(params.__name__)})):",
            "",
            *field_table(params),
            "",
        ]
        if name in CLIENT_NOTIFICATIONS:
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": name}
            if CLIENT_NOTIFICATIONS[name] is not None:
                message["params"] = CLIENT_NOTIFICATIONS[name]
            out += ["**Example**:", "", *_json_block(message), ""]
        elif name in by_method:
            out += ["**Example**:", ""]
            for exchange in by_method[name]:
                out += _exchange_lines(exchange)
        else:
            out += ["**Example**: see the `skills.list` example above.", ""]
    out += [
        "## Errors",
        "",
        "An error response carries an [ErrorObject](#errorobject). Codes:",
        "",
        "| code | name |",
        "|---|---|",
        *(f"| {int(code)} | `{code.name}` |" for code in ErrorCode),
        "",
        "`-32800` answers a request cancelled with `$/cancelRequest`. Application errors",
        "(1001+) always carry `data.kind`; the other members of `data` depend on the kind:",
        "",
        "| kind | code | data |",
        "|---|---|---|",
    ]
    _structs_in(ErrorObject, structs)
    for kind, data_type in ERROR_DATA.items():
        _structs_in(data_type, structs)
        link = f"[{data_type.__name__}](#{_anchor(data_type.__name__)})"
        out.append(f"| `{kind}` | {int(KIND_CODES[kind])} | {link} |")
    out += ["", "## Types", ""]
    for name in sorted(structs):
        struct = structs[name]
        out += [f"### {name}", ""]
        doc = _doc_of(struct)
        if doc:
            out += [doc, ""]
        tag = struct.__struct_config__.tag
        if isinstance(tag, str):
            out += [f'Always has `"kind": "{tag}"`.', ""]
        out += [*field_table(struct), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def generate() -> tuple[str, list[Exchange]]:
    """Record the session and render the document."""
    exchanges = record()
    return render(exchanges), exchanges


def main(argv: list[str]) -> int:
    text, _ = generate()
    if "--check" in argv:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is stale: run python docs/gen_protocol.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
