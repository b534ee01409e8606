"""Every size, depth and count limit skillsd enforces, in one place (each tested at its edge)."""

from __future__ import annotations

#: Frontmatter larger than this is rejected (``frontmatter.too_large``).
MAX_FRONTMATTER_BYTES = 64 * 1024
#: First read of a SKILL.md during discovery; most frontmatters end well inside it.
FIRST_READ_BYTES = 4096
#: Expanded YAML nodes allowed after resolving aliases (a billion-laughs guard).
MAX_YAML_NODES = 10_000
#: Nesting depth allowed in frontmatter YAML.
MAX_YAML_DEPTH = 32

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
#: Advice thresholds (info diagnostics only).
BODY_ADVISED_MAX_LINES = 500
BODY_ADVISED_MAX_TOKENS = 5000
BYTES_PER_TOKEN = 4

#: Discovery traversal defaults (config ``discovery.maxDepth`` / ``discovery.maxDirs``).
DEFAULT_MAX_DEPTH = 6
DEFAULT_MAX_DIRS = 2000
#: Directory names never descended into.
SKIPPED_DIR_NAMES = frozenset({".git", "node_modules"})

#: ``skills.load`` reads at most this much of a SKILL.md.
MAX_SKILL_FILE_BYTES = 1024 * 1024
#: ``skills.load`` file listing bounds (``references/a.md`` has depth 2).
MAX_LISTED_FILES = 200
MAX_LISTED_DEPTH = 3
#: ``skills.readFile`` default window.
DEFAULT_READ_BYTES = 200_000

#: ``skills.search`` defaults.
DEFAULT_SEARCH_LIMIT = 8
MAX_SEARCH_LIMIT = 50

#: ``skills.prompt`` budget defaults.
DEFAULT_PROMPT_MAX_ENTRIES = 200
DEFAULT_PROMPT_MAX_BYTES = 32 * 1024

#: JSON-RPC transport.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: Quiet time before a burst of file events becomes one catalog update.
WATCH_DEBOUNCE_SECONDS = 0.1
#: After the file watcher's thread died, how long to stat-validate before restarting it (doubled
#: after each death in a row, up to a minute, so a watcher that keeps dying cannot spin).
WATCH_RESTART_SECONDS = 1.0
#: File times can be this coarse (FAT, some network filesystems): a file modified this long
#: before a scan began may still have changed after it.
MTIME_SLACK_SECONDS = 2.0
#: Bytes of LSP-style headers (``Content-Length: ...``) read before a header block is refused.
MAX_HEADER_BYTES = 8 * 1024
#: Responses queued for a client that does not read; past this the connection is dropped.
MAX_PENDING_OUTPUT_BYTES = 64 * 1024 * 1024
#: Queued replies and unfinished input messages of all connections together (docs/security.md); past
#: this the connection holding the most is dropped (``SKILLSD_MEMORY_BUDGET_BYTES`` overrides).
MEMORY_BUDGET_BYTES = 256 * 1024 * 1024
#: Requests running at once on one connection; past this the daemon stops reading its input.
MAX_INFLIGHT_REQUESTS = 256
#: File-reading operations (load, readFile, active prompt, tools.call, agents) running at once in
#: worker threads. Each may hold a file window of up to ``MAX_READ_BYTES`` and its encoded reply,
#: so overlap is bounded to keep a burst of large reads from multiplying that by every request.
MAX_CONCURRENT_FILE_OPS = 4
#: Threads that look up what a request's catalog depends on (config, state, repository
#: markers); past it, lookups wait for one (a dead mount holds at most this many).
LOOKUP_THREADS = 8
#: A file operation still running after this long frees its slot and answers ``-32800`` (a read
#: stuck on a stalled filesystem must not hold what other requests need; the robustness rules). Its
#: thread
#: is left to finish on its own.
FILE_OP_SECONDS = 30.0
#: File operations left running past their time limit; beyond this many, new ones are refused at
#: once (each holds a thread) until some finish.
MAX_STUCK_FILE_OPS = 32
#: How long a closing connection waits for in-flight requests before cancelling them.
SHUTDOWN_GRACE_SECONDS = 10.0
#: How often ``initialize``'s ``processId`` is checked when pidfds are unavailable.
PARENT_POLL_SECONDS = 1.0
#: ``skillsd proxy``: how long it keeps trying to reach a daemon it started.
PROXY_CONNECT_TIMEOUT_SECONDS = 10.0
#: ``skillsd proxy``: idle timeout given to a daemon it starts.
PROXY_DAEMON_IDLE_SECONDS = 600.0
#: How long `skillsd daemon stop` waits for the daemon to exit after SIGTERM.
DAEMON_STOP_SECONDS = 10.0

#: Frontmatter YAML longer than this (in characters) is scanned event by event for its nesting
#: depth before libyaml composes it: the C composer recurses once per level and a 64 KiB
#: ``[[[[...`` document would overflow the C stack. Shorter text cannot nest deep enough to matter.
YAML_UNSCANNED_CHARS = 4096

