"""What skillsd is compared with: plain read loops, the skills-ref library, and, for ``ping``, the
MCP Python SDK's stdio server and an echo server that is the floor of a pipe round trip."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from bench.contender import BenchUnavailable, Outcome, Prepared
from bench.corpus import SKILL_FILE, Corpus, walk_skill_dirs
from bench.stdio_peer import CLIENT_INFO, StdioPeer, spawn_isolated

BENCH_DIR = Path(__file__).resolve().parent
FIRST_READ = 4096
MAX_FRONTMATTER = 64 * 1024


def prepare_walk(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """``os.walk`` finding every SKILL.md: the floor every contender pays."""

    def run() -> Outcome:
        return Outcome.counted(len(walk_skill_dirs(corpus.root)))

    return Prepared(run)


def prepare_a(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(a) walk + read the first 4 KiB of every SKILL.md, nothing else."""

    def run() -> Outcome:
        count = 0
        for directory in walk_skill_dirs(corpus.root):
            with open(os.path.join(directory, SKILL_FILE), "rb") as fh:
                fh.read(FIRST_READ)
            count += 1
        return Outcome.counted(count)

    return Prepared(run)


# A fence line: "---" plus optional trailing blanks, alone on its line.
_OPENING = re.compile(rb"---[ \t]*\r?\n")
_CLOSING = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)


def frontmatter_bytes(data: bytes) -> bytes | None:
    """The frontmatter of a SKILL.md prefix, or None when it is absent or not closed in ``data``."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    opening = _OPENING.match(data)
    if opening is None:
        return None
    closing = _CLOSING.search(data, opening.end())
    return None if closing is None else data[opening.end() : closing.start()]


def prepare_b(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(b) walk + read 4 KiB (more only when the frontmatter is longer) + CBaseLoader."""
    loader = yaml.CBaseLoader

    def run() -> Outcome:
        ok = failed = 0
        for directory in walk_skill_dirs(corpus.root):
            with open(os.path.join(directory, SKILL_FILE), "rb") as fh:
                data = fh.read(FIRST_READ)
                fm = frontmatter_bytes(data)
                if fm is None and len(data) == FIRST_READ:
                    fm = frontmatter_bytes(data + fh.read(MAX_FRONTMATTER - FIRST_READ))
            if fm is None:
                failed += 1
                continue
            try:
                value = yaml.load(fm, Loader=loader)  # CBaseLoader: every scalar a string
            except yaml.YAMLError:
                failed += 1
                continue
            if isinstance(value, dict):
                ok += 1
            else:
                failed += 1
        return Outcome.counted(ok, failed)

    return Prepared(run)


def prepare_c(corpus: Corpus, opts: argparse.Namespace) -> Prepared:
    """(c) ``skills_ref.read_properties`` on every skill dir (or every k-th, see --c-subset).

    Full run: walk + read_properties, timed together. Subset run: read_properties over every
    k-th skill directory (found outside the timing), and the report gives ``walk median +
    subset median * N / subset size``: the walk is paid once and the per-skill cost, which does
    not depend on the other skills, is extrapolated linearly.
    """
    from skills_ref import SkillError, read_properties  # type: ignore[import-untyped]

    def props(dirs: Sequence[str]) -> Outcome:
        ok = failed = 0
        for directory in dirs:
            try:
                read_properties(Path(directory))
                ok += 1
            except (SkillError, ValueError):  # ValueError covers UnicodeDecodeError
                failed += 1
        return Outcome.counted(ok, failed)

    limit = opts.c_subset
    if limit <= 0 or corpus.n <= limit:
        return Prepared(lambda: props(walk_skill_dirs(corpus.root)))
    dirs = walk_skill_dirs(corpus.root)
    step = -(-len(dirs) // limit)  # ceil: at most `limit` dirs, spread over the whole tree
    subset = dirs[::step]
    return Prepared(lambda: props(subset), scale=len(dirs) / len(subset))


# -- ping servers ----------------------------------------------------------------------------

#: What the MCP server's ``initialize`` needs beyond what skillsd's does.
#: The MCP client side of the handshake (the ping baseline and `skillsd mcp`).
MCP_INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT_INFO}

# The floor: a server that answers every line it reads with a fixed pong, no JSON parsing, no
# event loop. Nothing speaking JSON-RPC over the same pipes can be faster.
_ECHO_SERVER = """
import os
while data := os.read(0, 65536):
    os.write(1, b'{"jsonrpc":"2.0","id":0,"result":{}}\\n' * data.count(b"\\n"))
"""


def start_mcp_ping_server(corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    """The MCP SDK's low-level stdio server (``bench/mcp_ping_server.py``), after the MCP
    ``initialize`` / ``notifications/initialized`` handshake and one ``ping``."""
    try:
        import mcp  # noqa: F401  (only to know the server script can run)
    except ImportError:
        raise BenchUnavailable("skipped: pip install mcp") from None
    argv = [sys.executable, str(BENCH_DIR / "mcp_ping_server.py")]
    peer = spawn_isolated(argv, corpus, opts)
    return peer.handshake(MCP_INITIALIZE, "notifications/initialized", ping=True)


def start_echo_floor(corpus: Corpus, opts: argparse.Namespace) -> StdioPeer:
    """The echo server: the pipe round trip nothing can beat (no handshake: it has no state)."""
    return spawn_isolated([sys.executable, "-c", _ECHO_SERVER], corpus, opts)
