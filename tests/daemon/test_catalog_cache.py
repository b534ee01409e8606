"""The live catalog cache, in-process: served without disk access, shared scans, stat fallback,
forceReload, and debounced notifications from real inotify events."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog import fs_catalog_build as catalog_module
from skillsd.runtime.catalog_cache import CatalogCache
from skillsd_protocol.messages import SkillsChangedParams
from tests.support.skill_tree import write_skill


class Recorder:
    """The ``skills.changed`` notifications a listener hears, and a wait for them."""

    def __init__(self) -> None:
        self.events: list[SkillsChangedParams] = []
        self._arrived = asyncio.Event()

    def notify(self, method: str, params: SkillsChangedParams) -> None:
        assert method == "skills.changed"
        self.events.append(params)
        self._arrived.set()

    async def wait_for(self, count: int, timeout: float = 5.0) -> list[SkillsChangedParams]:
        """The notifications once ``count`` of them have arrived."""
        async with asyncio.timeout(timeout):
            while len(self.events) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.events


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    write_skill(project / ".agents" / "skills", "alpha", "First skill.")
    return project


def cache_for(tmp_path: Path, *, watch: bool) -> CatalogCache:
    env = {"SKILLSD_CONFIG": os.fspath(tmp_path / "none.toml")}
    return CatalogCache(env=env, home=os.fspath(tmp_path / "home"), watch=watch)


def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = catalog_module.build_catalog

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("skillsd.runtime.catalog_cache.build_catalog", counting)
    return calls


def test_cached_catalog_is_served_without_rescanning(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = count_builds(monkeypatch)

    async def main() -> None:
        cache = cache_for(tmp_path, watch=True)
        try:
            first, entry = await cache.get(os.fspath(repo))
            for _ in range(5):
                again, _ = await cache.get(os.fspath(repo))
                assert again is first
            assert entry.mode == "watching" and len(builds) == 1
            forced, _ = await cache.get(os.fspath(repo), force=True)
            assert forced is not first and len(builds) == 2
            assert forced.stats.reused == 0  # forceReload re-parses everything
        finally:
            cache.close()

    asyncio.run(main())


def test_concurrent_requests_share_one_scan(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = count_builds(monkeypatch)

    async def main() -> None:
        cache = cache_for(tmp_path, watch=False)
        results = await asyncio.gather(*(cache.get(os.fspath(repo)) for _ in range(8)))
        assert len({id(catalog) for catalog, _ in results}) == 1
        assert len(builds) == 1
        cache.close()

    asyncio.run(main())


def test_stat_mode_sees_changes_on_the_next_request(repo: Path, tmp_path: Path) -> None:
    async def main() -> None:
        cache = cache_for(tmp_path, watch=False)
        first, entry = await cache.get(os.fspath(repo))
        assert entry.mode == "stat" and entry.watch_info().reason
        skill_md = repo / ".agents" / "skills" / "alpha" / "SKILL.md"
        skill_md.write_text(skill_md.read_text().replace("First", "Edited first"))
        second, _ = await cache.get(os.fspath(repo))
        assert second.skills[0].description == "Edited first skill."
        assert second.generation == first.generation + 1
        assert (second.stats.parsed, second.stats.reused) == (1, 0)
        write_skill(repo / ".agents" / "skills", "beta", "Second skill.")
        third, _ = await cache.get(os.fspath(repo))
        assert [s.name for s in third.skills] == ["alpha", "beta"]
        assert third.stats.reused == 1
        cache.close()

    asyncio.run(main())


def test_burst_of_events_is_one_debounced_notification(repo: Path, tmp_path: Path) -> None:
    async def main() -> None:
        cache = cache_for(tmp_path, watch=True)
        recorder = Recorder()
        try:
            await cache.get(os.fspath(repo), listener=recorder)
            skills = repo / ".agents" / "skills"
            for n in range(5):
                write_skill(skills, f"burst-{n}", f"Burst skill {n}.")
                await asyncio.sleep(0.01)  # the burst: writes 10 ms apart, within one debounce
            await recorder.wait_for(1)
            # A later edit is the barrier: a burst announced in two parts would show its second
            # part before this edit's notification, or in it.
            write_skill(skills, "after-burst", "Written after the burst.")
            burst, after = await recorder.wait_for(2)
            assert len(burst.added) == 5 and burst.generation == 2
            assert len(after.added) == 1 and after.generation == 3
            catalog, _ = await cache.get(os.fspath(repo))
            assert len(catalog.skills) == 7 and catalog.generation == 3
            assert after.added == [s.id for s in catalog.skills if s.name == "after-burst"]
        finally:
            cache.close()

    asyncio.run(main())


def test_overflow_degrades_to_stat_validation_then_recovers(repo: Path, tmp_path: Path) -> None:
    async def main() -> None:
        cache = cache_for(tmp_path, watch=True)
        try:
            _, entry = await cache.get(os.fspath(repo))
            assert entry.rewatching is not None
            await entry.rewatching  # the watches are set up in the background
            cache.on_overflow()  # from the watcher's thread: the loop degrades the entries next
            await asyncio.sleep(0)  # one turn of the loop, which runs what was scheduled first
            assert entry.mode == "stat" and "overflow" in (entry.reason or "")
            write_skill(repo / ".agents" / "skills", "gamma", "Third skill.")
            catalog, _ = await cache.get(os.fspath(repo))
            assert "gamma" in {s.name for s in catalog.skills}
            # The rescan set the watches up again: events are trusted from then on.
            assert entry.rewatching is not None
            await entry.rewatching
            assert entry.mode == "watching" and entry.reason is None
        finally:
            cache.close()

    asyncio.run(main())


def test_changed_enable_flags_are_applied_without_rescanning(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = count_builds(monkeypatch)
    disabled: frozenset[str] = frozenset()

    async def main() -> None:
        env = {"SKILLSD_CONFIG": os.fspath(tmp_path / "none.toml")}
        cache = CatalogCache(
            env=env, home=os.fspath(tmp_path / "home"), watch=True, disabled=lambda _root: disabled
        )
        recorder = Recorder()
        try:
            first, _ = await cache.get(os.fspath(repo), listener=recorder)
            assert first.skills[0].enabled and len(builds) == 1
            nonlocal disabled
            disabled = frozenset({first.skills[0].id})  # e.g. another daemon wrote the state
            second, _ = await cache.get(os.fspath(repo))
            assert second.skills[0].enabled is False
            assert second.generation == first.generation + 1
            assert len(builds) == 1  # flags re-derived, tree not rescanned
            assert [e.changed for e in recorder.events] == [[first.skills[0].id]]
        finally:
            cache.close()

    asyncio.run(main())


def test_a_config_edit_retires_the_old_entry_and_keeps_its_listeners(
    repo: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"

    async def main() -> None:
        cache = CatalogCache(
            env={"SKILLSD_CONFIG": os.fspath(config)}, home=os.fspath(tmp_path), watch=True
        )
        recorder = Recorder()
        try:
            _, old = await cache.get(os.fspath(repo), listener=recorder)
            config.write_text('validation = "strict"\n')
            _, new = await cache.get(os.fspath(repo))
            assert cache.entries() == [new] and new is not old
            assert recorder in new.listeners and (old.sub is None or not old.sub.watches)
            cache.forget_listener(recorder)
            assert not new.listeners
        finally:
            cache.close()

    asyncio.run(main())
