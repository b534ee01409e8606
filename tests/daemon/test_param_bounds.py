"""Params and config values out of bounds are refused at the boundary, naming the field, and the
daemon keeps serving (docs/security.md, issue 13 items 1, 6, 11, 13)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.sessions import SessionStore
from tests.support.client import Client
from tests.support.daemons import SocketClient, StdioDaemon, request, socket_daemon
from tests.support.env import daemon_env

INVALID_PARAMS = -32602


def refused(client: Client, method: str, params: dict[str, Any], field: str) -> str:
    reply = client.raw(method, params)
    assert reply.get("error", {}).get("code") == INVALID_PARAMS, reply
    message: str = reply["error"]["message"]
    assert field in message, message
    assert "result" in client.raw("ping")  # and the daemon keeps serving
    return message


def test_nul_out_of_range_and_too_long_params_are_refused_naming_the_field(
    client: Client,
) -> None:
    cwd = client.cwd
    refused(client, "skills.list", {"cwd": cwd + "\u0000x"}, "$.cwd")
    refused(client, "skills.load", {"cwd": cwd, "path": "a\u0000b"}, "$.path")
    refused(
        client, "skills.readFile", {"cwd": cwd, "name": "pdf-forms", "file": "a\u0000"}, "$.file"
    )
    refused(client, "initialize", {"processId": 2**40}, "$.processId")
    refused(client, "initialize", {"processId": 0}, "$.processId")
    refused(client, "session.open", {"sessionId": "s" * 257}, "$.sessionId")
    refused(client, "skills.search", {"cwd": cwd, "query": "a" * 1001}, "$.query")
    # 256 characters and 1 000 characters are fine.
    assert "result" in client.raw("session.open", {"sessionId": "s" * 256})
    assert "result" in client.raw("skills.search", {"cwd": cwd, "query": "pdf " * 250})
    # The model's search says what was wrong in its own words.
    tool = client.ok("tools.call", name="skill_search", arguments={"query": "b" * 1001})
    assert tool["isError"] is True and "1000" in tool["content"]


def test_a_nul_extra_root_is_refused_and_breaks_nothing_after(client: Client) -> None:
    refused(client, "initialize", {"extraRoots": ["/tmp/\u0000"]}, "$.extraRoots[0]")
    assert {s["name"] for s in client.ok("skills.list")["skills"]} >= {"pdf-forms"}
    refused(client, "skills.list", {"cwd": client.cwd, "extraRoots": ["x\u0000"]}, "$.extraRoots")


@pytest.mark.process
def test_the_cli_refuses_a_query_over_the_limit(tree: dict[str, Path]) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "skillsd", "search", "q" * 1001],
        cwd=tree["project"],
        env=daemon_env(tree),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "longer than 1000 characters" in out.stderr


@pytest.mark.process
def test_config_values_out_of_range_make_the_config_invalid(tree: dict[str, Path]) -> None:
    config = tree["project"] / ".agents" / "skillsd.toml"
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, tree["project"])
        for text, key in (
            ("[discovery]\nmaxDepth = -1\n", "discovery.maxDepth"),
            ("[prompt]\nmaxBytes = -5\n", "prompt.maxBytes"),
            ("[search]\ndefaultLimit = 0\n", "search.defaultLimit"),
        ):
            config.write_text(text)
            error = client.err("skills.list")
            assert error["data"]["kind"] == "invalid_config", error
            assert key in error["message"] and os.fspath(config) in error["message"]
        config.write_text("[discovery]\nmaxDepth = 3\n")
        assert client.ok("skills.list")["skills"]
    finally:
        daemon.kill()


def test_sessions_are_capped_dropping_the_least_recently_used_unheld_one() -> None:
    store = SessionStore(cap=3)
    for sid in ("a", "b", "c"):
        store.open(sid, "/")
    store.hold("a")  # a live connection uses it
    store.get("b")  # b is now more recent than c
    store.open("d", "/")
    assert sorted(store._sessions) == ["a", "b", "d"]  # c went: oldest not held
    store.open("e", "/")
    assert sorted(store._sessions) == ["a", "d", "e"]
    store.hold("d")
    store.hold("e")
    # Every session is held: a live client never loses its session, the new one is refused.
    with pytest.raises(SkillsdError) as refused:
        store.open("f", "/")
    assert refused.value.kind == "too_large" and "3 sessions" in refused.value.message
    assert sorted(store._sessions) == ["a", "d", "e"]
    store.release("d")
    store.open("g", "/")
    assert "d" not in store._sessions and len(store) == 3


@pytest.mark.process
def test_a_flood_of_sessions_never_takes_another_clients_session(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "d.sock"
    with socket_daemon(path, None, environ=daemon_env(tree)):
        with closing(SocketClient(path)) as mine, closing(SocketClient(path)) as flood:
            opened = mine.call(1, "session.open", {"sessionId": "mine"})
            assert opened["result"]["sessionId"] == "mine"
            total = 4096 + 20
            flood.send(
                b"".join(
                    request(f"o{n}", "session.open", {"sessionId": f"s-{n}"}) for n in range(total)
                )
            )
            refused = []
            for _ in range(total):
                message = flood.reader.message()
                if "error" in message:
                    refused.append(message["error"])
            # 4 095 fit beside the other client's; the rest are refused, naming the limit.
            assert len(refused) == total - 4095, len(refused)
            assert {e["code"] for e in refused} == {1008}
            assert "4096 sessions" in refused[0]["message"]
            still = mine.call(2, "context.inspect", {"sessionId": "mine"})
            assert "result" in still, still
        # Both clients gone: their sessions may be dropped again, new ones fit.
        with closing(SocketClient(path)) as later:
            assert "result" in later.call(3, "session.open", {})


def test_a_file_swapped_for_a_symlink_during_read_file_is_refused_not_an_internal_error(
    client: Client, tree: dict[str, Path]
) -> None:
    target = tree["pdf"] / "references" / "fields.md"
    outside = tree["tmp"] / "outside.md"
    outside.write_text("secret\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            link = target.with_suffix(".tmp")
            link.unlink(missing_ok=True)
            link.symlink_to(outside)
            os.replace(link, target)
            target.unlink()
            target.write_text("# Fields\n")

    swapper = threading.Thread(target=swap)
    swapper.start()
    kinds: set[str] = set()
    try:
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            reply = client.raw(
                "skills.readFile",
                {"cwd": client.cwd, "name": "pdf-forms", "file": "references/fields.md"},
            )
            if "error" in reply:
                assert reply["error"]["code"] != -32603, reply
                kinds.add(reply["error"]["data"]["kind"])
            else:
                assert reply["result"]["content"] != "secret\n"
    finally:
        stop.set()
        swapper.join()
    assert kinds <= {"path_not_allowed", "resource_not_found"}
