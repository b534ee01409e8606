"""The documents' code blocks, run as printed: found in the Markdown, then run by a fresh
interpreter."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks of a Markdown document; a block indented in a list item loses its
    fence's indentation."""
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```$", markdown, re.S | re.M)
    return [
        "".join(line[len(indent) :] for line in body.splitlines(keepends=True))
        for indent, body in blocks
    ]


def python_script(markdown: str) -> str:
    """The ```python blocks of a Markdown document, joined into one script."""
    return "\n".join(python_blocks(markdown))


def run_python(
    code: str, *, cwd: Path, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -c CODE`` in ``cwd`` with ``env``, output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
