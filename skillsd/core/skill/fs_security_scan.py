"""A static scan of a skill's files for what a reviewer should see before it lands.

Nothing is run: each file is read and matched against patterns. The scan sees what the model
sees: a file is decoded as an agent decodes it (a byte-order mark picks UTF-8, UTF-16 or UTF-32,
UTF-16 without one is recognised, a NUL byte is dropped rather than ending the text) and read
whole, up to the install's own size limit for a skill (``limits.INSTALL_MAX_BYTES``). What it
cannot read (a symbolic link, a FIFO, an unreadable file or folder, bytes past that limit) is a
``scan.obfuscation`` warning of its own, never a silent pass. Every rule runs in time linear in
the text: a pattern like ``A.{0,400}B`` is matched by finding each ``B`` once, not by trying 400
characters after every ``A``. Codes:

==========================  ===================================================================
``scan.hidden-unicode``     bidi controls and tag characters (danger), zero-width characters
                            beside plain text and bidi marks (warning)
``scan.dynamic-context``    each ``!`cmd` `` or ```` ```! ```` block of SKILL.md (warning: Claude
                            Code runs it when the skill is invoked)
``scan.remote-exec``        a download piped into a shell or interpreter, ``eval`` of fetched
                            text (danger)
``scan.broad-grant``        ``allowed-tools`` granting any shell command (``Bash``, ``Bash(*)``)
                            or every tool (warning)
``scan.secrets``            reads of ``~/.ssh``, ``~/.aws``, ``.env`` files, keychains and other
                            credential stores (warning; danger when the line also sends data to
                            a URL)
``scan.prompt-injection``   instructions to ignore earlier instructions or to hide actions from
                            the user (danger)
``scan.binary``             bundled executables: ELF, Mach-O, PE (danger)
``scan.obfuscation``        long base64 or escaped payloads (warning); decoded text run by a
                            shell or ``eval`` (danger); a file, link or part of a file the scan
                            did not read (warning)
==========================  ===================================================================

The patterns are tuned so that the published skills in the project's corpora raise no
``danger`` (a test keeps it so): documentation that *mentions* ``.env`` or ``curl`` is fine,
a line that pipes a download into ``sh`` is not. A file that does not decode to text (an image,
a font) is still searched for commands and instructions; only the invisible-character rule,
which random bytes would trip, is left to text files.
"""

from __future__ import annotations

import bisect
import codecs
import heapq
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterator
from functools import partial
from typing import Literal, NamedTuple

import msgspec

from skillsd.core import limits
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.fs_boundary import TreeLimit, walk_tree
from skillsd.core.fs.tree_walk import display_name
from skillsd.core.skill.frontmatter import FrontmatterError, load_frontmatter, locate_frontmatter
from skillsd.core.skill.validation import split_allowed_tools

__all__ = [
    "SCAN_CODES",
    "Finding",
    "ScanSeverity",
    "has_danger",
    "scan_file",
    "scan_skill",
]

ScanSeverity = Literal["info", "warning", "danger"]

SCAN_CODES = (
    "scan.hidden-unicode",
    "scan.dynamic-context",
    "scan.remote-exec",
    "scan.broad-grant",
    "scan.secrets",
    "scan.prompt-injection",
    "scan.binary",
    "scan.obfuscation",
)

