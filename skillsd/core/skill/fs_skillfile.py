"""Reading one SKILL.md: a bounded read, frontmatter extraction and field validation.

:func:`read_skill_file` is what discovery calls: one ``open``, one ``fstat``, a read of
``FIRST_READ_BYTES`` (more only when the closing ``---`` is further on, never past
``MAX_FRONTMATTER_BYTES``) and no read of the body. :func:`parse_skill_bytes` does the same work on
bytes already in memory, for tests, fuzzers and callers that read the file themselves.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from skillsd.core import limits
from skillsd.core.fs.bounded_read import (
    NotRegularFile,
    open_regular_file,
    read_at_most,
    read_regular_file,
)
from skillsd.core.fs.file_version import StatKey
from skillsd.core.skill.frontmatter import (
    FrontmatterError,
    decode_frontmatter,
    load_frontmatter,
    locate_frontmatter,
    quote_colon_values,
)
from skillsd.core.skill.fs_openai_yaml import read_openai_yaml
from skillsd.core.skill.host_fields import with_reading
from skillsd.core.skill.validation import Mode, SkillFields, validate_fields
from skillsd_protocol import Diagnostic

__all__ = [
    "SKILL_FILE",
    "Mode",
    "ParsedSkillFile",
    "SkillFields",
    "StatKey",
    "parse_skill_bytes",
    "read_skill_file",
]

#: The file that makes a directory a skill.
SKILL_FILE = "SKILL.md"


class ParsedSkillFile(msgspec.Struct, kw_only=True):
    """The outcome of reading one SKILL.md.

    ``fields`` is None when the skill cannot be accepted in the given mode; ``diagnostics`` holds
    everything found (errors, warnings, info), each with ``path`` set to the SKILL.md path.
    ``stat`` is None only when the file could not be stat'ed at all.
    """

    path: str
    fields: SkillFields | None
    diagnostics: list[Diagnostic]
    stat: StatKey | None
    #: Byte offset of the body inside the file (after the closing ``---`` line), or -1.
    body_offset: int = -1
    #: The body as text, only when it was asked for (``read_body=True``) and fully read.
    body: str | None = None


def _diag(
    severity: Literal["error", "warning", "info"],
    code: str,
    message: str,
    path: str,
    field: str | None = None,
) -> Diagnostic:
    return Diagnostic(severity=severity, code=code, message=message, field=field, path=path)


def _default_dir_name(path: str) -> str:
    parent = os.path.dirname(path)
    name = os.path.basename(parent)
    if name in ("", ".", ".."):
        name = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return name


def _body_advice(
    data: bytes, body_offset: int, file_size: int, path: str, out: list[Diagnostic]
) -> None:
    """Info diagnostics from the skill format's size advice; line counts need the whole body in
    hand."""
    body_bytes = file_size - body_offset
    tokens = body_bytes // limits.BYTES_PER_TOKEN
    if tokens > limits.BODY_ADVISED_MAX_TOKENS:
        out.append(
            _diag(
                "info",
                "body.too_many_tokens",
                f"body is about {tokens} tokens ({body_bytes} bytes / "
                f"{limits.BYTES_PER_TOKEN}); the specification advises under "
                f"{limits.BODY_ADVISED_MAX_TOKENS}: move detail into references/",
                path,
            )
        )
    if len(data) >= file_size and body_bytes > limits.BODY_ADVISED_MAX_LINES:
        lines = data.count(b"\n", body_offset)
        if not data.endswith(b"\n"):
            lines += 1
        if lines > limits.BODY_ADVISED_MAX_LINES:
            out.append(
                _diag(
                    "info",
                    "body.too_long",
                    f"body is {lines} lines; the specification advises under "
                    f"{limits.BODY_ADVISED_MAX_LINES}: move detail into references/",
                    path,
                )
            )


def _parse(
    data: bytes,
    *,
    path: str,
    dir_name: str | None,
    mode: Mode,
    file_size: int,
    read_body: bool,
) -> ParsedSkillFile:
    diagnostics: list[Diagnostic] = []
    try:
        located = locate_frontmatter(data, at_eof=len(data) >= file_size)
        if located is None:
            raise FrontmatterError(
                "frontmatter.unclosed",
                f"frontmatter not closed within the {len(data)} bytes read",
            )
        text = decode_frontmatter(data, located)
        try:
            raw = load_frontmatter(text)
        except FrontmatterError as exc:
            repair = (
                quote_colon_values(text)
                if mode == "lenient" and exc.code == "yaml.invalid"
                else None
            )
            if repair is None:
                raise
            try:
                raw = load_frontmatter(repair[0])
            except FrontmatterError:
                raise exc from None
            for key in repair[1]:
                diagnostics.append(
                    _diag(
                        "warning",
                        "yaml.unquoted_colon",
                        f"the value of {key!r} contains ': ' and is not quoted, which YAML "
                        "rejects; read as a quoted string (accepted in lenient mode)",
                        path,
                        key,
                    )
                )
    except FrontmatterError as exc:
        diagnostics.append(_diag("error", exc.code, exc.message, path))
        return ParsedSkillFile(path=path, fields=None, diagnostics=diagnostics, stat=None)

    fields, field_diagnostics = validate_fields(raw, path=path, dir_name=dir_name, mode=mode)
    diagnostics += field_diagnostics
    _body_advice(data, located.body_offset, file_size, path, diagnostics)
    body: str | None = None
    if read_body and len(data) >= file_size:
        try:
            body = data[located.body_offset :].decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = located.body_offset + exc.start
            diagnostics.append(
                _diag(
                    "warning",
                    "encoding.invalid",
                    f"body is not valid UTF-8 (bad byte at offset {offset}); "
                    "it is shown with replacement characters",
                    path,
                )
            )
            body = data[located.body_offset :].decode("utf-8", "replace")
    return ParsedSkillFile(
        path=path,
        fields=fields,
        diagnostics=diagnostics,
        stat=None,
        body_offset=located.body_offset,
        body=body,
    )


def parse_skill_bytes(
    data: bytes,
    *,
    path: str,
    dir_name: str | None,
    mode: Mode = "strict",
    file_size: int | None = None,
    read_body: bool = False,
) -> ParsedSkillFile:
    """Parse and validate a SKILL.md held in memory (``stat`` is left None).

    ``data`` is the whole file, or a prefix of it when ``file_size`` (the real size) is larger;
    a prefix must then hold the complete frontmatter (else ``frontmatter.unclosed``).
    ``dir_name`` None skips the name/directory check. ``read_body`` also decodes the body into
    ``ParsedSkillFile.body``.
    """
    size = len(data) if file_size is None else max(file_size, len(data))
    return _parse(
        data, path=path, dir_name=dir_name, mode=mode, file_size=size, read_body=read_body
    )


def _read_prefix(fd: int, size: int, read_body: bool) -> bytes:
    """Read what parsing needs: the frontmatter (bounded), or the whole file up to 1 MiB."""
    if read_body:
        return read_at_most(fd, limits.MAX_SKILL_FILE_BYTES, size)
    data = os.read(fd, limits.FIRST_READ_BYTES)
    if len(data) < limits.FIRST_READ_BYTES or len(data) >= size:
        return data
    if locate_frontmatter(data, at_eof=False) is not None:
        return data
    # The closing line is further on: read up to the bound in one go.
    return data + read_at_most(fd, limits.MAX_FRONTMATTER_BYTES - len(data))


def read_skill_file(
    path: str,
    *,
    mode: Mode = "strict",
    dir_name: str | None = None,
    read_body: bool = False,
    openai_yaml: bool = True,
) -> ParsedSkillFile:
    """Read and validate the SKILL.md at ``path`` without reading its body.

    ``dir_name`` is the name the skill's ``name`` must equal (default: the parent directory's
    basename). With ``read_body`` the whole file (up to ``MAX_SKILL_FILE_BYTES``) is read and the
    body returned and checked too. ``openai_yaml`` also reads Codex's ``agents/openai.yaml``
    beside it (docs/conformance.md; a scan that saw no ``agents/`` folder passes False to save the
    probe).
    Never raises for problems with the file: those are diagnostics.
    """
    if dir_name is None:
        dir_name = _default_dir_name(path)
    try:
        fd, st = open_regular_file(path)
    except FileNotFoundError:
        return _failed(
            path, None, "file.missing", "SKILL.md does not exist (removed while scanning?)"
        )
    except NotRegularFile as exc:
        return _failed(path, exc.key, "file.not_regular", "SKILL.md is not a regular file")
    except OSError as exc:
        return _failed(path, None, "file.unreadable", f"cannot open SKILL.md: {exc.strerror}")
    except ValueError:  # a NUL byte in the path
        return _failed(path, None, "file.unreadable", "cannot open SKILL.md: invalid path")
    key = StatKey.of(st)
    try:
        try:
            data = _read_prefix(fd, st.st_size, read_body)
        except OSError as exc:
            return _failed(path, key, "file.unreadable", f"cannot read SKILL.md: {exc.strerror}")
        except FrontmatterError as exc:
            return _failed(path, key, exc.code, exc.message)
    finally:
        os.close(fd)
    # The file may have changed size since fstat; what was read is what counts.
    size = st.st_size if len(data) < st.st_size else len(data)
    parsed = _parse(
        data, path=path, dir_name=dir_name, mode=mode, file_size=size, read_body=read_body
    )
    parsed.stat = key
    if openai_yaml and parsed.fields is not None:
        reading = read_openai_yaml(os.path.dirname(path))
        if reading.values or reading.diagnostics or reading.model is not None:
            fields = parsed.fields
            invocation, host = with_reading(fields.invocation, fields.host, reading)
            parsed.fields = msgspec.structs.replace(fields, invocation=invocation, host=host)
            parsed.diagnostics += reading.diagnostics
    return parsed


def _failed(path: str, key: StatKey | None, code: str, message: str) -> ParsedSkillFile:
    return ParsedSkillFile(
        path=path, fields=None, diagnostics=[_diag("error", code, message, path)], stat=key
    )


def written_frontmatter(path: str) -> dict[str, object]:
    """A SKILL.md's frontmatter as written (the all-strings YAML a skill carries), or ``{}``
    when the file has none or can no longer be read (the next listing says why)."""
    try:
        data = read_regular_file(path, limits.MAX_SKILL_FILE_BYTES).data
        located = locate_frontmatter(data, at_eof=True)
        if located is None:
            return {}
        return dict(load_frontmatter(decode_frontmatter(data, located)))
    except (OSError, NotRegularFile, ValueError, FrontmatterError):
        return {}
