"""What is measured and what it must meet: every contender by key, and the cases that run them
together with their targets (each naming its baseline and its source).

Adding a case: write a ``prepare_<key>`` in the module of its concern, add a ``Contender`` to
``CONTENDERS`` and a ``Case`` to ``CASES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bench.baselines import prepare_a, prepare_b, prepare_c, prepare_walk
from bench.contender import Contender
from bench.core_probes import (
    prepare_relist,
    prepare_rescan,
    prepare_rss,
    prepare_scan,
    prepare_search,
    prepare_skillsd,
)
from bench.daemon_probes import (
    PINGS_BURST,
    PINGS_SEQUENTIAL,
    prepare_d_changed,
    prepare_d_changed_fresh,
    prepare_d_cold,
    prepare_d_commands,
    prepare_d_delta,
    prepare_d_invoke,
    prepare_d_listing,
    prepare_d_prompt_query,
    prepare_d_relist,
    prepare_d_rss,
    prepare_d_search,
    prepare_d_tool_search,
    prepare_d_warm,
    prepare_d_warm_scope,
    prepare_mcp_changed,
    prepare_mcp_tool_search,
    prepare_ping,
    prepare_quality,
    prepare_spawn,
)

#: How each ``ping`` server is named in the tables.
_PING_LABELS = {"skillsd": "skillsd", "mcp": "MCP SDK", "floor": "floor (echo, no JSON-RPC)"}


def _ping_contender(server: str, burst: bool) -> Contender:
    """``ping_<server>`` (one at a time) or ``burst_<server>`` (pipelined)."""
    count, how = (PINGS_BURST, "pipelined") if burst else (PINGS_SEQUENTIAL, "one at a time")
    return Contender(
        f"{'burst' if burst else 'ping'}_{server}",
        f"{_PING_LABELS[server]}: {count} pings, {how}",
        prepare_ping(server, burst),
        whole_corpus=False,
    )


CONTENDERS: dict[str, Contender] = {
    c.key: c
    for c in (
        Contender("walk", "os.walk only (finding SKILL.md)", prepare_walk),
        Contender("a", "(a) os.walk + read first 4 KiB", prepare_a),
        Contender("b", "(b) (a) + frontmatter + CBaseLoader", prepare_b),
        Contender("c", "(c) skills-ref read_properties", prepare_c),
        Contender("scan", "skillsd discovery scan only", prepare_scan),
        Contender("skillsd", "skillsd cold catalog", prepare_skillsd),
        Contender("relist", "skillsd refresh_catalog after 1 edit (core)", prepare_relist),
        Contender("rescan", "skillsd full rescan after 1 edit (core)", prepare_rescan),
        Contender("search", "skillsd search p50 (core index)", prepare_search, metric="p50"),
        Contender("rss", "skillsd peak RSS, catalog + index (core)", prepare_rss, "value", "MB"),
        Contender("d_cold", "daemon: cold skills.list", prepare_d_cold),
        Contender("d_warm", "daemon: warm skills.list (cached)", prepare_d_warm),
        Contender(
            "d_warm_scope",
            "daemon: warm skills.list, scope=user (0 skills)",
            prepare_d_warm_scope,
            whole_corpus=False,
        ),
        Contender("d_relist", "daemon: skills.list after 1 edit", prepare_d_relist),
        Contender(
            "d_delta",
            "daemon: skills.list {sinceGeneration} after 1 edit",
            prepare_d_delta,
            whole_corpus=False,
        ),
        Contender(
            "d_changed",
            "daemon: edit -> skills.changed p50",
            prepare_d_changed,
            metric="p50",
            whole_corpus=False,
        ),
        Contender(
            "d_changed_fresh",
            "daemon: edit right after a fresh daemon's lists -> skills.changed p50",
            prepare_d_changed_fresh,
            metric="p50",
            whole_corpus=False,
        ),
        Contender("d_search", "daemon: skills.search p50", prepare_d_search, metric="p50"),
        Contender("d_commands", "daemon: skills.commands p50", prepare_d_commands, metric="p50"),
        Contender("d_invoke", "daemon: skills.invoke p50", prepare_d_invoke, metric="p50"),
        Contender(
            "d_prompt_query",
            "daemon: skills.prompt, query + 2% of 200k tokens, p50",
            prepare_d_prompt_query,
            metric="p50",
        ),
        Contender(
            "d_listing",
            "daemon: skills.listing {agent: claude-code}, every skill Claude Code's, p50",
            prepare_d_listing,
            metric="p50",
        ),
        Contender(
            "quality_query",
            "expected skill keeps its description: with query (%)",
            prepare_quality(with_query=True),
            "value",
            "%",
            whole_corpus=False,
        ),
        Contender(
            "quality_plain",
            "expected skill keeps its description: without query (%)",
            prepare_quality(with_query=False),
            "value",
            "%",
            whole_corpus=False,
        ),
        Contender(
            "d_tool_search",
            "daemon: tools.call skill_search p50 (skillsd protocol)",
            prepare_d_tool_search,
            metric="p50",
        ),
        Contender(
            "mcp_tool_search",
            "skillsd mcp: tools/call skill_search p50",
            prepare_mcp_tool_search,
            metric="p50",
        ),
        Contender(
            "mcp_changed",
            "skillsd mcp: edit -> resources/list_changed p50",
            prepare_mcp_changed,
            metric="p50",
            whole_corpus=False,
        ),
        Contender("d_rss", "daemon: peak RSS holding the catalog", prepare_d_rss, "value", "MB"),
        Contender(
            "spawn_ping",
            "daemon: spawn -> first ping answered",
            prepare_spawn(floor=False),
            metric="p50",
            whole_corpus=False,
        ),
        Contender(
            "spawn_floor",
            "floor: spawn -> exit of python -c pass",
            prepare_spawn(floor=True),
            metric="p50",
            whole_corpus=False,
        ),
        *(_ping_contender(server, burst=False) for server in ("skillsd", "mcp", "floor")),
        *(_ping_contender(server, burst=True) for server in ("skillsd", "mcp")),
    )
}


@dataclass(frozen=True)
class Target:
    """One promise about contender ``subject``.

    kinds: ``within`` (subject <= bound x baseline), ``faster`` (baseline >= bound x subject),
    ``at_most`` (subject <= bound, in the subject's unit; no baseline).
    """

    subject: str
    kind: Literal["within", "faster", "at_most"]
    bound: float
    source: str
    baseline: str | None = None

    def describe(self) -> str:
        if self.kind == "within":
            return f"{self.subject} <= {self.bound:g}x {self.baseline}"
        if self.kind == "faster":
            return f"{self.subject} >= {self.bound:g}x faster than {self.baseline}"
        contender = CONTENDERS[self.subject]
        if contender.unit == "s":
            return f"{self.subject} <= {self.bound * 1e3:g} ms"
        return f"{self.subject} <= {self.bound:g} {contender.unit}"

    def check(self, values: dict[str, float]) -> tuple[float, bool] | None:
        """(measured: a ratio, or the value itself for ``at_most``; passed), None if missing."""
        if self.subject not in values:
            return None
        subject = values[self.subject]
        if self.kind == "at_most":
            return subject, subject <= self.bound
        if self.baseline not in values:
            return None
        baseline = values[self.baseline]
        if self.kind == "within":
            return subject / baseline, subject / baseline <= self.bound
        return baseline / subject, baseline / subject >= self.bound


@dataclass(frozen=True)
class Case:
    """A scenario run on each corpus size: contenders timed together, and targets. A target may
    name a baseline from an earlier case at the same N (e.g. re-list vs the cold catalog)."""

    name: str
    contenders: tuple[str, ...]
    targets: tuple[Target, ...] = ()
    #: Run at the largest N only (the corpus does not matter, e.g. ``ping``).
    once: bool = False


CASES: tuple[Case, ...] = (
    Case(
        "cold_catalog",
        ("walk", "a", "b", "c", "scan", "skillsd"),
        (
            Target("skillsd", "within", 1.5, "issue", "b"),
            Target("skillsd", "faster", 20, "issue", "c"),
            Target("skillsd", "within", 3, "speed target", "a"),
            Target("skillsd", "faster", 10, "speed target", "c"),
        ),
    ),
    Case(
        "relist_one_edit",
        ("relist", "rescan"),
        (Target("relist", "within", 0.05, "issue, speed target", "skillsd"),),
    ),
    Case("search", ("search",), (Target("search", "at_most", 0.005, "speed target"),)),
    Case("memory", ("rss",), (Target("rss", "at_most", 80, "speed target"),)),
    # Before the daemon cases: no other daemon runs beside the pings (an idle machine is the
    # harder case for a one-at-a-time round trip: waking a sleeping core costs tens of us).
    Case(
        "ping",
        ("ping_skillsd", "ping_mcp", "ping_floor", "burst_skillsd", "burst_mcp"),
        (
            Target("ping_skillsd", "faster", 10, "issue", "ping_mcp"),
            Target("burst_skillsd", "faster", 10, "issue", "burst_mcp"),
            Target("ping_skillsd", "faster", 3, "speed target", "ping_mcp"),
            Target("burst_skillsd", "faster", 3, "speed target", "burst_mcp"),
        ),
        once=True,
    ),
    Case(
        "daemon_list",
        ("d_cold", "d_warm", "d_warm_scope", "d_relist"),
        (Target("d_relist", "within", 0.05, "issue, speed target", "d_cold"),),
    ),
    Case(
        "daemon_changed",
        ("d_changed", "d_changed_fresh"),
        (
            Target("d_changed", "at_most", 0.3, "speed target"),
            Target("d_changed_fresh", "at_most", 1.0, "no change lost"),
        ),
    ),
    Case("daemon_search", ("d_search",), (Target("d_search", "at_most", 0.005, "speed target"),)),
    Case(
        "daemon_delta",
        ("d_warm", "d_delta"),
        (Target("d_delta", "at_most", 0.005, "issue 16"),),
    ),
    Case(
        "daemon_prompt",
        ("d_prompt_query", "quality_query", "quality_plain"),
        (Target("d_prompt_query", "at_most", 0.020, "issue 16"),),
    ),
    Case("daemon_listing", ("d_listing",), (Target("d_listing", "at_most", 0.020, "issue 36"),)),
    Case(
        "mcp_bridge",
        ("d_tool_search", "mcp_tool_search", "mcp_changed"),
        (
            Target("mcp_tool_search", "within", 2.0, "issue 17", "d_tool_search"),
            Target("mcp_changed", "at_most", 0.3, "issue 17"),
        ),
    ),
    Case(
        "daemon_commands",
        ("d_commands", "d_invoke"),
        (
            Target("d_commands", "at_most", 0.005, "issue 15"),
            Target("d_invoke", "at_most", 0.005, "issue 15"),
        ),
    ),
    Case(
        "startup",
        ("spawn_ping", "spawn_floor"),
        (Target("spawn_ping", "at_most", 0.150, "issue 16"),),
        once=True,
    ),
    Case("daemon_memory", ("d_rss",), (Target("d_rss", "at_most", 80, "speed target"),)),
)
