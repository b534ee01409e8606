"""Where the socket daemon lives: a private per-user runtime directory (SPEC 10).

The directory is ``$SKILLSD_RUNTIME_DIR`` when set (tests point it at a temporary directory),
else ``platformdirs.user_runtime_dir("skillsd")``. It is created 0700; an existing one that is
not a real directory, not owned by the user, or not exactly 0700 is refused, never served from:
another user could otherwise plant or read the socket.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import platformdirs

__all__ = [
    "RUNTIME_DIR_ENV",
    "RuntimeDirError",
    "check_socket_path",
    "companion_path",
    "default_socket_path",
    "ensure_private_dir",
    "runtime_dir",
]

RUNTIME_DIR_ENV = "SKILLSD_RUNTIME_DIR"
SOCKET_NAME = "skillsd.sock"
#: ``sockaddr_un.sun_path`` holds 108 bytes on Linux (104 on the BSDs), NUL included.
MAX_SOCKET_PATH_BYTES = 103


class RuntimeDirError(Exception):
    """The runtime directory or socket path cannot be used safely; the message says why."""


def runtime_dir() -> Path:
    """The runtime directory path (not created)."""
    override = os.environ.get(RUNTIME_DIR_ENV)
    if override:
        return Path(override)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; its fallback is still per-user.
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("skillsd"))


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` 0700 if missing; refuse it unless it is a directory owned by us, 0700."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_parent(path.parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    else:
        os.chmod(path, 0o700)  # mkdir's mode went through the umask
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise RuntimeDirError(f"runtime directory {path} is a symlink; refusing to use it")
    if not stat.S_ISDIR(st.st_mode):
        raise RuntimeDirError(f"runtime directory {path} is not a directory")
    uid = os.geteuid()
    if st.st_uid != uid:
        raise RuntimeDirError(
            f"runtime directory {path} is owned by uid {st.st_uid}, not by you (uid {uid}); "
            "refusing to use it"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        raise RuntimeDirError(
            f"runtime directory {path} has mode {mode:04o}, expected 0700; "
            f"fix it with `chmod 700 {path}` or remove it"
        )
    return path


def _check_parent(parent: Path) -> None:
    # Whoever can rename entries in the parent can swap our directory after we checked it:
    # that must be us, root, or a sticky shared directory such as /tmp.
    st = os.stat(parent)
    shared = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if st.st_uid not in (os.geteuid(), 0) or (shared and not st.st_mode & stat.S_ISVTX):
        raise RuntimeDirError(
            f"{parent} (parent of the runtime directory) can be modified by other users; "
            "refusing to use it"
        )


def default_socket_path() -> Path:
    """The default socket, in the (created and checked) runtime directory."""
    return ensure_private_dir(runtime_dir()) / SOCKET_NAME


def check_socket_path(path: Path) -> Path:
    """``path`` if it fits in a Unix socket address."""
    size = len(os.fsencode(path))
    if size > MAX_SOCKET_PATH_BYTES:
        raise RuntimeDirError(
            f"socket path {path} is {size} bytes long; Unix sockets allow at most "
            f"{MAX_SOCKET_PATH_BYTES}: choose a shorter path"
        )
    return path


def companion_path(socket_path: Path, suffix: str) -> Path:
    """A file kept next to the socket: ``.lock`` (daemon lock), ``.log`` (spawned daemon)."""
    return socket_path.with_name(socket_path.name + suffix)
