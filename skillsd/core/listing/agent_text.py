"""The agents' own text in their skill listings, as recipes for finding it in the installed
agent. Pure: :mod:`skillsd.core.listing.fs_agent_text` reads the agent's file and hands the
bytes it found here.

Claude Code lists its bundled skills after the user's, and Codex opens its listing with fixed
sentences; that text ships inside the agent and is not copied into skillsd. Instead, for each
agent version skillsd knows, a recipe says where each piece of that text lies in the agent's
file: a short marker it contains (a file or command name, never its prose), where the marker
sits in the piece, the piece's length in bytes, and the SHA-256 of those bytes. A piece is
taken only when its bytes hash to the recipe's digest, so a file that differs yields nothing
rather than a guess. A piece is either bytes as they are (Codex's Rust strings) or a
JavaScript string literal, quotes included (Claude Code's bundled source), decoded here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "RECIPES",
    "AgentTextRecipe",
    "BundledText",
    "Piece",
    "assemble",
    "decode_js_string",
    "digest",
    "piece_text",
    "recipe_for",
]


@dataclass(frozen=True, slots=True)
class Piece:
    """Where one piece of an agent's text lies in its file: ``marker`` (ASCII bytes the piece
    holds, at ``offset`` from its start), ``length`` bytes in all, hashing to ``sha256``;
    ``js``: the bytes are a JavaScript string literal (quotes included) to decode."""

    marker: bytes
    offset: int
    length: int
    sha256: str
    js: bool = True


#: A part of an assembled text: a piece from the agent's file, or skillsd's own glue (a
#: separator, a name), never the agent's prose.
Part = Piece | str


@dataclass(frozen=True, slots=True)
class BundledText:
    """How one bundled skill's description is put together: its parts in order; a JavaScript
    template literal's ``${...}`` substitutions, each by its expression's source text."""

    name: str
    parts: tuple[Part, ...]
    substitutions: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class AgentTextRecipe:
    """Where one agent version's own listing text lies in its file."""

    agent: str
    version: str
    #: Claude Code: each bundled skill's description (``description`` and `` - `` and
    #: ``when_to_use`` when it has one), by name.
    bundled: tuple[BundledText, ...] = ()
    #: Codex: the sentences before its roots table (joined by newlines, tags included).
    preamble: tuple[Part, ...] = ()
    #: Settings under which the recipe's text is not the one the agent sends (an environment
    #: variable that switches a description): the text is then not completed.
    env_switches: tuple[str, ...] = ()
    #: Where in the file the text lies: near its end (Claude Code's bundled source follows
    #: the runtime), so it is read from there first.
    from_end: bool = False


def _hex_value(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "0": "\0",
}


def _escape(body: str, i: int) -> tuple[str, int] | None:
    """The character of the escape at ``body[i]`` (after the backslash) and where the text
    goes on; None for an escape this decoder does not take."""
    c = body[i]
    if c in _SIMPLE_ESCAPES and not (c == "0" and body[i + 1 : i + 2].isdigit()):
        return _SIMPLE_ESCAPES[c], i + 1
    if c == "x":
        value = _hex_value(body[i + 1 : i + 3]) if len(body) >= i + 3 else None
        return (chr(value), i + 3) if value is not None else None
    if c == "u":
        if body[i + 1 : i + 2] == "{":
            end = body.find("}", i + 2)
            value = _hex_value(body[i + 2 : end]) if end > 0 else None
            if value is None or value > 0x10FFFF:
                return None
            return chr(value), end + 1
        value = _hex_value(body[i + 1 : i + 5]) if len(body) >= i + 5 else None
        return (chr(value), i + 5) if value is not None else None
    if c == "\n":
        return "", i + 1  # a line continuation
    if c.isdigit():
        return None  # octal escapes: not in the agents' text
    return c, i + 1


