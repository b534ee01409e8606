"""Capture the skill listing a real agent sends its model, offline.

The agent runs with its model endpoint pointed at a stand-in server on 127.0.0.1 that records
each request body and answers an error (a 400: a 5xx is retried for a minute). Run inside an
empty network namespace (``unshare -rn``, then ``ip link set lo up``), so nothing leaves the
machine. ``python -m tests.listing.capture CLAUDE_BIN_DIR CODEX_BIN_DIR [FIXTURE...]``
rebuilds the fixtures of ``fixtures.py`` and rewrites ``captured/<agent>/<fixture>.txt``.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CAPTURED",
    "CLAUDE_HEAD",
    "bundled_spans",
    "capture_claude",
    "capture_codex",
    "claude_block",
    "codex_block",
    "strip_bundled",
    "strip_codex_preamble",
    "strip_codex_system",
]

CAPTURED = Path(__file__).with_name("captured")

#: What precedes Claude Code's listing in its request; the block ends at the next blank line
#: followed by text that is not an entry.
CLAUDE_HEAD = "The following skills are available for use with the Skill tool:\n\n"
CODEX_OPEN, CODEX_CLOSE = "<skills_instructions>", "</skills_instructions>"


class _Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with contextlib.suppress(ValueError):
            self.server.bodies.append(json.loads(raw or b"{}"))
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": "capture"}}
        data = json.dumps(error).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(http.server.ThreadingHTTPServer):
    bodies: list[Any]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _record(command: list[str], cwd: Path, env: dict[str, str], port_env: Any) -> list[Any]:
    server = _Server(("127.0.0.1", 0), _Recorder)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        subprocess.run(
            command,
            cwd=cwd,
            env={**env, **port_env(port)},
            capture_output=True,
            timeout=600,
            check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
    return server.bodies


def _base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), NO_COLOR="1", CI="1")
    return env


def claude_block(text: str) -> str | None:
    """The listing block in one string of Claude Code's request (entries may span lines: a
    description can hold newlines), without the heading; None when absent."""
    if CLAUDE_HEAD not in text:
        return None
    rest = text.split(CLAUDE_HEAD, 1)[1]
    # The block is followed by a blank line and the next section of the system reminder.
    end = rest.find("\n\n")
    return rest if end < 0 else rest[:end]


def codex_block(text: str) -> str | None:
    """The ``<skills_instructions>`` message of Codex's request, tags included."""
    if CODEX_OPEN not in text:
        return None
    start = text.index(CODEX_OPEN)
    end = text.find(CODEX_CLOSE, start)
    return text[start : end + len(CODEX_CLOSE)] if end >= 0 else None


def bundled_spans(block: str, names: Sequence[str]) -> list[tuple[str, int, int]]:
    """(name, start, end) of each bundled entry of a Claude Code block (an entry runs to the
    next bundled entry: a description may hold newlines)."""
    starts = []
    for name in names:
        match = re.search(rf"(?:^|\n)(- {re.escape(name)})(?=:|\n|$)", block)
        if match is not None:
            starts.append((match.start(1), name))
    starts.sort()
    ends = [start - 1 for start, _ in starts[1:]] + [len(block)]
    return [(name, start, end) for (start, name), end in zip(starts, ends, strict=True)]


def strip_bundled(block: str, names: Sequence[str]) -> str:
    """``block`` with each bundled skill's description (the agent's own text, not stored
    here) replaced by its length: ``- name: <N characters>``."""
    out, at = [], 0
    for name, start, end in bundled_spans(block, names):
        out.append(block[at:start])
        entry = block[start:end]
        head = f"- {name}: "
        if entry.startswith(head):
            out.append(f"{head}<{len(entry) - len(head)} characters>")
        else:
            out.append(entry)
        at = end
    out.append(block[at:])
    return "".join(out)


