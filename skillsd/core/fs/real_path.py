"""Where a path really leads, asked of the kernel.

``os.path.realpath`` resolves a path in Python, one ``lstat`` (and ``readlink``) per
component: about 35 µs for a path eight folders deep, paid on every skill file served. On Linux
the kernel resolves it once: open the path with ``O_PATH`` (no read, no side effect on a FIFO or
device) and read back the name of what was opened from ``/proc/self/fd``: about 5 µs, and the
answer is the file actually reached, not a walk that a rename could overtake. Where that cannot
be asked (no ``/proc``, another system, a path that does not exist), ``os.path.realpath``
answers, with the same result.
"""

from __future__ import annotations

import os

__all__ = ["real_path"]

_O_PATH = getattr(os, "O_PATH", 0)
_BY_FD = "/proc/self/fd/"
_ASK_KERNEL = bool(_O_PATH) and os.path.isdir(_BY_FD)


def real_path(path: str, *, strict: bool = False) -> str:
    """``os.path.realpath(path, strict=strict)``, resolved by the kernel where it can be."""
    if _ASK_KERNEL:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except OSError:
            pass  # missing, or a dangling link: the walk says how far it resolves, or raises
        else:
            try:
                found = os.readlink(_BY_FD + str(fd))
            except OSError:
                found = ""
            finally:
                os.close(fd)
            if found.startswith("/") and not found.endswith(" (deleted)"):
                return found
    return os.path.realpath(path, strict=strict)
