"""Layering rules that keep the core sans-IO (see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "skillsd"
CORE = PACKAGE / "core"
#: The operations layer sits between the core and the faces and is as sans-IO as the core.
OPERATIONS = PACKAGE / "operations.py"
FORBIDDEN_IN_CORE = {
    "asyncio",
    "socket",
    "selectors",
    "watchdog",
    "ssl",
    "threading",
    "skillsd.daemon",
    "skillsd.operations",  # the layer above the core: importing it back would be a cycle
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _sans_io_modules() -> list[Path]:
    return [*sorted(CORE.glob("*.py")), OPERATIONS]


def test_core_never_imports_io_frameworks() -> None:
    assert OPERATIONS.is_file()
    offenders = {}
    for path in _sans_io_modules():
        bad = {
            name
            for name in _imports(path)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE)
        }
        if bad:
            offenders[path.name] = sorted(bad)
    assert not offenders, f"core modules import I/O frameworks: {offenders}"


def test_core_does_not_import_the_cli() -> None:
    for path in _sans_io_modules():
        assert not any(n.startswith("skillsd.cli") for n in _imports(path)), path.name


def test_operations_import_only_the_core_and_the_protocol() -> None:
    ours = {n for n in _imports(OPERATIONS) if n.split(".")[0] in {"skillsd", "skillsd_protocol"}}
    assert ours, "the operations layer imports nothing of ours?"
    outside = {n for n in ours if not n.startswith(("skillsd.core", "skillsd_protocol"))}
    assert not outside, f"skillsd.operations reaches above the core: {sorted(outside)}"
