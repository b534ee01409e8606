"""The one filesystem boundary for everything a repository or a source controls.

What a repository holds is input, never instruction: a lock file, a settings file, a plugin
manifest or a skill folder may be hostile, and so may every path and symlink in it. Install,
restore, relink, remove, crash recovery, the scan, digests and plugin discovery go through
these functions, so a new surface gets the rules by construction:

- :func:`read_file` reads a regular file with a size cap, never a FIFO, device or socket and
  never a file of ``/proc``, ``/sys`` or ``/dev`` (a committed ``skills-lock.json ->
  /dev/zero`` or ``-> /proc/self/environ`` is refused before a byte is read);
- :func:`decode_json` refuses nesting deeper than :data:`MAX_JSON_DEPTH` before parsing, so
  200 000 ``[`` is an error naming the file, never a ``RecursionError``;
- :func:`beneath` resolves a path below a root and refuses when a folder on the way is a
  symlink leading out of it (a committed ``.agents -> ~/.agents``);
- :func:`copy_tree` copies a folder without following a single link, no deeper than
  :data:`MAX_TREE_DEPTH`, within file and byte limits;
- :func:`remove_tree` removes a file, link or folder beneath a root, never through a link.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from typing import Any, Literal

from skillsd.core.fs.bounded_read import read_regular_file

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_TREE_DEPTH",
    "OutsideRoot",
    "TreeLimit",
    "beneath",
    "copy_tree",
    "decode_json",
    "inside",
    "json_too_deep",
    "read_file",
    "remove_tree",
    "walk_tree",
]

#: JSON nesting past this is refused (no honest settings file or manifest comes near it).
MAX_JSON_DEPTH = 256
#: Folders below a skill's own folder (or a copied tree's root) past this are refused.
MAX_TREE_DEPTH = 64


class OutsideRoot(Exception):
    """``path`` is not beneath ``root``, or a folder on the way is a symlink leading out."""

    def __init__(self, path: str, root: str, via: str | None = None) -> None:
        why = f"{via} is a symbolic link leading outside {root}" if via else f"outside {root}"
        super().__init__(f"{path}: {why}; refused")
        self.path = path
        self.root = root
        self.via = via


class TreeLimit(Exception):
    """A tree holds more files, bytes or depth than allowed, or a link where none may be."""

    def __init__(
        self,
        message: str,
        *,
        kind: Literal["files", "bytes", "depth", "link"],
        limit: int = 0,
        rel: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.limit = limit
        self.rel = rel


def inside(root: str, path: str) -> bool:
    """Whether the (already normalised) ``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# -- reading ------------------------------------------------------------------------------------


def read_file(path: str, max_bytes: int) -> tuple[bytes, bool]:
    """The bytes of the regular file ``path`` (at most ``max_bytes``) and whether there were
    more. Raises ``FileNotFoundError``, :class:`~skillsd.core.fs.bounded_read.NotRegularFile` for
    FIFOs, devices, sockets, folders and kernel files, and ``OSError`` from the read."""
    read = read_regular_file(path, max_bytes)
    return read.data, read.over_cap


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects deeper than ``limit`` (linear
    time; brackets inside strings do not count)."""
    brackets = _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return False
    depth = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def decode_json(data: bytes) -> Any:
    """``json.loads`` of text a repository wrote; ``ValueError`` (with the reason) when it is
    not JSON or nests deeper than :data:`MAX_JSON_DEPTH`."""
    if json_too_deep(data):
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(data)


# -- resolving beneath a root -------------------------------------------------------------------


def beneath(root: str, path: str) -> str:
    """``path`` (absolute, or relative to ``root``) normalised, after checking that it lies
    below ``root`` and that no existing folder between them is a symlink leading outside
    ``root``. The last component itself may be a link (it is what an install replaces).
    Raises :class:`OutsideRoot`."""
    root_abs = os.path.normpath(os.path.abspath(root))
    full = os.path.normpath(os.path.join(root_abs, path))
    if not inside(root_abs, full) or full == root_abs:
        raise OutsideRoot(full, root_abs)
    real_root = os.path.realpath(root_abs)
    rel_parts = os.path.relpath(full, root_abs).split(os.sep)
    current = root_abs
    for part in rel_parts[:-1]:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break  # nothing further exists: what is made later is made by us, as folders
        if stat.S_ISLNK(st.st_mode):
            if not inside(real_root, os.path.realpath(current)):
                raise OutsideRoot(full, root_abs, via=current)
        elif not stat.S_ISDIR(st.st_mode):
            raise OutsideRoot(full, root_abs, via=current)
    return full


# -- walking, copying and removing --------------------------------------------------------------


def walk_tree(
    root: str,
    *,
    max_depth: int = MAX_TREE_DEPTH,
    max_entries: int | None = None,
    enter: Callable[[str, os.DirEntry[str]], bool] | None = None,
    skipped: Callable[[str, OSError | TreeLimit], None] | None = None,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every entry below ``root`` as (relative POSIX path, entry), folders before their
    contents, links never followed, ``.git`` left out. Raises :class:`TreeLimit` for a folder
    deeper than ``max_depth`` or past ``max_entries`` entries (folders count too: 300 000
    empty folders cost as much to walk as 300 000 files), and ``OSError`` for a folder that
    cannot be listed.

    ``enter(rel, entry)`` False keeps a folder's contents out (the folder itself is still
    yielded). With ``skipped``, a folder too deep or that cannot be listed is handed to it
    (with its relative path, ``""`` for ``root``) and left out instead, and the walk goes on.
    """
    pending: list[tuple[str, str, int]] = [("", root, 0)]
    seen = 0
    while pending:
        prefix, folder, depth = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name, reverse=True)
        except OSError as exc:
            if skipped is None:
                raise
            skipped(prefix.rstrip("/"), exc)
            continue
        for entry in entries:
            if entry.name == ".git":
                continue
            seen += 1
            if max_entries is not None and seen > max_entries:
                raise TreeLimit(
                    f"{root}: more than {max_entries} files and folders",
                    kind="files",
                    limit=max_entries,
                )
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False) and (enter is None or enter(rel, entry)):
                if depth + 1 <= max_depth:
                    pending.append((rel + "/", entry.path, depth + 1))
                else:
                    too_deep = TreeLimit(
                        f"{rel}: folders nested deeper than {max_depth} levels",
                        kind="depth",
                        limit=max_depth,
                        rel=rel,
                    )
                    if skipped is None:
                        raise too_deep
                    skipped(rel, too_deep)
            yield rel, entry


