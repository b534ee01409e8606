"""Delta listing (docs/embedding.md): ``skills.list {sinceGeneration}`` over the real daemon, and
the Python client's `CatalogMirror` equal to a fresh full list after a burst of random edits."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from pathlib import Path

import pytest

from skillsd.core.catalog.catalog_delta import ChangeHistory
from skillsd_client import AsyncClient, CatalogMirror
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill


def run(coro: object) -> None:
    asyncio.run(asyncio.wait_for(coro, 120))  # type: ignore[arg-type]


@pytest.mark.process
def test_delta_added_changed_removed_and_full_list_fallbacks(tree: dict[str, Path]) -> None:
    skills = tree["skills"]

    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=daemon_env(tree)) as client:
            changes = client.notifications("skills.changed")  # buffers from now on
            first = await client.list_skills()  # this connection now hears skills.changed
            await client.inspect()  # answered once the catalog's watches are set up
            by_name = {s.name: s for s in first.skills if s.scope == "repo"}
            write_skill(skills, "brand-new", "Added after the first list.")
            pdf_md = by_name["pdf-forms"].path
            Path(pdf_md).write_text(Path(pdf_md).read_text().replace("Fill and", "Refill and"))
            shutil.rmtree(os.path.dirname(by_name["release-notes"].path))
            for _ in range(100):
                # The three edits may be announced in one notification or several.
                await changes.next(timeout=10)
                delta_list = await client.list_skills(since_generation=first.generation)
                assert delta_list.delta is not None
                got = delta_list.delta
                if (
                    {s.name for s in got.added} == {"brand-new"}
                    and "pdf-forms" in {s.name for s in got.changed}
                    and got.removed == [by_name["release-notes"].id]
                ):
                    break
            else:
                raise AssertionError(f"the delta never showed all three changes: {got}")
            # The user's release-notes no longer shares its name: changed too.
            assert {s.name for s in got.changed} == {"pdf-forms", "release-notes"}
            assert delta_list.skills == []
            assert delta_list.errors == first.errors  # errors and diagnostics always complete
            assert delta_list.generation > first.generation
            # Nothing new since now: an empty delta.
            same = await client.list_skills(since_generation=delta_list.generation)
            assert same.delta is not None and not (same.delta.added or same.delta.changed)
            # A generation the daemon never had, or a filtered list: the full list.
            future = await client.list_skills(since_generation=delta_list.generation + 5)
            assert future.delta is None and future.skills
            # Older than the history reaches (here: before the first catalog): the full list.
            ancient = await client.list_skills(since_generation=0)
            assert ancient.delta is None and ancient.skills
            scoped = await client.list_skills(since_generation=first.generation, scope="repo")
            assert scoped.delta is None and scoped.skills

    run(body())


def test_a_history_that_no_longer_reaches_back_answers_none() -> None:
    history = ChangeHistory(first_generation=1, keep=3)
    for generation in range(2, 7):
        history.record(generation, [f"s{generation}"], [], [])
    present = {f"s{g}" for g in range(2, 7)}
    assert history.since(2, 6, present) is None  # steps 3.. only; 2->3 was dropped
    since3 = history.since(3, 6, present)
    assert since3 is not None and since3.added == ["s4", "s5", "s6"]
    # Added then removed since: not in the answer; removed then added again: changed.
    history.record(7, [], [], ["s5", "s6"])
    history.record(8, ["s5"], [], [])
    folded = history.since(5, 8, present - {"s6"})
    assert folded is not None
    assert (folded.added, folded.changed, folded.removed) == ([], ["s5"], [])


@pytest.mark.process
def test_the_mirror_equals_a_fresh_list_after_random_edits(tree: dict[str, Path]) -> None:
    skills = tree["skills"] / "burst"
    skills.mkdir()
    rng = random.Random(7)

    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=daemon_env(tree)) as client:
            mirror = await CatalogMirror(client, os.fspath(tree["project"])).start()
            live: list[str] = []
            for n in range(60):
                action = rng.choice(["create", "create", "edit", "delete", "break"])
                if action != "create" and not live:
                    action = "create"
                if action == "create":
                    name = f"burst-{n}"
                    write_skill(skills, name, f"Burst skill {n}.")
                    live.append(name)
                elif action == "edit":
                    name = rng.choice(live)
                    write_skill(skills, name, f"Edited {rng.random()}.")
                elif action == "break":
                    name = rng.choice(live)
                    (skills / name / "SKILL.md").write_text("---\nname: x\n---\nno description\n")
                else:
                    name = rng.choice(live)
                    shutil.rmtree(skills / name)
                    live.remove(name)
                await asyncio.sleep(rng.uniform(0, 0.03))
            # Let the daemon settle, then the mirror catch up with it.
            for _ in range(100):
                await asyncio.sleep(0.2)
                fresh = await client.list_skills()
                await mirror.refresh()
                if mirror.generation == fresh.generation:
                    break
            fresh = await client.list_skills()
            assert mirror.generation == fresh.generation
            assert mirror.skills == {s.id: s for s in fresh.skills}
            assert mirror.errors == fresh.errors
            assert mirror.deltas > 0  # it followed by deltas, not by re-listing
            mirror.stop()

    run(body())
