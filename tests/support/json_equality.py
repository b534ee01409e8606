"""Deep JSON equality that keeps JSON's types apart."""

from __future__ import annotations

from typing import Any


def same(a: Any, b: Any) -> bool:
    """Deep equality that keeps JSON types apart (``0`` is not ``false``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
