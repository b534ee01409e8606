"""Where the socket daemon lives: a private per-user runtime directory (docs/security.md).

The directory is ``$SKILLSD_RUNTIME_DIR`` when set (tests point it at a temporary directory),
else ``platformdirs.user_runtime_dir("skillsd")``. It is created 0700; an existing one that is
not a real directory, not owned by the user, or not exactly 0700 is refused, never served from:
another user could otherwise plant or read the socket.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import platformdirs

from skillsd_client._errors import ConnectError
from skillsd_client._local_socket import ensure_private_dir as client_private_dir

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
    """Create ``path`` 0700 if missing; refuse it unless it is a real directory owned by us,
    exactly 0700, in a parent no other user can rename entries of. The one implementation is
    the client's (a client must refuse a directory the daemon would refuse)."""
    try:
        return client_private_dir(path)
    except ConnectError as exc:
        raise RuntimeDirError(str(exc)) from None


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
