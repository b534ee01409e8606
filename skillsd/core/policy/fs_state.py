"""The user's persistent state: disabled skills (for the user, and per project), ``always``
permission decisions (docs/config.md) and workspace trust decisions (docs/permissions.md).

One JSON file, ``state.json`` in ``platformdirs.user_state_dir("skillsd")`` (``$XDG_STATE_HOME``
is honoured there). Every change is a read-modify-write under an ``flock`` (several daemons may
share the file) that ends in an atomic replace (:func:`skillsd.core.fs.atomic_files.atomic_write`:
write a temp file in the same directory, fsync it, rename it over the old file, fsync the
directory). A failed write leaves the previous file untouched and raises a clear error. A file
that cannot be read or parsed is never overwritten: readers see empty state plus a diagnostic,
writers get an error telling the user to fix it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Collection, Iterator
from typing import Literal

import msgspec
import platformdirs

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd.core.fs.atomic_files import OpenTemp, atomic_write, make_folder
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.file_version import StatKey, stat_key
from skillsd.core.policy.permissions import parse_rule, remember_rule
from skillsd_protocol import Diagnostic
from skillsd_protocol.errors import StateUnreadableData, StateWriteFailedData

__all__ = [
    "STATE_FILE",
    "STATE_VERSION",
    "StateData",
    "StateStore",
    "default_state_path",
    "project_disabled",
]

STATE_FILE = "state.json"
STATE_VERSION = 1

Remembered = Literal["allow", "deny"]


class StateData(msgspec.Struct, kw_only=True):
    """The file's content. ``disabled`` holds real ``SKILL.md`` paths (ids and skill dirs are
    understood too, for hand-edited files); ``permissions`` maps rules (as the user wrote them)
    to decisions; ``trust`` maps real repository roots to the user's trust decision;
    ``projects`` maps real repository roots to the user's enable flags there (real ``SKILL.md``
    path, or an alias of it, -> enabled), which win over ``disabled`` in that repository."""

    version: int = STATE_VERSION
    disabled: list[str] = msgspec.field(default_factory=list)
    permissions: dict[str, Remembered] = msgspec.field(default_factory=dict)
    trust: dict[str, bool] = msgspec.field(default_factory=dict)
    projects: dict[str, dict[str, bool]] = msgspec.field(default_factory=dict)


# Decoding information worked out at import, on one thread (see `skillsd.core.policy.config`).
_STATE_DECODER = msgspec.json.Decoder(StateData)


def project_disabled(user: Collection[str], flags: dict[str, bool]) -> frozenset[str]:
    """The disabled set in one repository: the user's, less what the project enables (a
    ``SKILL.md`` path enables its folder too), plus what the project disables."""
    on = {k for k, v in flags.items() if v}
    on |= {os.path.dirname(k) for k in on if os.path.basename(k) == "SKILL.md"}
    off = {k for k, v in flags.items() if not v}
    return frozenset({d for d in user if d not in on} | off)


def default_state_path() -> str:
    """``state.json`` in the platform's per-user state directory."""
    return os.path.join(platformdirs.user_state_dir("skillsd"), STATE_FILE)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _write_failed(path: str, exc: OSError) -> SkillsdError:
    return SkillsdError(
        f"{path}: could not save state: {_reason(exc)}; the previous state is unchanged",
        StateWriteFailedData(path=path),
    )


