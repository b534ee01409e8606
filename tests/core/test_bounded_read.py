"""The one way the daemon reads a file it did not create (docs/security.md): a FIFO never blocks, a
device (a symlink to ``/dev/zero``) is never read, and every read has a cap.

Each reader that goes through it is tried on a real FIFO with no writer and on a symlink to
``/dev/zero``. The read runs in a thread joined with a timeout, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillsd.core import limits
from skillsd.core.discovery.fs_personas import AgentFileError, discover_agents, read_agent_file
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.bounded_read import NotRegularFile, read_regular_file, sha256_of_file
from skillsd.core.fs.file_version import StatKey, stat_key
from skillsd.core.policy.fs_effective_config import ConfigSource
from skillsd.core.policy.fs_state import StateStore
from skillsd.core.skill.fs_resources import read_skill_file_content
from skillsd.core.skill.fs_skillfile import read_skill_file

DEADLINE = 5.0
KINDS = ["fifo", "dev-zero"]


def make_special(path: Path, kind: str) -> Path:
    """A FIFO nobody writes to, or a symlink to ``/dev/zero``, at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def finishes(read: Callable[[], Any], special: Path) -> Any:
    """``read()``'s result (or the exception it raised), failing if it does not return in time."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = read()
        except BaseException as exc:  # handed to the test, which checks what it is
            outcome["value"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE)
    if thread.is_alive():
        # Unblock a reader stuck opening the FIFO, so the thread can end.
        with contextlib.suppress(OSError):
            os.close(os.open(special, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading {special} blocked for {DEADLINE}s")
    return outcome["value"]


# -- the function itself ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path, kind: str) -> None:
    special = make_special(tmp_path / "f", kind)
    refused = finishes(lambda: read_regular_file(os.fspath(special), 1024), special)
    assert isinstance(refused, NotRegularFile)
    assert os.fspath(special) in str(refused) and "not a regular file" in str(refused)


def test_reads_at_most_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    whole = read_regular_file(os.fspath(path), 100)
    assert whole.data == b"x" * 100 and not whole.over_cap
    assert whole.key == stat_key(os.fspath(path)) == StatKey.of(path.stat())
    capped = read_regular_file(os.fspath(path), 99)
    assert capped.data == b"x" * 99 and capped.over_cap
    with pytest.raises(FileNotFoundError):
        read_regular_file(os.fspath(tmp_path / "missing"), 10)


@pytest.mark.parametrize("kind", KINDS)
def test_a_digest_refuses_what_is_not_a_regular_file_without_blocking(
    tmp_path: Path, kind: str
) -> None:
    special = make_special(tmp_path / "f", kind)
    refused = finishes(lambda: sha256_of_file(os.fspath(special), 1024), special)
    assert isinstance(refused, NotRegularFile)


def test_a_digest_is_of_the_whole_file_within_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    data = os.urandom(3 * 1024 * 1024 + 5)  # more than one chunk
    path.write_bytes(data)
    expected = (hashlib.sha256(data).hexdigest(), len(data))
    assert sha256_of_file(os.fspath(path), None) == expected
    assert sha256_of_file(os.fspath(path), len(data)) == expected
    assert sha256_of_file(os.fspath(path), len(data) - 1) is None
    (tmp_path / "empty").write_bytes(b"")
    assert sha256_of_file(os.fspath(tmp_path / "empty"), 0) == (hashlib.sha256().hexdigest(), 0)
    link = tmp_path / "link"
    link.symlink_to(path)
    assert sha256_of_file(os.fspath(link), None) == expected
    with pytest.raises(OSError):
        sha256_of_file(os.fspath(link), None, follow_links=False)
    with pytest.raises(FileNotFoundError):
        sha256_of_file(os.fspath(tmp_path / "missing"), 10)


# -- every reader that uses it ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_skill_md_for_discovery(tmp_path: Path, kind: str) -> None:
    special = make_special(tmp_path / "demo" / "SKILL.md", kind)
    parsed = finishes(lambda: read_skill_file(os.fspath(special)), special)
    assert parsed.fields is None
    assert [(d.code, d.path) for d in parsed.diagnostics] == [
        ("file.not_regular", os.fspath(special))
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_skill_md_for_loading(tmp_path: Path, kind: str) -> None:
    special = make_special(tmp_path / "demo" / "SKILL.md", kind)
    error = finishes(lambda: read_skill_file_content(os.fspath(special)), special)
    assert isinstance(error, SkillsdError) and error.kind == "invalid_skill"
    assert os.fspath(special) in error.message and "not a regular file" in error.message


@pytest.mark.parametrize("kind", KINDS)
def test_agent_file(tmp_path: Path, kind: str) -> None:
    agents = tmp_path / ".agents" / "agents"
    special = make_special(agents / "reviewer.md", kind)
    error = finishes(lambda: read_agent_file(os.fspath(special)), special)
    assert isinstance(error, AgentFileError) and "not a regular file" in str(error)
    found, errors = finishes(lambda: discover_agents([os.fspath(agents)]), special)
    assert found == [] and [e.path for e in errors] == [os.fspath(special)]


@pytest.mark.parametrize("kind", KINDS)
def test_project_config(tmp_path: Path, kind: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    special = make_special(repo / ".agents" / "skillsd.toml", kind)
    source = ConfigSource({"SKILLSD_CONFIG": os.fspath(tmp_path / "no-user-config.toml")})
    error = finishes(lambda: source.for_cwd(os.fspath(repo)), special)
    assert isinstance(error, SkillsdError) and error.kind == "invalid_config"
    assert error.message.startswith(f"{special}: cannot read config: not a regular file")


@pytest.mark.parametrize("kind", KINDS)
def test_user_config(tmp_path: Path, kind: str) -> None:
    special = make_special(tmp_path / "config.toml", kind)
    source = ConfigSource({"SKILLSD_CONFIG": os.fspath(special)})
    error = finishes(lambda: source.for_cwd(os.fspath(tmp_path)), special)
    assert isinstance(error, SkillsdError) and error.kind == "invalid_config"
    assert os.fspath(special) in error.message


def test_an_oversized_config_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# padding\n" * (limits.MAX_CONFIG_FILE_BYTES // 10 + 1))
    with pytest.raises(SkillsdError) as info:
        ConfigSource({"SKILLSD_CONFIG": os.fspath(path)}).for_cwd(os.fspath(tmp_path))
    assert info.value.kind == "invalid_config" and "larger than" in info.value.message


@pytest.mark.parametrize("kind", KINDS)
def test_state_file(tmp_path: Path, kind: str) -> None:
    special = make_special(tmp_path / "state.json", kind)
    store = StateStore(os.fspath(special))
    problem = finishes(lambda: store.problem, special)
    assert problem is not None and problem.code == "state.unreadable"
    assert problem.path == os.fspath(special) and "not a regular file" in problem.message
    assert store.read().disabled == []


def test_an_oversized_state_file_is_a_problem_not_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"version": 1, "disabled": ["' + "x" * 200 + '"]}')
    monkeypatch.setattr(limits, "MAX_STATE_FILE_BYTES", 100)
    problem = StateStore(os.fspath(path)).problem
    assert problem is not None and "larger than 100 bytes" in problem.message
