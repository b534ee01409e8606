"""``skillsd mcp --http`` lets no one else in: a bearer token on every request, a token file only
the user can read, loopback unless told otherwise, only this machine's Host and Origin, bounded
sessions, bodies and memory. Each test replays an attack of the third hostile review, scaled."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.daemons import free_port
from tests.support.env import daemon_env
from tests.support.mcp_http import (
    INIT,
    TOKEN,
    http_env,
    json_reply,
    memory_mib,
    open_session,
    post,
    server,
)
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process


def test_every_request_needs_the_token(tree: dict[str, Path]) -> None:
    with server(tree) as (_proc, url):
        missing = post(url, INIT, token=None)
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert "bearer token" in missing.json()["error"]["message"]
        wrong = post(url, INIT, token=TOKEN[:-1] + "y")
        assert wrong.status_code == 401
        assert post(url, INIT).status_code == 200


def test_a_generated_token_is_in_a_file_only_the_user_reads(tree: dict[str, Path]) -> None:
    runtime = tree["tmp"] / "run"
    env = {**daemon_env(tree), "SKILLSD_RUNTIME_DIR": os.fspath(runtime)}
    env.pop("SKILLSD_MCP_TOKEN", None)
    with server(tree, env=env) as (proc, url):
        files = list(runtime.glob("mcp-*.token"))
        assert len(files) == 1
        token_file = files[0]
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
        token = token_file.read_text().strip()
        assert len(token) >= 43  # 32 random bytes, URL-safe base64
        assert post(url, INIT, token=token).status_code == 200
        assert post(url, INIT, token=None).status_code == 401
        proc.terminate()
        proc.wait(10)
        said = proc.stderr.read().decode() if proc.stderr else ""
        assert url in said and os.fspath(token_file) in said, said


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_another_user_can_neither_call_nor_read_the_token(tree: dict[str, Path]) -> None:
    from tests.hardening.processes import child_as

    runtime = tree["tmp"] / "run"
    env = {**daemon_env(tree), "SKILLSD_RUNTIME_DIR": os.fspath(runtime)}
    env.pop("SKILLSD_MCP_TOKEN", None)
    os.chmod(tree["tmp"], 0o755)
    with server(tree, env=env) as (_proc, url):
        (token_file,) = runtime.glob("mcp-*.token")

        def as_nobody() -> bool:
            try:
                token_file.read_text()
                return False  # readable: a failure
            except PermissionError:
                pass
            return post(url, INIT, token=None).status_code == 401

        with child_as(65534, as_nobody) as refused_everything:
            assert refused_everything


def test_a_reachable_address_needs_allow_remote(tree: dict[str, Path]) -> None:
    port = free_port()
    refused = subprocess.run(
        [sys.executable, "-m", "skillsd", "mcp", "--http", f"0.0.0.0:{port}"],
        cwd=tree["project"],
        env=http_env(tree),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr
    no_auth = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillsd",
            "mcp",
            "--http",
            f"0.0.0.0:{port}",
            "--allow-remote",
            "--no-auth",
        ],
        cwd=tree["project"],
        env=http_env(tree),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert no_auth.returncode == 2 and "loopback" in no_auth.stderr


def test_only_this_machines_host_and_origin_are_accepted(tree: dict[str, Path]) -> None:
    with server(tree) as (_proc, url):
        assert post(url, INIT, Host="evil.example:80").status_code == 421
        assert post(url, INIT, Origin="http://evil.example").status_code == 403
        assert (
            post(url, INIT, Host="localhost:1234", Origin="http://localhost:1234").status_code
            == 200
        )


def test_no_auth_on_loopback_works_with_a_warning(tree: dict[str, Path]) -> None:
    with server(tree, "--no-auth") as (proc, url):
        assert post(url, INIT, token=None).status_code == 200
        proc.terminate()
        proc.wait(10)
        assert "WARNING" in (proc.stderr.read().decode() if proc.stderr else "")


def test_a_body_over_16_mib_is_refused_413(tree: dict[str, Path]) -> None:
    with server(tree) as (_proc, url):
        huge = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "a" * (17 << 20)}}
        assert post(url, huge).status_code == 413


@pytest.mark.slow
@pytest.mark.xdist_group("serial")
def test_sessions_are_capped_and_existing_ones_keep_working(tree: dict[str, Path]) -> None:
    with server(tree) as (_proc, url):
        first = open_session(url)
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda _n: post(url, INIT).status_code, range(255)))
        assert codes.count(200) == 255
        over = post(url, INIT)
        assert over.status_code == 503 and "256" in over.json()["error"]["message"]
        still = post(
            url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **{"Mcp-Session-Id": first}
        )
        assert still.status_code == 200 and "skill_search" in still.text


@pytest.mark.slow
@pytest.mark.xdist_group("serial")
def test_large_reads_at_once_stay_bounded_and_memory_returns(tree: dict[str, Path]) -> None:
    big = write_skill(tree["project"] / ".agents" / "skills", "big-ref", "Has a big reference.")
    (big / "references").mkdir()
    (big / "references" / "large.md").write_text("line of text\n" * ((8 << 20) // 13 - 1))
    (big / "references" / "over.md").write_text("x" * ((8 << 20) + 1))
    with server(tree) as (proc, url):
        session = open_session(url)
        read = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/read",
            "params": {"uri": "skill://big-ref/references/large.md"},
        }
        baseline = memory_mib(proc.pid, "VmRSS:")
        with ThreadPoolExecutor(20) as pool:
            replies = list(
                pool.map(
                    lambda n: post(url, dict(read, id=100 + n), **{"Mcp-Session-Id": session}),
                    range(20),
                )
            )
        assert all(r.status_code == 200 for r in replies)
        assert all(len(json_reply(r)["result"]["contents"][0]["text"]) > 8_000_000 for r in replies)
        peak = memory_mib(proc.pid, "VmHWM:")
        assert peak < 700, peak  # 1 249 MB before: every read built at once
        # The replies' buffers go back to the OS once freed: wait for it, not a fixed time.
        deadline = time.monotonic() + 10
        while (after := memory_mib(proc.pid, "VmRSS:")) >= baseline + 150:
            assert time.monotonic() < deadline, (baseline, after)
            time.sleep(0.1)
        over = post(
            url,
            dict(read, params={"uri": "skill://big-ref/references/over.md"}),
            **{"Mcp-Session-Id": session},
        )
        error = json_reply(over)["error"]
        assert error["code"] == 1008 and "limit" in error["message"]
