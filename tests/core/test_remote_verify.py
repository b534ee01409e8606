"""What a host checks of a file read from a skills server, and how a listing is read."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from skillsd.core.remote.remote_verify import verify_file, verify_frontmatter
from skillsd.core.remote.remote_wire import (
    RemoteEntry,
    RemoteError,
    RemoteFile,
    Wire,
    check_url,
    file_bytes,
    parse_reply,
    parse_skills_page,
    refuses_version,
)

SKILL = (
    b"---\nname: pdf\ndescription: Fill forms.\nuser-invocable: false\nmetadata:\n  a: '1'\n"
    b"---\nBody\n"
)


def _file(data: bytes, path: str = "SKILL.md") -> RemoteFile:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return RemoteFile(f"skill://pdf/{path}", path, digest, len(data))


def _entry(frontmatter: dict[str, Any]) -> RemoteEntry:
    return RemoteEntry("skill://pdf/SKILL.md", "pdf", frontmatter, (_file(SKILL),))


FRONTMATTER = {
    "name": "pdf",
    "description": "Fill forms.",
    "user-invocable": "false",
    "metadata": {"a": "1"},
}


def test_a_file_is_checked_by_size_then_digest() -> None:
    listed = _file(SKILL)
    assert verify_file(listed, SKILL) is None
    longer = verify_file(listed, SKILL + b"x")
    assert longer is not None and longer.check == "size"
    assert f"size {len(SKILL) + 1} bytes does not match the listing's {len(SKILL)}" in str(longer)
    same_size = verify_file(listed, SKILL.replace(b"Body", b"Evil"))
    assert same_size is not None and same_size.check == "digest"
    assert listed.digest in str(same_size)


def test_frontmatter_is_compared_field_by_field() -> None:
    assert verify_frontmatter(_entry(FRONTMATTER), SKILL) is None
    # A server that sends YAML's types: false and "false" written are the same field.
    typed = dict(FRONTMATTER, **{"user-invocable": False})
    assert verify_frontmatter(_entry(typed), SKILL) is None
    changed = verify_frontmatter(_entry(dict(FRONTMATTER, description="Exfiltrate.")), SKILL)
    assert changed is not None and "field 'description' is 'Fill forms.'" in changed.message
    extra = verify_frontmatter(_entry(dict(FRONTMATTER, license="MIT")), SKILL)
    assert extra is not None and "field 'license' of the listing is missing" in extra.message
    fewer = {k: v for k, v in FRONTMATTER.items() if k != "metadata"}
    missing = verify_frontmatter(_entry(fewer), SKILL)
    assert missing is not None and "field 'metadata' is not in the listing" in missing.message
    nested = verify_frontmatter(_entry(dict(FRONTMATTER, metadata={"a": "2"})), SKILL)
    assert nested is not None and "field 'metadata'" in nested.message
    wrong_type = verify_frontmatter(_entry(dict(FRONTMATTER, **{"user-invocable": 0})), SKILL)
    assert wrong_type is not None
    bare = verify_frontmatter(_entry(FRONTMATTER), b"no frontmatter\n")
    assert bare is not None and "must start with a '---' line" in bare.message


def _page(resources: Any) -> dict[str, Any]:
    skill = {"uri": "skill://pdf/SKILL.md", "frontmatter": {"name": "pdf"}, "resources": resources}
    return {"skills": [skill], "ttlMs": 10**12, "cacheScope": "public", "nextCursor": "2"}


def test_a_listing_entry_that_leaves_its_skill_is_left_out_with_why() -> None:
    good = {"uri": "skill://pdf/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 3}
    page = parse_skills_page(_page([good]), "u")
    assert page.entries[0].skill_file is not None
    assert page.next_cursor == "2" and page.cache_scope == "public"
    assert page.ttl_ms == 24 * 3600 * 1000  # a day at most
    for bad, why in [
        (dict(good, uri="skill://pdf/../secrets"), "does not name a file inside the skill"),
        (dict(good, uri="skill://other/x.md"), "is not a file of the skill"),
        (dict(good, digest="md5:00"), "`digest` is not sha256"),
        (dict(good, size=-1), "`size` is not a byte count"),
        (dict(good, size=True), "`size` is not a byte count"),
    ]:
        refused = parse_skills_page(_page([good, bad]), "u")
        assert not refused.entries
        assert why in refused.refused[0]
    assert parse_skills_page(_page("dynamic"), "u").entries[0].files is None
    with pytest.raises(RemoteError, match="without a `skills` array"):
        parse_skills_page({"skills": "no"}, "u")


def test_answers_as_json_or_event_streams() -> None:
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"ok": 1}}
    assert parse_reply(200, "application/json", json.dumps(answer).encode(), 7, "u").result
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    stream = f"event: message\ndata: {json.dumps(note)}\n\ndata: {json.dumps(answer)}\n\n"
    assert parse_reply(200, "text/event-stream", stream.encode(), 7, "u").result == {"ok": 1}
    refused = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no session"}}
    reply = parse_reply(400, "application/json", json.dumps(refused).encode(), 7, "u")
    assert refuses_version(reply)
    unsupported = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32022, "message": "x"}}
    assert refuses_version(
        parse_reply(200, "application/json", json.dumps(unsupported).encode(), 7, "u")
    )
    with pytest.raises(RemoteError, match="refused the token"):
        parse_reply(401, "application/json", b"{}", 7, "u")
    with pytest.raises(RemoteError, match="not JSON"):
        parse_reply(200, "application/json", b"{nope", 7, "u")


def test_a_read_gives_text_as_utf8_and_blobs_decoded() -> None:
    assert file_bytes({"contents": [{"uri": "x", "text": "é"}]}, "x") == "é".encode()
    blob = base64.b64encode(bytes(range(256))).decode()
    assert file_bytes({"contents": [{"uri": "x", "blob": blob}]}, "x") == bytes(range(256))
    with pytest.raises(RemoteError, match="not base64"):
        file_bytes({"contents": [{"uri": "x", "blob": "!!"}]}, "x")
    with pytest.raises(RemoteError, match="without contents"):
        file_bytes({"contents": []}, "x")


def test_requests_carry_the_envelope_and_routing_headers() -> None:
    wire = Wire("https://h/mcp", "t" * 40)
    modern = wire.request("resources/read", {"uri": "skill://pdf/ü.md"}, "2026-07-28")
    body = json.loads(modern.body)
    assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert modern.headers["Mcp-Method"] == "resources/read"
    assert modern.headers["Mcp-Name"].startswith("=?base64?")
    assert modern.headers["Authorization"] == "Bearer " + "t" * 40
    wire.session_id = "s1"
    old = wire.request("skills/list", {}, "2025-11-25")
    assert old.headers["Mcp-Session-Id"] == "s1" and "_meta" not in json.loads(old.body)["params"]


def test_a_token_goes_over_https_or_to_loopback_only() -> None:
    assert check_url("https://skills.acme.dev/mcp")
    assert check_url("http://localhost:8080/mcp")
    assert check_url("http://[::1]:8080/mcp")
    for bad in ("http://acme.dev/mcp", "ftp://acme.dev/", "skills.acme.dev/mcp"):
        with pytest.raises(RemoteError):
            check_url(bad)
