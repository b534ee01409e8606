"""Byte-exact frontmatter extraction and safe, all-strings YAML loading.

Extraction works on bytes so a bounded prefix of a file can be inspected without decoding the
body. YAML is composed by libyaml (``CBaseLoader``, or the pure-Python ``BaseLoader`` when libyaml
is missing) and turned into Python values by :class:`_Builder`, which replaces PyYAML's
constructor: every scalar stays a string, duplicate keys are rejected, and alias expansion and
nesting depth are bounded so a "billion laughs" document fails after a few thousand steps.

Problems raise :class:`FrontmatterError`; callers turn it into a diagnostic.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from skillsd.core import limits

# libyaml's composer when PyYAML was built with it; the pure-Python one otherwise.
_Loader: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

__all__ = [
    "FrontmatterError",
    "Located",
    "body_text",
    "check_nesting",
    "decode_frontmatter",
    "load_frontmatter",
    "locate_frontmatter",
    "quote_colon_values",
]

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_DELIMITER = b"---"
_BLANKS = b" \t"
#: The byte sequences a file's first bytes are matched against to classify it.
_OPENINGS = (_BOM + _DELIMITER, _DELIMITER, *_UTF16_BOMS)


class FrontmatterError(Exception):
    """A frontmatter or YAML problem with a stable diagnostic ``code`` and a readable message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Located(NamedTuple):
    """Where the frontmatter sits in the file's bytes.

    ``data[yaml_start:yaml_end]`` is the YAML text (without the ``---`` lines) and the body starts
    at ``body_offset``, just after the closing line's line break.
    """

    yaml_start: int
    yaml_end: int
    body_offset: int


def _line_end(data: bytes, pos: int, at_eof: bool) -> int | None:
    """Return the offset just past the line break if ``data[pos:]`` is only blanks then a line end.

    Returns -1 when something else follows (not a delimiter line), and None when the answer
    depends on bytes not read yet.
    """
    n = len(data)
    while pos < n and data[pos] in _BLANKS:
        pos += 1
    if pos == n:
        return pos if at_eof else None
    byte = data[pos]
    if byte == 0x0A:  # \n
        return pos + 1
    if byte == 0x0D:  # \r: only as part of \r\n
        if pos + 1 == n:
            return None if not at_eof else -1
        return pos + 2 if data[pos + 1] == 0x0A else -1
    return -1


def locate_frontmatter(
    data: bytes, *, at_eof: bool, limit: int = limits.MAX_FRONTMATTER_BYTES
) -> Located | None:
    """Find the frontmatter in ``data``, the start of a file (all of it when ``at_eof``).

    Returns None when the closing line may lie beyond ``data`` and ``data`` is still shorter than
    ``limit``: the caller reads more and asks again. The frontmatter block (from the start of the
    file through the closing line's line break) may be at most ``limit`` bytes.

    Raises :class:`FrontmatterError` (``frontmatter.missing``, ``frontmatter.unclosed``,
    ``frontmatter.too_large``, ``encoding.invalid``).
    """
    start = 3 if data.startswith(_BOM) else 0
    if not data.startswith(_DELIMITER, start):
        if not at_eof and any(opening.startswith(data) for opening in _OPENINGS):
            return None  # too few bytes yet to tell how the file starts
        if data.startswith(_UTF16_BOMS):
            raise FrontmatterError(
                "encoding.invalid", "SKILL.md is UTF-16 encoded; it must be UTF-8"
            )
        raise FrontmatterError(
            "frontmatter.missing",
            "SKILL.md must start with a '---' line opening the YAML frontmatter",
        )
    yaml_start = _line_end(data, start + 3, at_eof)
    if yaml_start is None:
        return None
    if yaml_start == -1:
        raise FrontmatterError(
            "frontmatter.missing",
            "the first line of SKILL.md must be exactly '---' (trailing spaces allowed)",
        )
    if yaml_start == len(data) and at_eof:
        raise FrontmatterError(
            "frontmatter.unclosed", "frontmatter not closed: no '---' line after the opening one"
        )
    # Search from the opening line's own line break so an empty frontmatter (``---\n---``) is
    # found too; a closing line always follows a '\n'.
    search = yaml_start - 1
    while True:
        hit = data.find(b"\n---", search)
        if hit == -1:
            break
        end = _line_end(data, hit + 4, at_eof)
        if end is None:
            break  # the candidate line continues past the bytes read
        if end != -1:
            if end > limit:
                break
            return Located(yaml_start, hit + 1, end)
        search = hit + 1
    if len(data) >= limit:
        raise FrontmatterError(
            "frontmatter.too_large",
            f"frontmatter not closed within the first {limit} bytes (the limit for frontmatter)",
        )
    if at_eof:
        raise FrontmatterError(
            "frontmatter.unclosed", "frontmatter not closed: no '---' line after the opening one"
        )
    return None


