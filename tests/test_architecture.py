"""Layering rules that keep the core sans-IO (see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "skillsd" / "core"
FORBIDDEN_IN_CORE = {
    "asyncio",
    "socket",
    "selectors",
    "watchdog",
    "ssl",
    "threading",
    "skillsd.daemon",
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_never_imports_io_frameworks() -> None:
    offenders = {}
    for path in sorted(CORE.glob("*.py")):
        bad = {
            name
            for name in _imports(path)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE)
        }
        if bad:
            offenders[path.name] = sorted(bad)
    assert not offenders, f"core modules import I/O frameworks: {offenders}"


def test_core_does_not_import_the_cli() -> None:
    for path in CORE.glob("*.py"):
        assert not any(n.startswith("skillsd.cli") for n in _imports(path)), path.name
