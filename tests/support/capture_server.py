"""A stand-in for an agent's model API on a loopback port: it keeps each request body an agent
sends its model (what the real-agent tests check) and answers like the messages API."""

from __future__ import annotations

import http.server
import json
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["BIN", "Capture", "CaptureServer", "stream_text", "strings"]

#: The folder of the agents' commands (``SKILLSD_AGENTS_BIN``); empty: the tests are skipped.
BIN = os.environ.get("SKILLSD_AGENTS_BIN", "")

#: The message a streamed answer starts with (and a plain answer is made from).
_MESSAGE: dict[str, Any] = {
    "id": "msg_capture",
    "type": "message",
    "role": "assistant",
    "model": "capture",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def stream_text(blocks: list[dict[str, Any]], stop: str) -> str:
    """A streamed messages-API answer holding ``blocks``."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": _MESSAGE}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 1},
        }
    )
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


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
            body = stream_text([{"type": "text", "text": "ok"}], "end_turn")
        else:
            kind = "application/json"
            text = [{"type": "text", "text": "ok"}]
            body = json.dumps({**_MESSAGE, "content": text, "stop_reason": "end_turn"})
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
