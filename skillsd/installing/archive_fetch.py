"""Fetching an archive source: download (https, or http on a loopback address) and extraction.

A download has a total deadline as well as an idle one. Archives are measured before they are
read: a tar's headers are walked first (an oversized long name or pax record set, too many
members or too many bytes are refused before ``tarfile`` reads any of it), and a zip's end of
central directory record is read by hand (too many entries, or too large a directory, are
refused before ``zipfile`` reads the directory).

Extraction writes only regular files and folders inside the destination: tar members go
through ``tarfile``'s ``data`` filter (no absolute paths, no ``..``, no devices, no links
leaving the tree), zip members are checked the same way by hand, and both stop at a count and a
byte total counted while writing (a member's declared size is not trusted). An archive whose
top holds a single folder (as GitHub's do) is entered.
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import http.client
import io
import lzma
import os
import shutil
import socket
import stat
import struct
import tarfile
import threading
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from typing import IO, Any
from urllib.parse import urlsplit

from skillsd.core import limits
from skillsd.core.install.fs_install_source import is_loopback_host

__all__ = ["ArchiveError", "download", "extract"]

_CHUNK = 1024 * 1024


class ArchiveError(Exception):
    """The archive cannot be fetched or extracted (the message says why)."""


def _allowed(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" or (
        parts.scheme == "http" and is_loopback_host(parts.hostname or "")
    )


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to https (or http on loopback): never downgrade to plain http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if not _allowed(newurl):
            raise urllib.error.HTTPError(
                newurl, code, f"redirect to {newurl} refused (not https)", headers, fp
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(
    url: str,
    dest_file: str,
    *,
    max_bytes: int = limits.INSTALL_MAX_ARCHIVE_BYTES,
    timeout: float = limits.INSTALL_FETCH_IDLE_SECONDS,
    deadline: float = limits.INSTALL_FETCH_SECONDS,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Download ``url`` into ``dest_file``; raises :class:`ArchiveError`.

    ``timeout`` bounds each wait for the server, ``deadline`` the whole download."""
    if not _allowed(url):
        raise ArchiveError(f"{url}: only https (or http on a loopback address) is allowed")
    if progress:
        progress(f"downloading {url}")
    transfer = _Transfer(url, dest_file, max_bytes, timeout)
    # A socket timeout is per read: only another thread can stop a server that keeps sending a
    # byte just in time (in the headers as well as the body).
    worker = threading.Thread(target=transfer.run, name="skillsd-download", daemon=True)
    worker.start()
    try:
        worker.join(deadline)
    except BaseException:
        transfer.abandon()  # interrupted (Ctrl-C): the transfer must not go on alone
        raise
    if worker.is_alive():
        transfer.abandon()
        raise ArchiveError(f"{url}: not downloaded within the {deadline:g} s deadline")
    if transfer.error is not None:
        raise transfer.error


