"""Placing skills so that a crash leaves the previous state or the new one, never a mix.

A change is a list of moves (put a staged folder or link at a destination, or take what is
there away), prepared in staging folders beside each destination's folder (same filesystem,
so every move is one ``rename``). Before the first move, a journal naming every move and the
SHA-256 of the lock file to come is written beside the lock; the lock's atomic write is the
commit point. Whoever takes the install lock next (every operation does) finishes a journal
it finds: the lock was written, so staging is cleared; or it was not, so each move is undone.

``SKILLSD_TEST_INSTALL_PAUSE_AT=<step>`` (tests only) makes the process announce the step on
stderr and wait there, so a test can kill it at that point.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import sys
import time
from collections.abc import Mapping

import msgspec

from skillsd.installing.lock_store import InstallTarget, atomic_write, file_sha256

__all__ = [
    "PAUSE_ENV",
    "Move",
    "Transaction",
    "pause_point",
    "recover",
    "remove_path",
    "sweep_staging",
]

PAUSE_ENV = "SKILLSD_TEST_INSTALL_PAUSE_AT"
_STAGING_PREFIX = ".skillsd-staging-"


def pause_point(step: str, env: Mapping[str, str]) -> None:
    """Stop here (tests only) when ``SKILLSD_TEST_INSTALL_PAUSE_AT`` names ``step``."""
    if env.get(PAUSE_ENV) == step:
        sys.stderr.write(f"skillsd: paused at {step}\n")
        sys.stderr.flush()
        while True:
            time.sleep(3600)


class Move(msgspec.Struct, kw_only=True):
    """Put ``new`` (a staged path, or None to only take away) at ``dest``; what was at
    ``dest`` goes to ``backup`` (None when nothing was there)."""

    dest: str
    new: str | None = None
    backup: str | None = None


class Journal(msgspec.Struct, kw_only=True):
    """``lock_sha256``: the lock to come; ``committed``: set when the lock does not change
    (a restore), where the lock's write cannot be the commit point."""

    lock_sha256: str
    old_lock_sha256: str | None
    moves: list[Move]
    staging: list[str]
    committed: bool = False


def remove_path(path: str) -> None:
    """Remove a file, link or folder (a link is removed, never followed)."""
    if os.path.islink(path) or not os.path.isdir(path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        shutil.rmtree(path)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Transaction:
    """One change to a target's tree and lock (used under the install lock)."""

    def __init__(self, target: InstallTarget) -> None:
        self.target = target
        self.moves: list[Move] = []
        self._staging: dict[str, str] = {}
        self._created: list[str] = []
        self._token = secrets.token_hex(4)

    def staging_for(self, dest: str) -> str:
        """A staging folder on the filesystem of ``dest`` (created on first use)."""
        folder = os.path.dirname(dest)
        self._make_dirs(folder)
        parent = os.path.dirname(os.path.realpath(folder))
        # Beside the destination's folder (outside every skills root the agents scan), unless
        # that is another filesystem: then inside it, under a hidden name.
        if os.stat(parent).st_dev != os.stat(folder).st_dev:
            parent = os.path.realpath(folder)
        staging = self._staging.get(parent)
        if staging is None:
            staging = os.path.join(parent, f"{_STAGING_PREFIX}{self._token}")
            os.makedirs(staging, exist_ok=True)
            self._staging[parent] = staging
        return staging

    def _make_dirs(self, folder: str) -> None:
        """``makedirs``, remembering which folders it created (an abandoned change removes
        them again when they are still empty)."""
        missing: list[str] = []
        current = folder
        while not os.path.lexists(current):
            missing.append(current)
            current = os.path.dirname(current)
        os.makedirs(folder, exist_ok=True)
        self._created.extend(missing)

    def new_path(self, dest: str, label: str = "new") -> str:
        """A fresh path in the staging folder of ``dest`` to build the new content in."""
        staging = self.staging_for(dest)
        return os.path.join(staging, f"{label}-{len(self.moves)}-{os.path.basename(dest)}")

    def put(self, dest: str, new: str | None) -> None:
        """Plan: ``new`` replaces whatever is at ``dest`` (None: only take it away)."""
        backup = None
        if os.path.lexists(dest):
            backup = os.path.join(
                self.staging_for(dest), f"old-{len(self.moves)}-{os.path.basename(dest)}"
            )
        self.moves.append(Move(dest=dest, new=new, backup=backup))

    def commit(self, lock_bytes: bytes, env: Mapping[str, str]) -> None:
        """Journal, move, write the lock, clean up."""
        journal = Journal(
            lock_sha256=hashlib.sha256(lock_bytes).hexdigest(),
            old_lock_sha256=file_sha256(self.target.lock_path),
            moves=self.moves,
            staging=sorted(self._staging.values()),
        )
        atomic_write(self.target.journal_path, msgspec.json.encode(journal))
        pause_point("journaled", env)
        try:
            for index, move in enumerate(self.moves):
                if move.backup is not None and os.path.lexists(move.dest):
                    os.rename(move.dest, move.backup)
                if move.new is not None:
                    os.rename(move.new, move.dest)
                _fsync_dir(os.path.dirname(move.dest))
                if index == 0:
                    pause_point("placing", env)
            pause_point("placed", env)
            if journal.lock_sha256 == journal.old_lock_sha256:
                journal.committed = True
                atomic_write(self.target.journal_path, msgspec.json.encode(journal))
            else:
                atomic_write(self.target.lock_path, lock_bytes)
        except OSError:
            # A move or the lock's write failed (permissions, a full disk): put back what moved.
            if not journal.committed:
                _undo(journal)
            _finish(self.target, journal)
            raise
        pause_point("locked", env)
        _finish(self.target, journal)

    def abandon(self) -> None:
        """Drop the staging folders of a change that was never committed, and the folders
        made for it that are still empty."""
        for staging in self._staging.values():
            shutil.rmtree(staging, ignore_errors=True)
        for folder in self._created:  # deepest first
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def _finish(target: InstallTarget, journal: Journal) -> None:
    for staging in journal.staging:
        shutil.rmtree(staging, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target.journal_path)


def _undo(journal: Journal) -> None:
    for move in reversed(journal.moves):
        if move.backup is not None and os.path.lexists(move.backup):
            if os.path.lexists(move.dest):
                remove_path(move.dest)
            os.rename(move.backup, move.dest)
        elif (
            move.backup is None
            and move.new is not None
            and not os.path.lexists(move.new)
            and os.path.lexists(move.dest)
        ):
            # Nothing was there before and the new content already moved in: take it out.
            remove_path(move.dest)


def recover(target: InstallTarget) -> str | None:
    """Finish a change a crash interrupted (under the install lock); says what was done."""
    try:
        with open(target.journal_path, "rb") as fh:
            journal = msgspec.json.decode(fh.read(), type=Journal)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError):
        # A journal is written atomically before any move: a broken one means no move ran.
        with contextlib.suppress(OSError):
            os.unlink(target.journal_path)
        return "dropped an unreadable install journal"
    lock_now = file_sha256(target.lock_path)
    if journal.committed or (
        lock_now == journal.lock_sha256 and journal.lock_sha256 != journal.old_lock_sha256
    ):
        _finish(target, journal)
        return "finished an interrupted install (the lock file had been written)"
    _undo(journal)
    _finish(target, journal)
    return "undid an interrupted install (the lock file had not been written)"


def sweep_staging(folders: list[str]) -> None:
    """Remove staging folders left by a process killed before it journaled anything."""
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(_STAGING_PREFIX):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
