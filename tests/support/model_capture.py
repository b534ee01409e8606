"""A stand-in for a model's API on loopback: it keeps each request body an agent sends and
answers like the messages API, so a test sees exactly what the agent shows its model."""

from __future__ import annotations

import http.server
import json
import os
from collections.abc import Iterator
from typing import Any

#: The folder holding the agents' commands (``claude``, ``codex``...): tests that run a real
#: agent are skipped without it.
BIN = os.environ.get("SKILLSD_AGENTS_BIN", "")

#: A minimal streamed answer of the messages API: one text block, then the end of the turn.
STREAM: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_capture",
            "type": "message",
            "role": "assistant",
            "model": "capture",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 1},
    },
    {"type": "message_stop"},
]


class Capture(http.server.BaseHTTPRequestHandler):
    """Keeps each request body on the server's ``bodies`` and answers like the messages API."""

    protocol_version = "HTTP/1.1"
    server: CaptureServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = json.loads(raw or b"{}")
        self.server.bodies.append(request)
        if request.get("stream"):
            kind = "text/event-stream"
            body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in STREAM)
        else:
            kind = "application/json"
            text = [{"type": "text", "text": "ok"}]
            body = json.dumps({**STREAM[0]["message"], "content": text, "stop_reason": "end_turn"})
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class CaptureServer(http.server.ThreadingHTTPServer):
    bodies: list[Any]


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
