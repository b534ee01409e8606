"""The types the daemon decodes in its file-operation threads are ready before any thread starts.

msgspec works a Struct type's decoding information out on its first use; two threads doing that
at once for the same type crashed the daemon (a segmentation fault in the soak, two catalog
lookups parsing config files at the same moment). Each run below is a fresh interpreter whose
threads all make their first decode of each type together, with the interpreter switching
threads as often as it can; before the fix about one run in seven crashed on the config alone.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

RACE = textwrap.dedent(
    """
    import json, os, sys, tempfile, threading
    sys.setswitchinterval(1e-6)
    from skillsd.core.catalog.model_tools import decode_tool_call
    from skillsd.core.install.lock_file import decode_lock
    from skillsd.core.policy.config import parse_config_table
    from skillsd.core.policy.fs_state import StateStore

    folder = tempfile.mkdtemp()
    state = os.path.join(folder, "state.json")
    with open(state, "w") as fh:
        json.dump({"version": 1, "permissions": {"Bash(git status)": {"decision": "allow"}}}, fh)
    lock = json.dumps({"version": 1, "skills": {"pdf": {
        "source": "https://example.com/skills.git", "sourceType": "git",
        "digest": "sha256:" + "0" * 64}}}).encode()
    firsts = [
        lambda: parse_config_table({"permissions": {"allow": ["skill_load"]}}, "config.toml"),
        lambda: StateStore(state).read(),
        lambda: decode_lock(lock, path="skills.lock"),
        lambda: decode_tool_call("skill_search", {"query": "pdf"}),
    ]
    failures = []
    for first in firsts:
        barrier = threading.Barrier(8)

        def run(first=first):
            barrier.wait()
            try:
                first()
            except Exception as exc:  # a wrong answer is reported; a crash ends the process
                failures.append(repr(exc))

        threads = [threading.Thread(target=run) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    print(json.dumps(failures))
    """
)


@pytest.mark.process
def test_first_decodes_in_many_threads_at_once_do_not_crash() -> None:
    for _ in range(12):
        done = subprocess.run(
            [sys.executable, "-c", RACE], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
        assert done.stdout.strip() == "[]", done.stdout
