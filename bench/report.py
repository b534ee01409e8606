"""The report: the machine, each case's results as JSON-able blocks, and the Markdown tables
printed at the end of a run (and pasted into ``docs/benchmarks.md``)."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict
from typing import Any

import yaml

from bench.cases import CONTENDERS, Case, Target
from bench.corpus import Corpus
from bench.measure import Measurement, check_outcomes


def case_block(
    case: Case, corpus: Corpus, results: dict[str, Measurement], values: dict[str, float]
) -> dict[str, Any]:
    """One case at one N for the report: its contenders, its targets checked against ``values``
    (every contender measured so far at this N), and the problems its runs show."""
    return {
        "case": case.name,
        "n": corpus.n,
        "contenders": {key: _contender_entry(m) for key, m in results.items()},
        "targets": [_target_entry(t, t.check(values)) for t in case.targets],
        "problems": check_outcomes(corpus, results),
    }


def _contender_entry(m: Measurement) -> dict[str, Any]:
    entry = asdict(m)
    del entry["outcomes"]  # the per-run samples would bloat the JSON
    if entry["outcome"]:
        entry["outcome"].pop("samples", None)
    return entry


def _target_entry(t: Target, checked: tuple[float, bool] | None) -> dict[str, Any]:
    if checked is None:
        measured, result = None, "n/a"
    else:
        measured, result = checked[0], "PASS" if checked[1] else "FAIL"
    return {
        "target": t.describe(),
        "subject": t.subject,
        "kind": t.kind,
        "source": t.source,
        "measured": measured,
        "result": result,
    }


def machine_info() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    versions = {}
    for dist in ("skillsd", "PyYAML", "skills-ref", "msgspec"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "not installed"
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            mem = fh.readline().split(":", 1)[1].strip()
    except (OSError, IndexError):
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory": mem,
        "yaml_c_loader": hasattr(yaml, "CBaseLoader"),
        "versions": versions,
    }


def _fmt(value: float, unit: str) -> str:
    if unit != "s":
        return f"{value:,.1f} {unit}"
    if value < 0.01:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e3:,.1f} ms" if value < 10 else f"{value:,.2f} s"


def format_table(report: dict[str, Any]) -> str:
    """The Markdown tables printed at the end (and pasted into docs/benchmarks.md)."""
    lines = [
        "| case | N | contender | median | vs (a) | vs (b) | vs (c) | runs | ok/failed |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for block in report["results"]:
        times = {
            k: v["value"]
            for b in report["results"]
            if b["n"] == block["n"]
            for k, v in b["contenders"].items()
            if v["value"] is not None and v["metric"] == "time"
        }
        for m in block["contenders"].values():
            head = f"| {block['case']} | {block['n']:,} | {m['label']} "
            if m["value"] is None:
                lines.append(head + f"| {m['note']} | | | | | |")
                continue
            ratios = ["-"] * 3
            if m["metric"] == "time" and block["case"] == "cold_catalog":
                ratios = [f"{m['value'] / times[b]:.2f}x" if b in times else "-" for b in "abc"]
            o = m["outcome"]
            value = _fmt(m["value"], m["unit"]) + ("*" if m["scale"] else "")
            lines.append(
                head + f"| {value} | {' | '.join(ratios)} | {len(m['runs'])} "
                f"| {o['ok']:,}/{o['failed']:,} |"
            )
    lines += [
        "",
        "| case | N | target | source | measured | result |",
        "|---|---:|---|---|---:|---|",
    ]
    for block in report["results"]:
        for t in block["targets"]:
            measured = t["measured"]
            if measured is None:
                shown = "-"
            elif t["kind"] == "at_most":
                shown = _fmt(measured, CONTENDERS[t["subject"]].unit)
            else:
                shown = f"{measured:.2f}x"
            lines.append(
                f"| {block['case']} | {block['n']:,} | {t['target']} | {t['source']} | {shown} "
                f"| {t['result']} |"
            )
    notes = [
        f"- {m['label']}, N={block['n']:,}: {m['note']}"
        for block in report["results"]
        for m in block["contenders"].values()
        if m["note"] and m["value"] is not None
    ]
    problems = [f"- PROBLEM at N={b['n']:,}: {p}" for b in report["results"] for p in b["problems"]]
    if notes or problems:
        lines += ["", *notes, *problems]
    return "\n".join(lines)
