"""Output is bounded before it is built: an invocation whose reply would pass
``limits.maxReplyBytes`` is refused with ``too_large`` naming the limit, at the cost of counting,
never of building it; a megabyte-long argument splits in linear time; the daemon's peak memory
(``VmHWM`` from ``/proc``) stays far below what building the reply would take."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.client import Client
from tests.support.daemons import StdioDaemon
from tests.support.env import daemon_env
from tests.support.skill_tree import write_skill

pytestmark = pytest.mark.process

TOO_LARGE = 1008
#: Just under the 1 MiB a SKILL.md may hold.
COPIES = (1024 * 1024 - 512) // 3


def _peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _amplifier(tree: dict[str, Path]) -> None:
    # A 1 MiB body of `$0 `: each occurrence becomes the whole first argument.
    write_skill(
        tree["project"] / ".agents" / "skills",
        "amplify",
        "Repeats its argument.",
        body="$0 " * COPIES,
    )


def test_an_amplifying_invocation_is_refused_before_it_is_built(tree: dict[str, Path]) -> None:
    _amplifier(tree)
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, tree["project"])
        # 349 525 copies of a 1 KB argument: 340 MiB if it were built.
        refused = client.err("skills.invoke", command="/amplify " + "x" * 1024)
        assert refused["code"] == TOO_LARGE, refused
        assert "limits.maxReplyBytes" in refused["message"] and "16777216" in refused["message"]
        assert refused["data"]["limit"] == 16 * 1024 * 1024
        # A 100-byte argument (34 MiB) is over the limit too; without arguments it fits.
        assert client.err("skills.invoke", command="/amplify " + "y" * 100)["code"] == TOO_LARGE
        fits = client.ok("skills.invoke", command="/amplify")
        assert len(fits["body"]) > COPIES  # each `$0 ` became " "
        assert _peak_mb(daemon.proc.pid) < 200
    finally:
        daemon.kill()


@pytest.mark.slow  # a 7 MB reply of 350 000 substitutions: past 10 s on a loaded machine
def test_the_limit_is_the_users_to_raise(tree: dict[str, Path]) -> None:
    _amplifier(tree)
    (tree["tmp"] / "config.toml").write_text("[limits]\nmaxReplyBytes = 134217728\n")
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, tree["project"])
        built = client.ok("skills.invoke", command="/amplify " + "z" * 20)
        assert built["body"].count("z" * 20) == COPIES
    finally:
        daemon.kill()


def test_a_megabyte_argument_is_split_and_answered(tree: dict[str, Path]) -> None:
    write_skill(tree["project"] / ".agents" / "skills", "echo", "Echoes.", body="First: $0\n")
    daemon = StdioDaemon(environ=daemon_env(tree))
    try:
        client = Client(daemon, tree["project"])
        word = "w" * 1_000_000
        done = client.ok("skills.invoke", command=f'/echo "{word}" second')
        assert done["arguments"] == [word, "second"]
        other = client.ok("skills.list")  # the file-operation slots are free again
        assert other["skills"]
    finally:
        daemon.kill()
