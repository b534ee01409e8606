"""Copying one skill folder out of a fetched tree into staging, within the install limits.

Only folders and regular files are written. ``.git`` is left out. A symbolic link whose target
stays inside the skill is copied as what it points to (agents and the digest then see the same
bytes); one that leads outside the skill refuses the install. Files keep only their execute
bits (0755 or 0644): no setuid, no group or world write.
"""

from __future__ import annotations

import os
import shutil
import stat

from skillsd.core.errors import SkillsdError
from skillsd_protocol.errors import PathNotAllowedData, TooLargeData

__all__ = ["copy_skill"]


class _Counter:
    def __init__(self, src: str, max_files: int, max_bytes: int) -> None:
        self.src = src
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.files = 0
        self.bytes = 0

    def add(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > self.max_files:
            raise SkillsdError(
                f"{self.src}: more than {self.max_files} files (the install limit per skill)",
                TooLargeData(path=self.src, limit=self.max_files),
            )
        if self.bytes > self.max_bytes:
            raise SkillsdError(
                f"{self.src}: more than {self.max_bytes} bytes (the install limit per skill)",
                TooLargeData(path=self.src, limit=self.max_bytes),
            )


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def copy_skill(src: str, dest: str, *, max_files: int, max_bytes: int) -> None:
    """Copy the skill folder ``src`` to the new folder ``dest``; raises ``too_large`` past a
    limit and ``path_not_allowed`` for a link leaving the skill (naming the file)."""
    root = os.path.realpath(src)
    counter = _Counter(src, max_files, max_bytes)
    _copy_dir(root, root, dest, "", counter, {root})


def _copy_dir(
    root: str, folder: str, dest: str, rel: str, counter: _Counter, active: set[str]
) -> None:
    os.makedirs(dest, mode=0o755)
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if entry.name == ".git":
            continue
        entry_rel = f"{rel}{entry.name}"
        target = os.path.join(dest, entry.name)
        path = entry.path
        if entry.is_symlink():
            real = os.path.realpath(path)
            if not _inside(root, real):
                raise SkillsdError(
                    f"{entry_rel}: a symbolic link leading outside the skill "
                    f"({os.readlink(path)}); the install is refused",
                    PathNotAllowedData(file=entry_rel),
                )
            path = real
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue  # a dangling link inside the skill: nothing to copy
        if stat.S_ISDIR(st.st_mode):
            real_dir = os.path.realpath(path)
            if real_dir in active:
                raise SkillsdError(
                    f"{entry_rel}: a symbolic link loop inside the skill",
                    PathNotAllowedData(file=entry_rel),
                )
            _copy_dir(root, real_dir, target, entry_rel + "/", counter, active | {real_dir})
        elif stat.S_ISREG(st.st_mode):
            counter.add(st.st_size)
            shutil.copyfile(path, target, follow_symlinks=True)
            os.chmod(target, 0o755 if st.st_mode & 0o111 else 0o644)
        # Sockets, pipes and devices are not skill content: left out.
