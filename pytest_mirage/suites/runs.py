"""Run files: the replay/record format ``{case_id, model, output, answer?, citations?, retrieved?, contexts?}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..models.base import Answer
from .loader import _Problems, iter_jsonl

RUN_KEYS = {"case_id", "model", "output", "answer", "citations", "retrieved", "contexts", "suite", "usage"}


def _str_list(obj: dict[str, Any], key: str, where: str, problems: _Problems) -> tuple[str, ...] | None:
    val = obj.get(key)
    if val is None:
        return None
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        problems.add(where, f"field '{key}': found {val!r:.80}, expected a list of strings")
        return None
    return tuple(val)


def load_run_file(path: Path, default_model: str | None = None) -> list[tuple[str | None, Answer]]:
    """Parse a run file into ``(suite or None, Answer)`` pairs; raises SuiteError naming file:line."""
    problems = _Problems()
    out: list[tuple[str | None, Answer]] = []
    seen: dict[tuple[str | None, str, str], int] = {}
    for lineno, obj in iter_jsonl(path, problems):
        where = f"{path}:{lineno}"
        unknown = set(obj) - RUN_KEYS
        if unknown:
            problems.add(where, f"unknown keys {sorted(unknown)}; expected only {sorted(RUN_KEYS)}")
            continue
        case_id = obj.get("case_id")
        output = obj.get("output")
        model = obj.get("model", default_model or path.stem)
        if not isinstance(case_id, str) or not case_id:
            problems.add(where, f"field 'case_id': found {case_id!r}, expected the id of a suite case")
            continue
        if not isinstance(output, str):
            problems.add(where, f"field 'output': found {output!r:.60}, expected the raw model text (a string)")
            continue
        if not isinstance(model, str) or not model:
            problems.add(where, f"field 'model': found {model!r}, expected a model name")
            continue
        answer = obj.get("answer")
        if answer is not None and not isinstance(answer, str):
            problems.add(where, f"field 'answer': found {answer!r:.60}, expected a string")
            continue
        suite = obj.get("suite")
        key = (suite if isinstance(suite, str) else None, case_id, model)
        if key in seen:
            problems.add(where, f"duplicate answer of model {model!r} for case {case_id!r} (first at line "
                         f"{seen[key]}); keep one line per case and model")
            continue
        seen[key] = lineno
        out.append((suite if isinstance(suite, str) else None, Answer(
            case_id=case_id, model=model, output=output, answer=answer,
            citations=_str_list(obj, "citations", where, problems),
            retrieved=_str_list(obj, "retrieved", where, problems),
            contexts=_str_list(obj, "contexts", where, problems))))
    if problems.count:
        problems.raise_if_any(path)
    return out


def write_run_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    """Write (or overwrite) a run file with one JSON object per line, sorted for stable diffs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = sorted(lines, key=lambda x: (x.get("suite", ""), x["model"], x["case_id"]))
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