def _join_surrogates(text: str) -> str:
    """``\\uD83D\\uDE00`` pairs written as two escapes, joined into one character."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def decode_js_string(literal: str, substitutions: Mapping[str, str] | None = None) -> str | None:
    """The value of the JavaScript string literal ``literal`` (quotes included: ``"…"``,
    ``'…'`` or a template ``\\`…\\```); a template's ``${expr}`` is replaced by
    ``substitutions[expr]``. None when it is not one whole literal, or holds an escape or a
    substitution this decoder does not take."""
    if len(literal) < 2 or literal[0] not in "\"'`" or literal[-1] != literal[0]:
        return None
    quote, body = literal[0], literal[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            if i + 1 >= len(body):
                return None
            found = _escape(body, i + 1)
            if found is None:
                return None
            out.append(found[0])
            i = found[1]
        elif c == quote:
            return None  # the literal ended before its last byte
        elif quote == "`" and body.startswith("${", i):
            end = body.find("}", i + 2)
            expr = body[i + 2 : end] if end > 0 else None
            if expr is None or substitutions is None or expr not in substitutions:
                return None
            out.append(substitutions[expr])
            i = end + 1
        elif quote != "`" and c == "\n":
            return None
        else:
            out.append(c)
            i += 1
    return _join_surrogates("".join(out))


def piece_text(piece: Piece, data: bytes, substitutions: Mapping[str, str] | None) -> str | None:
    """The text of ``piece`` from its bytes ``data`` (already checked against its digest)."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decode_js_string(raw, substitutions) if piece.js else raw


def _join(
    parts: tuple[Part, ...],
    found: Mapping[Piece, bytes],
    substitutions: Mapping[str, str] | None,
) -> str | None:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        data = found.get(part)
        text = piece_text(part, data, substitutions) if data is not None else None
        if text is None:
            return None
        out.append(text)
    return "".join(out)


def assemble(
    recipe: AgentTextRecipe, found: Mapping[Piece, bytes]
) -> tuple[dict[str, str], str | None, list[str]]:
    """(each bundled skill's description by name, the preamble's lines joined by newlines,
    the names of what could not be put together) from the pieces ``found`` in the file."""
    bundled: dict[str, str] = {}
    missing: list[str] = []
    for item in recipe.bundled:
        text = _join(item.parts, found, item.substitutions)
        if text is None:
            missing.append(item.name)
        else:
            bundled[item.name] = text
    preamble: str | None = None
    if recipe.preamble:
        lines = [_join((part,), found, None) for part in recipe.preamble]
        if any(line is None for line in lines):
            missing.append("preamble")
        else:
            preamble = "\n".join(line for line in lines if line is not None)
    return bundled, preamble, missing


def digest(data: bytes) -> str:
    """The digest recipes hold."""
    return hashlib.sha256(data).hexdigest()


def _js(marker: str, offset: int, length: int, sha256: str) -> Piece:
    return Piece(marker.encode(), offset, length, sha256)


