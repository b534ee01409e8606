"""The use ledger on disk (docs/usage.md): where it lives, its writer thread, and reading it.

``usage.jsonl`` and ``usage.jsonl.1`` in ``ledger/`` beside the state file (folder 0700, files
0600). Appends go through one writer thread fed by a bounded queue, so the event loop never
waits on the disk and a slow disk never grows memory (a record is on disk within about a
twentieth of a second, with those that came meanwhile): past ``LEDGER_QUEUE`` waiting records
new ones are dropped and counted. Each append takes an ``flock`` (several daemons may share the
ledger) and writes whole lines with ``O_APPEND``; when a line would take the file past the
user's ``ledger.maxBytes`` the file becomes ``usage.jsonl.1`` (replacing the one before) and a
new one starts, so the ledger never holds more than two files of that size.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable

from skillsd.core import limits
from skillsd.core.fs.atomic_files import make_folder
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.listing.use_ledger import UseRecord, decode_ledger, encode_record
from skillsd.core.policy.config import LedgerConfig

__all__ = ["LEDGER_DIR", "LEDGER_FILE", "UseLedger", "ledger_dir", "ledger_files", "read_ledger"]

log = logging.getLogger(__name__)

LEDGER_DIR = "ledger"
LEDGER_FILE = "usage.jsonl"
_LOCK_FILE = "usage.lock"
#: Records one wake of the writer appends together.
_BATCH = 256
#: How long the writer waits after a record for others to append with it.
_GATHER_SECONDS = 0.05
#: How long a process leaving waits for the records still queued.
EXIT_FLUSH_SECONDS = 1.0


def ledger_dir(state_path: str) -> str:
    """The ledger's folder beside the state file ``state_path``."""
    return os.path.join(os.path.dirname(state_path), LEDGER_DIR)


def ledger_files(directory: str) -> list[str]:
    """The ledger's files, oldest first."""
    current = os.path.join(directory, LEDGER_FILE)
    return [current + ".1", current]


def read_ledger(
    directory: str, max_bytes: int = limits.LEDGER_FILE_BYTES
) -> tuple[list[UseRecord], list[str]]:
    """Every record of the ledger in ``directory`` whose files hold at most ``max_bytes`` each
    (oldest first), and a message for each line or file that could not be read. A missing
    ledger is an empty one."""
    records: list[UseRecord] = []
    problems: list[str] = []
    for path in ledger_files(directory):
        try:
            # Both files stay under the cap; a larger one was not written by skillsd.
            read = read_regular_file(path, max_bytes + limits.LEDGER_LINE_BYTES)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        if read.over_cap:
            problems.append(f"{path}: larger than the ledger's bound; only its start was read")
        found, skipped = decode_ledger(read.data, path)
        records.extend(found)
        problems.extend(skipped)
    return records, problems


class UseLedger:
    """Appends records to the ledger in ``directory`` from a thread of its own.

    :meth:`record` never blocks: it queues the record, or drops it when ``LEDGER_QUEUE``
    records are already waiting. ``config`` (the user's ``[ledger]``, None when it cannot be
    read: then nothing is recorded) is asked at each record and each append, so turning the
    ledger off or changing its bound takes effect at once.
    """

    def __init__(
        self,
        directory: str,
        *,
        config: Callable[[], LedgerConfig | None] = LedgerConfig,
        queue_size: int = limits.LEDGER_QUEUE,
    ) -> None:
        self.directory = directory
        self._config = config
        self._queue: queue.Queue[UseRecord | Callable[[], UseRecord]] = queue.Queue(
            maxsize=queue_size
        )
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        #: Records dropped because the queue was full, or because the disk refused them.
        self.dropped = 0
        self._last_error: str | None = None

    def record(self, *records: UseRecord | Callable[[], UseRecord]) -> None:
        """Queue ``records`` for the writer, which drops them when the ledger is off (the user's
        config is read there: this is called on the event loop). A record may be given as what
        makes it, so that the writer, not the loop, builds it."""
        if not records:
            return
        self._ensure_thread()
        for record in records:
            try:
                self._queue.put_nowait(record)
            except queue.Full:
                self.dropped += 1

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every queued record is written (or dropped). For tests and shutdown."""
        if self._thread is None:
            return
        done = threading.Event()

        def wait() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        done.wait(timeout)

    # -- the writer thread -----------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="skillsd-ledger", daemon=True)
                thread.start()
                self._thread = thread
                # What was served just before the process ends is still written (briefly).
                atexit.register(self.flush, EXIT_FLUSH_SECONDS)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            # Records come in bursts while a server is busy: one append for a burst, not one
            # per record (each append takes a lock and opens the file).
            time.sleep(_GATHER_SECONDS)
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._append(batch)
            except OSError as exc:
                self.dropped += len(batch)
                reason = f"{self.directory}: cannot write the use ledger: {exc.strerror or exc}"
                if reason != self._last_error:  # once per distinct failure, not per record
                    log.warning("%s", reason)
                    self._last_error = reason
            except Exception:
                self.dropped += len(batch)
                log.exception("the use ledger's writer failed")
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _append(self, batch: list[UseRecord | Callable[[], UseRecord]]) -> None:
        config = self._config()
        if config is None or not config.enabled:
            return  # the ledger is off: nothing is built
        made = (each if isinstance(each, UseRecord) else each() for each in batch)
        lines = [line for line in map(encode_record, made) if line is not None]
        self.dropped += len(batch) - len(lines)
        if not lines:
            return
        file_bytes = config.max_bytes
        make_folder(self.directory, 0o700)
        if stat.S_IMODE(os.stat(self.directory).st_mode) & 0o077:
            os.chmod(self.directory, 0o700)  # its own folder: nobody else reads what was used
        lock = os.open(
            os.path.join(self.directory, _LOCK_FILE),
            os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
            0o600,
        )
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = os.path.join(self.directory, LEDGER_FILE)
            fd = self._open(path)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    # A line torn by a crash: end it, so the next record is a line of its own.
                    _write_all(fd, b"\n")
                    size += 1
                for line in lines:
                    if size and size + len(line) > file_bytes:
                        # Rotate: the current file becomes the previous one (replacing it).
                        os.close(fd)
                        fd = -1
                        os.replace(path, path + ".1")
                        fd = self._open(path)
                        size = 0
                    _write_all(fd, line)
                    size += len(line)
            finally:
                if fd >= 0:
                    os.close(fd)
        finally:
            os.close(lock)

    @staticmethod
    def _open(path: str) -> int:
        fd = os.open(
            path,
            os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
            0o600,
        )
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise OSError(f"{path} is not a regular file")
        if stat.S_IMODE(st.st_mode) & 0o077:
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o600)
        return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
