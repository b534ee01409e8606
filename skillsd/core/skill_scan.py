"""A static scan of a skill's files for what a reviewer should see before it lands.

Nothing is run: each file is read (bounded) and matched against patterns. Codes:

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
                            shell or ``eval`` (danger)
==========================  ===================================================================

The patterns are tuned so that the published skills in the project's corpora raise no
``danger`` (a test keeps it so): documentation that *mentions* ``.env`` or ``curl`` is fine,
a line that pipes a download into ``sh`` is not.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import Literal

import msgspec

from skillsd.core.frontmatter import FrontmatterError, load_frontmatter, locate_frontmatter
from skillsd.core.invocation import find_dynamic_context
from skillsd.core.validation import split_allowed_tools

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

#: Bytes of one file the text rules read; the magic-number check needs only the start.
MAX_SCANNED_BYTES = 8 * 1024 * 1024
#: Findings of one code in one file before the rest are summed up in one more.
MAX_FINDINGS_PER_CODE = 20
#: Files of one skill the scan reads (the installer's own limit is lower).
MAX_SCANNED_FILES = 10_000


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


# -- text rules -------------------------------------------------------------------------------

_FETCH = r"(?:curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)"
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?"
    r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|node|deno|bun|perl|ruby|php|pwsh|powershell"
    r"|iex|Invoke-Expression|source)"
)
#: (words one of which the line must hold, pattern). The words let most lines skip the regex.
_REMOTE_EXEC: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    # curl ... | sh, wget -qO- ... | sudo bash, iwr ... | iex
    (
        ("curl", "wget", "iwr", "irm", "Invoke-"),
        re.compile(rf"\b{_FETCH}\b[^|\n]{{0,400}}\|\s*{_RUNNER}(?![\w-])"),
    ),
    # bash <(curl ...), sh -c "$(curl ...)", eval "$(wget ...)", eval `curl ...`
    (("<(",), re.compile(rf"\b{_RUNNER}\s+<\(\s*{_FETCH}\b")),
    (
        ("$(", "`"),
        re.compile(rf"\b(?:{_RUNNER}|eval)\s+(?:-c\s+)?[\"']?(?:\$\(|`)\s*{_FETCH}\b"),
    ),
    # PowerShell: iex (New-Object Net.WebClient).DownloadString(...), iex (iwr ...)
    (
        ("iex", "IEX", "Invoke-Expression"),
        re.compile(
            r"\b(?:iex|Invoke-Expression)\b[^\n]{0,200}"
            r"(?:DownloadString|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod)",
            re.IGNORECASE,
        ),
    ),
    # Python / JS: exec(urlopen(...).read()), eval(await fetch(...)), exec(requests.get(...).text)
    (
        ("exec", "eval"),
        re.compile(
            r"\b(?:exec|eval)\s*\(\s*(?:await\s+)?(?:urllib\.request\.)?"
            r"(?:urlopen|requests\.get|fetch|httpx\.get)\s*\("
        ),
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
_SECRET_PATHS = re.compile(
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
_SENDS = re.compile(
    r"\b(?:curl|wget|nc|ncat|scp|rsync|requests\.post|fetch|httpx\.post|Invoke-WebRequest)\b"
    r"[^\n]{0,400}(?:https?://|ftp://|\d{1,3}(?:\.\d{1,3}){3})",
    re.IGNORECASE,
)

_INJECTION: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    (
        ("gnore", "GNORE", "isregard", "ISREGARD", "orget", "ORGET", "verride", "VERRIDE"),
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?"
            r"(?:the\s+|your\s+)?"
            r"(?:previous|prior|earlier|above|preceding|original|system|developer)\s+"
            r"(?:instructions|prompts?|rules|directions|guidelines|messages)\b",
            re.IGNORECASE,
        ),
        "asks the model to ignore its earlier instructions",
    ),
    (
        ("user", "USER"),
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to"
            r"|reveal\s+(?:this\s+|it\s+)?to|show\s+(?:this\s+|it\s+)?to|notify|alert|let)"
            r"\s+the\s+user\b"
            r"|\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b"
            r"|\b(?:hide|conceal)\s+(?:this|it|these|that|them|the\s+\w+)\s+from\s+the\s+user\b"
            r"|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+"
            r"(?:know|see|notice|find\s+out|be\s+told)\b",
            re.IGNORECASE,
        ),
        "asks the model to hide what it does from the user",
    ),
]

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,$")
_ESCAPES: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    (("\\x",), re.compile(r"(?:\\x[0-9a-fA-F]{2}){24,}")),
    (("\\u",), re.compile(r"(?:\\u[0-9a-fA-F]{4}){16,}")),
    (("fromCharCode",), re.compile(r"fromCharCode\s*\(\s*(?:\d{2,3}\s*,\s*){24,}")),
]
_DECODE_WORDS = ("base64", "atob", "b64decode", "Buffer.from", "codecs.decode", "fromhex")
_DECODE_RUN = re.compile(
    r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,200}\|\s*(?:" + _RUNNER + r")\b"
    r"|\b(?:eval|exec)\s*\(\s*(?:atob|base64\.b64decode|Buffer\.from|base64_decode|codecs\.decode|bytes\.fromhex)\s*\(",
    re.IGNORECASE,
)

_BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI_MARKS = "\u200e\u200f\u061c"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u180e\ufeff"
_HIDDEN = re.compile(f"[{_BIDI_CONTROLS}{_BIDI_MARKS}{_ZERO_WIDTH}\U000e0000-\U000e007f]")


class _Text:
    """A file's text with line lookup by offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def line_text(self, number: int) -> str:
        start = self._starts[number - 1]
        end = self._starts[number] - 1 if number < len(self._starts) else len(self.text)
        return self.text[start:end]

    def lines_with(self, words: tuple[str, ...]) -> list[int]:
        """Numbers of the lines holding one of ``words`` (plain substring search, which is far
        faster than letting each regex try every position)."""
        found: set[int] = set()
        text = self.text
        for word in words:
            pos = text.find(word)
            while pos >= 0:
                line = self.line(pos)
                found.add(line)
                # Go on from the next line: one hit per line is enough.
                next_start = self._starts[line] if line < len(self._starts) else len(text)
                pos = text.find(word, next_start)
        return sorted(found)

    def matches(
        self, words: tuple[str, ...], pattern: re.Pattern[str]
    ) -> Iterator[tuple[int, re.Match[str]]]:
        """``(line, match)`` of ``pattern`` on the lines holding one of ``words``."""
        for line in self.lines_with(words):
            for match in pattern.finditer(self.line_text(line)):
                yield line, match


