"""The real published skills in ``shared/corpora`` and what is known about them."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"

#: Skip marker for tests that need the corpora (they sit beside the repository, not in it).
needs_corpora = pytest.mark.skipif(not CORPORA.is_dir(), reason=f"corpora not present at {CORPORA}")

#: Skill dir (relative to the corpora) -> the error strict mode reports; skills-ref 0.1.1 rejects
#: the same six (see corpora/README.md).
KNOWN_INVALID = {
    "anthropics-skills/skills/claude-api": "description.too_long",
    "anthropics-skills/template": "name.mismatch",
    "vercel-agent-skills/skills/composition-patterns": "name.mismatch",
    "vercel-agent-skills/skills/react-best-practices": "name.mismatch",
    "vercel-agent-skills/skills/react-native-skills": "name.mismatch",
    "vercel-agent-skills/skills/react-view-transitions": "name.mismatch",
}
