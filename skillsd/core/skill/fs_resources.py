"""A skill's files: the listing sent with ``skills.load``, the whole SKILL.md, and ``readFile``.

Every path handed out or read stays inside the skill directory's real path: symlinks that lead
out are omitted from listings and refused by :func:`read_resource`.
"""

from __future__ import annotations

import base64
import codecs
import errno
import os
import stat
from typing import Literal, NamedTuple

from skillsd.core import limits
from skillsd.core.errors import InvalidParamsData, SkillFileTooLargeData, SkillsdError
from skillsd.core.fs.bounded_read import NotRegularFile, read_regular_file
from skillsd.core.fs.real_path import real_path
from skillsd.core.fs.tree_walk import TreeWalk
from skillsd.core.skill.frontmatter import FrontmatterError, body_text, locate_frontmatter
from skillsd.core.skill.fs_skillfile import SKILL_FILE
from skillsd_protocol import Diagnostic
from skillsd_protocol.errors import (
    InvalidSkillData,
    PathNotAllowedData,
    ResourceNotFoundData,
    SkillNotFoundData,
)
from skillsd_protocol.messages import ReadFileResult

__all__ = [
    "SkillFileContent",
    "list_skill_files",
    "read_resource",
    "read_skill_file_content",
]

Encoding = Literal["utf-8", "base64"]


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


# -- listing ---------------------------------------------------------------------------------


def list_skill_files(
    skill_dir: str,
    *,
    max_files: int = limits.MAX_LISTED_FILES,
    max_depth: int = limits.MAX_LISTED_DEPTH,
) -> list[str]:
    """The skill's files other than its top-level ``SKILL.md``, relative POSIX paths.

    ``references/a.md`` has depth 2; files deeper than ``max_depth`` are not listed and at most
    ``max_files`` paths are returned, the shallower first. Order is deterministic: sorted by
    path components (so ``a/x`` precedes ``b``). Symlinks are followed only while they stay
    inside the skill directory, and a directory reached twice (a symlink loop) is listed once
    (:class:`~skillsd.core.fs.tree_walk.TreeWalk`). FIFOs, sockets, devices, broken links, names
    that are not UTF-8, ``.git`` and ``node_modules`` are left out; unreadable directories are
    skipped.
    """
    try:
        real_root = real_path(skill_dir, strict=True)
    except OSError:
        return []
    out: list[tuple[str, ...]] = []
    walk = TreeWalk(real_root, max_depth=max_depth - 1, max_dirs=max_files, real_root=real_root)
    for directory in walk:
        if not _inside(directory.real, real_root):
            directory.descend = False  # a symlink out of the skill: not the skill's file
            continue
        rel = os.path.relpath(directory.path, real_root)
        prefix = () if rel == os.curdir else tuple(rel.split(os.sep))
        for entry in directory.entries:
            if len(out) >= max_files:
                break
            if not prefix and entry.name == SKILL_FILE:
                continue
            try:
                if entry.is_symlink():
                    if not _inside(os.path.realpath(entry.path), real_root):
                        continue
                    st = os.stat(entry.path)
                else:
                    st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((*prefix, entry.name))
        if len(out) >= max_files:
            break
    out.sort()
    return ["/".join(parts) for parts in out]


# -- SKILL.md ----------------------------------------------------------------------------------


class SkillFileContent(NamedTuple):
    """A whole SKILL.md as text (BOM dropped, ``\\r\\n`` turned into ``\\n``) and its body."""

    text: str
    body: str


def read_skill_file_content(
    skill_md_path: str, max_bytes: int = limits.MAX_SKILL_FILE_BYTES
) -> SkillFileContent:
    """Read a whole SKILL.md for ``skills.load``.

    Raises ``too_large`` over ``max_bytes``, ``skill_not_found`` when the file is gone, and
    ``invalid_skill`` when its frontmatter no longer parses. Bytes that are not UTF-8 are
    replaced (U+FFFD) rather than failing the load: discovery only checked the frontmatter.
    """
    try:
        read = read_regular_file(skill_md_path, max_bytes)
    except FileNotFoundError:
        raise SkillsdError(
            f"{skill_md_path}: SKILL.md no longer exists",
            SkillNotFoundData(path=skill_md_path, suggestions=[]),
        ) from None
    except NotRegularFile:
        raise SkillsdError(
            f"{skill_md_path}: SKILL.md is not a regular file",
            InvalidSkillData(path=skill_md_path, diagnostics=[]),
        ) from None
    except OSError as exc:
        raise SkillsdError(
            f"{skill_md_path}: cannot open SKILL.md: {exc.strerror}",
            ResourceNotFoundData(path=skill_md_path),
        ) from None
    data = read.data
    if read.over_cap:
        raise SkillsdError(
            f"{skill_md_path}: SKILL.md is larger than {max_bytes} bytes",
            SkillFileTooLargeData(path=skill_md_path, limit=max_bytes),
        )
    try:
        located = locate_frontmatter(data, at_eof=True, limit=len(data) + 1)
    except FrontmatterError as exc:
        diag = Diagnostic(severity="error", code=exc.code, message=exc.message, path=skill_md_path)
        raise SkillsdError(
            f"{skill_md_path}: {exc.message}",
            InvalidSkillData(path=skill_md_path, diagnostics=[diag]),
        ) from None
    assert located is not None  # at_eof: the frontmatter is found or an error is raised
    start = 3 if data.startswith(codecs.BOM_UTF8) else 0
    text = data[start:].decode("utf-8", errors="replace").replace("\r\n", "\n")
    return SkillFileContent(text=text, body=body_text(data, located))


