"""JSON-RPC 2.0 conformance vectors (``jsonrpc_vectors.json``, adapted from the specification's
own examples) replayed against real daemons over stdio and over the Unix socket.

Each vector's lines are sent, then the input is closed (stdin EOF / socket half-close), so the
complete output is exactly what the daemon answered: nothing more can hide behind a timeout.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support import daemons as h
from tests.support.json_equality import same

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("jsonrpc_vectors.json")).read_text(encoding="utf-8")
)
NAMES = [v["name"] for v in VECTORS]


def _payload(vector: dict[str, Any]) -> bytes:
    return b"".join(line.encode() + b"\n" for line in vector["send"])


def matches(expected: Any, actual: Any) -> bool:
    """Parsed-JSON equality, except: batches compare as multisets, and an expected error may
    give ``messageContains`` instead of the exact message (or leave the message out)."""
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return False
        remaining = list(actual)
        for item in expected:
            hit = next((a for a in remaining if matches(item, a)), None)
            if hit is None:
                return False
            remaining.remove(hit)
        return True
    if isinstance(expected, dict) and "error" in expected:
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return False
        if actual["id"] != expected["id"] or actual["jsonrpc"] != "2.0":
            return False
        want, got = expected["error"], actual["error"]
        if got.get("code") != want["code"] or not isinstance(got.get("message"), str):
            return False
        if "message" in want and got["message"] != want["message"]:
            return False
        if "messageContains" in want and want["messageContains"] not in got["message"]:
            return False
        return same(want.get("data"), got.get("data"))
    return same(expected, actual)


def check(vector: dict[str, Any], output: bytes) -> None:
    actual = [json.loads(line) for line in output.splitlines()]
    expected = vector["expect"]
    assert len(actual) == len(expected), f"{vector['name']}: got {actual}"
    for want, got in zip(expected, actual, strict=True):
        assert matches(want, got), f"{vector['name']}:\n expected {want}\n got      {got}"


def test_matcher_is_strict_enough() -> None:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "x"}}
    assert matches({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600}}, error)
    assert not matches({"jsonrpc": "2.0", "id": 2, "error": {"code": -32600}}, error)
    assert not matches({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}, error)
    assert not matches({"jsonrpc": "2.0", "id": 1, "result": {}}, error)
    assert matches([1, 2], [2, 1]) and not matches([1, 1], [1, 2])
    assert not matches({"a": [1]}, {"a": [True]})
    assert not matches({"result": 0}, {"result": False})


# -- stdio: one daemon process per vector, all started at once -------------------------------


@pytest.fixture(scope="module")
def stdio_outputs() -> dict[str, tuple[bytes, int]]:
    def replay(vector: dict[str, Any]) -> tuple[bytes, int]:
        proc = subprocess.Popen(
            h.skillsd("serve"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=h.env(),
        )
        try:
            out, _ = proc.communicate(_payload(vector), timeout=h.TIMEOUT)
        finally:
            h.stop(proc)
        return out, proc.returncode

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(replay, VECTORS))
    return dict(zip(NAMES, results, strict=True))


@pytest.mark.process
@pytest.mark.xdist_group("serial")
@pytest.mark.parametrize("vector", VECTORS, ids=NAMES)
def test_vector_over_stdio(vector: dict[str, Any], stdio_outputs: dict[str, Any]) -> None:
    output, status = stdio_outputs[vector["name"]]
    assert status == 0
    check(vector, output)


# -- socket: one daemon, one connection per vector -------------------------------------------


@pytest.fixture(scope="module")
def socket_path() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="skv-") as tmp:
        runtime = Path(tmp) / "run"
        with h.socket_daemon(None, runtime):
            yield runtime / "skillsd.sock"


@pytest.mark.process
@pytest.mark.parametrize("vector", VECTORS, ids=NAMES)
def test_vector_over_socket(vector: dict[str, Any], socket_path: Path) -> None:
    client = h.SocketClient(socket_path)
    try:
        client.send(_payload(vector))
        client.half_close()
        output = client.reader.until_eof()
    finally:
        client.close()
    check(vector, output)
