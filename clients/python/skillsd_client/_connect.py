"""Finding and starting daemons: the command to run, and the shared per-user socket daemon.

The client must work without the daemon's dependencies installed, so it cannot import
``skillsd`` (nor ``platformdirs``). The default socket path is therefore derived here the same
way ``skillsd.daemon.socket_paths`` derives it: ``$SKILLSD_RUNTIME_DIR``, else platformdirs'
``user_runtime_dir("skillsd")`` (``$XDG_RUNTIME_DIR/skillsd`` when that directory is usable, else
``/run/user/<uid>/skillsd``, else ``<tmp>/runtime-<uid>/skillsd``; macOS:
``~/Library/Caches/TemporaryItems/skillsd``). A test compares both on several environments.

Connect-or-start mirrors ``skillsd proxy``: try the socket; if nobody listens, start
``skillsd serve --socket PATH --idle-timeout N`` detached (stderr appended to ``PATH.log``) and
retry with bounded exponential backoff. Racing starters are fine: the daemon lock lets exactly
one daemon serve and every client reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from skillsd_client._errors import ConnectError
from skillsd_client._local_socket import (
    default_socket_path,
    runtime_dir,
)
from skillsd_client._transport import Transport, open_socket

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "default_command",
    "default_socket_path",
    "open_shared",
    "runtime_dir",
]

#: Idle timeout given to a daemon the client starts (the same as ``skillsd proxy``'s).
DEFAULT_IDLE_TIMEOUT = 600.0
#: How long connect-or-start keeps trying to reach a daemon it started.
DEFAULT_START_TIMEOUT = 10.0
_FIRST_DELAY = 0.01
_MAX_DELAY = 0.25
_NOT_LISTENING = (FileNotFoundError, ConnectionRefusedError)
_LOG_TAIL_BYTES = 4096
_started: list[subprocess.Popen[bytes]] = []


def default_command() -> list[str]:
    """How to run ``skillsd``: this interpreter's module if it has one, else the one on PATH."""
    if importlib.util.find_spec("skillsd") is not None:
        return [sys.executable, "-m", "skillsd"]
    found = shutil.which("skillsd")
    if found is None:
        raise ConnectError(
            "cannot find skillsd: it is not importable by this Python and not on PATH; "
            "install it (pip install skillsd) or pass command=[...]"
        )
    return [found]


# -- connect or start -----------------------------------------------------------------------


def _spawn_detached(
    command: Sequence[str],
    socket_path: Path,
    idle_timeout: float | None,
    env: Mapping[str, str] | None,
) -> subprocess.Popen[bytes]:
    """Start a socket daemon in its own session, stderr appended to ``<socket>.log``."""
    log_path = socket_path.with_name(socket_path.name + ".log")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    args = [*command, "serve", "--socket", os.fspath(socket_path)]
    if idle_timeout is not None and idle_timeout > 0:
        args += ["--idle-timeout", str(idle_timeout)]
    # Daemons outlive the client: keep each Popen so it is never collected while running, and
    # reap the ones that exited so a long-lived client collects no zombies.
    _started[:] = [p for p in _started if p.poll() is None]
    try:
        daemon = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_fd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise ConnectError(f"cannot start {args[0]}: {exc.strerror}") from None
    finally:
        os.close(log_fd)
    _started.append(daemon)
    return daemon


def _log_tail(log_path: Path) -> str:
    with contextlib.suppress(OSError), open(log_path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - _LOG_TAIL_BYTES))
        return fh.read().decode(errors="replace")
    return ""


async def open_shared(
    socket_path: str | os.PathLike[str] | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    start_timeout: float = DEFAULT_START_TIMEOUT,
) -> Transport:
    """Connect to the shared daemon at ``socket_path`` (default: the per-user socket, found
    with ``env``'s variables), starting one with ``command`` if none is listening."""
    path = default_socket_path(env) if socket_path is None else Path(socket_path)
    try:
        return await open_socket(path)
    except _NOT_LISTENING:
        pass
    except ConnectError:
        raise  # a daemon answered, but not one of ours
    except OSError as exc:
        raise ConnectError(f"cannot connect to {path}: {exc.strerror or exc}") from None
    daemon = _spawn_detached(command or default_command(), path, idle_timeout, env)
    deadline = time.monotonic() + start_timeout
    delay = _FIRST_DELAY
    while True:
        try:
            return await open_socket(path)
        except _NOT_LISTENING as exc:
            last: OSError = exc
        except ConnectError:
            raise
        except OSError as exc:
            raise ConnectError(f"cannot connect to {path}: {exc.strerror or exc}") from None
        # A started daemon that exited either lost the lock race (the winner is coming up)
        # or failed; keep trying until the deadline, then show what it logged.
        daemon.poll()
        if time.monotonic() >= deadline:
            log_path = path.with_name(path.name + ".log")
            status = "" if daemon.returncode is None else f" (it exited {daemon.returncode})"
            tail = _log_tail(log_path).strip()
            raise ConnectError(
                f"no skillsd daemon answered on {path} within {start_timeout:g}s{status}: "
                f"{last.strerror}; see {log_path}" + (f":\n{tail}" if tail else "")
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, _MAX_DELAY)
