"""What the MCP face and the tools keep between requests (the search tool's answers, the
model-visible skills and their resources/list entries, the repository root, the trust read
for a view) never hides a change: a skill written to disk, a config edit, a session's or the
user's enable flag, a trust decision are all seen by the next request. In-process, on the real
runtime, with catalogs stat-validated on every request (no watcher: no timing)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.model_tools import decode_tool_call
from skillsd.mcp_bridge.exchange import Exchange
from skillsd.mcp_bridge.mcp_connection import Listeners
from skillsd.mcp_bridge.mcp_results import McpFailure
from skillsd.mcp_bridge.native_skills import NativeSkills
from skillsd.runtime import use_cases as rq
from skillsd.runtime.search_answers import Answers, search_tool
from skillsd.runtime.services import Services
from skillsd_protocol.messages import (
    SetEnabledParams,
    ToolsCallParams,
    ToolsCallResult,
    TrustSetParams,
)
from tests.support.in_process import environment


class _Peer:
    era = "handshake"
    client_name = None

    def __init__(self) -> None:
        self.listeners = Listeners()

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        return None

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        raise RuntimeError("not asked in these tests")


def _skill(project: Path, name: str, description: str) -> None:
    folder = project / ".agents" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nDo the thing.\n"
    )


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    project = (tmp_path / "project").resolve()
    (project / ".git").mkdir(parents=True)
    _skill(project, "release-notes", "Write release notes from the changelog.")
    (tmp_path / "home").mkdir()
    (tmp_path / "config.toml").write_text("")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "SKILLSD_CONFIG": str(tmp_path / "config.toml"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }
    with environment(env):
        yield project


def _services(project: Path) -> Services:
    return Services.create(cwd=str(project), watch=False)


async def _search(svc: Services, project: Path, query: str, session: str | None = None) -> str:
    call = ToolsCallParams(
        name="skill_search", arguments={"query": query}, cwd=str(project), session_id=session
    )
    result = await rq.tools_call(svc, call)
    assert not result.is_error, result.content
    return result.content


def test_the_search_tool_sees_new_skills_and_every_enable_flag(project: Path) -> None:
    async def run() -> None:
        svc = _services(project)
        try:
            assert "zebra-care" not in await _search(svc, project, "zebra")
            _skill(project, "zebra-care", "Feed and groom the zebra.")
            assert "zebra-care" in await _search(svc, project, "zebra")
            session, _ = svc.sessions.open(None, str(project))
            off = SetEnabledParams(
                name="zebra-care",
                enabled=False,
                cwd=str(project),
                persist="session",
                session_id=session.id,
            )
            await rq.set_enabled(svc, off)
            assert "zebra-care" not in await _search(svc, project, "zebra", session.id)
            assert "zebra-care" in await _search(svc, project, "zebra")  # other sessions
            session.enabled_overrides.clear()
            assert "zebra-care" in await _search(svc, project, "zebra", session.id)
            off = SetEnabledParams(name="zebra-care", enabled=False, cwd=str(project))
            await rq.set_enabled(svc, off)
            assert "zebra-care" not in await _search(svc, project, "zebra")
            assert "zebra-care" not in await _search(svc, project, "zebra", session.id)
            _skill(project, "zebra-care", "Feed and groom the okapi.")  # still disabled
            (project / ".agents" / "skills" / "release-notes" / "SKILL.md").write_text(
                "---\nname: release-notes\ndescription: Notes about the zebra release.\n---\n"
            )
            assert "release-notes" in await _search(svc, project, "zebra")
        finally:
            svc.catalogs.close()

    asyncio.run(run())


def test_an_answer_is_remembered_for_its_catalog_and_the_memory_is_bounded(
    project: Path,
) -> None:
    async def run() -> None:
        svc = _services(project)
        try:
            view = await svc.view(cwd=str(project), session_id=None)
            index = await svc.search_index(view)
            request = decode_tool_call("skill_search", {"query": "release"})
            first = search_tool(view, request, index)
            assert search_tool(view, request, index) is first  # from memory
            other = decode_tool_call("skill_search", {"query": "release", "limit": 1})
            assert search_tool(view, other, index) is not first  # another question
            hidden = (index[0], index[1] | {view.catalog.skills[0].id})
            assert "release-notes" not in search_tool(view, request, hidden).content
        finally:
            svc.catalogs.close()

    asyncio.run(run())
    answers = Answers(most=2)
    made = [answers.get(n, lambda: ToolsCallResult(content="", is_error=False)) for n in range(3)]
    assert len(answers) == 2 and made[0] is not made[1]
    assert answers.get(2, lambda: made[0]) is made[2]  # kept: the newest
    assert answers.get(0, lambda: made[1]) is made[1]  # dropped: made again


def _ex(method: str, params: dict[str, Any]) -> Exchange:
    return Exchange(method, params, "2025-11-25", {}, 1)


def test_resources_follow_the_disk_a_config_edit_and_a_trust_decision(project: Path) -> None:
    async def run() -> None:
        svc = _services(project)
        skills = NativeSkills(svc, str(project), cwd_given=True, peer=_Peer())
        try:
            listed = await skills.call(_ex("resources/list", {}))
            assert [r["name"] for r in listed["resources"]] == ["release-notes"]
            _skill(project, "zebra-care", "Feed and groom the zebra.")
            listed = await skills.call(_ex("resources/list", {}))
            names = sorted(r["name"] for r in listed["resources"])
            assert names == ["release-notes", "zebra-care"]
            uri = "skill://zebra-care/SKILL.md"
            read = await skills.call(_ex("resources/read", {"uri": uri}))
            assert "Feed and groom" in read["contents"][0]["text"]
            # A project config written now is in effect for the next request.
            config = project / ".agents" / "skillsd.toml"
            config.write_text('[permissions]\ndeny = ["skill_load(zebra-*)"]\n')
            with pytest.raises(McpFailure, match="denied"):
                await skills.call(_ex("resources/read", {"uri": uri}))
            config.unlink()
            read = await skills.call(_ex("resources/read", {"uri": uri}))
            assert "Feed and groom" in read["contents"][0]["text"]
            # A repository marker made between the cwd and the old root moves the root.
            (project / ".agents" / ".git").mkdir()
            sub = await svc.view(cwd=str(project / ".agents"), session_id=None)
            assert sub.catalog.repo_root == str(project / ".agents")
            # Trust decided now is what the next view reports.
            before = await svc.view(cwd=str(project), session_id=None)
            assert before.seen.trust is not None and not before.seen.trust.trusted
            await rq.trust_set(svc, TrustSetParams(trusted=True, cwd=str(project)))
            after = await svc.view(cwd=str(project), session_id=None)
            assert after.seen.trust is not None and after.seen.trust.trusted
            assert after.seen.trust.source == "state"
        finally:
            skills.end()
            svc.catalogs.close()

    asyncio.run(run())
