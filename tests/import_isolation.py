"""Prove a package imports nothing outside an allowlist (stdlib + named packages)."""

from __future__ import annotations

import subprocess
import sys


def imported_in_isolation(allowed: set[str], statements: str) -> str:
    """Run ``statements`` in a fresh interpreter where only stdlib and ``allowed`` top-level
    packages can be imported; returns its stdout (the test fails on any other import)."""
    code = (
        "import sys, importlib.abc\n"
        f"allowed = set(sys.stdlib_module_names) | set({sorted(allowed | {'_distutils_hack'})!r})\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] not in allowed:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"{statements}\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout
