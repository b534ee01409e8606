"""Daemon processes for the load and fault tests: a socket daemon on an isolated tree, its
memory, and (as root) a daemon running as an unprivileged user, where permissions and per-user
kernel limits apply for real.

Builds on `tests.support.daemons` (spawning, stopping, reading lines) and
`tests.support.skill_tree` (the project tree and its isolated environment).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import pwd
import resource
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.support import daemons as h

__all__ = [
    "ConfinedDaemon",
    "RssSampler",
    "chown_tree",
    "daemon_log",
    "daemon_log_size",
    "exhausted_inotify",
    "find_free_uid",
    "rss_bytes",
    "short_tempdir",
    "socket_daemon",
]


@contextlib.contextmanager
def short_tempdir(prefix: str = "skh-") -> Iterator[Path]:
    """A temp directory with a short path (a Unix socket path must stay under ~100 bytes),
    traversable by every user (0755) so an unprivileged daemon can reach what is inside."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        os.chmod(path, 0o755)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def socket_daemon(
    sock: Path, environ: dict[str, str], *args: str, user: int | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``skillsd serve --socket SOCK`` with ``environ`` (as ``user`` if given), stopped after.

    Its stderr goes to ``SOCK.log`` (see `daemon_log`), so a failing test can show it."""
    with (
        open(log_path(sock), "wb") as log,
        h.socket_daemon(sock, None, *args, environ=environ, stderr=log, user=user) as proc,
    ):
        yield proc


def log_path(sock: Path) -> Path:
    return sock.with_name(sock.name + ".log")


def daemon_log_size(sock: Path) -> int:
    """Bytes the daemon serving ``sock`` has written to stderr so far."""
    return log_path(sock).stat().st_size


def daemon_log(sock: Path, tail: int = 4000) -> str:
    """The end of what the daemon serving ``sock`` wrote to stderr."""
    try:
        return log_path(sock).read_text(errors="replace")[-tail:]
    except FileNotFoundError:
        return ""


def rss_bytes(pid: int) -> int:
    """Resident set size of a live process, from ``/proc``."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class RssSampler(threading.Thread):
    """Samples a process's RSS every ``interval`` seconds until stopped."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.pid = pid
        self.interval = interval
        self.samples: list[int] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            with contextlib.suppress(OSError, RuntimeError):
                self.samples.append(rss_bytes(self.pid))
            self._stop_event.wait(self.interval)

    def stop(self) -> list[int]:
        self._stop_event.set()
        self.join()
        return self.samples


def _uids_in_use() -> set[int]:
    used = {entry.pw_uid for entry in pwd.getpwall()}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                used.add(os.stat(f"/proc/{entry}").st_uid)
    return used


def find_free_uid(start: int = 61_000) -> int:
    """A uid no account and no running process has: per-user kernel limits (inotify instances
    and watches) can then be exhausted for it without touching anyone else."""
    used = _uids_in_use()
    return next(uid for uid in range(start, start + 4000) if uid not in used)


def chown_tree(top: Path, uid: int) -> None:
    """Give ``top`` and everything under it (symlinks themselves included) to ``uid``."""
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), uid, uid)
    os.lchown(top, uid, uid)


_PR_SET_KEEPCAPS = 8
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE = 47, 2
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what} failed")


def _drop_file_access_override() -> None:
    """Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: file modes apply to it, as to
    any user (dropped from the bounding set, so the exec'd daemon never regains them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "dropping a capability")


def _become(uid: int) -> None:
    """Switch to ``uid`` but keep CAP_DAC_READ_SEARCH across exec (ambient), only so the
    interpreter is reachable wherever it is installed (under a 0700 /root, say). Used where
    the per-user limits matter, not file modes."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0), "PR_SET_KEEPCAPS")
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    bit = 1 << _CAP_DAC_READ_SEARCH
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(bit, bit, bit), _CapData(0, 0, 0))
    _check(libc.capset(ctypes.byref(header), data), "capset")
    _check(
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE, _CAP_DAC_READ_SEARCH, 0, 0),
        "raising an ambient capability",
    )


class ConfinedDaemon(h.StdioDaemon):
    """``skillsd serve`` on pipes under restrictions a test needs.

    ``file_modes``: file permissions apply to the daemon even when the tests run as root
    (root's override capabilities are dropped). ``uid``: the daemon runs as that user (its
    per-user kernel limits count). ``max_file_bytes``: ``RLIMIT_FSIZE``, so a write past it
    fails with ``EFBIG`` as on a full quota (Python ignores the ``SIGXFSZ``).
    """

    def __init__(
        self,
        environ: dict[str, str],
        *,
        file_modes: bool = False,
        uid: int | None = None,
        max_file_bytes: int = -1,
    ) -> None:
        def confine() -> None:
            if max_file_bytes >= 0:
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
            if file_modes and os.geteuid() == 0:
                _drop_file_access_override()
            if uid is not None:
                _become(uid)

        self.proc = subprocess.Popen(
            h.skillsd("serve"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environ,
            preexec_fn=confine,
        )
        assert self.proc.stdout is not None
        out = self.proc.stdout
        self.reader = h.LineReader(lambda: os.read(out.fileno(), 65536), out.fileno())


def _fill_inotify(kind: str, files: list[str]) -> bool:
    """Use up this user's inotify ``instances``, or its ``watches`` (leaving instances free)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fds: list[int] = []
    if kind == "instances":
        while (fd := libc.inotify_init1(os.O_CLOEXEC)) >= 0:
            fds.append(fd)
        return ctypes.get_errno() == errno.EMFILE
    in_attrib = 0x4
    for _ in range(100):  # max_user_instances defaults to 128: the daemon still gets one
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            return False
        fds.append(fd)
        for path in files:
            if libc.inotify_add_watch(fd, path.encode(), in_attrib) < 0:
                return ctypes.get_errno() == errno.ENOSPC
    return False


@contextlib.contextmanager
def child_as(uid: int, work: Callable[[], bool]) -> Iterator[bool]:
    """Fork a child that switches to ``uid``, runs ``work`` and holds whatever it made (a
    socket, inotify instances) until the block ends; yields ``work``'s success."""
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: raw calls only, and never return into pytest
        status = 1
        try:
            os.close(ready_r)
            os.close(hold_w)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.write(ready_w, b"1" if work() else b"0")
            os.read(hold_r, 1)  # until the parent lets go
            status = 0
        finally:
            os._exit(status)
    os.close(ready_w)
    os.close(hold_r)
    try:
        yield os.read(ready_r, 1) == b"1"
    finally:
        os.close(hold_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


@contextlib.contextmanager
def exhausted_inotify(uid: int, kind: str, scratch: Path) -> Iterator[None]:
    """Hold ``uid``'s inotify ``kind`` ("instances" or "watches") exhausted for the block.

    A forked child switches to ``uid`` and takes every inotify instance, or every watch (on
    files it creates in ``scratch``), then waits; when it exits the kernel frees them all. The
    limits are per user, so only ``uid``, which nothing else runs as, is affected.
    """
    files: list[str] = []
    if kind == "watches":
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as fh:
            limit = int(fh.read())
        scratch.mkdir()
        for i in range(limit // 100 + 1):
            path = scratch / f"w{i}"
            path.touch()
            files.append(os.fspath(path))
        chown_tree(scratch, uid)
    with child_as(uid, lambda: _fill_inotify(kind, files)) as ready:
        if not ready:
            raise RuntimeError(f"could not exhaust inotify {kind} for uid {uid}")
        yield
