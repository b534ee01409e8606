"""Control characters shown escaped, never raw, in human output (docs/security.md)."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from skillsd.core.display_text import escape_controls


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


def test_terminal_sequences_become_visible_escapes() -> None:
    assert escape_controls("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert escape_controls("bell\x07 cr\r nl\n tab\t nul\x00 del\x7f") == (
        "bell\\x07 cr\\r nl\\n tab\\t nul\\x00 del\\x7f"
    )
    # C1: U+009B is a one-character CSI on some terminals.
    assert escape_controls("\x9b31m \x85") == "\\u009b31m \\u0085"


def test_plain_text_is_returned_as_is() -> None:
    text = "Fill PDF forms: café, 日本語, emoji 🎉, [brackets] and a back\\slash."
    assert escape_controls(text) is text
    assert escape_controls(text, multiline=True) is text


def test_multiline_keeps_newlines_and_tabs_only() -> None:
    body = "# Title\n\tindented\r\n\x1b]0;title\x07\n"
    assert escape_controls(body, multiline=True) == "# Title\n\tindented\\r\n\\x1b]0;title\\x07\n"


def test_undecodable_file_name_bytes_are_written_as_bytes() -> None:
    path = os.fsdecode(b"/skills/caf\xe9/\xff\x1b")
    assert escape_controls(path) == "/skills/caf\\xe9/\\xff\\x1b"
    # Any other lone surrogate (not from a file name) still cannot reach the terminal raw.
    assert escape_controls("a\ud800b\udfffc") == "a\\ud800b\\udfffc"
    assert escape_controls(path).encode("utf-8")  # always encodable now


@given(st.text(), st.booleans())
def test_no_control_character_survives(text: str, multiline: bool) -> None:
    shown = escape_controls(text, multiline=multiline)
    allowed = {"\n", "\t"} if multiline else set()
    assert not [c for c in shown if _is_control(c) and c not in allowed]
    # Text without controls passes unchanged; escaping twice changes nothing more.
    if not any(_is_control(c) and c not in allowed for c in text):
        assert shown == text
    assert escape_controls(shown, multiline=multiline) == shown