class _Transfer:
    """One download, run on a worker thread; :meth:`abandon` stops it from the caller's."""

    def __init__(self, url: str, dest_file: str, max_bytes: int, timeout: float) -> None:
        self.url = url
        self.dest_file = dest_file
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._watches: list[socket.socket] = []
        self._abandoned = False

    def run(self) -> None:
        try:
            self._fetch()
        except ArchiveError as exc:
            self.error = exc
        except urllib.error.HTTPError as exc:
            self.error = ArchiveError(f"{self.url}: HTTP {exc.code} {exc.reason}")
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", None) or exc
            self.error = ArchiveError(f"{self.url}: {reason}")
        except http.client.HTTPException as exc:  # a malformed or cut-short reply
            self.error = ArchiveError(f"{self.url}: {type(exc).__name__} {exc}".rstrip())
        except BaseException as exc:  # raised again on the caller's thread, not lost on this one
            self.error = exc
        finally:
            with self._lock:
                for watch in self._watches:
                    watch.close()
                self._watches.clear()

    def _fetch(self) -> None:
        handlers: list[urllib.request.BaseHandler] = [_SafeRedirects(), _HTTP(self)]
        if _HTTPS is not None:
            handlers.append(_HTTPS(self))
        opener = urllib.request.build_opener(*handlers)
        request = urllib.request.Request(self.url, headers={"User-Agent": "skillsd"})
        with (
            opener.open(request, timeout=self.timeout) as response,
            open(self.dest_file, "wb") as out,
        ):
            total = 0
            while (chunk := response.read(_CHUNK)) and not self._abandoned:
                total += len(chunk)
                if total > self.max_bytes:
                    raise ArchiveError(f"{self.url}: larger than {self.max_bytes} bytes")
                out.write(chunk)

    def open_socket(
        self, address: tuple[str, int], timeout: Any = None, source_address: Any = None
    ) -> socket.socket:
        """``socket.create_connection``, keeping a hold on the socket for :meth:`abandon`."""
        sock = socket.create_connection(address, timeout, source_address)
        with self._lock:
            if self._abandoned:
                sock.close()
                raise OSError("abandoned")
            # A duplicate descriptor: shutting it down wakes a read waiting on the socket (a TLS
            # socket's too, which takes the original descriptor over), and closing it does not
            # close the socket under http.client.
            self._watches.append(socket.socket(fileno=os.dup(sock.fileno())))
        return sock

    def abandon(self) -> None:
        """Stop the transfer: a read waiting on the server returns at once."""
        with self._lock:
            self._abandoned = True
            for watch in self._watches:
                with contextlib.suppress(OSError):
                    watch.shutdown(socket.SHUT_RDWR)


# http.client opens a connection's socket through ``_create_connection`` (there for tests to
# replace): the transfer opens it, so it can stop the TLS handshake and the headers too.


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, transfer: _Transfer, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = transfer.open_socket


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, transfer: _Transfer) -> None:
        super().__init__()
        self.transfer = transfer

    def do_open(
        self, http_class: Any, req: urllib.request.Request, **kwargs: Any
    ) -> http.client.HTTPResponse:
        connection = functools.partial(_HTTPConnection, transfer=self.transfer)
        return super().do_open(connection, req, **kwargs)


