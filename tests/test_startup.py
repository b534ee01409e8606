"""Start-up without waiting on what the first request does not need (issue 16): each CLI command
imports only its own module, and a spawned daemon's skill methods load in a thread while the
lifecycle methods answer."""

from __future__ import annotations

import argparse
import importlib

import pytest

from skillsd.cli import _COMMAND_MODULES, COMMAND_OWNERS
from skillsd.daemon.app import build_router
from tests.support.daemons import StdioDaemon, request


def test_every_command_is_owned_by_the_module_that_adds_it() -> None:
    owners: dict[str, str] = {}
    for name in _COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(f"skillsd.cli.{name}").register(sub)
        owners.update(dict.fromkeys(sub.choices, name))
    assert owners == COMMAND_OWNERS


def test_the_deferred_router_serves_what_the_eager_one_does() -> None:
    eager, deferred = build_router(), build_router(deferred=True)
    assert deferred.methods == eager.methods
    assert deferred.notifications == eager.notifications


@pytest.mark.process
def test_a_skill_request_sent_with_the_first_ping_waits_for_the_methods_to_load() -> None:
    daemon = StdioDaemon()
    try:
        # Both written at once, before anything could have loaded.
        daemon.send(request(1, "ping") + request(2, "skills.validate", {"path": "/nonexistent"}))
        replies = {m["id"]: m for m in (daemon.reader.message(), daemon.reader.message())}
        assert replies[1]["result"] == {}
        assert replies[2]["error"]["data"]["kind"] == "skill_not_found"
    finally:
        daemon.kill()
