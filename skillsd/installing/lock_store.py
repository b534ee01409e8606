"""Where a lock file lives, the install lock beside it, and reading and writing it.

``repo`` scope: ``skills-lock.json`` at the repository root (meant to be committed) and skills
in ``<root>/.agents/skills``. ``user`` scope: ``skills-lock.json`` in skillsd's state
directory and skills in ``~/.agents/skills``.

Everything else an install keeps (the install lock, the crash journal, staging folders and
backups) is bookkeeping, and bookkeeping never lives in a repository, where a clone could plant
it: it goes to a work folder in skillsd's state directory, one per root (named by a hash of the
root's real path), created 0700. One install at a time per root: an ``flock`` on the work
folder's ``install.lock``, held for a whole operation (a second one waits).

The lock file itself is what a repository commits, so it is read through the filesystem
boundary: bounded, never a FIFO, device or kernel file, JSON nesting checked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import msgspec
import platformdirs

from skillsd.core import limits
from skillsd.core.discovery.agent_folders import SKILL_FOLDERS, user_folder_path
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.atomic_files import atomic_write
from skillsd.core.fs.bounded_read import NotRegularFile, sha256_of_file
from skillsd.core.fs.fs_boundary import OutsideRoot, beneath, inside, json_too_deep, read_file
from skillsd.core.install.fs_skill_digest import digest_of_files
from skillsd.core.install.lock_file import LOCK_FILE, LockError, LockFile, decode_lock, encode_lock
from skillsd_protocol.errors import InstallFailedData, InvalidLockData

__all__ = [
    "MAX_LOCK_BYTES",
    "InstallTarget",
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
#: The largest lock file read (about 8 000 locked skills; no honest lock comes near it).
MAX_LOCK_BYTES = 4 * 1024 * 1024


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
    #: This root's bookkeeping folder in the state directory (install lock, journal, staging).
    work_dir: str
    #: The user-scope skill folders (the canonical one and every agent's), as given.
    user_folders: tuple[str, ...]
    #: The same, resolved once (``confine`` runs for every path an operation touches).
    user_folders_real: tuple[str, ...]
    #: The per-skill limits (``limits.maxInstallFiles``/``maxInstallBytes``): nothing larger
    #: is copied or hashed, whatever a tree holds. Set from the config once per operation.
    max_files: int = limits.INSTALL_MAX_FILES
    max_bytes: int = limits.INSTALL_MAX_BYTES
    #: The whole of one download (``limits.fetchSeconds``).
    fetch_seconds: float = limits.INSTALL_FETCH_SECONDS

    def confine(self, path: str) -> str:
        """``path`` normalised, checked as a place this target may write, remove or read as
        installed. ``repo``: beneath the repository root through no link leading out of it,
        and never inside a folder read as the user's own skills (a restore must not create
        what every other repository trusts). ``user``: beneath the home directory, or beneath
        one of the user's skill folders (which may be the user's own links, to dotfiles say).
        Raises :class:`~skillsd.core.fs.fs_boundary.OutsideRoot`."""
        if self.scope == "repo":
            full = beneath(self.root, path)
            real = os.path.realpath(full)
            for folder, folder_real in zip(self.user_folders, self.user_folders_real, strict=True):
                if inside(folder_real, real):
                    raise OutsideRoot(full, self.root, via=f"{folder} (the user's own skills)")
            return full
        refused: OutsideRoot | None = None
        for root in (self.root, *self.user_folders):
            try:
                return beneath(root, path)
            except OutsideRoot as exc:
                refused = refused or exc
        assert refused is not None
        raise refused

    def canonical(self, name: str) -> str:
        return os.path.join(self.skills_dir, name)

    @property
    def guard_path(self) -> str:
        return os.path.join(self.work_dir, "install.lock")

    @property
    def journal_path(self) -> str:
        return os.path.join(self.work_dir, "journal.json")

    def make_work_dir(self) -> None:
        """Create the work folder (0700, and its parents) if it is not there yet."""
        os.makedirs(self.work_dir, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.work_dir, 0o700)


def _work_dir(states: str, scope: Scope, root: str) -> str:
    key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return os.path.join(states, "installs", f"{scope}-{key}")


def target_for(scope: Scope, *, repo_root: str, home: str, env: Mapping[str, str]) -> InstallTarget:
    """The target of ``scope`` for a repository root (found by the caller from the cwd)."""
    states = state_dir(env)
    manifests = os.path.join(states, "install-manifests")
    user_folders = tuple(
        dict.fromkeys(
            [
                os.path.join(home, CANONICAL),
                *(
                    user_folder_path(f, home=home, env=env)
                    for f in SKILL_FOLDERS
                    if f.scope == "user" and not f.system
                ),
            ]
        )
    )
    real_folders = tuple(os.path.realpath(f) for f in user_folders)
    if scope == "user":
        return InstallTarget(
            scope,
            home,
            os.path.join(home, CANONICAL),
            os.path.join(states, LOCK_FILE),
            home,
            env,
            manifests,
            _work_dir(states, scope, home),
            user_folders,
            real_folders,
        )
    return InstallTarget(
        scope,
        repo_root,
        os.path.join(repo_root, CANONICAL),
        os.path.join(repo_root, LOCK_FILE),
        home,
        env,
        manifests,
        _work_dir(states, scope, repo_root),
        user_folders,
        real_folders,
    )


@contextlib.contextmanager
def install_lock(target: InstallTarget, *, wait: bool = True) -> Iterator[bool]:
    """Hold the install lock of ``target``, waiting until another install ends; with
    ``wait=False``, yield False at once instead when another process holds it."""
    target.make_work_dir()
    fd = os.open(target.guard_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
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
    """The hex SHA-256 of a lock file's bytes, or None when it does not exist (or is not a
    regular file of at most :data:`MAX_LOCK_BYTES`, which no lock skillsd wrote is)."""
    try:
        got = sha256_of_file(path, MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable"
    return "too-large" if got is None else got[0]


def read_lock(target: InstallTarget) -> LockFile:
    """The lock of ``target`` (empty when there is none); ``invalid_lock`` when unusable."""
    try:
        data, over = read_file(target.lock_path, MAX_LOCK_BYTES)
    except FileNotFoundError:
        return LockFile()
    except NotRegularFile:
        raise SkillsdError(
            f"{target.lock_path}: not a regular file (a FIFO, device, folder or kernel file); "
            "a lock file is a plain JSON file",
            InvalidLockData(path=target.lock_path),
        ) from None
    except OSError as exc:
        raise SkillsdError(
            f"{target.lock_path}: cannot read: {exc.strerror or exc}",
            InvalidLockData(path=target.lock_path),
        ) from None
    if over:
        raise SkillsdError(
            f"{target.lock_path}: larger than {MAX_LOCK_BYTES} bytes; not a lock file skillsd "
            "reads",
            InvalidLockData(path=target.lock_path),
        )
    if json_too_deep(data):
        raise SkillsdError(
            f"{target.lock_path}: JSON nested deeper than a lock file is",
            InvalidLockData(path=target.lock_path),
        )
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