class StateStore:
    """The state file of one user, re-read only when its stat changed (another daemon wrote).

    Writes block on the file lock (which also serialises writers within one process), so the
    daemon runs them off its event loop. The cache is replaced whole, never mutated, so a
    reader on another thread sees either the old state or the new.
    """

    def __init__(self, path: str, *, open_temp: OpenTemp | None = None) -> None:
        self.path = path
        self._open_temp = open_temp
        self._cached: tuple[StatKey | None, StateData, Diagnostic | None] | None = None

    # -- reading ---------------------------------------------------------------------------

    def read(self) -> StateData:
        """The current state (empty when the file is missing or unreadable)."""
        return self._current()[0]

    @property
    def problem(self) -> Diagnostic | None:
        """Why the file cannot be used, or None when it is fine (or absent)."""
        return self._current()[1]

    def changed(self) -> bool:
        """True when the file changed since it was last read here."""
        return self._cached is None or self._cached[0] != stat_key(self.path)

    def disabled(self, root: str | None = None) -> frozenset[str]:
        """What the user disabled (real ``SKILL.md`` paths, ids or skill dirs): for them, or
        (``root``) in the repository at that real root, where the project's flags win."""
        data = self.read()
        flags = data.projects.get(root) if root is not None else None
        if not flags:
            return frozenset(data.disabled)
        return project_disabled(data.disabled, flags)

    def project_flags(self, root: str) -> dict[str, bool]:
        """The user's enable flags in the repository at the real ``root`` (key -> enabled)."""
        return dict(self.read().projects.get(root, {}))

    def always(self) -> dict[str, Remembered]:
        """Decisions remembered with ``persist: "always"`` (rule as written -> decision)."""
        return dict(self.read().permissions)

    def trust_decisions(self) -> dict[str, bool]:
        """The user's trust decisions (real repository root -> trusted)."""
        return dict(self.read().trust)

    def _current(self) -> tuple[StateData, Diagnostic | None]:
        cached = self._cached
        signature = stat_key(self.path)
        if cached is None or cached[0] != signature:
            cached = (signature, *self._load())
            self._cached = cached
        return cached[1], cached[2]

    def _load(self) -> tuple[StateData, Diagnostic | None]:
        try:
            read = read_regular_file(self.path, limits.MAX_STATE_FILE_BYTES)
        except FileNotFoundError:
            return StateData(), None
        except OSError as exc:  # NotRegularFile too: a FIFO here must not hang the daemon
            return StateData(), self._diagnostic(f"cannot read the state file: {_reason(exc)}")
        if read.over_cap:
            return StateData(), self._diagnostic(
                f"the state file is larger than {limits.MAX_STATE_FILE_BYTES} bytes"
            )
        raw = read.data
        try:
            data = _STATE_DECODER.decode(raw)
        except msgspec.DecodeError as exc:
            return StateData(), self._diagnostic(f"the state file is not valid: {exc}")
        if data.version != STATE_VERSION:
            return StateData(), self._diagnostic(
                f"the state file has version {data.version}; this skillsd reads version "
                f"{STATE_VERSION}"
            )
        return data, None

    def _diagnostic(self, message: str) -> Diagnostic:
        return Diagnostic(
            severity="error",
            code="state.unreadable",
            message=f"{message}. Enable flags and remembered permissions from it are not "
            "applied, and skillsd will not overwrite it: fix or remove the file",
            path=self.path,
        )

    # -- writing ---------------------------------------------------------------------------

    def set_enabled(self, aliases: Collection[str], enabled: bool, *, key: str) -> None:
        """Enable or disable one skill. ``key`` is what gets recorded (its real ``SKILL.md``
        path); enabling also removes any ``aliases`` (id, dir) a hand-edited file may use."""

        def change(data: StateData) -> None:
            gone = {key, *aliases}
            data.disabled = [d for d in data.disabled if d not in gone]
            if not enabled:
                data.disabled.append(key)

        self._update(change)

    def set_project_enabled(
        self, root: str, aliases: Collection[str], enabled: bool, *, key: str
    ) -> None:
        """Enable or disable one skill in the repository at the real ``root`` only. ``key`` is
        recorded; enabling also records those ``aliases`` the user's own list disables the
        skill by, so the project's choice wins however that list spells it."""

        def change(data: StateData) -> None:
            flags = {k: v for k, v in data.projects.get(root, {}).items() if k not in aliases}
            flags[key] = enabled
            if enabled:
                for alias in aliases:
                    if alias in data.disabled:
                        flags[alias] = True
            data.projects[root] = flags

        self._update(change)

    def remember(self, rule_text: str, decision: Remembered) -> None:
        """Persist a decision for a rule, kept as written (replacing an earlier one for the
        same rule, however it was spelled)."""
        rule = parse_rule(rule_text)

        def change(data: StateData) -> None:
            remember_rule(data.permissions, rule, decision)

        self._update(change)

    def set_trust(self, root: str, trusted: bool) -> None:
        """Persist the user's trust decision for a real repository root."""

        def change(data: StateData) -> None:
            data.trust[root] = trusted

        self._update(change)

    def _update(self, change: Callable[[StateData], None]) -> None:
        with self._locked_file():
            # Decide from the file as it is now, not the cache: another daemon may have written.
            self._cached = None
            data, problem = self._current()
            if problem is not None:
                raise SkillsdError(
                    f"{self.path}: {problem.message}", StateUnreadableData(path=self.path)
                )
            # A copy: the cached state must stay as on disk if the write fails.
            data = StateData(
                version=data.version,
                disabled=list(data.disabled),
                permissions=dict(data.permissions),
                trust=dict(data.trust),
                projects={root: dict(flags) for root, flags in data.projects.items()},
            )
            change(data)
            encoded = msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n"
            self._remove_stale_temps()
            try:
                atomic_write(
                    self.path, encoded, mode=0o600, dir_mode=0o700, open_temp=self._open_temp
                )
            except OSError as exc:
                raise _write_failed(self.path, exc) from None
            self._cached = (stat_key(self.path), data, None)

    @contextlib.contextmanager
    def _locked_file(self) -> Iterator[None]:
        directory = os.path.dirname(self.path) or "."
        try:
            make_folder(directory, 0o700)
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise _write_failed(self.path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _remove_stale_temps(self) -> None:
        # Writers hold the lock while a temp file exists, so any left now is from a crash.
        directory = os.path.dirname(self.path) or "."
        prefix = f".{os.path.basename(self.path)}."
        with contextlib.suppress(OSError):
            for name in os.listdir(directory):
                if name.startswith(prefix) and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(directory, name))
