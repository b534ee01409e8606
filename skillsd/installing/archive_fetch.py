"""Fetching an archive source: download (https, or http on a loopback address) and extraction.

Extraction writes only regular files and folders inside the destination: tar members go
through ``tarfile``'s ``data`` filter (no absolute paths, no ``..``, no devices, no links
leaving the tree), zip members are checked the same way by hand, and both stop at a count and a
byte total counted while writing (a member's declared size is not trusted). An archive whose
top holds a single folder (as GitHub's do) is entered.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from typing import IO
from urllib.parse import urlsplit

from skillsd.core import limits
from skillsd.core.install_source import is_loopback_host

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
    timeout: float = limits.INSTALL_FETCH_SECONDS,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Download ``url`` into ``dest_file``; raises :class:`ArchiveError`."""
    if not _allowed(url):
        raise ArchiveError(f"{url}: only https (or http on a loopback address) is allowed")
    if progress:
        progress(f"downloading {url}")
    opener = urllib.request.build_opener(_SafeRedirects())
    request = urllib.request.Request(url, headers={"User-Agent": "skillsd"})
    try:
        with opener.open(request, timeout=timeout) as response, open(dest_file, "wb") as out:
            total = 0
            while chunk := response.read(_CHUNK):
                total += len(chunk)
                if total > max_bytes:
                    raise ArchiveError(f"{url}: larger than {max_bytes} bytes")
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise ArchiveError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ArchiveError(f"{url}: {reason}") from None


class _Budget:
    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.bytes_left = max_bytes
        self.entries_left = max_entries

    def entry(self) -> None:
        self.entries_left -= 1
        if self.entries_left < 0:
            raise ArchiveError(f"more than {limits.INSTALL_MAX_ARCHIVE_ENTRIES} entries")

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


def _extract_zip(path: str, dest: str, budget: _Budget, max_bytes: int) -> None:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            budget.entry()
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


def _extract_tar(path: str, dest: str, budget: _Budget, max_bytes: int) -> None:
    with tarfile.open(path, "r:*") as archive:
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
    """Extract the archive ``path`` (zip, ``.skill``, tar, tar.gz: told apart by content) into
    the new folder ``dest``; returns the folder the skills are looked for in."""
    os.makedirs(dest)
    budget = _Budget(max_bytes, max_entries)
    with open(path, "rb") as fh:
        head = fh.read(4)
    try:
        if head.startswith(b"PK"):
            _extract_zip(path, dest, budget, max_bytes)
        else:
            _extract_tar(path, dest, budget, max_bytes)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
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
