"""The shared daemon's socket without the asyncio machinery: where it is (the runtime
directory, kept in step with ``skillsd.daemon.socket_paths``), whose it is (the server must
run as our own user), and one blocking request over it, for a short-lived process such as a
prompt hook that asks one question and exits (importing asyncio would cost it more than the
answer does).
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import stat
import struct
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillsd_client._errors import ConnectError, ProtocolError, RpcError

__all__ = [
    "APP_NAME",
    "RUNTIME_DIR_ENV",
    "SOCKET_NAME",
    "check_server_uid",
    "default_socket_path",
    "ensure_private_dir",
    "peer_uid",
    "request_once",
    "runtime_dir",
]

RUNTIME_DIR_ENV = "SKILLSD_RUNTIME_DIR"
SOCKET_NAME = "skillsd.sock"
APP_NAME = "skillsd"
#: The largest answer :func:`request_once` reads (a suggestion list is a few kilobytes).
_MAX_ANSWER_BYTES = 16 * 1024 * 1024


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory holding the default socket (not created)."""
    env = os.environ if environ is None else environ
    override = env.get(RUNTIME_DIR_ENV)
    if override:
        return Path(override)
    if sys.platform == "darwin":
        return Path(_expand_home("~/Library/Caches/TemporaryItems", env)) / APP_NAME
    xdg = env.get("XDG_RUNTIME_DIR", "")
    # platformdirs accepts $XDG_RUNTIME_DIR when absolute, below parents no other user can
    # swap, and (if it exists) a 0700 directory of ours; a missing one is accepted too.
    if posixpath.isabs(xdg) and not _parent_problem(xdg) and not _dir_problem(xdg, missing_ok=True):
        return Path(xdg) / APP_NAME
    return Path(_platform_runtime_base()) / APP_NAME


def _platform_runtime_base() -> str:
    uid = os.geteuid()
    if sys.platform.startswith("openbsd"):
        path = f"/tmp/run/user/{uid}"
    elif sys.platform.startswith(("freebsd", "netbsd")):
        path = f"/var/run/user/{uid}"
    else:
        path = f"/run/user/{uid}"
    if not _dir_problem(path, missing_ok=False):
        return path
    return posixpath.join(tempfile.gettempdir(), f"runtime-{uid}")


def _expand_home(path: str, env: Mapping[str, str]) -> str:
    home = env.get("HOME")
    return path.replace("~", home, 1) if home else os.path.expanduser(path)


def _dir_problem(path: str, *, missing_ok: bool) -> bool:
    """Whether ``path`` fails XDG's runtime-dir rules (a 0700 directory we own, no symlink)."""
    try:
        info = os.lstat(str(Path(path)))
    except FileNotFoundError:
        return not missing_ok
    except OSError:
        return True
    return (
        stat.S_ISLNK(info.st_mode)
        or not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.geteuid()
        or stat.S_IMODE(info.st_mode) != 0o700
    )


