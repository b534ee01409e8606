"""What skillsd keeps of each configured remote (``[[remote]]``) in its cache directory, and the
blocking steps that fill it (run them in a thread: the daemon's loop never waits on a remote).

Layout under ``<cache>/remotes/``:

* ``<remote>/listing.json``: the last ``skills/list`` the remote answered (every page), with when
  it was fetched, its ``ttlMs`` and ``cacheScope``. A refresh within the ttl asks nothing; a
  failed refresh keeps it (its skills are then served ``stale``).
* ``<remote>/state.json``: the last refresh's error, and each refused skill with the reason.
* ``blobs/<sha256 hex>``: every verified file, by digest (a file is stored only after its size
  and digest matched the listing; it is checked again when used).
* ``<remote>/skills/<skill>/``: a loaded skill's verified files as a folder, replaced whole
  (staged, then renamed) after a load verified every file: what the runtime serves, and what is
  served ``stale`` when the remote is down.

Nothing is read from a remote before a load asks for it (no prefetch). ``cacheScope: "private"``
listings and files are kept readable by the user only; ``"public"`` ones as ordinary files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from dataclasses import dataclass
from typing import Any

import msgspec

from skillsd.core.fs.atomic_files import atomic_write, fsync_dir, make_folder
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.policy.config import RemoteConfig
from skillsd.core.remote.fs_remote_roots import STALE_MARK, remote_cache_dir, stub_skill_file
from skillsd.core.remote.fs_token_file import read_token_file
from skillsd.core.remote.remote_verify import Refusal, sha256_digest
from skillsd.core.remote.remote_wire import RemoteEntry, RemoteError, RemoteFile
from skillsd.runtime.remote_http import DEFAULT_TIMEOUT, Listing, RemoteClient
from skillsd.runtime.remote_load import load_skill
from skillsd_protocol import Diagnostic

__all__ = [
    "Loaded",
    "RemoteState",
    "RemoteStore",
    "StoredListing",
    "entry_fingerprint",
    "remote_problems",
]

#: A loaded skill holds at most this many bytes (the sum of its listed sizes).
MAX_SKILL_BYTES = 50 * 1024 * 1024
#: A skill's folder name, from the remote's listing: nothing that could leave the cache.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class StoredFile(msgspec.Struct, frozen=True):
    uri: str
    path: str
    digest: str
    size: int


class StoredEntry(msgspec.Struct, frozen=True):
    uri: str
    name: str
    frontmatter: dict[str, Any]
    files: list[StoredFile] | None

    def entry(self) -> RemoteEntry:
        files = None
        if self.files is not None:
            files = tuple(RemoteFile(f.uri, f.path, f.digest, f.size) for f in self.files)
        return RemoteEntry(self.uri, self.name, self.frontmatter, files)


class StoredListing(msgspec.Struct, rename="camel"):
    """A remote's last listing."""

    url: str
    fetched_at: float
    ttl_ms: int
    cache_scope: str
    version: str
    skills: list[StoredEntry]
    refused: list[str] = msgspec.field(default_factory=list)

    def lifetime(self, cap: float | None = None) -> float:
        """Seconds the listing may be used: its ttl, or ``cap`` when shorter."""
        ttl = self.ttl_ms / 1000
        return ttl if cap is None else min(ttl, cap)

    def fresh(self, now: float, cap: float | None = None) -> bool:
        return now - self.fetched_at < self.lifetime(cap)

    def named(self, name: str) -> RemoteEntry | None:
        return next((s.entry() for s in self.skills if s.name == name), None)


class RemoteState(msgspec.Struct, rename="camel"):
    """How the last exchanges with a remote went."""

    last_attempt: float = 0.0
    last_success: float = 0.0
    error: str | None = None
    #: Skill name -> why it was refused (the check and the field).
    refused: dict[str, str] = msgspec.field(default_factory=dict)
    #: Skill name -> the fingerprint (:func:`entry_fingerprint`) of the listing entry whose
    #: files its folder holds, every one verified.
    verified: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def stale(self) -> bool:
        """The last refresh failed: what is kept is the last verified listing and files."""
        return self.error is not None


@dataclass(frozen=True, slots=True)
class Loaded:
    """A load's outcome: the folder serving the skill (None when refused or never loaded),
    whether it is the last verified copy of a remote that could not be reached, and the
    refusal."""

    folder: str | None
    stale: bool = False
    refusal: Refusal | None = None
    error: str | None = None


_LISTING = msgspec.json.Decoder(StoredListing)
_STATE = msgspec.json.Decoder(RemoteState)


