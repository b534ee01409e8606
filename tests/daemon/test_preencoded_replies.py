"""A pre-encoded reply (``skills.commands``, sent from its cached encoding in pieces) reads the
same in every framing and inside a batch as a freshly encoded one would."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.env import daemon_env
from tests.support.in_process import InProcessDaemon


def _commands_params(tree: dict[str, Path]) -> dict[str, str]:
    return {"cwd": os.fspath(tree["project"])}


def test_commands_reply_is_the_same_in_lines_batches_and_lsp(tree: dict[str, Path]) -> None:
    params = _commands_params(tree)
    lines = InProcessDaemon(daemon_env(tree))
    try:
        first = lines.call(1, "skills.commands", params)
        again = lines.call(2, "skills.commands", params)  # the cached encoding this time
        assert first["result"]["commands"], first
        assert again["result"] == first["result"] and again["id"] == 2
        batch = [
            {"jsonrpc": "2.0", "id": 3, "method": "skills.commands", "params": params},
            {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        ]
        lines.send(json.dumps(batch).encode() + b"\n")
        replies = {r["id"]: r for r in lines.reader.message()}
        assert replies[3]["result"] == first["result"] and replies[4]["result"] == {}
    finally:
        lines.kill()

    lsp = InProcessDaemon(daemon_env(tree))
    try:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 7, "method": "skills.commands", "params": params}
        ).encode()
        lsp.send(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        header = lsp.reader.read_until(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: "), header
        reply = json.loads(lsp.reader.raw(int(header.split(b":")[1])))
        assert reply["id"] == 7 and reply["result"] == first["result"]
    finally:
        lsp.kill()
