"""The state a process shares across its requests and faces: catalogs, sessions, state,
trust, search indexes, file-operation slots.

"What does this request see" (cwd, session, extra roots, per-session enable flags, the policy
of the catalog's config) is decided here, in exactly one place: :meth:`Services.view` gives the
:class:`~skillsd.runtime.request_view.RequestView` a use case passes to its steps.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from skillsd.core.catalog.fs_skill_evidence import NO_EVIDENCE, EvidenceCache
from skillsd.core.catalog.search import SearchIndex
from skillsd.core.catalog.skill_catalog import Catalog
from skillsd.core.catalog.suggest import SuggestIndex
from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import Config, LedgerConfig
from skillsd.core.policy.fs_state import StateStore, default_state_path
from skillsd.core.policy.permissions import Check, evaluate
from skillsd.core.policy.sessions import Session, SessionStore
from skillsd.core.policy.trust import TrustState, resolve_trust
from skillsd.runtime.catalog_cache import CachedCatalog, CatalogCache, Listener, Progress
from skillsd.runtime.embeddings import SemanticIndex, SemanticModel, SemanticUnavailable
from skillsd.runtime.file_ops import FileOps
from skillsd.runtime.remote_skills import RemoteSkills
from skillsd.runtime.request_view import RequestView
from skillsd.runtime.use_ledger_file import UseLedger, ledger_dir

log = logging.getLogger(__name__)


def _ledger_config(catalogs: CatalogCache) -> LedgerConfig | None:
    """The user's ``[ledger]`` (None when the config cannot be read: nothing is recorded)."""
    try:
        return catalogs.configs.user().ledger
    except SkillsdError:
        return None


@dataclass(frozen=True, slots=True)
class View:
    """What one request's operation sees, with the cache entry its catalog came from."""

    seen: RequestView
    entry: CachedCatalog

    @property
    def catalog(self) -> Catalog:
        return self.seen.catalog

    @property
    def session(self) -> Session | None:
        return self.seen.session

    @property
    def cwd(self) -> str:
        return self.seen.cwd


