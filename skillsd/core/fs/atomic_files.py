"""Replacing a file skillsd writes so that a reader sees the old bytes or the new, never a mix.

The state file, a lock file, the install journal, install manifests, the scan-marks cache, the
MCP token file, a remote skill's placeholder and the embedding cache are all written by
:func:`atomic_write`: the bytes go to a new temp file in the same folder
(``.<name>.<random>.tmp``), which is fsync-ed, renamed over the file, and then the folder is
fsync-ed so that the rename survives a crash too (``durable=False`` skips both fsyncs, for a
file derived from something else that a crash may lose).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable
from typing import IO

__all__ = ["OpenTemp", "atomic_write", "fsync_dir", "make_folder"]

#: Opens a new temp file for writing (a seam for fault-injection tests).
OpenTemp = Callable[[str], IO[bytes]]


def make_folder(directory: str, mode: int = 0o777) -> None:
    """``os.makedirs(directory, mode, exist_ok=True)``, raising ``NotADirectoryError`` (not
    ``FileExistsError``, whose "File exists" hides the problem) when a file sits there."""
    try:
        os.makedirs(directory, mode=mode, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, f"{directory} is not a directory") from None


def fsync_dir(directory: str) -> None:
    """Make the entries of ``directory`` (a rename into it) durable. Some filesystems cannot
    fsync a folder; that is not an error, the change is in place either way."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(
    path: str,
    data: bytes,
    *,
    mode: int = 0o644,
    dir_mode: int = 0o777,
    open_temp: OpenTemp | None = None,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data``. A missing folder is made first (``dir_mode``); the new
    file gets ``mode`` (less the umask). ``open_temp`` opens the temp file instead of the
    default exclusive create. ``durable=False`` leaves out the fsyncs: a reader still sees the
    old bytes or the new, but a crash may lose the new.

    Raises ``OSError`` naming what failed; then the temp file is gone and ``path`` is exactly
    as it was.
    """
    directory = os.path.dirname(path) or "."
    temp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    make_folder(directory, dir_mode)
    try:
        if open_temp is None:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
            fh: IO[bytes] = os.fdopen(fd, "wb")
        else:
            fh = open_temp(temp)
        with fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        fsync_dir(directory)
