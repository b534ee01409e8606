"""The worst scan finding of each skill folder, remembered between runs while its files stay the
same, so that showing scan marks beside every skill (``skillsd list``) costs a file listing per
skill, not a scan.

A folder's entry is keyed by a signature of its files (relative path, size, mtime) and of the
scan's own rules (the source of :mod:`skillsd.core.skill.fs_security_scan`), so an edit or a new
rule scans it again. The cache is a JSON file in skillsd's cache folder, read bounded and written
whole; a damaged one is ignored and rewritten. It holds at most :data:`MAX_ENTRIES` folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Literal

import platformdirs

from skillsd.core import limits
from skillsd.core.fs.atomic_files import atomic_write
from skillsd.core.fs.bounded_read import sha256_of_file
from skillsd.core.fs.fs_boundary import decode_json, read_file
from skillsd.core.install.fs_skill_digest import TreeTooLarge, list_files
from skillsd.core.skill import fs_security_scan as skill_scan
from skillsd.core.skill.fs_security_scan import scan_skill

__all__ = ["MAX_ENTRIES", "ScanMarks"]

Mark = Literal["danger", "warning"]
#: Folders remembered (the least recently seen go first).
MAX_ENTRIES = 20_000
_MAX_FILE_BYTES = 8 * 1024 * 1024
_FILE = "scan-marks.json"


def _rules_version() -> str:
    try:
        return sha256_of_file(skill_scan.__file__, None)[0][:16]
    except OSError:
        return "unknown"


def _mark(text: str | None) -> Mark | None:
    if text == "danger":
        return "danger"
    return "warning" if text == "warning" else None


class ScanMarks:
    """Remembered scan marks; :meth:`save` writes what was learned."""

    def __init__(self, cache_dir: str | None = None) -> None:
        self._path = os.path.join(cache_dir or platformdirs.user_cache_dir("skillsd"), _FILE)
        self._rules = _rules_version()
        self._entries: dict[str, list[str | None]] = {}
        self._changed = False
        with contextlib.suppress(OSError, ValueError):
            data, over = read_file(self._path, _MAX_FILE_BYTES)
            loaded = None if over else decode_json(data)
            if isinstance(loaded, dict) and loaded.get("rules") == self._rules:
                entries = loaded.get("entries")
                if isinstance(entries, dict):
                    self._entries = {
                        k: v
                        for k, v in entries.items()
                        if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
                    }

    def worst(self, folder: str) -> Mark | None:
        """The worst finding of the skill folder ``folder``: ``danger``, ``warning`` or None."""
        try:
            listed = list_files(
                folder, max_files=limits.INSTALL_MAX_FILES, max_bytes=limits.INSTALL_MAX_BYTES
            )
            signature = hashlib.sha256(
                "\n".join(f"{f.rel}\0{f.size}\0{f.mtime_ns}" for f in sorted(listed)).encode(
                    "utf-8", "surrogateescape"
                )
            ).hexdigest()
        except (OSError, TreeTooLarge):
            signature = None  # the scan itself says what it could not read
        remembered = self._entries.get(folder)
        if signature is not None and remembered is not None and remembered[0] == signature:
            self._entries[folder] = self._entries.pop(folder)  # most recently seen last
            return _mark(remembered[1])
        severities = {f.severity for f in scan_skill(folder)}
        found: Mark | None = (
            "danger" if "danger" in severities else "warning" if "warning" in severities else None
        )
        if signature is not None:
            self._entries.pop(folder, None)
            self._entries[folder] = [signature, found]
            self._changed = True
        return found

    def save(self) -> None:
        """Write the cache when something new was learned (best effort: a read-only cache
        folder only costs the next run its scans)."""
        if not self._changed:
            return
        entries = dict(list(self._entries.items())[-MAX_ENTRIES:])
        data = json.dumps({"rules": self._rules, "entries": entries}).encode()
        with contextlib.suppress(OSError):
            atomic_write(self._path, data, mode=0o600)
