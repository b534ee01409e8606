"""Placing skills so that a crash leaves the previous state or the new one, never a mix.

A change is a list of moves (put a staged folder or link at a destination, or take what is
there away), prepared in staging folders on the destination's filesystem, so every move is one
``rename``. Staging folders live in the root's work folder in skillsd's state directory; only
when that is another filesystem does one go beside the destination's folder, under a hidden
name. A journal in the work folder names every staging folder before it is made and every move
before the first one; the lock's atomic write is the commit point. Whoever takes the install
lock next (every operation does) finishes a journal it finds: the lock was written, so staging
is cleared; or it was not, so each move is undone.

The journal is skillsd's own file, but recovery still acts only on what it owns: a
destination beneath the target's root through no outside link, backups and new content inside
the journal's staging folders, staging folders in the work folder or named as ours beneath the
root. A journal naming anything else is dropped untouched.

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

from skillsd.core.fs.atomic_files import atomic_write, fsync_dir
from skillsd.core.fs.fs_boundary import OutsideRoot, inside, read_file, remove_tree
from skillsd.installing.lock_store import InstallTarget, file_sha256

__all__ = [
    "PAUSE_ENV",
    "Move",
    "Transaction",
    "pause_point",
    "recover",
    "sweep_staging",
]

PAUSE_ENV = "SKILLSD_TEST_INSTALL_PAUSE_AT"
#: A staging folder beside a destination (only when the work folder is another filesystem).
_STAGING_PREFIX = ".skillsd-staging-"
#: A staging folder in the work folder.
_WORK_STAGING_PREFIX = "staging-"
_MAX_JOURNAL_BYTES = 4 * 1024 * 1024


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
    """``lock_sha256``: the lock to come (None while only staging folders are named: nothing
    has moved yet); ``committed``: set when the lock does not change (a restore), where the
    lock's write cannot be the commit point."""

    lock_sha256: str | None = None
    old_lock_sha256: str | None = None
    moves: list[Move] = msgspec.field(default_factory=list)
    staging: list[str] = msgspec.field(default_factory=list)
    committed: bool = False


# Decoding information worked out at import, on one thread (see `skillsd.core.policy.config`).
_JOURNAL_DECODER = msgspec.json.Decoder(Journal)


class Transaction:
    """One change to a target's tree and lock (used under the install lock)."""

    def __init__(self, target: InstallTarget) -> None:
        self.target = target
        self.moves: list[Move] = []
        #: Staging folder by the device it is on.
        self._staging: dict[int, str] = {}
        self._created: list[str] = []
        self._token = secrets.token_hex(4)

    def _beneath(self, path: str) -> str:
        """``path`` checked as a place the target may write (``InstallTarget.confine``)."""
        return self.target.confine(path)

    def staging_for(self, dest: str) -> str:
        """A staging folder on the filesystem of ``dest`` (created on first use)."""
        folder = os.path.dirname(self._beneath(dest))
        self._make_dirs(folder)
        device = os.stat(folder).st_dev
        staging = self._staging.get(device)
        if staging is not None:
            return staging
        self.target.make_work_dir()
        if os.stat(self.target.work_dir).st_dev == device:
            staging = os.path.join(
                self.target.work_dir, f"{_WORK_STAGING_PREFIX}{self._token}-{len(self._staging)}"
            )
        else:
            # Another filesystem: beside the destination's folder (outside every skills
            # folder the agents scan) when that is still beneath the root, else inside it.
            parent = os.path.dirname(folder)
            try:
                staging = self._beneath(os.path.join(parent, f"{_STAGING_PREFIX}{self._token}"))
            except OutsideRoot:
                staging = self._beneath(os.path.join(folder, f"{_STAGING_PREFIX}{self._token}"))
        self._staging[device] = staging
        # Named in the journal before it exists, so a crash from here on leaves nothing behind.
        self._write_journal(Journal(staging=sorted(self._staging.values())))
        os.makedirs(staging, mode=0o700, exist_ok=True)
        return staging

    def _write_journal(self, journal: Journal) -> None:
        self.target.make_work_dir()
        atomic_write(self.target.journal_path, msgspec.json.encode(journal))

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
        """Plan: ``new`` replaces whatever is at ``dest`` (None: only take it away).
        Raises :class:`~skillsd.core.fs.fs_boundary.OutsideRoot` for a ``dest`` not beneath the
        target's root."""
        dest = self._beneath(dest)
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
        self._write_journal(journal)
        pause_point("journaled", env)
        try:
            for index, move in enumerate(self.moves):
                if move.backup is not None and os.path.lexists(move.dest):
                    os.rename(move.dest, move.backup)
                if move.new is not None:
                    os.rename(move.new, move.dest)
                fsync_dir(os.path.dirname(move.dest))
                if index == 0:
                    pause_point("placing", env)
            pause_point("placed", env)
            if journal.lock_sha256 == journal.old_lock_sha256:
                journal.committed = True
                self._write_journal(journal)
            else:
                atomic_write(self.target.lock_path, lock_bytes)
        except OSError:
            # A move or the lock's write failed (permissions, a full disk): put back what moved.
            if not journal.committed:
                _undo(self.target, journal)
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
        if self._staging:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.target.journal_path)