#: Bytes of one skill the scan reads, all files together: the install's own limit, so nothing
#: an install accepts goes unread.
MAX_SCANNED_BYTES = limits.INSTALL_MAX_BYTES
#: Findings of one code in one file before the rest are summed up in one more.
MAX_FINDINGS_PER_CODE = 20
#: Files of one skill the scan reads (the installer's own limit is lower).
MAX_SCANNED_FILES = 10_000
#: Folders below the skill folder the scan enters.
MAX_SCANNED_DEPTH = 64


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One thing the scan saw: ``file`` is relative to the skill folder (POSIX ``/``)."""

    code: str
    severity: ScanSeverity
    file: str
    message: str
    line: int | None = None


def has_danger(findings: list[Finding]) -> bool:
    """Whether any finding is ``danger`` (an install stops unless forced)."""
    return any(f.severity == "danger" for f in findings)


# -- binaries ---------------------------------------------------------------------------------

_MACHO = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")


def _executable_kind(head: bytes) -> str | None:
    if head.startswith(b"\x7fELF"):
        return "an ELF executable"
    if head.startswith(_MACHO):
        return "a Mach-O executable"
    # Also a Java class file's magic; a fat Mach-O holds a handful of architectures where a
    # class file's version (45 or more) sits.
    if head.startswith(b"\xca\xfe\xba\xbe") and 0 < int.from_bytes(head[4:8], "big") < 20:
        return "a universal Mach-O executable"
    if head.startswith(b"MZ") and len(head) >= 0x40:
        offset = int.from_bytes(head[0x3C:0x40], "little")
        if head[offset : offset + 4] == b"PE\0\0":
            return "a Windows PE executable"
    return None


# -- decoding ---------------------------------------------------------------------------------

# UTF-32's little-endian mark begins with UTF-16's: it is tried first.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: Bytes looked at to recognise UTF-16 written without a byte-order mark.
_SNIFF_BYTES = 64 * 1024


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le``/``-be`` when ``data`` starts like mostly-ASCII UTF-16 (every other byte
    NUL), as PowerShell and Windows editors write it."""
    head = data[:_SNIFF_BYTES]
    even, odd = head[0::2], head[1::2]
    if len(odd) < 2:
        return None
    even_nul, odd_nul = even.count(0), odd.count(0)
    if odd_nul * 10 >= len(odd) * 9 and even_nul * 10 <= len(even):
        return "utf-16-le"
    if even_nul * 10 >= len(even) * 9 and odd_nul * 10 <= len(odd):
        return "utf-16-be"
    return None


def _decode(data: bytes) -> tuple[str, str]:
    """``(codec, text)``: ``data`` decoded as an agent would read it, NUL characters dropped
    (a model reads on past them; they would only split a word the rules look for)."""
    codec = None
    body: bytes | memoryview = data
    for bom, name in _BOMS:
        if data.startswith(bom):
            codec, body = name, memoryview(data)[len(bom) :]
            break
    if codec is None:
        codec = _utf16_without_bom(data) or "utf-8"
    text = str(body, codec, "replace")
    return codec, text.replace("\0", "") if "\0" in text else text


def _reads_as_text(text: str) -> bool:
    """Whether ``text`` is text rather than binary bytes decoded: at most one character in ten
    could not be decoded (a Latin-1 accent here and there is still text)."""
    return text.count("\ufffd") * 10 <= len(text)


# -- finding lines ----------------------------------------------------------------------------


class _Hit(NamedTuple):
    line: int | None
    severity: ScanSeverity
    #: Made only for the findings kept (quoting text is the costly part of a hit).
    message: str | Callable[[], str]


class _Lines:
    """Line numbers of offsets asked for in rising order, counted on the way (a table of every
    line start would cost more memory than the text)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def at(self, offset: int) -> int:
        if offset < self._pos:
            self._pos, self._line = 0, 1
        self._line += self._text.count("\n", self._pos, offset)
        self._pos = offset
        return self._line


#: Characters of text a rule's regex is run over at a time, once a word of it is seen there.
_STRETCH = 64 * 1024


def _stretches(text: str, words: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of stretches of whole lines of ``text`` that hold one of ``words`` and
    together hold every occurrence of them: a regex runs on those alone (a plain substring
    search skips the rest far faster than a regex could), and over a whole stretch at once, so
    a line costs no Python work unless the regex matches there."""
    size = len(text)
    upcoming = dict.fromkeys(words, -1)  # each word's next offset, searched again once passed
    pos = 0
    while pos < size:
        first = size
        for word, at in upcoming.items():
            if at < pos:
                at = text.find(word, pos)
                upcoming[word] = at = size if at < 0 else at
            first = min(first, at)
        if first >= size:
            return
        start = text.rfind("\n", pos, first) + 1 or pos
        cut = text.find("\n", max(first, start + _STRETCH))
        end = size if cut < 0 else cut + 1
        yield start, end
        pos = end


def _line_re(source: str, flags: int = 0) -> re.Pattern[str]:
    """A rule's regex kept within one line: its ``\\s`` does not match a line break."""
    return re.compile(source.replace(r"\s", r"[^\S\n]"), flags)


#: A rule's search: the span of its first match in ``text[pos:end]``, or None.
_Find = Callable[[str, int, int], "tuple[int, int] | None"]


def _search(pattern: re.Pattern[str]) -> _Find:
    def find(text: str, pos: int, end: int) -> tuple[int, int] | None:
        match = pattern.search(text, pos, end)
        return None if match is None else match.span()

    return find