def strip_codex_system(block: str, system_root: str) -> str:
    """``block`` with each description of Codex's own ``.system`` skills replaced by its
    length (their text ships inside Codex)."""
    alias = re.search(rf"- `(r\d+)` = `{re.escape(system_root)}`", block)
    if alias is None:
        return block
    pattern = rf"(?m)^(- [^:\n]+: )(.*)( \(file: {alias.group(1)}/[^)]*\))$"
    return re.sub(
        pattern, lambda m: f"{m.group(1)}<{len(m.group(2))} characters>{m.group(3)}", block
    )


def strip_codex_preamble(block: str) -> str:
    """``block`` with Codex's opening sentences (between its ``## Skills`` heading and its
    roots table: its own text) replaced by their length."""
    head, roots = "## Skills\n", "\n### Skill roots"
    if head not in block or roots not in block:
        return block
    start = block.index(head) + len(head)
    end = block.index(roots, start)
    return f"{block[:start]}<{end - start} characters>{block[end:]}"


def capture_claude(bin_dir: Path, home: Path, project: Path) -> str:
    """The listing block of the first request Claude Code sends for ``claude -p hi``."""
    bodies = _record(
        [str(bin_dir / "claude"), "-p", "hi"],
        project,
        _base_env(home),
        lambda port: {
            "ANTHROPIC_API_KEY": "capture",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        },
    )
    for text in (t for body in bodies[:1] for t in _strings(body)):
        block = claude_block(text)
        if block is not None:
            return block
    raise AssertionError(f"no skills listing in {len(bodies)} captured request(s)")


def capture_codex(bin_dir: Path, home: Path, project: Path) -> str:
    """The ``<skills_instructions>`` message of the first request ``codex exec hi`` sends
    through a provider on loopback (Codex ignores ``OPENAI_BASE_URL``)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    config = codex_home / "config.toml"
    original = config.read_text() if config.exists() else ""

    def provider(port: int) -> dict[str, str]:
        config.write_text(
            'model_provider = "capture"\n'
            + original
            + "\n[model_providers.capture]\n"
            + 'name = "capture"\n'
            + f'base_url = "http://127.0.0.1:{port}/v1"\n'
            + 'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
            + "supports_websockets = false\n"
        )
        return {"CODEX_HOME": str(codex_home)}

    try:
        bodies = _record(
            [str(bin_dir / "codex"), "exec", "--skip-git-repo-check", "hi"],
            project,
            _base_env(home),
            provider,
        )
    finally:
        config.write_text(original)
    for text in (t for body in bodies[:1] for t in _strings(body)):
        block = codex_block(text)
        if block is not None:
            return block
    raise AssertionError(f"no skills listing in {len(bodies)} captured request(s)")


def main(argv: list[str]) -> None:
    """Rebuild each fixture and store what each installed agent sent for it; with ``--one
    AGENT BIN_DIR HOME PROJECT``, print the block the agent sends for that tree instead."""
    if argv[:1] == ["--one"]:
        agent, bin_dir, home, project = argv[1:5]
        capture = capture_claude if agent == "claude-code" else capture_codex
        sys.stdout.write(capture(Path(bin_dir), Path(home), Path(project)))
        return
    from skillsd.core.listing.agent_listing import CLAUDE_CODE_BUNDLED
    from tests.listing.fixtures import FIXTURES, build

    claude_bin, codex_bin = Path(argv[0]), Path(argv[1])
    wanted = argv[2:] or list(FIXTURES)
    for name in wanted:
        for agent, capture, bin_dir in (
            ("claude-code", capture_claude, claude_bin),
            ("codex", capture_codex, codex_bin),
        ):
            if not (bin_dir / ("claude" if agent == "claude-code" else "codex")).exists():
                continue
            with tempfile.TemporaryDirectory(prefix="listing-") as base:
                home, project = build(name, Path(base))
                block = capture(bin_dir, home, project)
                if agent == "claude-code":
                    block = strip_bundled(block, [b.name for b in CLAUDE_CODE_BUNDLED])
                else:
                    block = strip_codex_system(block, str(home / ".codex/skills/.system"))
                    block = strip_codex_preamble(block)
                # Paths of the throwaway tree are stored relative to it.
                block = block.replace(base, "$FIXTURE")
            out = CAPTURED / agent / f"{name}.txt"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(block)
            print(agent, name, len(block), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
