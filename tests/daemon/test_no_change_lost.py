"""No change is lost: an edit made at any moment after a ``skills.list`` answered is announced
(``skills.changed``), also while the catalog is busy rebuilding, while its watches are still being
set up, when another client forces a reload, and when the kernel dropped the events.

The daemon tests run a real ``skillsd serve`` with real inotify on a 2 000-skill tree (5 roots of
category folders). ``busy_catalog_hooks`` holds every rebuild's result back for a second, so the
edit reliably lands while a build is under way (on a 10 000-skill tree that window is a real
scan's length); ``_test.catalogBusy`` says when one is.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import Root, RootPlan
from skillsd.core.discovery.fs_watch_plan import changed_since, watch_plan
from skillsd.runtime.catalog_cache import CatalogCache
from skillsd_protocol.messages import SkillsChangedParams
from tests.support import daemons as h
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.xdist_group("serial")

ROOTS = 5
CATEGORIES = 8
SKILLS_PER_CATEGORY = 50
#: How long an edit may take to be announced here (the bound is about a second; the hook adds
#: one more to every rebuild).
ANNOUNCED_WITHIN = 5.0
HOOKS = os.fspath(Path(__file__).with_name("busy_catalog_hooks.py"))


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``ROOTS`` roots of category folders, 2 000 skills in all (some with ``references/``)."""
    base = tmp_path_factory.mktemp("forest")
    roots = []
    for r in range(ROOTS):
        root = base / f"root{r}"
        for c in range(CATEGORIES):
            for s in range(SKILLS_PER_CATEGORY):
                name = f"skill-{r}-{c}-{s}"
                skill = write_skill(root / f"category-{c}", name, f"Skill {name} of the forest.")
                if s % 3 == 0:
                    (skill / "references").mkdir()
                    (skill / "references" / "notes.md").write_text("# Notes\n", encoding="utf-8")
        roots.append(root)
    config = base / "config.toml"
    config.write_text("[discovery]\nmaxDirs = 100000\n", encoding="utf-8")
    (base / "home").mkdir()
    (base / "work").mkdir()
    return {"base": base, "roots": roots, "config": config}


def _environ(forest: dict[str, Any], runtime: Path) -> dict[str, str]:
    base: Path = forest["base"]
    result = h.env(
        runtime,
        HOME=os.fspath(base / "home"),
        SKILLSD_CONFIG=os.fspath(forest["config"]),
        XDG_STATE_HOME=os.fspath(runtime / "state"),
        XDG_CONFIG_HOME=os.fspath(runtime / "xdg-config"),
        AGENT_SKILLS_PATH=os.pathsep.join(os.fspath(r) for r in forest["roots"]),
        SKILLSD_TEST_HOOKS=HOOKS,
        SKILLSD_TEST_BUILD_DELAY="0.5",
    )
    result.pop("SKILLSD_ROOT", None)
    return result


def _list(client: h.SocketClient, rid: int, cwd: str, **params: Any) -> dict[str, Any]:
    reply = client.call(rid, "skills.list", {"cwd": cwd, **params})
    while "id" not in reply:  # a notification came first
        reply = client.reader.message()
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def _call(client: h.SocketClient, rid: int, method: str, params: Any = None) -> Any:
    client.send(h.request(rid, method, params))
    while True:
        message = client.reader.message()
        if message.get("id") == rid:
            assert "result" in message, message
            return message["result"]


def _save_like_an_editor(skill_md: str, text: str) -> None:
    """Write a temporary file beside ``skill_md``, then rename it over (an atomic save)."""
    with open(skill_md, encoding="utf-8") as fh:
        content = fh.read()
    temp = os.path.join(os.path.dirname(skill_md), ".SKILL.md.swp")
    with open(temp, "w", encoding="utf-8") as fh:
        fh.write(content.replace(" of the forest.", f" of the forest ({text})."))
    os.replace(temp, skill_md)


def _wait_changed(client: h.SocketClient, skill_id: str) -> float:
    """Seconds until a ``skills.changed`` naming ``skill_id`` as changed arrives."""
    start = time.monotonic()
    deadline = start + ANNOUNCED_WITHIN
    while True:
        remaining = deadline - time.monotonic()
        try:
            message = client.reader.message(max(remaining, 0.001))
        except TimeoutError:
            pytest.fail(f"no skills.changed for {skill_id} within {ANNOUNCED_WITHIN:g} s")
        if message.get("method") == "skills.changed" and skill_id in message["params"]["changed"]:
            return time.monotonic() - start


def _pick(listing: dict[str, Any], n: int) -> tuple[str, str]:
    """The id and SKILL.md path of a skill away from the first root (which the tests touch)."""
    skills = [s for s in listing["skills"] if os.sep + "root0" + os.sep not in s["path"]]
    skill = skills[(n * 397) % len(skills)]
    return skill["id"], skill["path"]


@pytest.mark.slow
@pytest.mark.process
def test_an_edit_right_after_the_first_lists_is_announced(
    forest: dict[str, Any], tmp_path: Path
) -> None:
    """The edit of the finding: a fresh daemon answers two lists, then, while the rescan that
    follows its watches being set up is busy, a SKILL.md is saved atomically."""
    cwd = os.fspath(forest["base"] / "work")
    category = forest["roots"][0] / "category-0"
    for attempt in range(3):
        # Something under a root changed just before the daemon started: once the watches are
        # in place, the daemon rescans it (what changed between the scan and the watches).
        os.utime(category)
        path = tmp_path / f"d{attempt}.sock"
        with (
            h.socket_daemon(path, None, environ=_environ(forest, tmp_path / f"run{attempt}")),
            closing(h.SocketClient(path)) as client,
        ):
            listing = _list(client, 1, cwd)
            assert len(listing["skills"]) == ROOTS * CATEGORIES * SKILLS_PER_CATEGORY
            _list(client, 2, cwd)
            assert _call(client, 3, "_test.catalogBusy") == {"busy": True}
            skill_id, skill_md = _pick(listing, attempt)
            _save_like_an_editor(skill_md, f"attempt {attempt}")
            _wait_changed(client, skill_id)