def _near(
    first: re.Pattern[str],
    second: re.Pattern[str],
    gap: int,
    then: re.Pattern[str] | None = None,
) -> _Find:
    """A ``first`` match and, on the same line and at most ``gap`` characters after it, the
    next ``second`` match (which must also start a match of ``then``, when given): what
    ``first[^\\n]{0,gap}second`` finds, but the text after each ``first`` is not searched
    again for every one of them; the next ``second`` is found once and reused."""

    def find(text: str, pos: int, end: int) -> tuple[int, int] | None:
        b: re.Match[str] | None = None
        tail: int | None = None
        for a in first.finditer(text, pos, end):
            if b is None or b.start() < a.end():
                b = second.search(text, a.end(), end)
                if b is None:
                    return None
                if then is not None:
                    full = then.match(text, b.start(), end)
                    tail = None if full is None else full.end()
                else:
                    tail = b.end()
            if tail is None or b.start() - a.end() > gap:
                continue
            if text.find("\n", a.end(), b.start()) < 0:
                return a.start(), tail
        return None

    return find


class _Rule(NamedTuple):
    """A line rule: its regex runs where one of ``words`` is (in any case with ``fold``, the
    words then in lower case); ``says`` words what it found."""

    words: tuple[str, ...]
    find: _Find
    severity: ScanSeverity
    says: Callable[[str], str]
    fold: bool = False


