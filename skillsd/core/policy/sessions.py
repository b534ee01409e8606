"""Session state: what a client's conversation has loaded, its per-session overrides and grants.

Plain data and decisions, no I/O: reload suppression (path -> mtime), compaction, the
reference-counted grants from loaded skills' ``allowed-tools``.
"""

from __future__ import annotations

import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from skillsd.core import limits
from skillsd.core.errors import SkillsdError
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import SessionNotFoundData, TooLargeData
from skillsd_protocol.messages import Grant, LoadedSkill, SessionInfo

__all__ = ["Session", "SessionStore"]


@dataclass(slots=True)
class Session:
    """One client conversation."""

    id: str
    cwd: str
    extra_roots: tuple[str, ...] = ()
    #: SKILL.md path -> what was sent to the model (reload suppression key: path + mtime).
    loaded: dict[str, LoadedSkill] = field(default_factory=dict)
    #: skill id -> enabled, for ``skills.setEnabled {persist: "session"}``.
    enabled_overrides: dict[str, bool] = field(default_factory=dict)
    #: rule -> how many loaded skills grant it; skill path -> (its name, the rules it granted,
    #: its repository root for a repo-scope skill, whose grants count only while trusted).
    _grant_counts: Counter[str] = field(default_factory=Counter)
    _granted_by: dict[str, tuple[str, tuple[str, ...], str | None]] = field(default_factory=dict)
    #: canonical rule -> decision remembered with ``permissions.remember {persist: "session"}``.
    remembered: dict[str, Literal["allow", "deny"]] = field(default_factory=dict)

    def is_current(self, skill: SkillMetadata) -> bool:
        """True when this exact version of the skill was already sent in this session."""
        seen = self.loaded.get(skill.path)
        return seen is not None and seen.mtime_ms == skill.mtime_ms

    def record_load(self, skill: SkillMetadata, trust_root: str | None = None) -> None:
        """Remember that ``skill`` (this version) was sent, and take its grants; with a
        ``trust_root`` they count only while that repository root is trusted
        (docs/permissions.md; the catalog decides which skills need it,
        :meth:`Catalog.grants_need_trust`)."""
        self.loaded[skill.path] = LoadedSkill(
            id=skill.id, name=skill.name, path=skill.path, mtime_ms=skill.mtime_ms
        )
        self.record_grants(skill.path, skill.name, skill.allowed_tools or (), trust_root)

    def record_grants(
        self, path: str, name: str, rules: Iterable[str], trust_root: str | None = None
    ) -> None:
        """Take the grants of what the file at ``path`` sent (a skill, or a legacy command file
        a user invoked), replacing that file's earlier ones."""
        self._release(path)
        granted = tuple(dict.fromkeys(rules))
        self._granted_by[path] = (name, granted, trust_root)
        self._grant_counts.update(granted)

    def unload(self, skill: SkillMetadata) -> tuple[bool, list[str]]:
        """Forget a loaded skill; returns (was loaded, rules no longer granted by anything)."""
        was_loaded = self.loaded.pop(skill.path, None) is not None
        return was_loaded, self._release(skill.path)

    def compacted(self, retain: list[str] | None) -> list[str]:
        """The client dropped context: forget every loaded skill whose id is not retained.

        Grants stay: the model lost the text, not the permissions the user's skills carry.
        """
        keep = set(retain or ())
        gone = [path for path, rec in self.loaded.items() if rec.id not in keep]
        return [self.loaded.pop(path).id for path in gone]

    def grants(
        self, trusted: Callable[[str], bool] | None = None
    ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(rule -> names of the loaded skills granting it, the same for grants withheld):
        a repo skill's grants are withheld unless ``trusted(its repository root)``; with no
        ``trusted``, none are."""
        granted: dict[str, list[str]] = {}
        withheld: dict[str, list[str]] = {}
        # A snapshot taken in one step: file operations ask from their own threads while the
        # event loop records loads, and ``trusted`` runs Python code between the items.
        for name, rules, root in list(self._granted_by.values()):
            counts = root is None or (trusted is not None and trusted(root))
            for rule in rules:
                (granted if counts else withheld).setdefault(rule, []).append(name)
        return granted, withheld

    def close(self) -> list[str]:
        """End the session: forget what it loaded and remembered; returns the revoked rules."""
        revoked = sorted({r for path in list(self._granted_by) for r in self._release(path)})
        self.loaded.clear()
        self.remembered.clear()
        self.enabled_overrides.clear()
        return revoked

    def info(self, trusted: Callable[[str], bool] | None = None) -> SessionInfo:
        granted, withheld = self.grants(trusted)
        return SessionInfo(
            id=self.id,
            cwd=self.cwd,
            loaded=list(self.loaded.values()),
            grants=[Grant(rule=r, granted_by=by) for r, by in granted.items()],
            withheld_grants=[Grant(rule=r, granted_by=by) for r, by in withheld.items()],
        )

    def _release(self, path: str) -> list[str]:
        revoked = []
        for rule in self._granted_by.pop(path, ("", (), None))[1]:
            self._grant_counts[rule] -= 1
            if self._grant_counts[rule] <= 0:
                del self._grant_counts[rule]
                revoked.append(rule)
        return revoked


class SessionStore:
    """All open sessions of a daemon (shared by every connection, so a session can resume).

    At most ``cap`` are kept. Opening one more drops the least recently used session that no
    live connection holds (:meth:`hold`); a live client never loses its session, so when every
    session is held the new one is refused (``too_large``, naming the cap).
    """

    def __init__(self, cap: int = limits.MAX_SESSIONS) -> None:
        self.cap = cap
        #: Least recently used first.
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        #: Session id -> how many live connections hold it.
        self._holders: Counter[str] = Counter()

    def open(
        self, session_id: str | None, cwd: str, extra_roots: tuple[str, ...] = ()
    ) -> tuple[Session, bool]:
        """Open (or resume) a session; an unknown ``session_id`` creates that session."""
        if session_id is not None and session_id in self._sessions:
            self._sessions.move_to_end(session_id)
            return self._sessions[session_id], True
        while len(self._sessions) >= self.cap:
            self._drop_one()
        session = Session(id=session_id or uuid.uuid4().hex, cwd=cwd, extra_roots=extra_roots)
        self._sessions[session.id] = session
        return session, False

    def _drop_one(self) -> None:
        victim = next((sid for sid in self._sessions if not self._holders[sid]), None)
        if victim is None:
            raise SkillsdError(
                f"all {self.cap} sessions are held by connected clients (the session limit): "
                "close one (session.close) before opening another",
                TooLargeData(limit=self.cap),
            )
        self._sessions.pop(victim).close()
        self._holders.pop(victim, None)

    def hold(self, session_id: str) -> None:
        """A live connection uses ``session_id`` (until :meth:`release`)."""
        self._holders[session_id] += 1

    def release(self, session_id: str) -> None:
        if self._holders[session_id] > 1:
            self._holders[session_id] -= 1
        else:
            self._holders.pop(session_id, None)

    def get(self, session_id: str) -> Session:
        try:
            session = self._sessions[session_id]
        except KeyError:
            raise SkillsdError(
                f"No open session {session_id!r}: open it with session.open first.",
                SessionNotFoundData(session_id=session_id),
            ) from None
        self._sessions.move_to_end(session_id)
        return session

    def close(self, session_id: str) -> list[str]:
        """Close a session; its grants are revoked (returned) and its memory dropped."""
        revoked = self.get(session_id).close()
        del self._sessions[session_id]
        return revoked

    def __len__(self) -> int:
        return len(self._sessions)