def _finish(target: InstallTarget, journal: Journal) -> None:
    for staging in journal.staging:
        shutil.rmtree(staging, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target.journal_path)


def _undo(target: InstallTarget, journal: Journal) -> None:
    for move in reversed(journal.moves):
        if move.backup is not None and os.path.lexists(move.backup):
            _remove(target, move.dest)
            os.rename(move.backup, move.dest)
        elif (
            move.backup is None
            and move.new is not None
            and not os.path.lexists(move.new)
            and os.path.lexists(move.dest)
        ):
            # Nothing was there before and the new content already moved in: take it out.
            _remove(target, move.dest)


def _remove(target: InstallTarget, path: str) -> None:
    full = target.confine(path)
    remove_tree(os.path.dirname(full), full)


def _owned_staging(target: InstallTarget, path: str) -> bool:
    """Whether ``path`` is a staging folder an install of ``target`` can have made."""
    path = os.path.normpath(path)
    name = os.path.basename(path)
    if os.path.dirname(path) == os.path.normpath(target.work_dir):
        return name.startswith(_WORK_STAGING_PREFIX)
    if not name.startswith(_STAGING_PREFIX):
        return False
    try:
        target.confine(path)
    except OutsideRoot:
        return False
    return True


def _journal_is_ours(target: InstallTarget, journal: Journal) -> bool:
    """Whether every path the journal names is one recovery may act on."""
    if not all(os.path.isabs(p) and _owned_staging(target, p) for p in journal.staging):
        return False
    staging = [os.path.normpath(p) for p in journal.staging]
    for move in journal.moves:
        try:
            if not os.path.isabs(move.dest) or target.confine(move.dest) != move.dest:
                return False
        except OutsideRoot:
            return False
        for held in (move.new, move.backup):
            if held is not None and not any(
                os.path.normpath(held) != s and inside(s, os.path.normpath(held)) for s in staging
            ):
                return False
    return True


def recover(target: InstallTarget) -> str | None:
    """Finish a change a crash interrupted (under the install lock); says what was done."""
    try:
        data, over = read_file(target.journal_path, _MAX_JOURNAL_BYTES)
        journal = None if over else _JOURNAL_DECODER.decode(data)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError):
        journal = None
    if journal is None:
        # A journal is written atomically before any move: a broken one means no move ran.
        with contextlib.suppress(OSError):
            os.unlink(target.journal_path)
        return "dropped an unreadable install journal"
    if not _journal_is_ours(target, journal):
        with contextlib.suppress(OSError):
            os.unlink(target.journal_path)
        return "dropped an install journal naming paths outside what installs own"
    lock_now = file_sha256(target.lock_path)
    if journal.lock_sha256 is not None and (
        journal.committed
        or (lock_now == journal.lock_sha256 and journal.lock_sha256 != journal.old_lock_sha256)
    ):
        _finish(target, journal)
        return "finished an interrupted install (the lock file had been written)"
    _undo(target, journal)
    _finish(target, journal)
    return "undid an interrupted install (the lock file had not been written)"


def sweep_staging(target: InstallTarget) -> None:
    """Remove staging folders of the work folder that no journal names (left by a process
    killed between making one and journaling it; called after :func:`recover`)."""
    try:
        names = os.listdir(target.work_dir)
    except OSError:
        return
    for name in names:
        if name.startswith(_WORK_STAGING_PREFIX):
            shutil.rmtree(os.path.join(target.work_dir, name), ignore_errors=True)
