"""The official MCP conformance suite (``@modelcontextprotocol/conformance``), pinned with its
lock in tests/conformance/ and installed from it on first use."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1] / "conformance"
PACKAGE = "@modelcontextprotocol/conformance"
#: Node 20 lacks ``fs.globSync``, which the suite imports (see the file).
NODE20_SHIM = SUITE / "node20" / "register.mjs"


def suite_installed() -> Path:
    """The suite's command line, installed from the lock file first when it is missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the conformance suite needs Node.js and npm")
    pinned = json.loads((SUITE / "package.json").read_text())["dependencies"][PACKAGE]
    installed = SUITE / "node_modules" / PACKAGE / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != pinned:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=SUITE,
            check=True,
            timeout=600,
        )
    return SUITE / "node_modules" / ".bin" / "conformance"
