"""``skillsd eval [PATH...]``: trigger evaluations for skill authors (docs/hooks.md).

A skill may hold ``evals/triggers.json``: a list of ``{"query": ..., "should_trigger": bool}``
(the format Anthropic's skill-creator writes). Each query goes through ``skills.suggest``
against the whole catalog the user has, so a rival skill that wins is visible; the skill
"triggers" when it activates. Per skill: precision, recall, the recall counting candidates, and
every misfire with the skill that won instead. Exit 1 when a skill's precision or recall is under
``--min``. The ranking reads a skill's own trigger queries as evidence, so while a skill's
queries are the test its own are left out of the index (every one would find itself).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import msgspec

from skillsd.cli.in_process import run_in_process, view_of
from skillsd.cli.output import emit_json, failing, format_score, one_line
from skillsd.core import limits
from skillsd.core.catalog.fs_skill_evidence import TRIGGERS_FILE
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.fs.fs_boundary import decode_json
from skillsd.runtime import use_cases
from skillsd.runtime.services import Services
from skillsd_protocol import SkillMetadata
from skillsd_protocol.messages import MAX_QUERY_CHARS, SuggestParams

__all__ = ["TRIGGERS_FILE", "register"]

_MAX_CASES = 1000


class Misfire(msgspec.Struct, rename="camel", kw_only=True):
    query: str
    should_trigger: bool
    score: float
    #: The skill that came first instead (None: nothing fit).
    winner: str | None


class SkillEval(msgspec.Struct, rename="camel", kw_only=True):
    name: str
    path: str
    cases: int
    precision: float
    recall: float
    #: The share of its should-trigger queries where it activates or, when nothing activates,
    #: is offered as a candidate (what a hook then asks the model to check).
    candidate_recall: float
    misfires: list[Misfire]
    passed: bool


def register(subparsers: Any) -> None:
    """Add ``eval``."""
    p = subparsers.add_parser(
        "eval",
        help="run skills' trigger evaluations (evals/triggers.json) against your catalog",
        description="For each skill with evals/triggers.json (all of the catalog's, or those "
        "under PATH), run every query through skills.suggest and report precision, recall "
        "and the misfires, naming the skill that won instead.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="skill folders (default: every skill)")
    p.add_argument("--cwd", help="working directory whose catalog to use (default: .)")
    p.add_argument("--extra-root", action="append", default=[], metavar="DIR", help="an extra root")
    p.add_argument(
        "--min", type=float, default=0.8, help="fail under this precision or recall (0.8)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_eval)


def _cases(skill: SkillMetadata) -> list[tuple[str, bool]] | None:
    path = os.path.join(skill.dir, TRIGGERS_FILE)
    try:
        # A file of a skill someone else wrote: bounded, never a FIFO or a device.
        read = read_regular_file(path, limits.MAX_CONFIG_FILE_BYTES)
        if read.over_cap:
            raise ValueError(f"larger than {limits.MAX_CONFIG_FILE_BYTES} bytes")
        data = decode_json(read.data)  # nesting bounded: never a RecursionError
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SkillsdError(f"{path}: {exc}", InvalidParamsData(field="paths")) from None
    if not isinstance(data, list):
        raise SkillsdError(
            f"{path}: expected a list of {{query, should_trigger}}",
            InvalidParamsData(field="paths"),
        )
    cases = []
    for n, case in enumerate(data[:_MAX_CASES]):
        query = case.get("query") if isinstance(case, dict) else None
        should = case.get("should_trigger") if isinstance(case, dict) else None
        if not isinstance(query, str) or not query.strip() or not isinstance(should, bool):
            raise SkillsdError(
                f"{path}: entry {n} needs a non-empty `query` and a boolean `should_trigger`",
                InvalidParamsData(field="paths"),
            )
        if len(query) > MAX_QUERY_CHARS:
            # As skills.suggest refuses it: ranking a query costs memory in its length.
            raise SkillsdError(
                f"{path}: entry {n}: `query` is longer than {MAX_QUERY_CHARS} characters",
                InvalidParamsData(field="paths"),
            )
        cases.append((query, should))
    return cases


async def _evaluate(
    svc: Services,
    caller: use_cases.Caller,
    skill: SkillMetadata,
    cases: list[tuple[str, bool]],
) -> tuple[SkillEval, float]:
    true_pos = false_pos = false_neg = offered = 0
    misfires = []
    for query, should in cases:
        params = SuggestParams(prompt=query, limit=50)
        # The skill's own queries are evidence for the ranking: left out while they are the
        # test, or every one of them would find itself.
        result = await use_cases.suggest(svc, params, caller, blind_to=skill.id)
        mine = next((s for s in result.suggestions if s.skill.id == skill.id), None)
        fired = mine is not None and mine.activate
        if should and mine is not None and (mine.activate or mine.candidate):
            offered += 1
        if fired and should:
            true_pos += 1
            continue
        if not fired and not should:
            continue
        if fired:
            false_pos += 1
        else:
            false_neg += 1
        others = [s for s in result.suggestions if s.skill.id != skill.id]
        winner = others[0].skill.name if others and (not should or others[0].activate) else None
        misfires.append(
            Misfire(
                query=query,
                should_trigger=should,
                score=mine.score if mine is not None else 0.0,
                winner=winner,
            )
        )
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    candidate_recall = offered / (true_pos + false_neg) if true_pos + false_neg else 1.0
    evaluated = SkillEval(
        name=skill.name,
        path=skill.path,
        cases=len(cases),
        precision=round(precision, 4),
        recall=round(recall, 4),
        candidate_recall=round(candidate_recall, 4),
        misfires=misfires,
        passed=True,
    )
    return evaluated, min(precision, recall)


@failing
def _eval(args: argparse.Namespace) -> int:
    wanted = [os.path.realpath(p) for p in args.paths]

    async def body(svc: Services, caller: use_cases.Caller) -> list[SkillEval]:
        # Every query is one `skills.suggest` over the same catalog (the index without the
        # skill's own queries built once per skill).
        results: list[SkillEval] = []
        skills = (await view_of(svc, caller)).catalog.skills
        if wanted:
            real = await asyncio.to_thread(lambda: [os.path.realpath(s.dir) for s in skills])
            skills = [s for s, folder in zip(skills, real, strict=True) if folder in wanted]
        for skill in skills:
            cases = _cases(skill)
            if cases is None:
                continue
            evaluated, worst = await _evaluate(svc, caller, skill, cases)
            evaluated.passed = worst >= args.min
            results.append(evaluated)
        return results

    results = run_in_process(args, body)
    if args.json:
        emit_json(results)
    elif not results:
        print(f"no skill here has {TRIGGERS_FILE}")
    for r in [] if args.json else results:
        verdict = "ok" if r.passed else "FAILED"
        print(
            f"{one_line(r.name)}: precision {r.precision:.2f}, recall {r.recall:.2f} "
            f"(with candidates {r.candidate_recall:.2f}) over {r.cases} queries: {verdict}"
        )
        for m in r.misfires:
            what = "did not trigger" if m.should_trigger else "triggered by mistake"
            instead = f"; {one_line(m.winner)} won" if m.winner else ""
            print(f"  {what} ({format_score(m.score)}{instead}): {one_line(m.query, 80)}")
    return 0 if all(r.passed for r in results) else 1