@dataclass
class Services:
    """Everything the requests of one process share (a daemon, an MCP bridge)."""

    cwd: str
    catalogs: CatalogCache
    #: The user's persistent state: disabled skills, ``always`` permission decisions.
    state: StateStore
    home: str
    env: Mapping[str, str]
    sessions: SessionStore = field(default_factory=SessionStore)
    #: File reads off the loop, with their time limit (``SKILLSD_FILE_OP_SECONDS``).
    file_ops: FileOps = field(default_factory=FileOps)
    #: Installs, updates, removes, restores and scans: a pool of their own, so slow or stuck
    #: install work (a clone, a stalled download) never takes a thread other requests need.
    install_pool: FileOps = field(default_factory=FileOps.for_installs)
    #: The configured remotes' skills: background refresh, fetch-and-verify before a load.
    remotes: RemoteSkills = field(default_factory=RemoteSkills)
    #: The suggestions' semantic stage (its vectors are read on first use).
    semantic: SemanticModel = field(default_factory=SemanticModel)
    #: The use ledger (docs/usage.md): None records nothing.
    ledger: UseLedger | None = None
    #: False when the user acts directly (the CLI): no request is gated (docs/permissions.md).
    gated: bool = True
    #: False for one CLI command: remotes are not refreshed in the background (their cached
    #: listing is listed; a remote skill is still fetched before it is read).
    refreshes_remotes: bool = True
    #: What each skill says beyond its frontmatter, kept by file version for the suggestion
    #: indexes of every catalog.
    evidence: EvidenceCache = field(default_factory=EvidenceCache)
    #: The last index :meth:`suggest_index_blind_to` made: its catalog, skill id and index.
    blind_index: tuple[Catalog, str, SuggestIndex] | None = None

    @classmethod
    def create(
        cls,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        watch: bool = True,
        state_path: str | None = None,
        for_one_command: bool = False,
        home: str | None = None,
    ) -> Services:
        """The services of a process. ``for_one_command``: one CLI command acting for the user
        (no watching, each catalog built once, nothing gated)."""
        env = os.environ if env is None else env
        home = os.path.expanduser("~") if home is None else home
        state = StateStore(state_path or default_state_path())
        catalogs = CatalogCache(
            env=env,
            home=home,
            watch=watch and not for_one_command,
            revalidate=not for_one_command,
            disabled=state.disabled,
            trust_decisions=state.trust_decisions,
            state_problem=lambda: state.problem,
        )
        return cls(
            cwd=os.getcwd() if cwd is None else cwd,
            catalogs=catalogs,
            state=state,
            home=home,
            env=env,
            file_ops=FileOps.from_env(env),
            # The ledger records what the daemon and the MCP bridge serve, not the user's
            # own commands.
            ledger=None
            if for_one_command
            else UseLedger(ledger_dir(state.path), config=partial(_ledger_config, catalogs)),
            gated=not for_one_command,
            refreshes_remotes=not for_one_command,
        )

    def session(self, session_id: str | None) -> Session | None:
        """The open session named, or None; an unknown id is ``session_not_found``."""
        return None if session_id is None else self.sessions.get(session_id)

    def request_cwd(self, cwd: str | None, session: Session | None) -> str:
        """A request's cwd: the param (relative to the daemon's), else the session's, else the
        daemon's."""
        if cwd is not None:
            return os.path.join(self.cwd, cwd)
        return session.cwd if session is not None else self.cwd

    def config_for(self, cwd: str | None, session: Session | None) -> tuple[Config, str]:
        """The effective config of a request's cwd (re-read when a config file changed) and
        that cwd's repository root."""
        real = os.path.realpath(self.request_cwd(cwd, session))
        config, _sources, root = self.catalogs.configs.for_cwd(real)
        return config, root

    def trust_of(self, root: str) -> TrustState:
        """The user's trust of a repository root (docs/permissions.md): the state file's decision,
        else the user config's ``[trust]``. Read at every check, so a change is in effect at
        once."""
        config = self.catalogs.configs.user()
        return resolve_trust(root, self.state.trust_decisions(), config.trust, home=self.home)

    def is_trusted(self, root: str) -> bool:
        return self.trust_of(root).trusted

    def check(
        self, config: Config, root: str, session: Session | None, tool: str, input: str | None
    ) -> Check:
        """The six-layer decision for one call in the repository ``root``, with the session's
        memory and grants and the repository's trust."""
        policy = config.policy
        grants, withheld = session.grants(self.is_trusted) if session is not None else ({}, {})
        return evaluate(
            policy,
            tool,
            input,
            trusted=self.is_trusted(root),
            # A copy: this runs in file-operation threads while the loop records answers.
            session_memory=dict(session.remembered) if session is not None else None,
            always=self.state.always(),
            grants=grants,
            withheld_grants=withheld,
        )

    async def view(
        self,
        *,
        cwd: str | None,
        session_id: str | None,
        connection_roots: Iterable[str] = (),
        extra_roots: Iterable[str] = (),
        force: bool = False,
        listener: Listener | None = None,
        progress: Progress | None = None,
    ) -> View:
        """What a request's operation sees: the catalog for its cwd (param > session > daemon)
        and all extra roots with the session's enable overrides applied, the session, and the
        permission policy of that catalog's config. ``progress`` hears about a scan, if one is
        needed."""
        session = self.session(session_id)
        real_cwd = self.request_cwd(cwd, session)
        roots = [*connection_roots, *(session.extra_roots if session else ()), *extra_roots]
        catalog, entry = await self.catalogs.get(
            real_cwd,
            tuple(dict.fromkeys(roots)),
            force=force,
            listener=listener,
            progress=progress,
        )
        if catalog.plan.remote_roots and self.refreshes_remotes:
            self.remotes.start(self.catalogs.configs.user, catalog.config, catalog.plan.trusted)
        if session is not None and session.enabled_overrides:
            catalog = catalog.with_overrides(session.enabled_overrides)
        # The cache read the repository's trust for this request (the state file and the
        # user's config, as trust_of does); it is read again at every check.
        trust = entry.trust
        seen = RequestView(
            catalog,
            session,
            check=partial(self.check, catalog.config, catalog.repo_root) if self.gated else None,
            trust=trust
            if trust is not None and trust.root == catalog.repo_root
            else self.trust_of(catalog.repo_root),
            is_trusted=self.is_trusted,
        )
        return View(seen, entry)

    async def similarity(self, view: View, request: str) -> Sequence[float] | None:
        """The semantic stage's similarity of each skill of the view's base catalog to
        ``request`` (None when ``suggest.semantic`` is off, or when it fails: the lexical
        ranking stands alone, and the failure is logged)."""
        if not view.seen.config.suggest.semantic:
            return None
        base = view.entry.catalog or view.catalog
        try:
            cached = view.entry.semantic_index
            if cached is None or cached[0] is not base:
                built = await asyncio.to_thread(SemanticIndex, self.semantic, base.skills)
                cached = (base, built)
                view.entry.semantic_index = cached
            index: SemanticIndex = cached[1]
            return await asyncio.to_thread(index, request)
        except SemanticUnavailable:
            return None  # a damaged install: said once, when the vectors were read
        except Exception:
            log.exception("the semantic stage failed; suggestions are lexical only")
            return None

    async def suggest_index(self, view: View) -> SuggestIndex:
        """The suggestion index of the view's base catalog, kept on the cache entry while that
        catalog is current and built in a worker thread; a session's enable flags are applied
        at query time."""
        base = view.entry.catalog or view.catalog
        cached = view.entry.suggest_index
        if cached is None or cached[0] is not base:
            built = await asyncio.to_thread(SuggestIndex.read, base.skills, self.evidence)
            cached = (base, built)
            view.entry.suggest_index = cached
        return cached[1]

    async def suggest_index_blind_to(self, view: View, skill_id: str) -> SuggestIndex:
        """The suggestion index of the view's base catalog with one skill's own trigger
        queries left out of its evidence (``skillsd eval``: while a skill's queries are the
        test, every one of them would find itself). Made for the request alone, in a worker
        thread, and kept for the next request about the same skill and catalog (an eval asks
        every query of one skill in a row); the evidence comes from the shared cache."""
        base = view.entry.catalog or view.catalog
        kept = self.blind_index
        if kept is not None and kept[0] is base and kept[1] == skill_id:
            return kept[2]
        skills = base.skills

        def build() -> SuggestIndex:
            # As SuggestIndex.read gathers it: only skills the model may use are read.
            evidence = [
                self.evidence.get(skill) if skill.invocation.model else NO_EVIDENCE
                for skill in skills
            ]
            blind = [
                replace(found, positives=(), negatives=()) if skill.id == skill_id else found
                for skill, found in zip(skills, evidence, strict=True)
            ]
            return SuggestIndex(skills, blind)

        index = await asyncio.to_thread(build)
        self.blind_index = (base, skill_id, index)
        return index

    async def search_index(self, view: View) -> tuple[SearchIndex, frozenset[str]]:
        """A search index for the view and the ids it must treat as disabled.

        The index of the entry's base catalog is kept on the cache entry while that catalog is
        current and built in a worker thread (a 10 000-skill index takes most of a second); a
        session's disables are passed at query time. Only a session that re-enables a skill the
        user disabled needs an index of its own (rare, so it is not cached).
        """
        base = view.entry.catalog
        overrides = view.session.enabled_overrides if view.session is not None else {}
        if base is None or any(
            on and (s := base.by_id.get(sid)) is not None and not s.enabled
            for sid, on in overrides.items()
        ):
            return await asyncio.to_thread(SearchIndex, view.catalog.skills), frozenset()
        cached = view.entry.search_index
        if cached is None or cached[0] is not base:
            cached = (base, await asyncio.to_thread(SearchIndex, base.skills))
            view.entry.search_index = cached
        return cached[1], frozenset(sid for sid, on in overrides.items() if not on)