def _https_handler() -> Callable[[_Transfer], urllib.request.BaseHandler] | None:
    """The HTTPS handler, or None in a Python built without :mod:`ssl` (an https URL then
    fails as urllib says, naming the scheme). Its classes are made here because their bases
    exist only with :mod:`ssl`."""
    if not hasattr(http.client, "HTTPSConnection"):
        return None

    class _HTTPSConnection(http.client.HTTPSConnection):
        def __init__(self, *args: Any, transfer: _Transfer, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = transfer.open_socket

    class _HTTPS(urllib.request.HTTPSHandler):
        def __init__(self, transfer: _Transfer) -> None:
            super().__init__()
            self.transfer = transfer

        def do_open(
            self, http_class: Any, req: urllib.request.Request, **kwargs: Any
        ) -> http.client.HTTPResponse:
            connection = functools.partial(_HTTPSConnection, transfer=self.transfer)
            return super().do_open(connection, req, **kwargs)

    return _HTTPS


_HTTPS = _https_handler()


class _Budget:
    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.bytes_left = max_bytes
        self.max_entries = self.entries_left = max_entries

    def entry(self) -> None:
        self.entries_left -= 1
        if self.entries_left < 0:
            raise ArchiveError(f"more than {self.max_entries} entries")

    def copy(self, src: IO[bytes], dest: IO[bytes], limit: int) -> None:
        while chunk := src.read(_CHUNK):
            self.bytes_left -= len(chunk)
            if self.bytes_left < 0:
                raise ArchiveError(f"expands to more than {limit} bytes")
            dest.write(chunk)


def _inside(root: str, name: str) -> str:
    clean = name.replace("\\", "/")
    if clean.startswith("/") or ".." in clean.split("/") or "\0" in clean or ":" in clean[:2]:
        raise ArchiveError(f"member {name!r} would be written outside the archive's folder")
    return os.path.join(root, *[p for p in clean.split("/") if p and p != "."])


# -- zip: the end of central directory record, read before zipfile reads the directory --------

_EOCD = struct.Struct("<4s4H2LH")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CD_RECORD = struct.Struct("<4s4B4HL2L5H2L")
#: Where ``zipfile`` looks for the end record: within a comment's length of the end (one byte
#: more, as some versions do).
_ZIP_TAIL = _EOCD.size + (1 << 16)

#: A central directory as an end record describes it: (entries declared, size, where it ends).
_Directory = tuple[int, int, int]


def _zip64_directory(fh: IO[bytes], offset: int, size: int, end: int) -> _Directory | None:
    if not 0 <= offset <= size - _EOCD64.size:
        return None
    fh.seek(offset)
    record = _EOCD64.unpack(fh.read(_EOCD64.size))
    if record[0] != b"PK\x06\x06":
        return None
    return max(record[6], record[7]), record[8], end


def _zip_directories(fh: IO[bytes]) -> list[_Directory]:
    """The central directory as every end record near the end of the file describes it (in
    its zip64 form where it has one). The last is the one ``zipfile`` reads: the last end
    record's, through the zip64 record just before it if any."""
    size = fh.seek(0, os.SEEK_END)
    tail_start = max(0, size - _ZIP_TAIL)
    fh.seek(tail_start)
    tail = fh.read()
    found: list[_Directory] = []
    at = tail.find(b"PK\x05\x06")
    while 0 <= at <= len(tail) - _EOCD.size:
        _sig, _disk, _cd_disk, here, total, cd_size, _offset, _comment = _EOCD.unpack_from(tail, at)
        record_at = tail_start + at
        directory: _Directory = (max(here, total), cd_size, record_at)
        locator_at = record_at - _EOCD64_LOCATOR.size
        if locator_at >= 0:
            fh.seek(locator_at)
            locator = fh.read(_EOCD64_LOCATOR.size)
            if locator[:4] == b"PK\x06\x07":
                # zipfile reads the zip64 record just before its locator and then uses it alone
                # (the classic record holds placeholders); the one at the offset the locator
                # gives is checked too, in case a version of zipfile looks there.
                just_before = locator_at - _EOCD64.size
                pointed = _EOCD64_LOCATOR.unpack(locator)[2]
                elsewhere = _zip64_directory(fh, pointed, size, just_before)
                if elsewhere is not None:
                    found.append(elsewhere)
                directory = _zip64_directory(fh, just_before, size, just_before) or directory
        found.append(directory)
        at = tail.find(b"PK\x05\x06", at + 1)
    return found


def _check_zip(fh: IO[bytes], max_entries: int) -> None:
    """Refuse a zip whose central directory declares, or holds, more than ``max_entries``
    entries, or more than ``INSTALL_ZIP_DIRECTORY_BYTES_PER_ENTRY`` bytes per entry.

    ``zipfile`` reads the whole directory into memory and makes an object of every record it
    holds, whatever the count says: the records are counted here first, one at a time. What
    cannot be parsed is left to ``zipfile`` to refuse."""
    directories = _zip_directories(fh)
    max_size = max_entries * limits.INSTALL_ZIP_DIRECTORY_BYTES_PER_ENTRY
    for declared, cd_size, _end in directories:
        if declared > max_entries:
            raise ArchiveError(
                f"its central directory declares {declared} entries, more than {max_entries}"
            )
        if cd_size > max_size:
            raise ArchiveError(
                f"its central directory declares {cd_size} bytes, more than {max_size}"
            )
    if not directories:
        return
    _declared, cd_size, end = directories[-1]
    position = end - cd_size
    count = 0
    while 0 <= position < end:
        fh.seek(position)
        record = fh.read(_CD_RECORD.size)
        if len(record) < _CD_RECORD.size or record[:4] != b"PK\x01\x02":
            return
        count += 1
        if count > max_entries:
            raise ArchiveError(f"its central directory holds more than {max_entries} entries")
        fields = _CD_RECORD.unpack(record)
        # The name, extra field and comment lengths follow the record's fixed part.
        position += _CD_RECORD.size + fields[12] + fields[13] + fields[14]


def _extract_zip(path: str, dest: str, budget: _Budget, max_bytes: int, max_entries: int) -> None:
    with open(path, "rb") as fh:
        _check_zip(fh, max_entries)
        fh.seek(0)
        with zipfile.ZipFile(fh) as archive:
            for info in archive.infolist():
                budget.entry()
                if not info.filename:
                    raise ArchiveError("a member has no name")
                target = _inside(dest, info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise ArchiveError(f"member {info.filename!r} is a symbolic link")
                if info.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(info) as src, open(target, "xb") as out:
                    budget.copy(src, out, max_bytes)
                if mode & 0o111:
                    os.chmod(target, 0o755)


# -- tar: every header walked before tarfile reads the archive --------------------------------

_BLOCK = tarfile.BLOCKSIZE
_EXTENSIONS = {
    b"L": "long name",
    b"K": "long link name",
    b"x": "set of pax records",
    b"X": "set of pax records",
    b"g": "set of global pax records",
}
#: Member types whose size is not followed by data (tarfile does not skip any for them).
_NO_DATA = {b"1", b"2", b"3", b"4", b"5", b"6"}

_Opener = Callable[[str], io.BufferedIOBase]


def _tar_opener(path: str) -> _Opener:
    """How to open ``path``'s tar stream: as is, or through gzip, bzip2 or xz (a plain tar is
    tried first, as ``tarfile`` does, so both walks read the same stream)."""
    with open(path, "rb") as fh:
        head = fh.read(_BLOCK)
    try:
        tarfile.TarInfo.frombuf(head, tarfile.ENCODING, "surrogateescape")
        return lambda p: open(p, "rb")
    except tarfile.HeaderError:
        pass
    if head.startswith(b"\x1f\x8b"):
        return lambda p: gzip.GzipFile(p, "rb")
    if head.startswith(b"BZh"):
        return lambda p: bz2.BZ2File(p, "rb")
    if head.startswith(b"\xfd7zXZ\x00"):
        return lambda p: lzma.LZMAFile(p, "rb")
    raise ArchiveError(f"{os.path.basename(path)}: not a zip, tar, tar.gz, tar.bz2 or tar.xz file")


def _blocks(size: int) -> int:
    return -(-size // _BLOCK) * _BLOCK


def _skip(stream: io.BufferedIOBase, size: int) -> bool:
    """Read past ``size`` bytes in bounded chunks; False at an early end."""
    while size > 0:
        chunk = stream.read(min(size, _CHUNK))
        if not chunk:
            return False
        size -= len(chunk)
    return True


# Complex by design: a tar member of each kind refused by its own check.
def _check_tar(stream: io.BufferedIOBase, max_bytes: int, max_entries: int) -> None:  # noqa: C901
    """Walk the headers of a tar stream the way ``tarfile`` will, refusing what would make it
    allocate without bound: a long name or pax record set over ``INSTALL_MAX_TAR_HEADER_BYTES``
    (tarfile reads it whole, whatever it declares), too many such headers, too many members or
    member bytes, sparse members. Where the walk cannot go on (the end, a broken header) tarfile
    stops or fails too."""
    offset = entries = data = extension_bytes = chain = global_records = 0
    while True:
        try:
            info = tarfile.TarInfo.frombuf(stream.read(_BLOCK), tarfile.ENCODING, "surrogateescape")
        except tarfile.HeaderError:
            return
        if info.size < 0:
            raise ArchiveError(f"the tar header at byte {offset} declares a negative size")
        kind = _EXTENSIONS.get(info.type)
        if kind is not None:
            if info.size > limits.INSTALL_MAX_TAR_HEADER_BYTES:
                raise ArchiveError(
                    f"the tar header at byte {offset} declares a {kind} of {info.size} bytes,"
                    f" more than {limits.INSTALL_MAX_TAR_HEADER_BYTES}"
                )
            chain += 1
            if chain > limits.INSTALL_MAX_TAR_HEADER_CHAIN:
                raise ArchiveError(
                    f"the tar member at byte {offset} has more than"
                    f" {limits.INSTALL_MAX_TAR_HEADER_CHAIN} extended headers"
                )
            extension_bytes += info.size
            if extension_bytes > limits.INSTALL_MAX_TAR_HEADERS_BYTES:
                raise ArchiveError(
                    f"its long names and pax records hold more than"
                    f" {limits.INSTALL_MAX_TAR_HEADERS_BYTES} bytes"
                )
            body = stream.read(_blocks(info.size))[: info.size]
            if len(body) < info.size:
                return
            if info.type in (b"x", b"X", b"g") and (b" size=" in body or b"GNU.sparse." in body):
                # The only pax records that move where the next header is: not walked, refused
                # (a sparse map is also read whole, whatever it declares).
                raise ArchiveError(
                    f"the tar header at byte {offset} resizes or sparsifies a member"
                )
            if info.type == b"g":
                global_records += body.count(b"\n")
                if global_records > limits.INSTALL_MAX_TAR_GLOBAL_RECORDS:
                    raise ArchiveError(
                        f"its global pax headers hold more than"
                        f" {limits.INSTALL_MAX_TAR_GLOBAL_RECORDS} records"
                    )
            offset += _BLOCK + _blocks(info.size)
            continue
        chain = 0
        if info.type == b"S":
            raise ArchiveError(f"the tar member at byte {offset} is a sparse file")
        entries += 1
        if entries > max_entries:
            raise ArchiveError(f"more than {max_entries} entries")
        offset += _BLOCK
        if info.type not in _NO_DATA:
            data += info.size
            if data > max_bytes:
                raise ArchiveError(f"expands to more than {max_bytes} bytes")
            if not _skip(stream, _blocks(info.size)):
                return
            offset += _blocks(info.size)


def _extract_tar(path: str, dest: str, budget: _Budget, max_bytes: int, max_entries: int) -> None:
    opener = _tar_opener(path)
    with opener(path) as stream:
        _check_tar(stream, max_bytes, max_entries)
    with opener(path) as stream, tarfile.open(fileobj=stream, mode="r:") as archive:
        for member in archive:
            budget.entry()
            # The data filter would quietly make an absolute name relative: refuse it instead.
            _inside(dest, member.name)
            try:
                safe = tarfile.data_filter(member, dest)
            except tarfile.FilterError as exc:
                raise ArchiveError(f"member {member.name!r}: {exc}") from None
            if safe is None:
                continue
            if safe.issym() or safe.islnk():
                raise ArchiveError(f"member {member.name!r} is a link")
            target = _inside(dest, safe.name)
            if safe.isdir():
                os.makedirs(target, exist_ok=True)
                continue
            if not safe.isfile():
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            src = archive.extractfile(safe)
            if src is None:
                continue
            with src, open(target, "xb") as out:
                budget.copy(src, out, max_bytes)
            if safe.mode & 0o111:
                os.chmod(target, 0o755)


def extract(
    path: str,
    dest: str,
    *,
    max_bytes: int = limits.INSTALL_MAX_ARCHIVE_BYTES,
    max_entries: int = limits.INSTALL_MAX_ARCHIVE_ENTRIES,
) -> str:
    """Extract the archive ``path`` (zip, ``.skill``, tar, tar.gz, tar.bz2, tar.xz: told apart
    by content) into the new folder ``dest``; returns the folder the skills are looked for in."""
    os.makedirs(dest)
    budget = _Budget(max_bytes, max_entries)
    with open(path, "rb") as fh:
        head = fh.read(4)
    try:
        if head.startswith(b"PK"):
            _extract_zip(path, dest, budget, max_bytes, max_entries)
        else:
            _extract_tar(path, dest, budget, max_bytes, max_entries)
    except (
        zipfile.BadZipFile,
        tarfile.TarError,
        EOFError,
        OSError,
        zlib.error,
        lzma.LZMAError,
    ) as exc:
        raise ArchiveError(f"{os.path.basename(path)}: not a readable archive ({exc})") from None
    entries = [e for e in os.listdir(dest) if e not in ("__MACOSX",)]
    if len(entries) == 1 and os.path.isdir(os.path.join(dest, entries[0])):
        only = os.path.join(dest, entries[0])
        if not os.path.isfile(os.path.join(dest, "SKILL.md")):
            return only
    return dest


def discard(path: str) -> None:
    """Remove a fetched tree (best effort)."""
    shutil.rmtree(path, ignore_errors=True)