# -- readFile --------------------------------------------------------------------------------


def _refuse(file: str, reason: str) -> SkillsdError:
    return SkillsdError(f"{file!r}: {reason}", PathNotAllowedData(file=file))


def _missing(file: str, skill_dir: str) -> SkillsdError:
    return SkillsdError(
        f"{file!r}: no such file in skill directory {skill_dir}", ResourceNotFoundData(file=file)
    )


def _check_relative(file: str) -> list[str]:
    """The path's segments, or ``path_not_allowed`` for anything that is not plainly relative."""
    if not isinstance(file, str) or not file:
        raise _refuse(str(file), "an empty path is not a file inside the skill")
    if "\x00" in file:
        raise _refuse(file, "the path contains a NUL byte")
    if "\\" in file:
        raise _refuse(file, "backslashes are not allowed; use '/' between path segments")
    if file.startswith("/"):
        raise _refuse(file, "absolute paths are not allowed; give a path relative to the skill")
    segments = file.split("/")
    if ".." in segments:
        raise _refuse(file, "'..' segments are not allowed")
    # "./a" and "a//b" name the same file as "a" and "a/b"; a trailing "/" means a directory.
    parts = [s for s in segments if s not in ("", ".")]
    if not parts or file.endswith("/"):
        raise _refuse(file, "is a directory, not a file")
    return parts


# Complex by design: each refusal of a read names its own reason.
def read_resource(  # noqa: C901
    skill_dir: str,
    file: str,
    *,
    offset: int = 0,
    length: int | None = None,
) -> ReadFileResult:
    """Read a window of a file inside the skill directory (``skills.readFile``).

    ``file`` is relative to ``skill_dir`` and taken literally (``%2e%2e`` is a file name). The
    window is ``length`` bytes (default ``DEFAULT_READ_BYTES``, at most ``MAX_READ_BYTES``) from
    byte ``offset``; ``truncated`` says bytes remain after it. Text comes back as ``utf-8``.
    When a window of otherwise valid UTF-8 ends inside a multi-byte character, the window is
    trimmed back to that character's first byte, so ``offset + len(content.encode())`` is always
    the next offset. A window that is not valid UTF-8 or holds NUL bytes is sent as ``base64``.

    Refusals (``path_not_allowed``): absolute paths, ``..`` segments, NUL, backslashes, a real
    path outside the skill directory, directories, and anything that is not a regular file
    (FIFOs are detected with ``stat`` and opened non-blocking, so a read never hangs). A
    contained path that does not exist is ``resource_not_found``; a negative ``offset`` or
    ``length`` is ``invalid_params``.
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise SkillsdError(
            f"offset must be a non-negative integer, got {offset!r}",
            InvalidParamsData(field="offset"),
        )
    if length is not None and (
        isinstance(length, bool) or not isinstance(length, int) or length < 0
    ):
        raise SkillsdError(
            f"length must be a non-negative integer, got {length!r}",
            InvalidParamsData(field="length"),
        )
    parts = _check_relative(file)
    try:
        real_root = real_path(skill_dir, strict=True)
    except OSError:
        raise SkillsdError(
            f"skill directory {skill_dir} no longer exists", ResourceNotFoundData(file=file)
        ) from None
    try:
        real = real_path(os.path.join(real_root, *parts))
    except OSError:  # a link in the path changed while it was being resolved
        raise _refuse(file, "changed while being opened") from None
    if real == real_root:
        raise _refuse(file, "is a directory, not a file")
    if not _inside(real, real_root):
        raise _refuse(file, "resolves outside the skill directory (through a symlink)")
    try:
        st = os.stat(real)
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(file, skill_dir) from None
    except OSError as exc:
        raise _refuse(file, f"cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(file, "is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(file, "is not a regular file (FIFO, socket or device)")

    window = limits.DEFAULT_READ_BYTES if length is None else min(length, limits.MAX_READ_BYTES)
    try:
        # O_NOFOLLOW: `real` has no symlinks left, so one appearing now is a swap; refuse it.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _missing(file, skill_dir) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(file, "changed into a symlink while being opened") from None
        raise _refuse(file, f"cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        fst = os.fstat(f.fileno())
        if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(fst.st_mode):
            raise _refuse(file, "changed while being opened")
        size = fst.st_size
        # An offset past the end reads nothing; seeking there could overflow an off_t.
        if window and offset < size:
            f.seek(offset)
            data = f.read(min(window, size - offset))  # the window the file had when opened
        else:
            data = b""
    end = offset + len(data)
    encoding, content, used = _encode_window(data, at_eof=end >= size)
    return ReadFileResult(
        file=file,
        path=real,
        size=size,
        encoding=encoding,
        content=content,
        truncated=offset + used < size,
    )


def _encode_window(data: bytes, *, at_eof: bool) -> tuple[Encoding, str, int]:
    """(encoding, content, bytes of ``data`` the content covers) for one window."""
    if b"\x00" not in data:
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            text = decoder.decode(data, final=at_eof)
        except UnicodeDecodeError:
            pass
        else:
            pending = len(decoder.getstate()[0])
            # A character cut by the window's end is left for the next window, unless it is
            # all this window holds (a tiny `length`): then bytes are sent as they are.
            if not pending or text:
                return "utf-8", text, len(data) - pending
    return "base64", base64.b64encode(data).decode("ascii"), len(data)