class _Doc:
    """One decoded view of a file, and the same in lower case when a rule asks for it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded: str | None = None

    @property
    def folded(self) -> str:
        """The text in lower case with every offset unchanged (the dotted capital I alone
        lowers to two characters)."""
        if self._folded is None:
            folded = self.text.replace("\u0130", "i").lower()
            self._folded = folded if len(folded) == len(self.text) else self.text
        return self._folded


def _rule_spans(doc: _Doc, rule: _Rule, index: int = 0) -> Iterator[tuple[int, int, int]]:
    """``(start, end, index)`` of the first match of ``rule`` on each line where it matches,
    in order."""
    text = doc.text
    for start, end in _stretches(doc.folded if rule.fold else text, rule.words):
        pos = start
        while (span := rule.find(text, pos, end)) is not None:
            yield span[0], span[1], index
            stop = text.find("\n", span[1], end)
            if stop < 0:
                break
            pos = stop + 1


def _rule_hits(doc: _Doc, rules: list[_Rule]) -> Iterator[_Hit]:
    """Hits of ``rules`` (of one code) in line order."""
    text = doc.text
    lines = _Lines(text)
    spans = [_rule_spans(doc, rule, index) for index, rule in enumerate(rules)]
    for start, end, index in heapq.merge(*spans):
        rule = rules[index]
        yield _Hit(lines.at(start), rule.severity, partial(rule.says, text[start:end]))


# -- text rules -------------------------------------------------------------------------------

_FETCH = r"(?:curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)"
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?"
    r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|node|deno|bun|perl|ruby|php|pwsh|powershell"
    r"|iex|Invoke-Expression|source)"
)


def _says(what: str, *, repr_quote: bool = False) -> Callable[[str], str]:
    if repr_quote:
        return lambda found: f"{what}: {_quote(found)!r}"
    return lambda found: f"{what}: {_quote(found)}"


_REMOTE_EXEC = [
    # curl ... | sh, wget -qO- ... | sudo bash, iwr ... | iex: the first pipe after the
    # download, within 400 characters, runs it.
    _Rule(
        ("curl", "wget", "iwr", "irm", "Invoke-"),
        _near(
            re.compile(rf"\b{_FETCH}\b"),
            re.compile(r"\|"),
            400,
            then=_line_re(rf"\|\s*{_RUNNER}(?![\w-])"),
        ),
        "danger",
        _says("runs downloaded code"),
    ),
    # bash <(curl ...), sh -c "$(curl ...)", eval "$(wget ...)", eval `curl ...`
    _Rule(
        ("<(",),
        _search(_line_re(rf"\b{_RUNNER}\s+<\(\s*{_FETCH}\b")),
        "danger",
        _says("runs downloaded code"),
    ),
    _Rule(
        ("$(", "`"),
        _search(_line_re(rf"\b(?:{_RUNNER}|eval)\s+(?:-c\s+)?[\"']?(?:\$\(|`)\s*{_FETCH}\b")),
        "danger",
        _says("runs downloaded code"),
    ),
    # PowerShell: iex (New-Object Net.WebClient).DownloadString(...), iex (iwr ...)
    _Rule(
        ("iex", "invoke-expression"),
        _near(
            re.compile(r"\b(?:iex|Invoke-Expression)\b", re.IGNORECASE),
            re.compile(
                r"DownloadString|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod",
                re.IGNORECASE,
            ),
            200,
        ),
        "danger",
        _says("runs downloaded code"),
        fold=True,
    ),
    # Python / JS: exec(urlopen(...).read()), eval(await fetch(...)), exec(requests.get(...).text)
    _Rule(
        ("exec", "eval"),
        _search(
            _line_re(
                r"\b(?:exec|eval)\s*\(\s*(?:await\s+)?(?:urllib\.request\.)?"
                r"(?:urlopen|requests\.get|fetch|httpx\.get)\s*\("
            )
        ),
        "danger",
        _says("runs downloaded code"),
    ),
]

_SECRET_WORDS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "gh/hosts",
    "gcloud",
    ".azure",
    "id_",
    ".env",
    "security ",
    "secret-tool",
    "eychain",
)
_SECRET_PATHS = _line_re(
    r"(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|/home/\w+|/Users/\w+)/\.(?:ssh|aws|gnupg|kube"
    r"|docker/config\.json|netrc|npmrc|pypirc|git-credentials|config/gh/hosts\.yml"
    r"|config/gcloud|azure)\b"
    r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|\.aws/credentials\b"
    # .env, .env.local, .env.production: not process.env, not the .env.example templates.
    r"|(?<![\w.$])\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[\w-]+)?\b(?![\w(])"
    r"|\bsecurity\s+(?:find|dump)-(?:generic-password|internet-password|keychain)\b"
    r"|\bsecret-tool\s+lookup\b"
    r"|\b(?:login|System)\.keychain(?:-db)?\b"
    r"|\bKeychain Access\b",
)
_SENDS = _near(
    re.compile(
        r"\b(?:curl|wget|nc|ncat|scp|rsync|requests\.post|fetch|httpx\.post|Invoke-WebRequest)\b",
        re.IGNORECASE,
    ),
    re.compile(r"https?://|ftp://|\d{1,3}(?:\.\d{1,3}){3}", re.IGNORECASE),
    400,
)

_INJECTION = [
    _Rule(
        ("ignore", "disregard", "forget", "override"),
        _search(
            _line_re(
                r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?"
                r"(?:the\s+|your\s+)?"
                r"(?:previous|prior|earlier|above|preceding|original|system|developer)\s+"
                r"(?:instructions|prompts?|rules|directions|guidelines|messages)\b",
                re.IGNORECASE,
            )
        ),
        "danger",
        _says("asks the model to ignore its earlier instructions", repr_quote=True),
        fold=True,
    ),
    _Rule(
        ("user",),
        _search(
            _line_re(
                r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to"
                r"|reveal\s+(?:this\s+|it\s+)?to|show\s+(?:this\s+|it\s+)?to|notify|alert|let)"
                r"\s+the\s+user\b"
                r"|\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b"
                r"|\b(?:hide|conceal)\s+(?:this|it|these|that|them|the\s+\w+)\s+from\s+the\s+user\b"
                r"|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+"
                r"(?:know|see|notice|find\s+out|be\s+told)\b",
                re.IGNORECASE,
            )
        ),
        "danger",
        _says("asks the model to hide what it does from the user", repr_quote=True),
        fold=True,
    ),
]

_DECODE_WORDS = ("base64", "atob", "b64decode", "buffer.from", "codecs.decode", "fromhex")


def _escaped(found: str) -> str:
    return f"an escaped payload of {len(found)} characters"


_OBFUSCATION = [
    _Rule(
        _DECODE_WORDS,
        _near(
            _line_re(r"\bbase64\s+(?:-d|--decode|-D)\b", re.IGNORECASE),
            _line_re(r"\|\s*(?:" + _RUNNER + r")\b", re.IGNORECASE),
            200,
        ),
        "danger",
        _says("decodes text and runs it"),
        fold=True,
    ),
    _Rule(
        _DECODE_WORDS,
        _search(
            _line_re(
                r"\b(?:eval|exec)\s*\(\s*(?:atob|base64\.b64decode|Buffer\.from|base64_decode"
                r"|codecs\.decode|bytes\.fromhex)\s*\(",
                re.IGNORECASE,
            )
        ),
        "danger",
        _says("decodes text and runs it"),
        fold=True,
    ),
    *(
        _Rule(words, _search(pattern), "warning", _escaped)
        for words, pattern in [
            (("\\x",), re.compile(r"(?:\\x[0-9a-fA-F]{2}){24,}")),
            (("\\u",), re.compile(r"(?:\\u[0-9a-fA-F]{4}){16,}")),
            (("fromCharCode",), _line_re(r"fromCharCode\s*\(\s*(?:\d{2,3}\s*,\s*){24,}")),
        ]
    ),
]
_SECRETS = _Rule(_SECRET_WORDS, _search(_SECRET_PATHS), "warning", _says("reads credentials"))

# Starts only where a run starts, so a run a little short of 200 is read once, not once per
# character.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{200,}={0,2}")
_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,$")

_BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI_MARKS = "\u200e\u200f\u061c"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u180e\ufeff"
_HIDDEN = re.compile(f"[{_BIDI_CONTROLS}{_BIDI_MARKS}{_ZERO_WIDTH}\U000e0000-\U000e007f]")
_BIDI = re.compile(f"[{_BIDI_CONTROLS}]")
_TAG = re.compile("[\U000e0000-\U000e007f]")
# Zero-width joiners inside emoji and non-Latin scripts are how those are written; beside plain
# ASCII text (or the start or end of a line) they only hide something.
_MARKS = f"[{_BIDI_MARKS}{_ZERO_WIDTH}]"
_MARK_BESIDE_ASCII = re.compile(f"(?<![^\\x00-\\x7f]){_MARKS}|{_MARKS}(?![^\\x00-\\x7f])")
#: Tag characters of one line spelled out in a finding (the message shows fewer still).
_MAX_SPELLED = 200


def _secrets(doc: _Doc) -> Iterator[_Hit]:
    text = doc.text
    lines = _Lines(text)
    for start, end, _ in _rule_spans(doc, _SECRETS):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        sends = _SENDS(text, line_start, len(text) if line_end < 0 else line_end) is not None
        yield _Hit(
            lines.at(start),
            "danger" if sends else "warning",
            partial(_reads_credentials, text[start:end], sends),
        )


def _reads_credentials(found: str, sends: bool) -> str:
    return f"reads credentials ({_quote(found, 40)})" + (
        " and sends data to a network address on the same line" if sends else ""
    )


def _base64_runs(text: str) -> Iterator[_Hit]:
    lines = _Lines(text)
    for match in _BASE64_RUN.finditer(text):
        start, end = match.span()
        # Mixed case and digits: a plain long word or a hex hash is not base64 in hiding.
        if _DIGIT.search(text, start, end) is None or _UPPER.search(text, start, end) is None:
            continue
        is_data_uri = _DATA_URI.search(text, max(0, start - 80), start) is not None
        yield _Hit(
            lines.at(start),
            "info" if is_data_uri else "warning",
            f"{'an embedded data URI' if is_data_uri else 'a base64 payload'} of "
            f"{end - start} characters",
        )


def _hidden_unicode(text: str) -> Iterator[_Hit]:
    """One hit per line holding invisible characters: a bidi control, else tag characters
    (spelled out), else a zero-width character or bidi mark beside plain text."""
    lines = _Lines(text)
    pos = 0
    while (first := _HIDDEN.search(text, pos)) is not None:
        start = first.start()
        stop = text.find("\n", start)
        end = len(text) if stop < 0 else stop
        pos = end + 1
        line = lines.at(start)
        bidi = _BIDI.search(text, start, end)
        if bidi is not None:
            yield _Hit(
                line,
                "danger",
                f"bidi control U+{ord(bidi.group()):04X} reorders how the text is displayed",
            )
            continue
        if _TAG.search(text, start, end) is not None:
            part = text[start:end]
            count = len(part) - len(_TAG.sub("", part))
            spelled = "".join(
                chr(ord(m.group()) - 0xE0000)
                for m in itertools.islice(_TAG.finditer(part), _MAX_SPELLED)
                if m.group() != "\U000e0000"
            )
            yield _Hit(
                line, "danger", f"{count} invisible tag characters spelling {_quote(spelled)!r}"
            )
            continue
        # (A byte-order mark at the start is gone: decoding took it.)
        mark = _MARK_BESIDE_ASCII.search(text, start, end)
        if mark is not None:
            kind = "bidi mark" if mark.group() in _BIDI_MARKS else "zero-width character"
            yield _Hit(
                line, "warning", f"invisible {kind} U+{ord(mark.group()):04X} inside the text"
            )


def _text_rules(text: str) -> list[tuple[str, Iterator[_Hit]]]:
    """The rules every file's text goes through, as (code, hits in line order)."""
    doc = _Doc(text)
    return [
        ("scan.remote-exec", _rule_hits(doc, _REMOTE_EXEC)),
        ("scan.secrets", _secrets(doc)),
        ("scan.prompt-injection", _rule_hits(doc, _INJECTION)),
        ("scan.obfuscation", _rule_hits(doc, _OBFUSCATION)),
        ("scan.obfuscation", _base64_runs(text)),
    ]


