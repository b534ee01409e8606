"""A skill's ``paths`` globs (gitignore patterns) matched against a file, without backtracking.

A regular expression compiled from ``*a*a*a*a*a*a*a*a*b`` (as the ``pathspec`` library compiles
it) tries every way of sharing a long run of ``a`` among the stars: 53 s for a 56-character file
name. Here a name's glob is cut at its stars into fixed-width pieces and a path's glob at its
``**`` into runs of names, and each piece (each run) is placed once, leftmost, left to right.
Leftmost placement leaves the most room for what follows, so it fails only when no placement
can succeed, and a match costs at most O(len(path) * len(glob)).

The meaning is gitignore's, as ``pathspec.GitIgnoreSpec`` gives it:

- blank globs, ``#`` comments and ``/`` match nothing; trailing spaces are dropped unless
  escaped; ``!`` negates; ``\\`` makes the next character literal;
- a glob with no ``/`` but a trailing one matches at any depth; any other ``/`` anchors it at the
  repository root;
- ``*`` matches within one name, ``?`` one character, ``[...]`` one character of a set (``!`` or
  ``^`` negates it, ``a-z`` is a range; none of them matches a ``/``, where pathspec's negated
  set did); a ``[`` never closed, or a trailing ``\\``, voids the glob (git ignores such
  patterns; pathspec raised, failing the request);
- ``**`` as a whole name spans any number of folders; a trailing ``/**``, or ``/``, matches what
  is inside a folder;
- a glob matching a folder matches the files beneath it. Of a skill's globs the last one matching
  the file itself decides, else the last one matching a folder above it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["PathGlob", "compile_glob", "compile_globs", "globs_match", "split_path"]

#: How a glob matched a path: not at all, a folder above it, or the file itself (which
#: outranks a folder match whatever the order of the globs).
Level = Literal[0, 1, 2]
_NONE: Level = 0
_FOLDER: Level = 1
_FILE: Level = 2


class _Void(ValueError):
    """A glob git would ignore."""


@dataclass(frozen=True, slots=True)
class _Name:
    """One name's glob: the fixed-width pieces between its stars (one piece: no star)."""

    pieces: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]

    def matches(self, name: str) -> bool:
        pieces, widths = self.pieces, self.widths
        if len(pieces) == 1:
            return len(name) == widths[0] and pieces[0].fullmatch(name) is not None
        tail = len(name) - widths[-1]
        if tail < widths[0] or pieces[-1].match(name, tail) is None:
            return False
        if pieces[0].match(name) is None:
            return False
        pos = widths[0]
        for k in range(1, len(pieces) - 1):
            # A piece holds no quantifier, so a search costs at most len(name) * its width.
            found = pieces[k].search(name, pos, tail)
            if found is None:
                return False
            pos = found.end()
        return True


#: Any one name (a whole-name ``*``, and the name a folder match adds after a glob).
_ANY = _Name((re.compile(""), re.compile("")), (0, 0))


def _class(text: str, start: int) -> tuple[str, int]:
    """The regex of the ``[...]`` set opening at ``text[start - 1]``, and the index after it.

    The set ends at the first ``]`` past a leading ``!``/``^`` and a leading ``]`` (its members
    taken literally, a backslash included); a reversed range such as ``z-a`` holds nothing."""
    i = start
    negated = i < len(text) and text[i] in "!^"
    i += negated
    end = text.find("]", i + 1 if i < len(text) and text[i] == "]" else i)
    if end < 0:
        raise _Void("unclosed [")
    members = text[i:end]
    items: list[str] = []
    k = 0
    while k < len(members):
        low = members[k]
        if k + 2 < len(members) and members[k + 1] == "-":
            high = members[k + 2]
            if low <= high:
                items.append(f"{re.escape(low)}-{re.escape(high)}")
            k += 3
        else:
            items.append(re.escape(low))
            k += 1
    if not items:
        return ("[^/]" if negated else "(?!)"), end + 1
    return f"[{'^' if negated else ''}{''.join(items)}]", end + 1


def _name(text: str) -> _Name:
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if char == "\\":
            if i == len(text):
                raise _Void("trailing backslash")
            pieces[-1].append(re.escape(text[i]))
            i += 1
        elif char == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
        elif char == "?":
            pieces[-1].append("[^/]")
        elif char == "[":
            regex, i = _class(text, i)
            pieces[-1].append(regex)
        else:
            pieces[-1].append(re.escape(char))
    return _Name(tuple(re.compile("".join(p)) for p in pieces), tuple(len(p) for p in pieces))