# Claude Code 2.1.328: each bundled skill's description and when_to_use, as its source holds
# them (literals, quotes included). ``code-review``'s description is a template whose
# substitutions are the name of the simplify skill, its effort levels, and two notes shown
# only where its cloud review is turned on (empty otherwise, as with an API key, where it was
# captured); its ``when_to_use`` is the one for that case too.
_CLAUDE_CODE_2_1_328 = AgentTextRecipe(
    agent="claude-code",
    version="2.1.328",
    bundled=(
        BundledText(
            "dataviz",
            (
                _js(
                    "var Ei=",
                    -7,
                    1504,
                    "c2588db30a4e3c2ed683ee5a722e34b6a5e2acb74b253899a7f3d8b67ec64fb3",
                ),
            ),
        ),
        BundledText(
            "update-config",
            (
                _js(
                    "settings.json/settings.local.json",
                    430,
                    692,
                    "813bb0efc0a864b449c5d0743daa2b077139fb11ae3d2099eb0718aa956b3c3b",
                ),
            ),
        ),
        BundledText(
            "keybindings-help",
            (
                _js(
                    'rc({name:"keybindings-help",description:',
                    -40,
                    230,
                    "4bddaa3f1fd869e44cc36a4e3a5a7344f0ab6a230f23be5266e7b277e2678529",
                ),
            ),
        ),
        BundledText(
            "code-review",
            (
                _js(
                    "/${_Jt})",
                    166,
                    634,
                    "c483ab3cfe6877a918196cbb7be79f638674a54e0f92f53419bb689295e2c9cc",
                ),
                " - ",
                _js(
                    "CLAUDE.md",
                    63,
                    198,
                    "0b85dd4f8f5f4bd3b638ba2bfeddfeca3361a4a2807ed7ead97b48819a19c81e",
                ),
            ),
            substitutions={
                "_Jt": "simplify",
                'he.join("|")': "low|medium|high|xhigh|max",
                "e": "",
                "o": "",
            },
        ),
        BundledText(
            "simplify",
            (
                _js(
                    "/code-review",
                    160,
                    183,
                    "ff58004392c2b837facc12c2d24f5f6d6ba14148d2931d516616f48687cf8bf2",
                ),
            ),
        ),
        BundledText(
            "fewer-permission-prompts",
            (
                _js(
                    ".claude/settings.json",
                    113,
                    165,
                    "3ee36c5947585edb652c9ade42a7a32f17c69de9f29e4d5ac0aeb73a033c745f",
                ),
            ),
        ),
        BundledText(
            "loop",
            (
                _js(
                    'aliases:["proactive"],description:',
                    -34,
                    123,
                    "72070ca845bb0c91011eccd74d8008e96a6e48e6d49a6dd6a1fef8c0041b1450",
                ),
                " - ",
                _js(
                    "/babysit-prs",
                    165,
                    214,
                    "85bd6f2f5e679b9fa1f38ce3cc1ec041ad06e2eb28969ec85aad012094cff188",
                ),
            ),
        ),
        BundledText(
            "claude-api",
            (
                _js(
                    "}var G=[",
                    -8,
                    157,
                    "5778c96bb98b636faf20c70c9e7cda92bef66b9cc62f00418f756f8d5b7a6136",
                ),
                "\n",
                _js(
                    "(pricing/model",
                    363,
                    669,
                    "c5ff161a2a1d3beb0be9683fdee36e181237eae40712041ae61cde139d481e45",
                ),
                "\n",
                _js(
                    "openai|langchain_openai",
                    158,
                    361,
                    "31ce223dea0a29928363ceb99f1c9a715afa02b0efb82f3b778e162de3d77f65",
                ),
            ),
        ),
        BundledText(
            "workflow-authoring",
            (
                _js(
                    "${tc}",
                    25,
                    229,
                    "b4a45e611f5bef4028b19b9e003044eef955a3679ce344e60be9e281053e700c",
                ),
            ),
            substitutions={"tc": "Workflow"},
        ),
        BundledText(
            "run",
            (
                _js(
                    '")}var a=',
                    -9,
                    363,
                    "fea68146987d1c87f048bab1190d3dc75b453143b3b324830caef1b3162e4d76",
                ),
            ),
        ),
        BundledText(
            "plugin-authoring",
            (
                _js(
                    '";var e0s=',
                    -10,
                    257,
                    "ea6ddbadca891baa6e2590253265fca663d4db7bb3498fa967c007f9d43f6c7b",
                ),
            ),
        ),
        BundledText(
            "init",
            (
                _js(
                    "CLAUDE.md",
                    18,
                    61,
                    "433ac00563126f8f8ac6b3278bc378da233b4b443cb461ebda91c787dd1b71ed",
                ),
            ),
        ),
        BundledText(
            "security-review",
            (
                _js(
                    "rqn=oqn({name:$eo,description:",
                    -30,
                    73,
                    "61328990b67de4e129744b9da314d65cc05d4b5df9b9d2b1648d7ebf1f427812",
                ),
            ),
        ),
    ),
    env_switches=("CLAUDE_CODE_NEW_INIT",),
    from_end=True,
)

# Codex 0.171.0: ``<skills_instructions>``, its ``## Skills`` heading, and one sentence, each
# a string of its own in the binary.
_CODEX_0_171_0 = AgentTextRecipe(
    agent="codex",
    version="0.171.0",
    preamble=(
        "<skills_instructions>",
        "## Skills",
        Piece(
            b"`SKILL.md`",
            69,
            261,
            "1e24ced81a2ad9e9b1ae49124c2a7dbafce3d4bbdac215eab60e310811af0140",
            js=False,
        ),
    ),
)

#: Every recipe, by (agent, version).
RECIPES: dict[tuple[str, str], AgentTextRecipe] = {
    (r.agent, r.version): r for r in (_CLAUDE_CODE_2_1_328, _CODEX_0_171_0)
}


def recipe_for(agent: str, version: str | None) -> AgentTextRecipe | None:
    """The recipe for ``agent`` at ``version``; None when skillsd does not know that version."""
    if version is None:
        return None
    return RECIPES.get((agent, version))
