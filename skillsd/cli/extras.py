"""How to add an optional extra (``mcp``, ``tui``) to the skillsd a user runs: the one hint
``skillsd mcp`` and ``skillsd ui`` print when theirs is missing."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

__all__ = ["extra_hint"]


def extra_hint(extra: str, package_dir: Path, python: str) -> str:
    """The command that adds ``extra`` where this ``skillsd`` package lives.

    A source checkout (the package sits beside the project's ``pyproject.toml``) installs its
    own extra; an installed package (skillsd is on no package index) gets the extra's
    requirements, which are, into its own environment."""
    checkout = package_dir.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "Makefile").is_file():
        return f"{python} -m pip install -e '{checkout}[{extra}]'"
    marker = f'extra == "{extra}"'
    try:
        required = importlib.metadata.requires("skillsd") or []
    except importlib.metadata.PackageNotFoundError:
        required = []
    wanted = [_without_extra(r, marker) for r in required if marker in r.replace("'", '"')]
    packages = " ".join(f"'{r}'" for r in wanted) or f"'skillsd[{extra}]'"
    return f"{python} -m pip install {packages}"


def _without_extra(requirement: str, marker: str) -> str:
    """``requirement`` without its ``extra == ...`` clause; a platform's condition stays (pip
    takes it on the command line)."""
    name, _, condition = requirement.replace("'", '"').partition(";")
    rest = [part.strip() for part in condition.split(" and ") if part.strip() != marker]
    return f"{name.strip()}; {' and '.join(rest)}" if rest else name.strip()
