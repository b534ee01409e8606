"""The event loop never waits on a file: once a catalog is built, serving a request stats,
opens and lists files only in threads (the config files, the repository markers and the state
file that a request's view depends on are looked up off the loop).

The daemon runs in this process (the real router, endpoint and runtime on a thread of its
own); every file call made on that thread while the requests are served is recorded.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import daemon_env
from tests.support.in_process import InProcessDaemon

LOOP_THREAD = "in-process-daemon"
#: Audit events (sys.addaudithook) that open or list a file.
AUDITED = {"open", "os.scandir", "os.listdir", "os.walk"}
#: Calls the audit events miss, wrapped for the test.
WRAPPED = ("stat", "lstat", "access", "readlink")


class LoopFileCalls:
    """File calls made on the daemon's loop thread while armed."""

    def __init__(self) -> None:
        self.armed = False
        self.calls: list[str] = []

    def note(self, what: str) -> None:
        if self.armed and threading.current_thread().name == LOOP_THREAD:
            self.calls.append(what)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in AUDITED:
            self.note(f"{event} {args[0] if args else ''}")


_RECORDER = LoopFileCalls()
_HOOKED = False


@pytest.fixture
def loop_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopFileCalls]:
    global _HOOKED
    if not _HOOKED:  # an audit hook cannot be removed: one for the process, inert unless armed
        sys.addaudithook(_RECORDER.audit)
        _HOOKED = True
    for name in WRAPPED:
        real: Callable[..., Any] = getattr(os, name)

        def wrapped(
            *args: Any, _real: Callable[..., Any] = real, _name: str = name, **kw: Any
        ) -> Any:
            _RECORDER.note(f"os.{_name} {args[0] if args else ''}")
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, wrapped)
    _RECORDER.calls.clear()
    yield _RECORDER
    _RECORDER.armed = False


def test_serving_requests_waits_on_no_file_on_the_loop(
    tree: dict[str, Path], loop_calls: LoopFileCalls
) -> None:
    project = os.fspath(tree["project"])
    requests: list[tuple[str, dict[str, Any]]] = [
        ("skills.list", {"cwd": project}),
        ("skills.search", {"cwd": project, "query": "pdf"}),
        ("skills.suggest", {"cwd": project, "prompt": "fill this pdf form"}),
        ("skills.load", {"cwd": project, "name": "pdf-forms", "sessionId": "s"}),
        (
            "skills.readFile",
            {"cwd": project, "name": "pdf-forms", "file": "references/fields.md", "sessionId": "s"},
        ),
        ("skills.invoke", {"cwd": project, "name": "pdf-forms", "sessionId": "s"}),
        ("context.inspect", {"cwd": project, "sessionId": "s"}),
        ("permissions.check", {"cwd": project, "tool": "Read", "sessionId": "s"}),
        ("trust.get", {"cwd": project}),
        (
            "tools.call",
            {
                "cwd": project,
                "name": "skill_search",
                "arguments": {"query": "pdf"},
                "sessionId": "s",
            },
        ),
        ("skills.prompt", {"cwd": project}),
        ("skills.commands", {"cwd": project}),
    ]
    daemon = InProcessDaemon(daemon_env(tree))
    try:
        opened = daemon.call(0, "session.open", {"sessionId": "s", "cwd": project})
        assert "result" in opened, opened
        # Once each first: building the catalog and warming the caches is allowed its threads.
        for i, (method, params) in enumerate(requests, 1):
            reply = daemon.call(i, method, params)
            assert "result" in reply, (method, reply)
        loop_calls.armed = True
        for i, (method, params) in enumerate(requests, 100):
            reply = daemon.call(i, method, params)
            assert "result" in reply, (method, reply)
        loop_calls.armed = False
    finally:
        daemon.kill()
    assert loop_calls.calls == [], loop_calls.calls[:20]