class RemoteStore:
    """The cache of every remote, in ``cache_dir`` (default: the platform's user cache)."""

    def __init__(self, cache_dir: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.root = os.path.join(cache_dir, "remotes") if cache_dir else remote_cache_dir()
        self.timeout = timeout
        #: Remote name -> its listing file's identity, the URL it was listed from, and its
        #: entries by skill name (parsed once per listing, not once per skill served).
        self._entries: dict[str, tuple[tuple[int, int, int], str, dict[str, StoredEntry]]] = {}

    # -- reading the cache (cheap: no network) --------------------------------------------------

    def _dir(self, remote: str) -> str:
        return os.path.join(self.root, remote)

    def listing(self, remote: str) -> StoredListing | None:
        """The remote's last listing, or None (never listed, or the file is unusable)."""
        try:
            data = read_regular_file(os.path.join(self._dir(remote), "listing.json"), 1 << 30)
            return _LISTING.decode(data.data)
        except (OSError, ValueError, msgspec.DecodeError):
            return None

    def listed_entry(self, remote: str, url: str, skill: str) -> RemoteEntry | None:
        """``skill``'s entry in the last listing ``remote`` answered from ``url``, or None
        (not listed, never listed, or listed from another URL). No network."""
        path = os.path.join(self._dir(remote), "listing.json")
        try:
            info = os.stat(path)
        except OSError:
            return None
        key = (info.st_ino, info.st_mtime_ns, info.st_size)
        held = self._entries.get(remote)
        if held is None or held[0] != key:
            listing = self.listing(remote)
            if listing is None:
                return None
            entries: dict[str, StoredEntry] = {}
            for stored in listing.skills:
                entries.setdefault(stored.name, stored)  # the first of a name, as loads do
            held = (key, listing.url, entries)
            self._entries[remote] = held
        found = held[2].get(skill) if held[1] == url else None
        return found.entry() if found is not None else None

    def state(self, remote: str) -> RemoteState:
        try:
            data = read_regular_file(os.path.join(self._dir(remote), "state.json"), 16 << 20)
            return _STATE.decode(data.data)
        except (OSError, ValueError, msgspec.DecodeError):
            return RemoteState()

    def skill_folder(self, remote: str, skill: str) -> str | None:
        """Where a loaded skill's verified files are, if it was ever loaded."""
        if not _SAFE_NAME.match(skill):
            return None
        folder = os.path.join(self._dir(remote), "skills", skill)
        return folder if os.path.isfile(os.path.join(folder, "SKILL.md")) else None

    # -- talking to the remote (blocking) --------------------------------------------------------

    def client(self, remote: RemoteConfig, version: str | None = None) -> RemoteClient:
        """A conversation with ``remote``, its token read from its private file (``version``:
        the protocol version it spoke when it was listed)."""
        token = None
        if remote.token_file:
            path = os.path.expanduser(remote.token_file)
            token, why = read_token_file(path)
            if token is None:
                raise RemoteError(f"remote {remote.name!r}: tokenFile {path}: {why}")
        return RemoteClient(remote.url, token=token, timeout=self.timeout, version=version)

    def refresh(self, remote: RemoteConfig, *, force: bool = False) -> StoredListing | None:
        """The remote's listing, asked anew unless the cached one is within its ttl; a failure
        keeps the last listing and records the error (its skills are then ``stale``)."""
        return self.try_refresh(remote, force=force)[0]

    def try_refresh(
        self, remote: RemoteConfig, *, force: bool = False
    ) -> tuple[StoredListing | None, str | None]:
        """As :meth:`refresh`, with the error when the remote was asked and did not answer
        (None when it answered, or was not asked: its listing is within its ttl)."""
        now = time.time()
        cached = self.listing(remote.name)
        if (
            not force
            and cached is not None
            and cached.url == remote.url
            and cached.fresh(now, remote.refresh_seconds)
        ):
            return cached, None
        state = self.state(remote.name)
        state.last_attempt = now
        try:
            with self.client(remote) as client:
                listing = client.list_skills()
        except RemoteError as exc:
            state.error = str(exc)
            self._save_state(remote.name, state)
            self._mark_stale(remote.name, True)
            kept = cached if cached is not None and cached.url == remote.url else None
            return kept, state.error
        stored = _stored(remote.url, listing, now)
        self._write(remote.name, "listing.json", msgspec.json.encode(stored), stored.cache_scope)
        state.error = None
        state.last_success = now
        listed = {s.name for s in stored.skills}
        state.refused = {k: v for k, v in state.refused.items() if k in listed}
        self._sync_folders(remote.name, stored, state)
        self._save_state(remote.name, state)
        self._mark_stale(remote.name, False)
        return stored, None

    def _mark_stale(self, remote: str, stale: bool) -> None:
        """The mark the catalog reads in the remote's (watched) skills folder."""
        mark = os.path.join(self._dir(remote), "skills", STALE_MARK)
        if not stale:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(mark)
        elif not os.path.exists(mark):
            make_folder(os.path.dirname(mark), 0o700)
            with open(mark, "wb"):
                pass

    def _sync_folders(self, remote: str, listing: StoredListing, state: RemoteState) -> None:
        """One folder per listed skill: its verified files while they are what the listing
        names, else a ``SKILL.md`` written from the listing entry (fetched at the next load);
        the folders of skills no longer listed go."""
        skills = os.path.join(self._dir(remote), "skills")
        make_folder(skills, 0o700)
        wanted: set[str] = set()
        for stored in listing.skills:
            entry = stored.entry()
            if not _SAFE_NAME.match(entry.name) or entry.name in wanted:
                continue
            wanted.add(entry.name)
            folder = os.path.join(skills, entry.name)
            fingerprint = entry_fingerprint(entry)
            if (
                fingerprint is not None
                and state.verified.get(entry.name) == fingerprint
                and os.path.isfile(os.path.join(folder, "SKILL.md"))
            ):
                continue  # the verified copy is still the listed one, every file of it
            state.verified.pop(entry.name, None)
            stub = stub_skill_file(entry.frontmatter, remote)
            current = os.path.join(folder, "SKILL.md")
            try:
                same = read_regular_file(current, len(stub) + 1).data == stub
            except (OSError, ValueError):
                same = False
            if not same or os.listdir(folder) != ["SKILL.md"]:
                _write_stub(folder, stub, listing.cache_scope)
        for name in os.listdir(skills):
            if (name not in wanted and not name.startswith(".")) or (
                name.startswith(".") and name.endswith(".tmp")
            ):
                shutil.rmtree(os.path.join(skills, name), ignore_errors=True)

    def load(self, remote: RemoteConfig, skill: str) -> Loaded:
        """Load ``skill`` as a host does (``SKILL.md`` first, then every listed file, each
        verified before the next is read) into its folder; offline, the last verified copy
        is served ``stale``; a refusal is recorded (``skillsd doctor`` shows it)."""
        started = time.time()
        listing = self.refresh(remote)
        entry = listing.named(skill) if listing is not None else None
        last = self.skill_folder(remote.name, skill)
        if entry is None:  # not listed (or nothing listed yet)
            known = self.state(remote.name)
            error = known.error
            if error is not None and last is not None and skill in known.verified:
                return Loaded(last, stale=True, error=error)
            return Loaded(None, error=error or f"remote {remote.name!r} lists no skill {skill!r}")
        if not _SAFE_NAME.match(entry.name):
            return self._refused(remote.name, skill, Refusal("listing", "SKILL.md", "unsafe name"))
        total = sum(f.size for f in entry.files or ())
        if total > MAX_SKILL_BYTES:
            why = f"the listing gives {total} bytes, over the {MAX_SKILL_BYTES} a skill may hold"
            return self._refused(remote.name, skill, Refusal("size", "SKILL.md", why))
        scope = listing.cache_scope if listing is not None else "private"
        state = self.state(remote.name)
        fingerprint = entry_fingerprint(entry)
        if (
            fingerprint is not None
            and last is not None
            and state.verified.get(entry.name) == fingerprint
        ):
            return Loaded(last, stale=state.stale)  # loaded before, and still what is listed
        if state.error is not None and state.last_attempt >= started:
            return Loaded(None, error=state.error)  # just failed to answer: one timeout is enough
        try:
            with self.client(remote, listing.version if listing else None) as client:
                outcome = load_skill(
                    client,
                    entry,
                    cached=self._blob,
                    on_verified=lambda f, data: self._store_blob(f, data, scope),
                )
        except RemoteError as exc:
            state = self.state(remote.name)
            state.error = str(exc)
            self._save_state(remote.name, state)
            return (
                Loaded(last, stale=True, error=str(exc)) if last else Loaded(None, error=str(exc))
            )
        if outcome.refusal is not None:
            return self._refused(remote.name, skill, outcome.refusal)
        skills = os.path.join(self._dir(remote.name), "skills")
        folder = self._replace_folder(
            skills, entry.name, [(f.path, data) for f, data in outcome.verified], scope
        )
        state = self.state(remote.name)
        state.refused.pop(skill, None)
        if fingerprint is not None:
            state.verified[entry.name] = fingerprint
        self._save_state(remote.name, state)
        return Loaded(folder, stale=state.stale)

    # -- writing the cache ---------------------------------------------------------------------

    def _refused(self, remote: str, skill: str, refusal: Refusal) -> Loaded:
        state = self.state(remote)
        state.refused[skill] = f"{refusal.check}: {refusal}"
        self._save_state(remote, state)
        return Loaded(None, refusal=refusal)

    def _save_state(self, remote: str, state: RemoteState) -> None:
        self._write(remote, "state.json", msgspec.json.encode(state), "private")

    def _write(self, remote: str, name: str, data: bytes, scope: str) -> None:
        private = scope != "public"
        make_folder(self.root, 0o700)
        atomic_write(
            os.path.join(self._dir(remote), name),
            data,
            mode=0o600 if private else 0o644,
            dir_mode=0o700,
        )

    def _blob_path(self, digest: str) -> str:
        return os.path.join(self.root, "blobs", digest.removeprefix("sha256:"))

    def _blob(self, file: RemoteFile) -> bytes | None:
        """A verified file kept by its digest (the caller checks it again before use)."""
        try:
            return read_regular_file(self._blob_path(file.digest), file.size + 1).data
        except (OSError, ValueError):
            return None

    def _store_blob(self, file: RemoteFile, data: bytes, scope: str) -> None:
        mode = 0o644 if scope == "public" else 0o600
        atomic_write(self._blob_path(file.digest), data, mode=mode, dir_mode=0o700)

    @staticmethod
    def _replace_folder(skills: str, skill: str, files: list[tuple[str, bytes]], scope: str) -> str:
        """The skill's folder replaced whole by ``files`` (staged beside it, then renamed)."""
        make_folder(skills, 0o700)
        stage = os.path.join(skills, f".{skill}.{os.getpid()}.{time.monotonic_ns()}.tmp")
        mode = 0o644 if scope == "public" else 0o600
        try:
            for path, data in files:
                atomic_write(os.path.join(stage, *path.split("/")), data, mode=mode)
            folder = os.path.join(skills, skill)
            old = stage + ".old"
            with contextlib.suppress(FileNotFoundError):
                os.rename(folder, old)
            os.rename(stage, folder)
            fsync_dir(skills)
            shutil.rmtree(old, ignore_errors=True)
            return folder
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise


def _write_stub(folder: str, stub: bytes, scope: str) -> None:
    """A listed skill's ``SKILL.md`` alone in its folder. Written without fsync: it is derived
    from the listing (a crash leaves at worst a folder the next refresh rewrites), and a
    thousand fsyncs would make a cold refresh of a large remote take seconds."""
    if os.path.isdir(folder) and os.listdir(folder) != ["SKILL.md"]:
        shutil.rmtree(folder)
    atomic_write(
        os.path.join(folder, "SKILL.md"), stub, mode=_mode(scope), dir_mode=0o700, durable=False
    )


def _mode(scope: str) -> int:
    return 0o644 if scope == "public" else 0o600


def _stored(url: str, listing: Listing, now: float) -> StoredListing:
    skills = [
        StoredEntry(
            e.uri,
            e.name,
            e.frontmatter,
            None
            if e.files is None
            else [StoredFile(f.uri, f.path, f.digest, f.size) for f in e.files],
        )
        for e in listing.entries
    ]
    return StoredListing(
        url, now, listing.ttl_ms, listing.cache_scope, listing.version, skills, listing.refused
    )


def entry_fingerprint(entry: RemoteEntry) -> str | None:
    """What a loaded folder is checked against: every file the entry lists, by path, digest
    and size (a changed script with an unchanged ``SKILL.md`` is a changed skill). None for
    an entry whose files are not listed (``"dynamic"``): fetched again at each load."""
    if entry.files is None or entry.skill_file is None:
        return None
    lines = sorted(f"{f.path}\0{f.digest}\0{f.size}" for f in entry.files)
    return sha256_digest("\n".join(lines).encode())


def remote_problems(remotes: tuple[RemoteConfig, ...], store: RemoteStore) -> list[Diagnostic]:
    """What ``skillsd doctor`` says of the remotes: each refused skill with the reason (an
    error), and each remote whose last refresh failed (a warning: its skills are stale)."""
    problems: list[Diagnostic] = []
    for remote in remotes:
        state = store.state(remote.name)
        if state.error is not None:
            problems.append(
                Diagnostic(
                    severity="warning",
                    code="remote.unreachable",
                    message=f"remote {remote.name}: {state.error} (its skills are stale)",
                    path=remote.url,
                )
            )
        problems.extend(
            Diagnostic(
                severity="error",
                code="remote.refused",
                message=f"{remote.name}:{skill} refused: {why}",
                path=remote.url,
            )
            for skill, why in sorted(state.refused.items())
        )
    return problems