# Line breaks as ``str.splitlines`` knows them (Claude Code's fences are lines of the file).
_BREAK = r"\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_INLINE = re.compile(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.MULTILINE)
_FENCE_OPEN = re.compile(rf"(?<![^{_BREAK}])(`{{3,}})![^\S{_BREAK}]*(?![^{_BREAK}])")
_FENCE_CLOSE = re.compile(rf"(?<![^{_BREAK}])[^\S{_BREAK}]*(`{{3,}})[^\S{_BREAK}]*(?![^{_BREAK}])")

_RANK: dict[str, int] = {"info": 0, "warning": 1, "danger": 2}


#: The worst severity of each code that can be less than danger.
_CEILING: dict[str, ScanSeverity] = {
    "scan.dynamic-context": "warning",
    "scan.broad-grant": "warning",
}
#: Hits of one code in one file counted before counting stops, once one of them has the
#: code's worst severity (more cannot change what a reviewer or an install decides).
_MAX_COUNTED = 10_000


class _Collector:
    """Findings of one file: one per code and line (the most severe), at most
    ``MAX_FINDINGS_PER_CODE`` per code and one more summing up the rest."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Finding] = []

    def take(self, code: str, hits: Iterator[_Hit]) -> None:
        """Keep the hits of ``code``, which come in line order."""
        ceiling = _CEILING.get(code, "danger")
        kept = more = 0
        worst: ScanSeverity = "info"  # of the hits summed up
        seen_ceiling = stopped = False
        for hit in _one_per_line(hits):
            seen_ceiling = seen_ceiling or hit.severity == ceiling
            if kept < MAX_FINDINGS_PER_CODE:
                kept += 1
                message = hit.message if isinstance(hit.message, str) else hit.message()
                self.found.append(
                    Finding(
                        code=code,
                        severity=hit.severity,
                        file=self.file,
                        message=message,
                        line=hit.line,
                    )
                )
                continue
            more += 1
            if _RANK[hit.severity] > _RANK[worst]:
                worst = hit.severity
            if seen_ceiling and kept + more >= _MAX_COUNTED:
                stopped = True
                break
        if more:
            self.found.append(
                Finding(
                    code=code,
                    severity=worst,
                    file=self.file,
                    message=f"{'at least ' if stopped else ''}{more} more {code} findings in "
                    "this file",
                )
            )


def _one_per_line(hits: Iterator[_Hit]) -> Iterator[_Hit]:
    """The most severe of each line's hits (the first of equals); hits without a line pass."""
    pending: _Hit | None = None
    for hit in hits:
        if pending is not None:
            if hit.line is not None and hit.line == pending.line:
                if _RANK[hit.severity] > _RANK[pending.severity]:
                    pending = hit
                continue
            yield pending
        pending = hit
    if pending is not None:
        yield pending