def copy_tree(
    src: str,
    dest: str,
    *,
    links: Literal["refuse", "skip"],
    max_files: int,
    max_bytes: int,
) -> list[str]:
    """Copy the folder ``src`` to the new folder ``dest`` following no link: with ``links``
    ``"refuse"`` a symlink anywhere is :class:`TreeLimit` (kind ``link``, naming it), with
    ``"skip"`` it is left out. Only folders and regular files are written, each file opened
    without following links and given 0755 or 0644. Returns what was skipped. Raises
    :class:`TreeLimit` past the file, byte or depth limits."""
    os.makedirs(dest, mode=0o755)
    skipped: list[str] = []
    files = 0
    total = 0
    for rel, entry in walk_tree(src, max_entries=max_files * 4 + 1000):
        target = os.path.join(dest, *rel.split("/"))
        if entry.is_symlink():
            if links == "refuse":
                raise TreeLimit(
                    f"{rel}: a symbolic link ({_link_text(entry.path)}); skills are copied "
                    "without links, the install is refused",
                    kind="link",
                    rel=rel,
                )
            skipped.append(rel)
            continue
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target, 0o755)
            continue
        if not entry.is_file(follow_symlinks=False):
            skipped.append(rel)  # sockets, pipes and devices are not skill content
            continue
        files += 1
        if files > max_files:
            raise TreeLimit(
                f"{src}: more than {max_files} files (the install limit per skill)",
                kind="files",
                limit=max_files,
            )
        total += _copy_file(entry.path, target, max_bytes - total, rel)
        if total > max_bytes:
            raise TreeLimit(
                f"{src}: more than {max_bytes} bytes (the install limit per skill)",
                kind="bytes",
                limit=max_bytes,
            )
    return skipped


def _link_text(path: str) -> str:
    try:
        return "-> " + os.readlink(path)
    except OSError:
        return "a link"


def _copy_file(path: str, target: str, budget: int, rel: str) -> int:
    """Copy one regular file opened without following links; at most ``budget + 1`` bytes are
    read, so a file that grows meanwhile cannot pass the limit unnoticed."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TreeLimit(f"{rel}: not a regular file", kind="link", rel=rel)
        mode = 0o755 if st.st_mode & 0o111 else 0o644
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        copied = 0
        try:
            while copied <= budget:
                chunk = os.read(fd, min(1 << 20, budget + 1 - copied))
                if not chunk:
                    break
                os.write(out, chunk)
                copied += len(chunk)
        finally:
            os.close(out)
        os.chmod(target, mode)
        return copied
    finally:
        os.close(fd)


def remove_tree(root: str, path: str) -> None:
    """Remove the file, link or folder ``path`` below ``root`` (a link is removed, never
    followed; :func:`beneath` is checked first). Nothing there is not an error."""
    full = beneath(root, path)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(full)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(full)
