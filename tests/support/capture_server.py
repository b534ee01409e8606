"""A stand-in for an agent's model API on a loopback port: it keeps each request body an agent
sends its model (what the real-agent tests check) and answers like the messages API."""

from __future__ import annotations

import http.server
import json
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["BIN", "Capture", "CaptureServer", "strings"]

#: The folder of the agents' commands (``SKILLSD_AGENTS_BIN``); empty: the tests are skipped.
BIN = os.environ.get("SKILLSD_AGENTS_BIN", "")

#: A minimal streamed answer of the messages API: one text block, then the end of the turn.
_STREAM: list[dict[str, Any]] = [
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
            body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _STREAM)
        else:
            kind = "application/json"
            text = [{"type": "text", "text": "ok"}]
            body = json.dumps({**_STREAM[0]["message"], "content": text, "stop_reason": "end_turn"})
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class CaptureServer(http.server.ThreadingHTTPServer):
    bodies: list[Any]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
