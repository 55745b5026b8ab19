"""The versioned JSON report (``pytest-mirage/report/1``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..harness import CaseResult
from .aggregate import GateResult, LeaderboardRow

SCHEMA = "pytest-mirage/report/1"


def build_report(models: Sequence[str], suites: Sequence[Mapping[str, Any]], results: Iterable[CaseResult],
                 board: Iterable[LeaderboardRow], gates: Iterable[GateResult],
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report as a dict. Deterministic: sorted, no timestamps (equal with and without xdist)."""
    res = sorted(results, key=lambda r: (r.suite, r.lang, r.case_id, r.model))
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "version": __version__,
        "models": list(models),
        "suites": list(suites),
        "results": [{k: v for k, v in r.to_json().items() if k not in ("run_line", "suite_ref")} for r in res],
        "leaderboard": [row.to_json() for row in board],
        "gates": [g.to_json() for g in gates],
    }
    report.update(extra or {})
    return report


def write_report(path: Path, report: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2, sort_keys=False) + "\n", encoding="utf-8")
