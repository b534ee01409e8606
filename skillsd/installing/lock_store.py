"""Where a lock file lives, the install lock beside it, and reading and writing it.

``repo`` scope: ``skills-lock.json`` at the repository root (meant to be committed) and skills
in ``<root>/.agents/skills``. ``user`` scope: ``skills-lock.json`` in skillsd's state
directory and skills in ``~/.agents/skills``. One install at a time per lock: an ``flock`` on
``.skills-lock.json.lock`` beside it, held for a whole operation (a second one waits).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import msgspec
import platformdirs

from skillsd.core.errors import SkillsdError
from skillsd.core.lock_file import LOCK_FILE, LockError, LockFile, decode_lock, encode_lock
from skillsd.core.skill_digest import digest_of_files
from skillsd_protocol.errors import InstallFailedData, InvalidLockData

__all__ = [
    "InstallTarget",
    "atomic_write",
    "file_sha256",
    "install_lock",
    "load_manifest",
    "read_lock",
    "save_manifest",
    "state_dir",
    "target_for",
    "write_lock",
]

Scope = Literal["repo", "user"]
#: Where the canonical copy of every installed skill goes, below the root of its scope.
CANONICAL = os.path.join(".agents", "skills")


def state_dir(env: Mapping[str, str]) -> str:
    """skillsd's per-user state directory (``$XDG_STATE_HOME/skillsd`` on Linux)."""
    xdg = env.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "skillsd")
    return platformdirs.user_state_dir("skillsd")


@dataclass(frozen=True, slots=True)
class InstallTarget:
    """Everything an operation needs to know about where it installs."""

    scope: Scope
    #: The repository root (``repo``) or the home directory (``user``).
    root: str
    skills_dir: str
    lock_path: str
    home: str
    env: Mapping[str, str]
    #: Per-file digests of installed skills, by digest (to name the files a local edit touched).
    manifests_dir: str

    @property
    def lock_dir(self) -> str:
        return os.path.dirname(self.lock_path)

    def canonical(self, name: str) -> str:
        return os.path.join(self.skills_dir, name)

    @property
    def guard_path(self) -> str:
        return os.path.join(self.lock_dir, f".{LOCK_FILE}.lock")

    @property
    def journal_path(self) -> str:
        return os.path.join(self.lock_dir, f".{LOCK_FILE}.journal")


def target_for(scope: Scope, *, repo_root: str, home: str, env: Mapping[str, str]) -> InstallTarget:
    """The target of ``scope`` for a repository root (found by the caller from the cwd)."""
    states = state_dir(env)
    manifests = os.path.join(states, "install-manifests")
    if scope == "user":
        return InstallTarget(
            scope,
            home,
            os.path.join(home, CANONICAL),
            os.path.join(states, LOCK_FILE),
            home,
            env,
            manifests,
        )
    return InstallTarget(
        scope,
        repo_root,
        os.path.join(repo_root, CANONICAL),
        os.path.join(repo_root, LOCK_FILE),
        home,
        env,
        manifests,
    )


@contextlib.contextmanager
def install_lock(target: InstallTarget, *, wait: bool = True) -> Iterator[bool]:
    """Hold the install lock of ``target``, waiting until another install ends; with
    ``wait=False``, yield False at once instead when another process holds it."""
    os.makedirs(target.lock_dir, exist_ok=True)
    fd = os.open(target.guard_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def file_sha256(path: str) -> str | None:
    """The hex SHA-256 of a file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except FileNotFoundError:
        return None


def atomic_write(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data``: temp file in the same folder, fsync, rename, fsync the
    folder. A reader sees the old bytes or the new, never a mix."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    temp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_lock(target: InstallTarget) -> LockFile:
    """The lock of ``target`` (empty when there is none); ``invalid_lock`` when unusable."""
    try:
        with open(target.lock_path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return LockFile()
    except OSError as exc:
        raise SkillsdError(
            f"{target.lock_path}: cannot read: {exc.strerror}",
            InvalidLockData(path=target.lock_path),
        ) from None
    try:
        return decode_lock(data, path=target.lock_path)
    except LockError as exc:
        raise SkillsdError(
            exc.message, InvalidLockData(path=target.lock_path, field=exc.field)
        ) from None


def write_lock(target: InstallTarget, lock: LockFile) -> None:
    """Write the lock atomically; ``install_failed`` at step ``lock`` when it cannot be."""
    try:
        atomic_write(target.lock_path, encode_lock(lock))
    except OSError as exc:
        raise SkillsdError(
            f"{target.lock_path}: could not write the lock file: {exc.strerror or exc}",
            InstallFailedData(step="lock", path=target.lock_path),
        ) from None


_MANIFEST = msgspec.json.Decoder(dict[str, str])


def save_manifest(target: InstallTarget, digest: str, files: Mapping[str, str]) -> None:
    """Remember the per-file digests of an installed version (best effort)."""
    path = os.path.join(target.manifests_dir, digest.removeprefix("sha256:") + ".json")
    if os.path.exists(path):
        return
    with contextlib.suppress(OSError):
        atomic_write(path, msgspec.json.encode(dict(sorted(files.items()))))


def load_manifest(target: InstallTarget, digest: str) -> dict[str, str] | None:
    """The per-file digests of the version ``digest``, if this machine installed it."""
    path = os.path.join(target.manifests_dir, digest.removeprefix("sha256:") + ".json")
    try:
        with open(path, "rb") as fh:
            files = _MANIFEST.decode(fh.read())
    except (OSError, msgspec.DecodeError):
        return None
    # Named by its digest, so it is checked against it: a damaged record names nothing.
    return files if digest_of_files(files) == digest else None