def decode_frontmatter(data: bytes, located: Located) -> str:
    """Decode the YAML text as strict UTF-8, raising ``encoding.invalid`` with the byte offset."""
    raw = data[located.yaml_start : located.yaml_end]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = located.yaml_start + exc.start
        raise FrontmatterError(
            "encoding.invalid", f"frontmatter is not valid UTF-8 (bad byte at offset {offset})"
        ) from None


def body_text(data: bytes, located: Located) -> str:
    """The text after the frontmatter, as shown to a model: bytes that are not UTF-8 replaced
    (U+FFFD) rather than failing the read, and ``\\r\\n`` turned into ``\\n``."""
    return data[located.body_offset :].decode("utf-8", errors="replace").replace("\r\n", "\n")


# --- fast path -----------------------------------------------------------------------------------
#
# Most frontmatter is a handful of ``key: value`` lines, perhaps with one ``metadata:`` block of
# the same. Those are read here without libyaml. Anything the fast path is not certain about
# (quotes with escapes, block scalars, continuation lines, comments after values, ``: `` inside a
# plain value, duplicate keys, unusual characters) returns None and goes through libyaml, so the
# result is always what the YAML path would give (a property test checks this).

_KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: +(.*))?")
# Characters that may start a plain scalar we accept: not a YAML indicator, quote or blank.
_PLAIN_START_REJECT = frozenset("-?:,[]{}#&*!|>'\"%@` \t")
# Outside this set libyaml and PyYAML's reader disagree or reject; let libyaml decide.
# U+2028/U+2029 are line breaks to YAML 1.1; U+0085 too; tabs and CR are simply left to libyaml.
_FAST_UNSAFE_CHAR = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def _fast_value(raw: str) -> str | None:
    value = raw.rstrip(" ")
    if not value:
        return None
    first = value[0]
    if first == '"':
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != '"' or '"' in inner or "\\" in inner:
            return None
        return inner
    if first == "'":
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != "'" or "'" in inner:
            return None
        return inner
    if first in _PLAIN_START_REJECT or value[-1] == ":" or ": " in value or " #" in value:
        return None
    return value


# Complex by design: the YAML fast path: a branch per shape it accepts.
def _fast_load(text: str) -> dict[str, Any] | None:  # noqa: C901
    if "\r" in text:
        # YAML reads a CRLF line break as LF; a lone CR is still declined below.
        text = text.replace("\r\n", "\n")
    if _FAST_UNSAFE_CHAR.search(text) is not None:
        return None
    result: dict[str, Any] = {}
    nested: dict[str, str] | None = None  # the open ``key:`` block, if any
    nested_key = ""
    indent = 0
    for line in text.split("\n"):
        if not line.strip(" "):
            continue
        first = line[0]
        if first == " ":
            if nested is None:
                return None
            width = len(line) - len(line.lstrip(" "))
            if indent == 0:
                indent = width
            elif width != indent:
                return None
            match = _KEY_LINE.fullmatch(line, indent)
            if match is None or match[2] is None:
                return None
            value = _fast_value(match[2])
            if value is None or match[1] in nested:
                return None
            nested[match[1]] = value
            continue
        if nested is not None and not nested:
            return None  # ``key:`` with nothing under it: an empty scalar, left to libyaml
        nested = None
        if first == "#":
            continue
        match = _KEY_LINE.fullmatch(line)
        if match is None or match[1] in result:
            return None
        if match[2] is None or not match[2].strip(" "):
            nested = {}
            nested_key = match[1]
            indent = 0
            result[nested_key] = nested
            continue
        value = _fast_value(match[2])
        if value is None:
            return None
        result[match[1]] = value
    if not result or (nested is not None and not nested):
        return None
    return result


# --- YAML path -----------------------------------------------------------------------------------


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"


