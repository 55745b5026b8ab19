"""Run files: the replay/record format ``{case_id, model, output, answer?, citations?, retrieved?, contexts?, suite?}``.

A line without ``suite`` applies to any suite with that case id. So that a file recorded for one
suite is never scored against another whose case ids happen to match, :func:`match_problem` checks
that such lines fit the suite: most of their case ids exist in it, and their recorded citations and
retrieved ids name passages of those cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import id_problem
from .jsonl import iter_jsonl
from .model import Suite
from .problems import Problems

RUN_KEYS = ("case_id", "model", "output", "answer", "citations", "retrieved", "contexts", "suite", "usage",
            "truncated")
MAX_SHOWN = 5


@dataclass(frozen=True, slots=True)
class RunLine:
    """One validated line of a run file (``models.replay`` turns it into an ``Answer``)."""

    line: int
    suite: str | None
    case_id: str
    model: str
    output: str
    answer: str | None = None
    citations: tuple[str, ...] | None = None
    retrieved: tuple[str, ...] | None = None
    contexts: tuple[str, ...] | None = None
    truncated: bool = False


def _str_list(obj: dict[str, Any], key: str, where: str, problems: Problems) -> tuple[str, ...] | None:
    val = obj.get(key)
    if val is None:
        return None
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        problems.add(where, f"field '{key}': found {val!r:.80}, expected a list of strings")
        return None
    return tuple(val)


def read_run_lines(path: Path, problems: Problems, default_model: str | None = None) -> list[RunLine]:
    """Parse a run file; every problem is recorded as ``path:line: ...``."""
    from ..errors import did_you_mean

    out: list[RunLine] = []
    seen: dict[tuple[str | None, str, str], int] = {}
    for lineno, obj in iter_jsonl(path, problems):
        where = f"{path}:{lineno}"
        unknown = [k for k in obj if k not in RUN_KEYS]
        if unknown:
            hint = did_you_mean(unknown[0], RUN_KEYS)
            problems.add(where, f"unknown keys {unknown}; expected only {sorted(RUN_KEYS)}.{hint}".rstrip("."))
            continue
        case_id = obj.get("case_id")
        output = obj.get("output")
        model = obj.get("model", default_model or path.stem)
        if not isinstance(case_id, str) or not case_id:
            problems.add(where, f"field 'case_id': found {case_id!r:.60}, expected the id of a suite case")
            continue
        if (err := id_problem(case_id)) is not None:
            problems.add(where, f"field 'case_id': {err}")
            continue
        if not isinstance(output, str):
            problems.add(where, f"field 'output': found {output!r:.60}, expected the raw model text (a string)")
            continue
        if not isinstance(model, str) or not model or id_problem(model, what="model names") is not None:
            problems.add(where, f"field 'model': found {model!r:.60}, expected a model name")
            continue
        answer = obj.get("answer")
        if answer is not None and not isinstance(answer, str):
            problems.add(where, f"field 'answer': found {answer!r:.60}, expected a string")
            continue
        suite = obj.get("suite")
        if suite is not None and not isinstance(suite, str):
            problems.add(where, f"field 'suite': found {suite!r:.60}, expected the suite name")
            continue
        key = (suite, case_id, model)
        if key in seen:
            problems.add(where, f"duplicate answer of model {model!r} for case {case_id!r} (first at line "
                         f"{seen[key]}); keep one line per case and model")
            continue
        seen[key] = lineno
        n_before = problems.count
        truncated = obj.get("truncated", False)
        if not isinstance(truncated, bool):
            problems.add(where, f"field 'truncated': found {truncated!r:.40}, expected true or false")
        line = RunLine(lineno, suite, case_id, model, output, answer,
                       citations=_str_list(obj, "citations", where, problems),
                       retrieved=_str_list(obj, "retrieved", where, problems),
                       contexts=_str_list(obj, "contexts", where, problems), truncated=truncated is True)
        if problems.count == n_before:
            out.append(line)
    return out


def load_run_lines(path: Path, default_model: str | None = None) -> list[RunLine]:
    """Parse a run file; raises SuiteError listing every problem (``path:line: ...``)."""
    problems = Problems()
    lines = read_run_lines(path, problems, default_model)
    problems.raise_if_any()
    return lines


def match_problem(lines: Sequence[RunLine], suite: Suite) -> tuple[int, str] | None:
    """Why the lines of a run file without a ``suite`` field do not belong to ``suite``, or None.

    Returns ``(line, message)``: the first line that does not fit and the reason.

    They do not when more than half of them name case ids the suite does not have, or when more than
    half of those that record citations (or retrieved ids) name no passage of their case: the case
    ids match but the cases are another suite's.
    """
    loose = [r for r in lines if r.suite is None]
    if not loose or any(r.suite == suite.name for r in lines):
        return None
    by_id = {c.id: c for c in suite.cases}
    unknown = [r for r in loose if r.case_id not in by_id]
    fix = (f"the file has no 'suite' field, so it was probably recorded for another suite; add \"suite\": "
           f"\"{suite.name}\" to the lines recorded for this suite, or use a run file of this suite")
    if len(unknown) * 2 > len(loose):
        shown = ", ".join(repr(r.case_id) for r in unknown[:MAX_SHOWN])
        return unknown[0].line, (f"{len(unknown)} of {len(loose)} lines name cases that suite {suite.name!r} does "
                                 f"not have (e.g. {shown}); {fix}")
    corpus = {p.id for p in suite.corpus} if suite.corpus else set()
    recorded = 0
    foreign: list[RunLine] = []
    for r in loose:
        case = by_id.get(r.case_id)
        ids = [*(r.citations or ()), *(r.retrieved or ())]
        if case is None or not ids:
            continue
        recorded += 1
        known = {p.id for p in case.passages}
        if not any(i in known or i in corpus for i in ids):
            foreign.append(r)
    if foreign and len(foreign) * 2 > recorded:
        first = foreign[0]
        return first.line, (f"{len(foreign)} of {recorded} lines cite or retrieve only passages their case does not "
                            f"have in suite {suite.name!r} (e.g. case {first.case_id!r}); {fix}")
    return None


def write_run_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    """Write (or overwrite) a run file with one JSON object per line, sorted for stable diffs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = sorted(lines, key=lambda x: (x.get("suite", ""), x["model"], x["case_id"]))
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
