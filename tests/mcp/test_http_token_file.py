"""``skillsd mcp --http --token-file FILE`` takes a secret only from a private file: one readable
or writable by group or others, or holding a token under 32 characters, is refused with exit 2
naming the file and why; a FIFO is refused without waiting for a writer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.daemons import free_port
from tests.support.mcp_http import INIT, TOKEN, http_env, post, server

pytestmark = pytest.mark.process

STRONG = "file-token-" + "k" * 32


def _refused(tree: dict[str, Path], *args: str, env: dict[str, str] | None = None) -> str:
    """Start ``skillsd mcp --http`` expecting exit 2; its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{free_port()}", *args],
        cwd=tree["project"],
        env=env if env is not None else http_env(tree),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2, done.stderr
    return done.stderr


def _token_file(tree: dict[str, Path], text: str, mode: int) -> Path:
    path = tree["tmp"] / "mcp.token"
    path.write_text(text + "\n")
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize(
    ("mode", "why"),
    [(0o644, "readable"), (0o640, "readable"), (0o620, "writable")],
    ids=["0644", "0640", "0620"],
)
def test_a_token_file_open_to_others_is_refused(tree: dict[str, Path], mode: int, why: str) -> None:
    path = _token_file(tree, STRONG, mode)
    said = _refused(tree, "--token-file", os.fspath(path))
    assert os.fspath(path) in said and f"{why} by group or others" in said, said
    assert "chmod 600" in said, said


def test_a_short_token_is_refused(tree: dict[str, Path]) -> None:
    path = _token_file(tree, "0123456789", 0o600)
    said = _refused(tree, "--token-file", os.fspath(path))
    assert os.fspath(path) in said, said
    assert "10 characters" in said and "at least 32" in said, said


def test_a_short_token_in_the_environment_is_refused(tree: dict[str, Path]) -> None:
    said = _refused(tree, env={**http_env(tree), "SKILLSD_MCP_TOKEN": "short"})
    assert "$SKILLSD_MCP_TOKEN" in said and "at least 32" in said, said


def test_a_fifo_is_refused_without_waiting(tree: dict[str, Path]) -> None:
    fifo = tree["tmp"] / "mcp.token"
    os.mkfifo(fifo, 0o600)
    said = _refused(tree, "--token-file", os.fspath(fifo))
    assert os.fspath(fifo) in said and "not a regular file" in said, said


def test_an_oversized_or_multi_word_token_file_is_refused(tree: dict[str, Path]) -> None:
    path = _token_file(tree, "x" * 5000, 0o600)
    assert "4096 bytes" in _refused(tree, "--token-file", os.fspath(path))
    path = _token_file(tree, f"{STRONG} {STRONG}", 0o600)
    assert "printable ASCII" in _refused(tree, "--token-file", os.fspath(path))


def test_a_private_token_file_is_the_token(tree: dict[str, Path]) -> None:
    path = _token_file(tree, STRONG, 0o600)
    with server(tree, "--token-file", os.fspath(path)) as (proc, url):
        assert post(url, INIT, token=STRONG).status_code == 200
        assert post(url, INIT, token=TOKEN).status_code == 401  # not $SKILLSD_MCP_TOKEN's
        proc.terminate()
        proc.wait(10)
        said = proc.stderr.read().decode() if proc.stderr else ""
        assert os.fspath(path) in said, said