def _describe(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        reason = ", ".join(parts) or "invalid YAML"
        mark = exc.problem_mark or exc.context_mark
        return f"invalid YAML in frontmatter: {reason} ({_where(mark)} of the frontmatter)"
    return f"invalid YAML in frontmatter: {exc}"


class _Builder:
    """Node graph -> plain Python values (str, list, dict), with aliases expanded under a budget.

    Aliases make the node graph share subtrees; expanding them re-walks the shared node, so the
    budget counts every node of the *expanded* value.
    """

    __slots__ = ("remaining",)

    def __init__(self) -> None:
        self.remaining = limits.MAX_YAML_NODES

    def build(self, node: Node, depth: int) -> Any:
        self.remaining -= 1
        if self.remaining < 0:
            raise FrontmatterError(
                "yaml.too_many_nodes",
                f"frontmatter expands to more than {limits.MAX_YAML_NODES} YAML nodes "
                "(aliases repeating large values?)",
            )
        if isinstance(node, ScalarNode):
            return node.value
        if depth >= limits.MAX_YAML_DEPTH:
            raise FrontmatterError(
                "yaml.too_deep",
                f"frontmatter nests deeper than {limits.MAX_YAML_DEPTH} levels "
                f"({_where(node.start_mark)} of the frontmatter)",
            )
        if isinstance(node, MappingNode):
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise FrontmatterError(
                        "yaml.invalid",
                        "mapping keys must be plain strings "
                        f"({_where(key_node.start_mark)} of the frontmatter)",
                    )
                self.remaining -= 1
                key = key_node.value
                if key in mapping:
                    raise FrontmatterError(
                        "yaml.duplicate_key",
                        f"duplicate key '{key}' ({_where(key_node.start_mark)} of the frontmatter)",
                    )
                mapping[key] = self.build(value_node, depth + 1)
            return mapping
        return [self.build(child, depth + 1) for child in node.value]


def _yaml_error(exc: yaml.YAMLError) -> FrontmatterError:
    """A YAML parse error as a diagnostic: libyaml 0.2.6 (PyYAML 6.0.4) refuses deep nesting
    itself ("exceeded maximum nesting depth"), which is the same finding as our own depth check."""
    if "maximum nesting depth" in str(exc):
        return FrontmatterError(
            "yaml.too_deep", f"frontmatter nests deeper than {limits.MAX_YAML_DEPTH} levels"
        )
    return FrontmatterError("yaml.invalid", _describe(exc))


def _check_depth(text: str) -> None:
    """Reject deep nesting from the event stream before the recursive composer sees it."""
    loader = _Loader(text)
    depth = 0
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limits.MAX_YAML_DEPTH:
                    raise FrontmatterError(
                        "yaml.too_deep",
                        f"frontmatter nests deeper than {limits.MAX_YAML_DEPTH} levels "
                        f"({_where(event.start_mark)} of the frontmatter)",
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    finally:
        loader.dispose()


def check_nesting(text: str) -> None:
    """Raise ``FrontmatterError`` (``yaml.too_deep``/``yaml.invalid``) for YAML nested deeper
    than ``MAX_YAML_DEPTH``, before any recursive loader sees it (other YAML files use it too)."""
    if len(text) > limits.YAML_UNSCANNED_CHARS:
        _check_depth(text)


# Every node keeps its kind's default tag; _Builder ignores tags, so BaseResolver's lookups of
# implicit resolvers (there are none) and path resolvers are skipped for each node.
_DEFAULT_TAGS = {
    ScalarNode: BaseResolver.DEFAULT_SCALAR_TAG,
    SequenceNode: BaseResolver.DEFAULT_SEQUENCE_TAG,
    MappingNode: BaseResolver.DEFAULT_MAPPING_TAG,
}


def _default_tag(kind: type[Node], value: object, implicit: object) -> str:
    return _DEFAULT_TAGS[kind]


def _compose(text: str) -> Node | None:
    if len(text) > limits.YAML_UNSCANNED_CHARS:
        _check_depth(text)
    loader = _Loader(text)
    loader.resolve = _default_tag
    try:
        node: Node | None = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    except RecursionError:  # pure-Python composer on deep input not caught by the scan
        raise FrontmatterError(
            "yaml.too_deep", f"frontmatter nests deeper than {limits.MAX_YAML_DEPTH} levels"
        ) from None
    finally:
        loader.dispose()
    return node


def load_frontmatter(text: str) -> dict[str, Any]:
    """Load frontmatter YAML text into a mapping whose scalars are all strings.

    Raises :class:`FrontmatterError`: ``yaml.invalid``, ``yaml.duplicate_key``,
    ``yaml.too_many_nodes``, ``yaml.too_deep``, ``yaml.not_mapping``, ``frontmatter.empty``.
    """
    fast = _fast_load(text)
    if fast is not None:
        return fast
    node = _compose(text)
    if node is None:
        raise FrontmatterError(
            "frontmatter.empty", "frontmatter is empty; it must hold at least name and description"
        )
    value = _Builder().build(node, 0)
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single string"
        raise FrontmatterError(
            "yaml.not_mapping", f"frontmatter must be a YAML mapping of fields, not {kind}"
        )
    return value


# --- lenient repair ------------------------------------------------------------------------------

# ``key: value`` where the plain value itself holds ': ' (or ends in ':'), which YAML rejects.
_COLON_VALUE = re.compile(
    r"^( *[A-Za-z0-9_][A-Za-z0-9_.-]*:[ \t]+)([^\s\"'|>&*!\[{#][^\n]*?)[ \t]*$", re.MULTILINE
)


def quote_colon_values(text: str) -> tuple[str, list[str]] | None:
    """Quote plain ``key: value`` values that contain ``': '`` (lenient mode's retry).

    Returns the repaired text and the keys whose values were quoted, or None when no line needs
    it. Only plain single-line values are touched; quoted, block and flow values are left alone.
    """
    keys: list[str] = []

    def quote(match: re.Match[str]) -> str:
        value = match[2]
        if ": " not in value and ":\t" not in value and not value.endswith(":"):
            return match[0]
        keys.append(match[1].strip().rstrip(":"))
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'{match[1]}"{escaped}"'

    repaired = _COLON_VALUE.sub(quote, text)
    return (repaired, keys) if keys else None