@pytest.mark.slow
@pytest.mark.process
def test_edits_while_a_rebuild_is_busy_are_announced(
    forest: dict[str, Any], tmp_path: Path
) -> None:
    """Events that arrive while the catalog is rebuilding are applied once it is done."""
    cwd = os.fspath(forest["base"] / "work")
    path = tmp_path / "d.sock"
    with (
        h.socket_daemon(path, None, environ=_environ(forest, tmp_path / "run")),
        closing(h.SocketClient(path)) as client,
    ):
        listing = _list(client, 1, cwd)
        _call(client, 2, "context.inspect", {"cwd": cwd})  # the watches are in place
        touched = forest["roots"][0] / "category-1" / "skill-0-1-1" / "SKILL.md"
        for n in range(3):
            # A ``touch``: the catalog re-reads that SKILL.md, finding nothing new (and no new
            # folder to watch, so nothing else rescans the tree afterwards).
            os.utime(touched)
            assert _call(client, 10 + n, "_test.catalogBusy") == {"busy": True}
            skill_id, skill_md = _pick(listing, 10 + n)
            _save_like_an_editor(skill_md, f"busy {n}")
            _wait_changed(client, skill_id)


@pytest.mark.slow
@pytest.mark.process
def test_a_forced_reload_does_not_swallow_an_edit(forest: dict[str, Any], tmp_path: Path) -> None:
    """Another client's ``forceReload`` right after an edit rescans from scratch: the clients
    that listed still hear about the edit."""
    cwd = os.fspath(forest["base"] / "work")
    path = tmp_path / "d.sock"
    with (
        h.socket_daemon(path, None, environ=_environ(forest, tmp_path / "run")),
        closing(h.SocketClient(path)) as lister,
        closing(h.SocketClient(path)) as reloader,
    ):
        listing = _list(lister, 1, cwd)
        _call(lister, 2, "context.inspect", {"cwd": cwd})
        for n in range(2):
            skill_id, skill_md = _pick(listing, 20 + n)
            _save_like_an_editor(skill_md, f"forced {n}")
            _list(reloader, 10 + n, cwd, forceReload=True)
            _wait_changed(lister, skill_id)


class _Recorder:
    def __init__(self) -> None:
        self.events: list[SkillsChangedParams] = []

    def notify(self, method: str, params: SkillsChangedParams) -> None:
        self.events.append(params)


def test_an_edit_whose_events_overflowed_is_announced(tmp_path: Path) -> None:
    """The kernel dropped the events (queue overflow): the catalog rescans on its own and
    announces what changed, without waiting for a request."""
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    write_skill(skills, "alpha", "First skill.")
    (tmp_path / "home").mkdir()
    an_hour_ago = time.time() - 3600
    for folder, _dirs, files in os.walk(tmp_path):  # nothing recent for a post-watch rescan
        for name in [*files, ""]:
            os.utime(os.path.join(folder, name), (an_hour_ago, an_hour_ago))

    async def main() -> None:
        env = {"SKILLSD_CONFIG": os.fspath(tmp_path / "none.toml")}
        cache = CatalogCache(env=env, home=os.fspath(tmp_path / "home"), watch=True)
        recorder = _Recorder()
        try:
            _, entry = await cache.get(os.fspath(project), listener=recorder)
            assert entry.rewatching is not None
            await entry.rewatching
            watch = cache._watch
            assert watch is not None and entry.sub is not None
            watch.cancel(entry.sub)  # the edit's events never arrive, as when they overflowed
            write_skill(skills, "beta", "Second skill.")
            cache.on_overflow()
            for _ in range(100):
                if recorder.events:
                    break
                await asyncio.sleep(0.02)
            assert [len(e.added) for e in recorder.events] == [1]
        finally:
            cache.close()

    asyncio.run(main())


def test_the_window_before_the_watches_counts_changes_not_a_busy_home(tmp_path: Path) -> None:
    """What changed between a scan and its watches: the tree's own folders and files, and a
    missing root appearing; not whatever else was made in the folder watched for that root (a
    home folder's mtime moves all day, and rescanning 10 000 skills for it kept the catalog busy
    right when a fresh daemon's first edits came)."""
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "root"
    skill = write_skill(root / "category", "alpha", "First skill.")
    missing = home / ".agents" / "skills"
    plan = RootPlan(
        cwd=os.fspath(tmp_path),
        repo_root=os.fspath(tmp_path),
        roots=(Root(os.fspath(root), "extra"), Root(os.fspath(missing), "extra")),
    )
    an_hour_ago = time.time() - 3600
    for folder, _dirs, files in os.walk(tmp_path):
        for name in [*files, ""]:
            os.utime(os.path.join(folder, name), (an_hour_ago, an_hour_ago))
    catalog = build_catalog(plan)
    watched = watch_plan(catalog)
    real = os.path.realpath
    assert real(home) in watched.anchors
    since = time.time() - 1
    assert changed_since(watched, catalog, since) == []
    (home / ".bash_history").write_text("ls\n", encoding="utf-8")
    assert changed_since(watched, catalog, since) == []
    _save_like_an_editor(os.fspath(skill / "SKILL.md"), "edited")
    assert set(changed_since(watched, catalog, since)) == {
        real(skill),
        real(skill / "SKILL.md"),
    }
    missing.mkdir(parents=True)
    assert {real(home / ".agents"), real(missing)} <= set(changed_since(watched, catalog, since))
