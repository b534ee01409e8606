"""The remotes' cache and background refresh, in-process: a remote that is down is asked again
with exponential backoff, not at every turn of the loop; a loaded skill whose listing changed
any file (not only ``SKILL.md``) is fetched again; what is served onward of a remote skill is
its remote's listing entry."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from skillsd.core.policy.config import RemoteConfig
from skillsd.runtime import remote_skills
from skillsd.runtime.remote_skills import RemoteSkills, retry_delay
from skillsd.runtime.remote_store import RemoteStore, StoredListing
from tests.remote.fake_skills_server import FakeServer, entry, serving
from tests.remote.loopback import team_token
from tests.support.mcp_http import TOKEN

DEPLOY = b"---\nname: deploy\ndescription: Ship the service to production.\n---\n\nRun it.\n"
FRONTMATTER = {"name": "deploy", "description": "Ship the service to production."}


@contextmanager
def closing_server() -> Iterator[tuple[str, list[int]]]:
    """A port that takes each connection and closes it at once, counting them: a remote
    that is down, as seen from skillsd."""
    count = [0]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            count[0] += 1
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", count
    finally:
        done.set()
        thread.join(5)
        listener.close()


class Clock:
    """``time.monotonic`` for the refresh's schedule, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _clocks(clock: Clock) -> SimpleNamespace:
    """The ``time`` the refresh sees: the test's monotonic clock, the wall clock."""
    return SimpleNamespace(monotonic=clock.monotonic, time=time.time)


def test_retry_delay_doubles_from_two_seconds_to_five_minutes() -> None:
    assert [retry_delay(n) for n in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert retry_delay(9) == 300.0
    assert retry_delay(10_000) == 300.0


def test_a_down_remote_is_asked_with_backoff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten simulated minutes of the loop turning every second against a port that closes
    every connection: the remote is asked at t = 0, 2, 6, 14, ... (9 times), not 600."""
    clock = Clock()
    monkeypatch.setattr(remote_skills, "time", _clocks(clock))
    with closing_server() as (url, connections):
        remote = RemoteConfig(name="team", url=url)
        remotes = RemoteSkills(RemoteStore(str(tmp_path / "cache")))

        async def ten_minutes() -> None:
            for _second in range(600):
                await remotes.refresh(remote)
                clock.now += 1.0

        asyncio.run(ten_minutes())
        attempts = connections[0]
    assert remotes.store.state("team").error is not None  # it was asked, and failed
    asked, t, failures = 0, 0.0, 0
    while t < 600:
        asked, failures = asked + 1, failures + 1
        t += retry_delay(failures)
    assert asked == 9
    # One conversation may open a connection per protocol version it tries.
    assert asked <= attempts <= 2 * asked, attempts


def test_backoff_ends_when_the_remote_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(remote_skills, "time", _clocks(clock))
    remote = RemoteConfig(name="team", url="http://127.0.0.1:9/mcp", refresh_seconds=60)
    store = RemoteStore(str(tmp_path / "cache"))
    answers: list[tuple[StoredListing | None, str | None]] = []
    monkeypatch.setattr(store, "try_refresh", lambda _remote: answers.pop(0))
    remotes = RemoteSkills(store)
    listing = StoredListing(remote.url, time.time(), 600_000, "private", "2026-07-28", [])
    waits = []

    async def turns() -> None:
        for answer in [(None, "down"), (None, "down"), (listing, None), (listing, "down")]:
            answers.append(answer)
            await remotes.refresh(remote)
            assert not answers  # it was asked
            waits.append(round(remotes._due["team"] - clock.now))
            clock.now = remotes._due["team"]

    asyncio.run(turns())
    # 2 s, 4 s, then the listing's own lifetime (refreshSeconds), then 2 s again.
    assert waits == [2, 4, 60, 2]


def _team(tmp: Path, ship: bytes) -> tuple[FakeServer, Path]:
    files = {"SKILL.md": DEPLOY, "scripts/ship.sh": ship}
    fake = FakeServer(token=TOKEN)
    fake.listing.append(entry("deploy", files, FRONTMATTER))
    fake.files = {f"skill://deploy/{p}": d for p, d in files.items()}
    token = team_token(tmp)
    return fake, token


def test_a_script_changed_under_an_unchanged_skill_md_is_fetched_again(tmp_path: Path) -> None:
    fake, token = _team(tmp_path, b"echo ship\n")
    with serving(fake):
        remote = RemoteConfig(name="team", url=fake.url, token_file=str(token))
        store = RemoteStore(str(tmp_path / "cache"))
        first = store.load(remote, "deploy")
        assert first.folder is not None
        assert (Path(first.folder) / "scripts" / "ship.sh").read_bytes() == b"echo ship\n"
        # The server's script changes; SKILL.md does not.
        changed = {"SKILL.md": DEPLOY, "scripts/ship.sh": b"echo ship --canary\n"}
        fake.listing[0] = entry("deploy", changed, FRONTMATTER)
        fake.files["skill://deploy/scripts/ship.sh"] = changed["scripts/ship.sh"]
        store.refresh(remote, force=True)
        listed = store.listed_entry("team", fake.url, "deploy")
        assert listed is not None and listed.files is not None
        assert {f.path: f.size for f in listed.files}["scripts/ship.sh"] == len(
            changed["scripts/ship.sh"]
        )
        again = store.load(remote, "deploy")
        assert again.folder is not None
        shipped = (Path(again.folder) / "scripts" / "ship.sh").read_bytes()
        assert shipped == b"echo ship --canary\n"
        # Listed from another URL (the config changed): nothing is said of it.
        assert store.listed_entry("team", fake.url + "/other", "deploy") is None
