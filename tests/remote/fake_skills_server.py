"""A small skills server for the client's tests: it speaks the 2025-11-25 handshake only (a
2026-07-28 request gets the 400 such servers give a request without a session), pages its
listing, answers reads on an event stream, and serves whatever ``files`` and ``listing`` hold
now, so a test can make it lie (a stale digest) or change a file."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SESSION = "fake-session-1"


def entry(name: str, files: dict[str, bytes], frontmatter: dict[str, Any]) -> dict[str, Any]:
    """A listing entry naming ``files`` (path -> bytes) with their digests and sizes."""
    return {
        "uri": f"skill://{name}/SKILL.md",
        "frontmatter": frontmatter,
        "resources": [
            {
                "uri": f"skill://{name}/{path}",
                "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "size": len(data),
            }
            for path, data in files.items()
        ],
    }


@dataclass
class FakeServer:
    #: ``skill://`` URI -> the bytes a read answers.
    files: dict[str, bytes] = field(default_factory=dict)
    listing: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 1
    ttl_ms: int = 0
    token: str | None = None
    #: Every request: (HTTP method, JSON-RPC method or "", headers).
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    url: str = ""


def _handler(fake: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_DELETE(self) -> None:
            fake.seen.append(("DELETE", "", dict(self.headers)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = body.get("method", "")
            fake.seen.append(("POST", method, dict(self.headers)))
            if fake.token and self.headers.get("Authorization") != f"Bearer {fake.token}":
                self._json(
                    401, {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "no"}}
                )
                return
            if method == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}},
                    "serverInfo": {"name": "fake", "version": "1"},
                }
                self._json(
                    200,
                    {"jsonrpc": "2.0", "id": body["id"], "result": result},
                    {"Mcp-Session-Id": SESSION},
                )
                return
            if self.headers.get("Mcp-Session-Id") != SESSION:
                error = {"code": -32000, "message": "Bad Request: no valid session ID"}
                self._json(400, {"jsonrpc": "2.0", "id": None, "error": error})
                return
            if "id" not in body:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if method == "skills/list":
                start = int((body.get("params") or {}).get("cursor") or 0)
                page = fake.listing[start : start + fake.page_size]
                result = {"skills": page, "ttlMs": fake.ttl_ms, "cacheScope": "private"}
                if start + fake.page_size < len(fake.listing):
                    result["nextCursor"] = str(start + fake.page_size)
                self._json(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})
                return
            if method == "resources/read":
                uri = body["params"]["uri"]
                if uri not in fake.files:
                    error = {"code": -32602, "message": "no such resource", "data": {"uri": uri}}
                    self._json(200, {"jsonrpc": "2.0", "id": body["id"], "error": error})
                    return
                text = fake.files[uri].decode()
                result = {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}
                event = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result})
                data = f"event: message\ndata: {event}\n\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            error = {"code": -32601, "message": "Method not found"}
            self._json(200, {"jsonrpc": "2.0", "id": body["id"], "error": error})

    return Handler


@contextmanager
def serving(fake: FakeServer) -> Iterator[FakeServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    httpd.daemon_threads = True
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
