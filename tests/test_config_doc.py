"""docs/config.md is generated from the config types: it is current, covers every key, and
every example it shows is accepted by the real config parser."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillsd.core.policy.config import parse_config_text

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "config.md"


@pytest.mark.process
def test_config_doc_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "docs/gen_config.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, "docs/config.md is stale: run python docs/gen_config.py"


def test_every_key_is_listed_with_type_default_and_example() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import gen_config
    finally:
        sys.path.remove(str(ROOT / "docs"))
    rows = {
        m.group(1): m.group(2).split(" | ")
        for m in re.finditer(r"^\| `([\w.]+)` \| (.*) \|$", DOC.read_text(), re.M)
    }
    keys = [key for key, _, _ in gen_config.documented_keys()]
    assert set(rows) == set(keys) and len(keys) == 34
    for key in keys:
        type_text, default, example, meaning = rows[key]
        assert type_text and default.startswith("`") and example.startswith("`") and meaning
        # Each example, alone, is a valid config setting that key.
        table, _, name = key.rpartition(".")
        text = (
            f"[{table}]\n{name} = {example.strip('`')}\n"
            if table
            else f"{name} = {example.strip('`')}\n"
        )
        parse_config_text(text, "example")
    # The complete example is one valid file.
    (whole,) = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)
    assert parse_config_text(whole, "example")["validation"] == "strict"