def _quote(text: str, limit: int = 80) -> str:
    text = text[: limit * 4].strip()
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in shown)


def _fenced_blocks(text: str) -> Iterator[tuple[int, int, int, int]]:
    """``(start, inner start, closing line start, end)`` of each closed ```` ```! ```` block,
    in order: a block opens on a line of three or more backticks and ``!``, and closes on the
    next line of at least as many backticks alone. Linear time: whether any closing line
    could follow is looked up, not searched for from every opening line."""
    last_close: dict[int, int] = {}
    for match in _FENCE_CLOSE.finditer(text):
        last_close[len(match.group(1))] = match.start()
    # reach[i]: the last closing line at least lengths[i] backticks long.
    lengths = sorted(last_close)
    reach = [last_close[n] for n in lengths]
    for i in range(len(reach) - 2, -1, -1):
        reach[i] = max(reach[i], reach[i + 1])
    pos = 0
    while (opened := _FENCE_OPEN.search(text, pos)) is not None:
        fence = len(opened.group(1))
        i = bisect.bisect_left(lengths, fence)
        if i == len(lengths) or reach[i] <= opened.end():
            pos = opened.end() + 1
            continue
        inner = opened.end() + 1
        closing = _FENCE_CLOSE.search(text, inner)
        while closing is not None and len(closing.group(1)) < fence:
            closing = _FENCE_CLOSE.search(text, closing.end() + 1)
        if closing is None:  # cannot happen after the look-up; stay safe
            pos = opened.end() + 1
            continue
        yield opened.start(), inner, closing.start(), closing.end()
        pos = closing.end() + 1