@dataclass(frozen=True, slots=True)
class PathGlob:
    """One compiled glob: runs of names with ``**`` spans between them, and before the first
    when ``lead``. A glob ending in ``**`` keeps its runs in ``within`` only."""

    text: str
    include: bool
    lead: bool
    #: The runs that must end where the path ends (empty for a glob ending in ``**``).
    runs: tuple[tuple[_Name, ...], ...]
    #: The runs and one name more: what matches a path beneath where the runs end.
    within: tuple[tuple[_Name, ...], ...]
    #: A match beneath the runs' end counts as the file's own (a trailing ``/**``).
    inside_is_file: bool
    #: ``**/``: every path below the root folder, as a folder match.
    everything_below: bool = False

    def level(self, names: Sequence[str]) -> Level:
        """How this glob matches the path of ``names`` (its ``!`` aside)."""
        if not self.within:  # ``**`` alone
            if self.everything_below:
                return _FOLDER if len(names) > 1 else _NONE
            return _FILE if names else _NONE
        if self.runs and _place(self.runs, self.lead, False, names):
            return _FILE
        if _place(self.within, self.lead, True, names):
            return _FILE if self.inside_is_file else _FOLDER
        return _NONE


def _at(run: Sequence[_Name], names: Sequence[str], start: int) -> bool:
    if start < 0 or start + len(run) > len(names):
        return False
    if len(run) == 1:  # the usual run, without a generator's cost
        return run[0].matches(names[start])
    return all(part.matches(names[start + k]) for k, part in enumerate(run))


def _place(runs: Sequence[Sequence[_Name]], lead: bool, trail: bool, names: Sequence[str]) -> bool:
    """Whether ``runs``, with any number of names between them (and before the first when
    ``lead``, after the last when ``trail``), make up ``names``."""
    pos, end = 0, len(names)
    if len(runs) == 1:  # most globs: ``**/*.sql``, ``src/``, ``docs/**``
        run = runs[0]
        if not lead:
            return _at(run, names, 0) and (trail or len(run) == end)
        if not trail:
            return _at(run, names, end - len(run))
        return any(_at(run, names, s) for s in range(end - len(run) + 1))
    first, last = 0, len(runs)
    if not lead:
        if not _at(runs[0], names, 0):
            return False
        pos, first = len(runs[0]), 1
    if not trail:
        start = end - len(runs[-1])
        if start < pos or not _at(runs[-1], names, start):
            return False
        end, last = start, last - 1
    for run in runs[first:last]:
        found = next((s for s in range(pos, end - len(run) + 1) if _at(run, names, s)), -1)
        if found < 0:
            return False
        pos = found + len(run)
    return True


def compile_glob(text: str) -> PathGlob | None:
    """``text`` compiled, or None when it matches nothing (blank, a comment, void)."""
    line = text if text.endswith("\\ ") else text.rstrip()
    if not line or line.startswith("#") or line == "/":
        return None
    include = not line.startswith("!")
    names = (line if include else line[1:]).split("/")
    folder_only = names[-1] == ""
    if names[0] == "":
        del names[0]  # a leading "/" only anchors
    elif len(names) == 1 or (len(names) == 2 and folder_only):
        names.insert(0, "**")  # no "/" inside: any depth
    if not names:
        return None
    if names[-1] == "":
        names[-1] = "**"
    try:
        parts = [None if n == "**" else _name(n) for n in names]
    except _Void:
        return None
    runs: list[tuple[_Name, ...]] = []
    current: list[_Name] = []
    for part in parts:
        if part is None:
            if current:
                runs.append(tuple(current))
            current = []
        else:
            current.append(part)
    if current:
        runs.append(tuple(current))
    lead, trailing_span = parts[0] is None, parts[-1] is None
    if not runs:  # ``**``, ``**/``
        return PathGlob(text, include, True, (), (), True, everything_below=folder_only)
    within = (*runs[:-1], (*runs[-1], _ANY))
    return PathGlob(
        text,
        include,
        lead,
        () if trailing_span else tuple(runs),
        within,
        inside_is_file=trailing_span and not folder_only,
    )


def compile_globs(texts: Iterable[str]) -> tuple[PathGlob, ...]:
    """The globs of ``texts`` that can match something, in order."""
    return tuple(g for t in texts if (g := compile_glob(t)) is not None)


def split_path(path: str) -> tuple[str, ...]:
    """A normalized relative POSIX path (``db/report.sql``) as the names globs match."""
    return tuple(path.split("/"))


def globs_match(globs: Sequence[PathGlob], names: Sequence[str]) -> bool:
    """Whether ``globs`` together select the path of ``names``: the last glob matching the file
    itself decides, else the last one matching a folder above it."""
    folder_verdict: bool | None = None
    for glob in reversed(globs):
        level = glob.level(names)
        if level == _FILE:
            return glob.include
        if level == _FOLDER and folder_verdict is None:
            folder_verdict = glob.include
    return folder_verdict is True