#: ``skills.readFile`` never returns a window larger than this, whatever ``length`` asks for.
MAX_READ_BYTES = 8 * 1024 * 1024
#: Prompt budget: descriptions are never shortened below this many characters (then dropped).
PROMPT_MIN_DESCRIPTION_CHARS = 24
#: Largest agent definition file read (``.agents/agents/*.md``).
MAX_AGENT_FILE_BYTES = 1024 * 1024
#: Largest Codex ``agents/openai.yaml`` read beside a SKILL.md (docs/conformance.md).
MAX_OPENAI_YAML_BYTES = 64 * 1024
#: Claude Code command files (``.claude/commands/**/*.md``): largest file read, folders listed per
#: commands directory, and folder depth (``a/b/c.md`` is depth 3).
MAX_COMMAND_FILE_BYTES = 1024 * 1024
MAX_COMMAND_DIRS = 500
MAX_COMMAND_DEPTH = 6
#: Largest config file read (the user's ``config.toml``, a project's ``.agents/skillsd.toml``).
MAX_CONFIG_FILE_BYTES = 1024 * 1024
#: Largest state file read (``state.json``: disabled skills and remembered permissions).
MAX_STATE_FILE_BYTES = 16 * 1024 * 1024

#: Sessions a daemon keeps (docs/security.md); past it the least recently used one no live
#: connection
#: holds is dropped.
MAX_SESSIONS = 4096

#: the context budget: the default cap on a prompt entry's description plus its ``whenToUse``.
PROMPT_DESCRIPTION_CHARS = 1536

#: Change sets a live catalog keeps for ``skills.list {sinceGeneration}`` (docs/embedding.md: at
#: least 64).
DELTA_HISTORY = 64
#: The search hits that decide, by relevance, which skills a budgeted prompt keeps first.
PROMPT_RELEVANCE_HITS = 300

#: A skill's manifest for the model's clients (every file with its digest, the MCP skills
#: extension's ``skills/list``) stops at these bounds; past them it says the skill is too large
#: to list and the client reads its directory instead.
MAX_MANIFEST_FILES = 512
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
#: Resource subscriptions one MCP client may hold.
MAX_MCP_SUBSCRIPTIONS = 1000
#: Catalogs (distinct cwds) a process keeps at once (config ``limits.maxCatalogs``).
MAX_CATALOGS = 64
#: The largest reply skillsd builds, refused before it is built (config
#: ``limits.maxReplyBytes``).
MAX_REPLY_BYTES = 16 * 1024 * 1024

#: Slots of the install pool (installs, updates, restores, scans; apart from file reads).
INSTALL_WORKERS = 4
#: The longest one install request may take before its slot is given back (two fetches' worth).
INSTALL_SECONDS = 600.0
#: Installing skills (docs/install-skills.md): files and bytes one installed skill may hold.
INSTALL_MAX_FILES = 2000
INSTALL_MAX_BYTES = 50 * 1024 * 1024
#: The largest archive downloaded, and what extracting one may write (a zip bomb stops here).
INSTALL_MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
INSTALL_MAX_ARCHIVE_ENTRIES = 20_000
#: How long one git command or download may take before the install gives up.
INSTALL_FETCH_SECONDS = 300.0
#: How long a download may wait for the server to send anything (the whole download still has
#: ``INSTALL_FETCH_SECONDS``: a server sending a byte now and then cannot hold it longer).
INSTALL_FETCH_IDLE_SECONDS = 60.0
#: Archives are measured before they are read. A tar header extension (a GNU long name or link
#: name, a set of pax records) larger than this is refused before it is read: tarfile reads one
#: whole, whatever size it declares.
INSTALL_MAX_TAR_HEADER_BYTES = 64 * 1024
#: What all of a tar's header extensions may hold together (tarfile keeps every member's name and
#: pax records in memory), and how many one member may have in a row.
INSTALL_MAX_TAR_HEADERS_BYTES = 4 * 1024 * 1024
INSTALL_MAX_TAR_HEADER_CHAIN = 8
#: Records a tar's global pax headers may hold: tarfile copies them into every member.
INSTALL_MAX_TAR_GLOBAL_RECORDS = 32
#: A zip's central directory may average this many bytes per allowed entry (names, extra fields
#: and comments included); a larger one is refused before ``zipfile`` reads it.
INSTALL_ZIP_DIRECTORY_BYTES_PER_ENTRY = 1024

#: The use ledger (docs/usage.md): each of its two files (the current one and the one before)
#: holds at most this many bytes, so the ledger never takes more than twice it on disk.
LEDGER_FILE_BYTES = 1024 * 1024
#: One ledger line at most (a longer record is not written).
LEDGER_LINE_BYTES = 8 * 1024
#: Uses waiting for the ledger's writer thread; past it new ones are dropped (and counted).
LEDGER_QUEUE = 1024
#: Claude Code's transcripts ``skillsd usage`` reads at most: the newest files, bytes in all,
#: and one line (longer lines, such as whole system prompts, are skipped unread).
TRANSCRIPT_MAX_FILES = 500
TRANSCRIPT_MAX_BYTES = 256 * 1024 * 1024
TRANSCRIPT_LINE_BYTES = 256 * 1024
