"""Text from skill files, configs and file names made safe to show a person (docs/security.md).

A description, a name or a path may carry terminal control sequences (``ESC [31m``, a bell, a
carriage return that overwrites the line); printed raw they would recolour, rewrite or hijack
the user's terminal. Every human output (CLI and TUI, never ``--json``) passes such text
through :func:`escape_controls`, which writes each control character as a visible escape:

- ``\\t``, ``\\n``, ``\\r`` for tab, newline and carriage return, ``\\xNN`` for the other C0
  characters and DEL;
- ``\\u0080`` .. ``\\u009f`` for the C1 controls (``\\xNN`` is kept for bytes, below);
- ``\\xNN`` for each byte of a file name that is not UTF-8 (Python holds it as a lone surrogate
  U+DC80..U+DCFF; the form matches how diagnostics write such names), ``\\udNNN`` for any other
  lone surrogate.

Multi-line text (a skill's content, a rendered prompt) keeps its newlines and tabs.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escape_controls"]

_ONE_LINE: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_MULTI_LINE: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable file-name byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def escape_controls(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character and lone surrogate written as a visible escape;
    with ``multiline``, newlines and tabs stay as they are."""
    pattern = _MULTI_LINE if multiline else _ONE_LINE
    if pattern.search(text) is None:  # the common case: no copy
        return text
    return pattern.sub(_escape, text)
