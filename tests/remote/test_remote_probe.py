"""``skillsd remote probe`` as a process: against a real ``skillsd mcp --http`` (token from a
private file), against a server that speaks only the 2025-11-25 handshake, and against servers
that are gone or silent."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.remote.fake_skills_server import SESSION, FakeServer, entry, serving
from tests.support.mcp_http import TOKEN, server

pytestmark = [pytest.mark.process]

SKILLSD = Path(sys.executable).parent / "skillsd"


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLSD), "remote", "probe", *args], capture_output=True, text=True, timeout=60
    )


def token_file(tmp: Path, mode: int = 0o600) -> Path:
    path = tmp / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(mode)
    return path


def test_probe_lists_without_reading_then_loads_every_file_verified(
    tree: dict[str, Path],
) -> None:
    token = token_file(tree["tmp"])
    with server(tree) as (_proc, url):
        listed = probe("--token-file", str(token), url)
        loaded = probe("--token-file", str(token), "--load-all", url)
        one = probe("--token-file", str(token), "--load", "fix-issue", url)
    assert listed.returncode == 0, listed.stderr
    assert "protocol 2026-07-28, 2 skills" in listed.stdout
    assert "fix-issue  (2 files)" in listed.stdout
    assert "verified" not in listed.stdout
    assert loaded.returncode == 0, loaded.stderr
    assert "verified fix-issue/SKILL.md" in loaded.stdout
    assert "verified fix-issue/assets/logo.bin (256 bytes, sha256:" in loaded.stdout
    assert "loaded api-conventions: 1 file verified" in loaded.stdout
    assert "refused" not in loaded.stdout
    assert "loaded fix-issue: 2 files verified" in one.stdout
    assert "api-conventions/SKILL.md" not in one.stdout


def test_a_token_file_others_can_read_is_refused_before_anything_is_sent(
    tree: dict[str, Path],
) -> None:
    token = token_file(tree["tmp"], 0o644)
    done = probe("--token-file", str(token), "http://127.0.0.1:9/mcp")
    assert done.returncode == 2
    assert "readable by group or others (mode 0644)" in done.stderr
    assert f"chmod 600 {token}" in done.stderr


def test_a_wrong_token_is_said_plainly(tree: dict[str, Path]) -> None:
    wrong = tree["tmp"] / "wrong"
    wrong.write_text("w" * 40)
    wrong.chmod(0o600)
    with server(tree) as (_proc, url):
        done = probe("--token-file", str(wrong), url)
    assert done.returncode == 1
    assert "HTTP 401: the server refused the token" in done.stderr


def test_plain_http_to_another_host_is_refused() -> None:
    done = probe("http://skills.example.com/mcp")
    assert done.returncode == 2
    assert "plain http is only allowed on a loopback address" in done.stderr


def _files() -> dict[str, dict[str, bytes]]:
    return {
        "deploy": {
            "SKILL.md": b"---\nname: deploy\ndescription: Ship it.\nuser-invocable: false\n"
            b"---\n\nGo.\n",
            "scripts/run.sh": b"echo run\n",
        },
        "review": {"SKILL.md": b"---\nname: review\ndescription: Review it.\n---\n\nLook.\n"},
    }


def _fake(files: dict[str, dict[str, bytes]]) -> FakeServer:
    fake = FakeServer(token=TOKEN)
    for name, skill in files.items():
        # The listing sends typed YAML (false, not "false"), as servers other than skillsd do.
        frontmatter: dict[str, object] = {"name": name, "description": f"{name.title()} it."}
        if name == "deploy":
            frontmatter = {"name": "deploy", "description": "Ship it.", "user-invocable": False}
        fake.listing.append(entry(name, skill, frontmatter))
        for path, data in skill.items():
            fake.files[f"skill://{name}/{path}"] = data
    return fake


def test_a_server_of_the_handshake_era_is_spoken_to_in_2025_11_25(tmp_path: Path) -> None:
    token = token_file(tmp_path)
    with serving(_fake(_files())) as fake:
        done = probe("--token-file", str(token), "--load-all", fake.url)
    assert done.returncode == 0, done.stderr
    assert "protocol 2025-11-25, 2 skills" in done.stdout  # two pages of one
    assert "loaded deploy: 2 files verified" in done.stdout
    assert "loaded review: 1 file verified" in done.stdout
    methods = [m for _verb, m, _h in fake.seen]
    assert methods[:3] == ["skills/list", "initialize", "notifications/initialized"]
    after = fake.seen[3:]
    assert all(h.get("Mcp-Session-Id") == SESSION for _v, _m, h in after)
    assert all(h.get("MCP-Protocol-Version") == "2025-11-25" for _v, _m, h in after)
    assert after[-1][0] == "DELETE"  # the session is ended


def test_a_stale_digest_refuses_the_skill_and_reads_nothing_after(tmp_path: Path) -> None:
    files = _files()
    fake = _fake(files)
    fake.files["skill://deploy/SKILL.md"] = files["deploy"]["SKILL.md"].replace(b"Go.", b"Rm.")
    with serving(fake):
        done = probe("--load", "deploy", fake.url, "--token-file", str(token_file(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "refused deploy: SKILL.md: digest sha256:" in done.stdout
    assert "does not match the listing's sha256:" in done.stdout
    reads = [h.get("Mcp-Name") for _v, m, h in fake.seen if m == "resources/read"]
    assert len(reads) == 1  # scripts/run.sh was never asked for


def test_a_server_that_is_gone_costs_one_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = probe(f"http://127.0.0.1:{port}/mcp")
    assert done.returncode == 1
    assert "cannot reach the server" in done.stderr


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        sock.close()


def test_a_server_that_never_answers_costs_one_timeout(silent: str) -> None:
    done = probe("--timeout", "1", silent)
    assert done.returncode == 1
    assert "no answer within 1 s" in done.stderr
