"""The skill format's limits and skillsd's documented defaults, pinned to their literal numbers
(other tests use the constants)."""

from __future__ import annotations

from skillsd.core import limits
from skillsd.core.policy.config import DEFAULT_CONFIG


def test_limits_match_the_spec() -> None:
    assert limits.MAX_FRONTMATTER_BYTES == 64 * 1024  # the skill format
    assert limits.MAX_NAME_CHARS == 64
    assert limits.MAX_DESCRIPTION_CHARS == 1024
    assert limits.MAX_COMPATIBILITY_CHARS == 500
    assert (limits.BODY_ADVISED_MAX_LINES, limits.BODY_ADVISED_MAX_TOKENS) == (500, 5000)
    assert (DEFAULT_CONFIG.discovery.max_depth, DEFAULT_CONFIG.discovery.max_dirs) == (6, 2000)
    assert (limits.DEFAULT_SEARCH_LIMIT, limits.MAX_SEARCH_LIMIT) == (8, 50)  # search
    assert limits.MAX_SKILL_FILE_BYTES == 1024 * 1024  # loading
    assert (limits.MAX_LISTED_FILES, limits.MAX_LISTED_DEPTH) == (200, 3)
    assert limits.DEFAULT_READ_BYTES == 200_000
    assert limits.DEFAULT_PROMPT_MAX_ENTRIES == 200  # rendering
    assert limits.DEFAULT_PROMPT_MAX_BYTES == 32 * 1024
    assert limits.DEFAULT_MAX_MESSAGE_BYTES == 16 * 1024 * 1024  # the protocol
    assert 0.05 <= limits.WATCH_DEBOUNCE_SECONDS <= 0.2  # the catalog: "~100 ms quiet"