def _parent_problem(path: str) -> bool:
    """Whether a parent of ``path`` lets other users replace it (world-writable, not sticky,
    or owned by someone else inside a shared directory)."""
    in_shared = False
    for parent in reversed(Path(path).parents):
        try:
            if in_shared and os.lstat(parent).st_uid not in (0, os.geteuid()):
                return True
            mode = parent.stat().st_mode
        except OSError:
            return False
        in_shared = bool(mode & stat.S_IWOTH)
        if in_shared and not mode & stat.S_ISVTX:
            return True
    return False


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` 0700 if missing; refuse it unless it is a real directory we own, 0700
    (another user could otherwise plant the socket we are about to trust)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(path.parent)
        shared = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if st.st_uid not in (os.geteuid(), 0) or (shared and not st.st_mode & stat.S_ISVTX):
            raise ConnectError(
                f"{path.parent} (parent of the runtime directory) can be modified by other "
                "users; refusing to use it"
            )
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        else:
            os.chmod(path, 0o700)  # mkdir's mode went through the umask
        st = os.lstat(path)
    except OSError as exc:
        raise ConnectError(f"cannot use runtime directory {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise ConnectError(f"runtime directory {path} is a symlink; refusing to use it")
    if not stat.S_ISDIR(st.st_mode):
        raise ConnectError(f"runtime directory {path} is not a directory; refusing to use it")
    if st.st_uid != os.geteuid():
        raise ConnectError(
            f"runtime directory {path} is owned by uid {st.st_uid}, not by you; refusing to use it"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        raise ConnectError(
            f"runtime directory {path} has mode {mode:04o}, expected 0700; "
            f"fix it with `chmod 700 {path}` or remove it"
        )
    return path


def default_socket_path(environ: Mapping[str, str] | None = None) -> Path:
    """The shared daemon's socket, in the (created and checked) runtime directory."""
    return ensure_private_dir(runtime_dir(environ)) / SOCKET_NAME


def check_server_uid(path: str | os.PathLike[str], server_uid: int, own_uid: int) -> None:
    """Refuse (`ConnectError`) a daemon at ``path`` running as another user than ``own_uid``:
    a socket in a shared directory may belong to someone else's server, which would then see
    (and answer) every request."""
    if server_uid != own_uid:
        raise ConnectError(
            f"refusing the daemon at {os.fspath(path)}: it runs as uid {server_uid}, not as "
            f"you (uid {own_uid}); another user may have started it there"
        )


def peer_uid(sock: Any) -> int | None:
    """The uid of the process at the other end of a Unix socket, or None where the OS cannot
    tell (the same reading as ``skillsd.daemon.proxy.peer_uid``, which the client cannot
    import)."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", creds)[1])
    if hasattr(socket, "LOCAL_PEERCRED"):  # macOS/BSD: struct xucred {version, uid, ...}
        creds = sock.getsockopt(0, socket.LOCAL_PEERCRED, struct.calcsize("2I"))
        return int(struct.unpack("2I", creds[: struct.calcsize("2I")])[1])
    return None


def _answer(sock: socket.socket, socket_path: str | os.PathLike[str], *, skip: int) -> Any:
    """The answer line after ``skip`` others (``initialize``'s), decoded."""
    buffered = bytearray()
    while buffered.count(b"\n") <= skip:
        chunk = sock.recv(65536)
        if not chunk:
            raise ProtocolError(f"the daemon at {os.fspath(socket_path)} closed without answering")
        buffered += chunk
        if len(buffered) > _MAX_ANSWER_BYTES:
            raise ProtocolError(f"the answer is larger than {_MAX_ANSWER_BYTES} bytes")
    try:
        return json.loads(bytes(buffered).split(b"\n")[skip])
    except ValueError as exc:
        raise ProtocolError(f"an answer that is not JSON: {exc}") from None


def request_once(
    socket_path: str | os.PathLike[str],
    method: str,
    params: Any,
    *,
    timeout: float,
    client_name: str | None = None,
) -> Any:
    """Send one request to the daemon at ``socket_path`` and return its ``result`` (plain
    JSON data); with ``client_name``, an ``initialize`` naming the client goes first. ``OSError``
    when nobody listens there, `ConnectError` for a server of another user, `RpcError` for an
    error answer, `ProtocolError` for an answer that is not one."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(os.fspath(socket_path))
        uid = peer_uid(sock)
        check_server_uid(
            socket_path, os.stat(socket_path).st_uid if uid is None else uid, os.geteuid()
        )
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        sent = json.dumps(request).encode() + b"\n"
        if client_name is not None:
            hello = {
                "id": 0,
                "method": "initialize",
                "params": {"clientInfo": {"name": client_name}},
            }
            sent = json.dumps({"jsonrpc": "2.0", **hello}).encode() + b"\n" + sent
        sock.sendall(sent)
        answer = _answer(sock, socket_path, skip=1 if client_name is not None else 0)
    if not isinstance(answer, dict):
        raise ProtocolError("an answer that is not a JSON-RPC response")
    error = answer.get("error")
    if isinstance(error, dict):
        raise RpcError(
            error.get("code", 0), str(error.get("message", "")), error.get("data"), method=method
        )
    return answer.get("result")
