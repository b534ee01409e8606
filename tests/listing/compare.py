"""Comparing the modelled listing of an agent with the block the real agent sent (live, or
stored in ``captured/`` with the agent's own skill texts replaced by their lengths)."""

from __future__ import annotations

import re

from skillsd.core.listing.agent_listing import CLAUDE_CODE_BUNDLED
from skillsd_protocol.listing import ListingResult
from tests.listing.capture import bundled_spans

__all__ = ["claude_differences"]

_STORED = re.compile(r"<(\d+) characters>")


def claude_differences(block: str, result: ListingResult) -> list[str]:
    """What differs between Claude Code's block and the model's ``result`` (empty: nothing):
    the text byte for byte (the whole block when the model read the agent's own text, else the
    lines of the skills on disk), each bundled skill's form and length, and the characters the
    whole block takes."""
    problems: list[str] = []
    spans = bundled_spans(block, [b.name for b in CLAUDE_CODE_BUNDLED])
    # With the installed agent's own text, ``text`` is the whole block; without it, the
    # lines of the skills on disk.
    own = block if result.agent_text or not spans else block[: spans[0][1] - 1]
    if own != result.text:
        ours, theirs = result.text.split("\n"), own.split("\n")
        first = next(
            (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
            min(len(ours), len(theirs)),
        )
        problems.append(
            f"line {first}: model {ours[first : first + 1]!r} agent {theirs[first : first + 1]!r} "
            f"({len(ours)} vs {len(theirs)} lines)"
        )
    length = len(block)
    entries = {e.name: e for e in result.entries if e.bundled}
    for name, start, end in spans:
        entry = block[start:end]
        full = entry.startswith(f"- {name}: ")
        stored = _STORED.fullmatch(entry[len(f"- {name}: ") :]) if full else None
        chars = len(entry)
        if stored is not None:
            chars = len(f"- {name}: ") + int(stored.group(1))
            length += chars - len(entry)
        mine = entries.get(name)
        if mine is None:
            problems.append(f"bundled {name}: not in the model")
        elif (mine.shown == "full") != full or mine.chars != chars:
            problems.append(f"bundled {name}: model {mine.shown} {mine.chars}, agent {chars}")
    if result.used_chars != length:
        problems.append(f"used characters: model {result.used_chars}, agent {length}")
    return problems