def _dynamic_context(text: str) -> Iterator[_Hit]:
    """Each fenced ```` ```! ```` block and the first ``!`cmd` `` of each line outside one."""
    lines = _Lines(text)
    blocks = _fenced_blocks(text)
    block = next(blocks, None)
    block_end = pos = 0
    while True:
        inline = _INLINE.search(text, pos)
        while block is not None and (inline is None or block[0] <= inline.start()):
            start, inner, close, block_end = block
            command = text[inner : min(close, inner + 400)]
            if command.strip():
                yield _Hit(lines.at(start), "warning", partial(_runs_when_invoked, command))
            block = next(blocks, None)
        if inline is None:
            return
        if inline.start() < block_end:
            pos = block_end  # inside a fenced block: part of its command
            continue
        if not inline.group(1).strip():
            pos = inline.end()
            continue
        yield _Hit(
            lines.at(inline.start()), "warning", partial(_runs_when_invoked, inline.group(1))
        )
        stop = text.find("\n", inline.end())
        if stop < 0:
            return
        pos = stop + 1


def _runs_when_invoked(command: str) -> str:
    return f"Claude Code runs `{_quote(command)}` when the skill is invoked"


def _allowed_tools_rules(value: object) -> list[str]:
    if isinstance(value, str):
        return split_allowed_tools(value) or [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


_BROAD = re.compile(r"(?:Bash|Shell|PowerShell)(?:\(\s*\*?(?::\*)?\s*\))?|\*", re.IGNORECASE)
_ALLOWED_TOOLS_LINE = re.compile(r"^allowed-tools\s*:", re.MULTILINE)


def _broad_grant(data: bytes, text: str) -> Iterator[_Hit]:
    try:
        located = locate_frontmatter(data, at_eof=True)
        if located is None:
            return
        fields = load_frontmatter(data[located.yaml_start : located.yaml_end].decode("utf-8"))
    except (FrontmatterError, UnicodeDecodeError):
        return  # validation reports a broken frontmatter; the scan has nothing to add
    value = fields.get("allowed-tools")
    if value is None:
        return
    match = _ALLOWED_TOOLS_LINE.search(text)
    line = _Lines(text).at(match.start()) if match else None
    for rule in _allowed_tools_rules(value):
        if _BROAD.fullmatch(rule.strip()):
            what = "every tool" if rule.strip() == "*" else "any shell command"
            yield _Hit(
                line,
                "warning",
                f"allowed-tools '{_quote(rule, 40)}' lets the skill run {what} without asking",
            )


def scan_file(rel: str, data: bytes, *, is_skill_file: bool | None = None) -> list[Finding]:
    """The findings of one file of a skill: ``rel`` its path in the skill, ``data`` its bytes."""
    out = _Collector(rel)
    kind = _executable_kind(data[:4096])
    if kind is not None:
        out.take("scan.binary", iter([_Hit(None, "danger", f"{kind} is bundled with the skill")]))
        return out.found
    if is_skill_file is None:
        is_skill_file = rel == "SKILL.md"
    codec, text = _decode(data)
    streams: list[tuple[str, Iterator[_Hit]]] = []
    if is_skill_file or _reads_as_text(text):
        streams.append(("scan.hidden-unicode", _hidden_unicode(text)))
    streams.extend(_text_rules(text))
    if codec != "utf-8":
        # What a tool reading the bytes as UTF-8 sees, say a UTF-8 tail after UTF-16 text.
        streams.extend(_text_rules(data.replace(b"\0", b"").decode("utf-8", "replace")))
    if is_skill_file:
        streams.append(("scan.dynamic-context", _dynamic_context(text)))
        streams.append(("scan.broad-grant", _broad_grant(data, text)))
    for code in SCAN_CODES:
        mine = [hits for c, hits in streams if c == code]
        out.take(code, heapq.merge(*mine, key=lambda h: h.line or 0))
    return out.found


# -- the skill's files ------------------------------------------------------------------------

_Kind = Literal["file", "link", "other"]


def _unread(rel: str, why: str) -> Finding:
    """A warning for what the scan did not read: a reviewer must know it went unseen."""
    return Finding(code="scan.obfuscation", severity="warning", file=rel, message=why)


def _walk(skill_dir: str) -> tuple[list[tuple[str, str, _Kind]], list[Finding]]:
    """``(relative path, path, kind)`` of each entry that is not a folder (by the filesystem
    boundary's :func:`~skillsd.core.fs.fs_boundary.walk_tree`: ``.git`` left out, links never
    followed) and warnings for the folders that could not be listed or are nested too deep;
    the walk stops past :data:`MAX_SCANNED_FILES` entries."""
    entries: list[tuple[str, str, _Kind]] = []
    problems: list[Finding] = []

    def skipped(rel: str, problem: OSError | TreeLimit) -> None:
        if isinstance(problem, TreeLimit):
            why = f"nested deeper than {MAX_SCANNED_DEPTH}"
        else:
            why = f"cannot list it ({_reason(problem)})"
        problems.append(_unread(display_name(rel or "."), f"folder not scanned: {why}"))

    for rel, entry in walk_tree(skill_dir, max_depth=MAX_SCANNED_DEPTH, skipped=skipped):
        if len(entries) > MAX_SCANNED_FILES:
            break
        kind: _Kind
        try:
            if entry.is_symlink():
                kind = "link"
            elif entry.is_dir(follow_symlinks=False):
                continue
            else:
                kind = "file" if entry.is_file(follow_symlinks=False) else "other"
        except OSError:
            kind = "other"
        entries.append((rel, entry.path, kind))
    return entries, problems


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class _Swapped(OSError):
    """The path led to another file when read than when listed (a link put in its place)."""


def _read_file(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path`` (FIFOs, devices and kernel files
    refused). The read follows a link, so the path is checked again after it: a file swapped
    for a link since the folder was listed raises :class:`_Swapped`."""
    read = read_regular_file(path, limit)
    now = os.lstat(path)
    if stat.S_ISLNK(now.st_mode) or now.st_ino != read.key.ino:
        raise _Swapped(path)
    return read.data


def _link_text(path: str) -> str:
    try:
        return "-> " + display_name(os.readlink(path))
    except OSError:
        return "a link"


def scan_skill(skill_dir: str, *, read: Callable[[str, int], bytes] = _read_file) -> list[Finding]:
    """Scan every file of the skill folder ``skill_dir`` (sorted by path), reading at most
    :data:`MAX_SCANNED_BYTES` in all; each link, special file, unreadable file and unread byte
    is a warning."""
    entries, findings = _walk(skill_dir)
    budget = MAX_SCANNED_BYTES
    skipped = 0
    for count, (rel, path, kind) in enumerate(sorted(entries)):
        shown = display_name(rel)
        if count >= MAX_SCANNED_FILES:
            findings.append(
                _unread(".", f"more than {MAX_SCANNED_FILES} files; the rest were not scanned")
            )
            break
        if kind == "link":
            findings.append(
                _unread(shown, f"symbolic link ({_link_text(path)}) not followed nor scanned")
            )
            continue
        if kind == "other":
            findings.append(_unread(shown, "not a regular file (a FIFO, socket or device)"))
            continue
        if budget <= 0:
            skipped += 1
            continue
        try:
            data = read(path, budget + 1)
        except _Swapped:
            findings.append(_unread(shown, "replaced (by a link?) while scanned; not scanned"))
            continue
        except OSError as exc:
            findings.append(_unread(shown, f"not scanned: cannot read it ({_reason(exc)})"))
            continue
        if len(data) > budget:
            data = data[:budget]
            findings.append(
                _unread(
                    shown,
                    f"only the first {budget} bytes were scanned: the skill passes the "
                    f"install's limit of {MAX_SCANNED_BYTES} bytes",
                )
            )
        budget -= len(data)
        findings.extend(scan_file(shown, data))
    if skipped:
        findings.append(
            _unread(
                ".",
                f"{skipped} files not scanned: the skill passes the install's limit of "
                f"{MAX_SCANNED_BYTES} bytes",
            )
        )
    return findings
