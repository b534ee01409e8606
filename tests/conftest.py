"""The suite's usual setup: the realistic project tree (``tests.support.skill_tree.make_project``)
with a user config that allows loads, and ``client``, a daemon on it run in this process
(``tests.support.in_process``: the real framing, dispatch and runtime, no new interpreter). A module
defines its own ``tree`` to differ.

Running the suite (``make test``): ``pytest -n 2 --dist loadgroup`` (pytest-xdist). A worker takes
a whole test file at a time, so module-scoped fixtures are set up once; the tests marked
``xdist_group("serial")`` (they measure time or memory, or load the machine with many processes)
form one unit instead, run by one worker one after another and handed out first. Markers
(pyproject.toml): ``slow`` and ``process``; ``make test-fast`` leaves both out."""

from __future__ import annotations

import compileall
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.client import Client
from tests.support.env import daemon_env
from tests.support.hooks import hook_daemon_env
from tests.support.in_process import InProcessDaemon
from tests.support.skill_tree import make_project

REPO = Path(__file__).resolve().parents[1]
#: The packages every spawned ``skillsd`` (daemon, CLI, MCP bridge) imports.
PACKAGES = ("skillsd", "protocol/skillsd_protocol", "clients/python/skillsd_client")
#: The ``xdist_group`` of the tests that must not overlap one another (see above).
SERIAL = "serial"


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the packages once, before any test (and before xdist's workers start).

    With ``PYTHONDONTWRITEBYTECODE`` set (as on CI) nothing would ever write their ``.pyc``, and
    each of the suite's hundreds of ``skillsd`` processes would compile ~35 000 lines again
    (~0.2 s of CPU each). The ``.pyc`` are what Python writes by default, checked against the
    source's mtime and size, and ignored by git."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    for package in PACKAGES:
        compileall.compile_dir(REPO / package, quiet=1)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``xdist_group`` group again on pytest >= 9.2 (pytest-xdist#1386, open): xdist 3.8
    appends ``@group`` to ``item._nodeid`` (in a worker, after collection), which pytest no longer
    reads, so ``--dist loadgroup`` silently handed grouped tests out one by one. The suffixed id
    is carried over to the one pytest uses; nothing happens where xdist's own change took."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9.2: the node id is `_nodeid` itself
        return
    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid:
            item._id = NodeId.parse(grouped)  # type: ignore[attr-defined]
            assert item.nodeid == grouped, "the xdist_group of a test was lost"


try:
    from xdist.scheduler import LoadGroupScheduling
except ImportError:  # pytest-xdist is optional for a plain `pytest` run
    pass
else:

    class FileOrGroupScheduling(LoadGroupScheduling):
        """``--dist loadgroup`` with a test's file as its default group, the ``serial`` group
        handed out first (it is the largest unit: the rest then fills in around it)."""

        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return nodeid.split("::", 1)[0] if scope == nodeid else scope

        def _assign_work_unit(self, node: object) -> None:
            if SERIAL in self.workqueue:
                self.workqueue.move_to_end(SERIAL, last=False)
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        if config.getvalue("dist") == "loadgroup":
            return FileOrGroupScheduling(config, log)  # type: ignore[arg-type]
        return None


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


@pytest.fixture
def hook_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The examples' environment for ``skillsd hook``, whose shared daemon is killed after."""
    with hook_daemon_env(tmp_path) as env:
        yield env