class _Collector:
    """Findings of one file: one per code and line, at most ``MAX_FINDINGS_PER_CODE`` per code."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Finding] = []
        self._seen: set[tuple[str, int | None]] = set()
        self._count: dict[str, int] = {}
        self._dropped: dict[str, tuple[int, ScanSeverity]] = {}

    def add(self, code: str, severity: ScanSeverity, message: str, line: int | None) -> None:
        if (code, line) in self._seen:
            return
        self._seen.add((code, line))
        count = self._count.get(code, 0)
        if count >= MAX_FINDINGS_PER_CODE:
            dropped, worst = self._dropped.get(code, (0, "info"))
            worst = severity if _RANK[severity] > _RANK[worst] else worst
            self._dropped[code] = (dropped + 1, worst)
            return
        self._count[code] = count + 1
        self.found.append(
            Finding(code=code, severity=severity, file=self.file, message=message, line=line)
        )

    def finish(self) -> list[Finding]:
        for code, (dropped, worst) in self._dropped.items():
            self.found.append(
                Finding(
                    code=code,
                    severity=worst,
                    file=self.file,
                    message=f"{dropped} more {code} findings in this file",
                )
            )
        return self.found


_RANK: dict[str, int] = {"info": 0, "warning": 1, "danger": 2}


def _quote(text: str, limit: int = 80) -> str:
    text = text.strip()
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in shown)


def _hidden_unicode(doc: _Text, out: _Collector) -> None:
    text = doc.text
    tags: dict[int, list[str]] = {}
    for match in _HIDDEN.finditer(text):
        char = match.group()
        pos = match.start()
        line = doc.line(pos)
        code_point = ord(char)
        if 0xE0000 <= code_point <= 0xE007F:
            tags.setdefault(line, []).append(
                chr(code_point - 0xE0000) if code_point > 0xE0000 else ""
            )
        elif char in _BIDI_CONTROLS:
            out.add(
                "scan.hidden-unicode",
                "danger",
                f"bidi control U+{code_point:04X} reorders how the text is displayed",
                line,
            )
        elif char == "\ufeff" and pos == 0:
            continue  # a byte-order mark at the start of a file is harmless
        else:
            before = text[pos - 1] if pos > 0 else "\n"
            after = text[pos + 1] if pos + 1 < len(text) else "\n"
            # Zero-width joiners inside emoji and non-Latin scripts are how those are written;
            # beside plain ASCII text they only hide something.
            if not (before.isascii() or after.isascii()):
                continue
            kind = "bidi mark" if char in _BIDI_MARKS else "zero-width character"
            out.add(
                "scan.hidden-unicode",
                "warning",
                f"invisible {kind} U+{code_point:04X} inside the text",
                line,
            )
    for line, chars in tags.items():
        hidden = "".join(chars)
        out.add(
            "scan.hidden-unicode",
            "danger",
            f"{len(chars)} invisible tag characters spelling {_quote(hidden)!r}",
            line,
        )


def _dynamic_context(doc: _Text, out: _Collector) -> None:
    for block in find_dynamic_context(doc.text, lambda _command: "allow"):
        out.add(
            "scan.dynamic-context",
            "warning",
            f"Claude Code runs `{_quote(block.command)}` when the skill is invoked",
            doc.line(block.start),
        )


def _patterns(doc: _Text, out: _Collector) -> None:
    for words, pattern in _REMOTE_EXEC:
        for line, match in doc.matches(words, pattern):
            out.add(
                "scan.remote-exec", "danger", f"runs downloaded code: {_quote(match.group())}", line
            )
    for line, match in doc.matches(_SECRET_WORDS, _SECRET_PATHS):
        sends = _SENDS.search(doc.line_text(line)) is not None
        out.add(
            "scan.secrets",
            "danger" if sends else "warning",
            f"reads credentials ({_quote(match.group(), 40)})"
            + (" and sends data to a network address on the same line" if sends else ""),
            line,
        )
    for words, pattern, what in _INJECTION:
        for line, match in doc.matches(words, pattern):
            out.add("scan.prompt-injection", "danger", f"{what}: {_quote(match.group())!r}", line)
    for line, match in doc.matches(_DECODE_WORDS, _DECODE_RUN):
        out.add(
            "scan.obfuscation", "danger", f"decodes text and runs it: {_quote(match.group())}", line
        )
    for match in _BASE64_RUN.finditer(doc.text):
        start = match.start()
        run = match.group()
        # Mixed case and digits: a plain long word or a hex hash is not base64 in hiding.
        if not (any(c.isdigit() for c in run) and any(c.isupper() for c in run)):
            continue
        is_data_uri = _DATA_URI.search(doc.text, max(0, start - 80), start) is not None
        out.add(
            "scan.obfuscation",
            "info" if is_data_uri else "warning",
            f"{'an embedded data URI' if is_data_uri else 'a base64 payload'} of "
            f"{len(run)} characters",
            doc.line(start),
        )
    for words, pattern in _ESCAPES:
        for line, match in doc.matches(words, pattern):
            out.add(
                "scan.obfuscation",
                "warning",
                f"an escaped payload of {len(match.group())} characters",
                line,
            )


def _allowed_tools_rules(value: object) -> list[str]:
    if isinstance(value, str):
        return split_allowed_tools(value) or [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


_BROAD = re.compile(r"(?:Bash|Shell|PowerShell)(?:\(\s*\*?(?::\*)?\s*\))?|\*", re.IGNORECASE)


def _broad_grant(data: bytes, doc: _Text, out: _Collector) -> None:
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
    match = re.search(r"^allowed-tools\s*:", doc.text, re.MULTILINE)
    line = doc.line(match.start()) if match else None
    for rule in _allowed_tools_rules(value):
        if _BROAD.fullmatch(rule.strip()):
            what = "every tool" if rule.strip() == "*" else "any shell command"
            out.add(
                "scan.broad-grant",
                "warning",
                f"allowed-tools '{_quote(rule, 40)}' lets the skill run {what} without asking",
                line,
            )


def scan_file(rel: str, data: bytes, *, is_skill_file: bool | None = None) -> list[Finding]:
    """The findings of one file of a skill: ``rel`` its path in the skill, ``data`` its bytes
    (or the first :data:`MAX_SCANNED_BYTES` of them)."""
    out = _Collector(rel)
    kind = _executable_kind(data[:4096])
    if kind is not None:
        out.add("scan.binary", "danger", f"{kind} is bundled with the skill", None)
        return out.finish()
    if b"\0" in data[:8192]:
        return out.finish()  # images, fonts, archives: no text to read
    doc = _Text(data.decode("utf-8", errors="replace"))
    if is_skill_file is None:
        is_skill_file = rel == "SKILL.md"
    _hidden_unicode(doc, out)
    _patterns(doc, out)
    if is_skill_file:
        _dynamic_context(doc, out)
        _broad_grant(data, doc, out)
    return out.finish()


def _walk(skill_dir: str) -> Iterator[tuple[str, str]]:
    """``(relative path, absolute path)`` of each regular file, ``.git`` left out, no links."""
    pending = [("", skill_dir)]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name == ".git":
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name, entry.path


def _read_head(path: str, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        chunks: list[bytes] = []
        left = limit
        while left > 0 and (chunk := os.read(fd, min(left, 1024 * 1024))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def scan_skill(skill_dir: str, *, read: Callable[[str, int], bytes] = _read_head) -> list[Finding]:
    """Scan every regular file of the skill folder ``skill_dir`` (files sorted by path)."""
    findings: list[Finding] = []
    for count, (rel, path) in enumerate(sorted(_walk(skill_dir))):
        if count >= MAX_SCANNED_FILES:
            findings.append(
                Finding(
                    code="scan.obfuscation",
                    severity="warning",
                    file=".",
                    message=f"more than {MAX_SCANNED_FILES} files; the rest were not scanned",
                )
            )
            break
        try:
            data = read(path, MAX_SCANNED_BYTES)
        except OSError:
            continue
        findings.extend(scan_file(rel, data))
    return findings
