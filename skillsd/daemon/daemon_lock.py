"""One daemon per socket: an exclusive ``flock`` on ``<socket>.lock`` (docs/security.md).

The lock is taken before the daemon touches the socket path, so a second ``serve`` can never
delete a live daemon's socket as "stale". The lock file holds the owner's pid for messages; it is
never deleted (deleting it would let two daemons lock two different files of the same name).
The kernel drops the lock when the process dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["AlreadyRunning", "DaemonLock", "read_owner"]


class AlreadyRunning(Exception):
    """Another live daemon holds the lock."""

    def __init__(self, lock_path: Path, pid: int | None) -> None:
        owner = f" (pid {pid})" if pid else ""
        super().__init__(f"another skillsd daemon{owner} holds {lock_path}")
        self.lock_path = lock_path
        self.pid = pid


class DaemonLock:
    """A held lock; `release` (or process exit) lets the next daemon in."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> DaemonLock:
        """Lock ``path`` without waiting; raise `AlreadyRunning` if a live daemon has it."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise AlreadyRunning(path, pid) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def read_owner(path: Path) -> int | None:
    """The pid recorded in a lock file (for messages and tests), if any."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read_pid(fd)
    finally:
        os.close(fd)
