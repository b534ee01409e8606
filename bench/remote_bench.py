"""Remote benchmark: a 1 000-skill skills server (a real ``skillsd mcp --http`` behind a token)
consumed as a ``[[remote]]`` (target: listed from cache under 20 ms, refreshed in the
background).

    .venv/bin/python bench/remote_bench.py [--skills 1000] [--repeat 5]

Cases, each run once untimed then ``--repeat`` times (median and slowest):

- cold refresh: every page of ``skills/list`` over HTTP, the listing written, one folder per
  skill written from its entry (an empty cache each time);
- warm refresh: the same with the folders in place (what the background refresh costs when
  nothing changed), and the ``skills/list`` pages alone (the server hashes every file it lists);
- the cached listing read back (``listing.json``);
- ``skills.list`` from cache: the catalog built from the remote's folders (no network) and
  encoded as ``skills.list`` answers it; and the same answered warm (the built catalog reused,
  as a running daemon does), which is what a client waits for.

Everything lives in a temporary folder with its own HOME and cache.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402

from skillsd.core.catalog.fs_catalog_build import build_catalog  # noqa: E402
from skillsd.core.catalog.skill_catalog import list_result  # noqa: E402
from skillsd.core.discovery.fs_roots import compute_roots  # noqa: E402
from skillsd.core.policy.config import Config, RemoteConfig  # noqa: E402
from skillsd.runtime.remote_store import RemoteStore  # noqa: E402

BODY = "Use this skill when the task needs it.\n\n" + "Step by step guidance. " * 40 + "\n"


def _team(root: Path, n: int) -> None:
    skills = root / ".agents" / "skills"
    for i in range(n):
        folder = skills / f"skill-{i:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Team skill number {i} for the bench.\n---\n"
            + BODY
        )
        (folder / "references" / "notes.md").write_text("Notes.\n" * 20)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _time(
    fn: Callable[[], object], repeat: int, before: Callable[[], None] | None = None
) -> list[float]:
    if before:
        before()
    fn()
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="skillsd-remote-bench-"))
    try:
        team = tmp / "team"
        (team / ".git").mkdir(parents=True)
        _team(team, args.skills)
        token = tmp / "token"
        token.write_text(secrets.token_urlsafe(32))
        token.chmod(0o600)
        home = tmp / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)
        os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
        os.environ["SKILLSD_CONFIG"] = str(tmp / "config.toml")
        (tmp / "config.toml").write_text("")
        port = _port()
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "skillsd", "mcp", "--http", f"127.0.0.1:{port}"),
                *("--token-file", str(token), "--cwd", str(team)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            url = f"http://127.0.0.1:{port}/mcp"
            remote = RemoteConfig(name="team", url=url, token_file=str(token))
            cache = tmp / "cache" / "skillsd"  # platformdirs' cache dir under XDG_CACHE_HOME
            store = RemoteStore(str(cache), timeout=60)

            def empty() -> None:
                shutil.rmtree(cache / "remotes", ignore_errors=True)

            def refresh() -> None:
                listing = store.refresh(remote, force=True)
                assert listing is not None and len(listing.skills) == args.skills, store.state(
                    "team"
                )

            rows: list[tuple[str, list[float]]] = []
            rows.append(
                ("cold refresh (HTTP, listing + folders)", _time(refresh, args.repeat, empty))
            )
            rows.append(("warm refresh (HTTP, nothing changed)", _time(refresh, args.repeat)))

            def pages() -> None:
                with store.client(remote) as client:
                    assert len(client.list_skills().entries) == args.skills

            rows.append(("  of which skills/list pages alone (HTTP)", _time(pages, args.repeat)))
            rows.append(("cached listing read", _time(lambda: store.listing("team"), args.repeat)))

            # The catalog of a project that has no skills of its own, the remote's from cache.
            project = tmp / "project"
            (project / ".git").mkdir(parents=True)
            config = Config(remote=(remote,))
            plan = compute_roots(str(project), config, home=str(home), env=dict(os.environ))
            encoder = msgspec.json.Encoder()

            def cold_list() -> None:
                catalog = build_catalog(plan, config)
                remote_skills = [s for s in catalog.skills if s.scope == "remote"]
                assert len(remote_skills) == args.skills, len(remote_skills)
                encoder.encode(list_result(catalog))

            built = build_catalog(plan, config)
            rows.append(("skills.list from cache, catalog built", _time(cold_list, args.repeat)))
            rows.append(
                (
                    "skills.list from cache, warm catalog",
                    _time(lambda: encoder.encode(list_result(built)), args.repeat),
                )
            )
        finally:
            server.terminate()
            server.wait(10)
        print(f"remote of {args.skills} skills, {args.repeat} timed runs each (ms)")
        print(f"{'case':<42} {'median':>8} {'slowest':>8}")
        for name, times in rows:
            print(f"{name:<42} {statistics.median(times):>8.1f} {max(times):>8.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
