"""The suite's usual setup: the realistic project tree (``tests.daemon.skill_tree.make_project``)
with a user config that allows loads, and ``client``, a daemon on it run in this process
(``tests.daemon.in_process``: the real framing, dispatch and runtime, no new interpreter). A module
defines its own ``tree`` to differ."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon.in_process import InProcessDaemon
from tests.daemon.skill_tree import daemon_env, make_project
from tests.daemon.test_skill_methods import Client


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    # A host that wants silent loads ships this (docs/permissions.md); the default, `ask`, is
    # proven in tests/daemon/test_policy_methods.py.
    (tmp_path / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
    return make_project(tmp_path)


@pytest.fixture
def client(tree: dict[str, Path]) -> Iterator[Client]:
    daemon = InProcessDaemon(daemon_env(tree))
    try:
        yield Client(daemon, tree["project"])
    finally:
        daemon.kill()
