"""How results travel from the process that computed them to the one that reports them.

* **Case results** go on the item's *call* report (its *setup* report when setup failed) as one
  ``user_properties`` entry ``(RESULTS_PROPERTY, [CaseResult.to_json(), ...])``: JSON types only,
  which pytest-xdist serializes with the report and re-fires on the controller's
  ``pytest_runtest_logreport``. JUnit XML reads properties from teardown reports only, so the
  entry does not reach ``--junitxml`` (whose readable ``mirage.*`` properties are on the teardown
  report, see :mod:`.junit`).
* **Per-worker totals** (engine counters, judge health) go through ``config.workeroutput`` under
  :data:`ENGINE_STATS_KEY` and :data:`JUDGE_HEALTH_KEY` and are merged by the controller when the
  worker goes down; so do the refs of the suites it collected (:data:`SUITES_KEY`), which a
  ``--mirage-shard`` controller stamps in its partial report.

The entry carries a version: a controller that meets another version says so instead of guessing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import MirageError
from ..results import CaseResult

RESULTS_PROPERTY = "pytest_mirage.results.v1"
ENGINE_STATS_KEY = "mirage_engine_stats"
JUDGE_HEALTH_KEY = "mirage_judge_health"
SUITES_KEY = "mirage_suites"  # the refs of the suites a worker registered (a shard stamps them all)


def attach_results(report: Any, results: Sequence[CaseResult]) -> None:
    """Put ``results`` on ``report`` (a new list: pytest's report lists are per report)."""
    report.user_properties = [*report.user_properties, (RESULTS_PROPERTY, [r.to_json() for r in results])]


def results_of(report: Any) -> list[CaseResult]:
    """The case results a report carries (none for reports of other tests)."""
    out: list[CaseResult] = []
    for name, value in getattr(report, "user_properties", ()) or ():
        if name == RESULTS_PROPERTY:
            rows = json.loads(value) if isinstance(value, str) else value
            out.extend(CaseResult.from_json(row) for row in rows)
        elif isinstance(name, str) and name.startswith("pytest_mirage.results."):
            raise MirageError(f"{getattr(report, 'nodeid', '?')}: results in wire format {name!r}; this "
                              f"pytest-mirage reads {RESULTS_PROPERTY!r}: run the workers and the controller "
                              "with the same pytest-mirage version")
    return out


def write_worker_output(config: Any, engine_stats: dict[str, Any], judge_health: dict[str, Any]) -> None:
    config.workeroutput[ENGINE_STATS_KEY] = engine_stats
    config.workeroutput[JUDGE_HEALTH_KEY] = judge_health


def read_worker_output(node: Any) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(engine counters, judge health by judge) a finished worker sent (empty when it sent none)."""
    output = getattr(node, "workeroutput", None) or {}
    return dict(output.get(ENGINE_STATS_KEY) or {}), dict(output.get(JUDGE_HEALTH_KEY) or {})


def write_worker_suites(config: Any, refs: Sequence[str]) -> None:
    config.workeroutput[SUITES_KEY] = list(refs)


def read_worker_suites(node: Any) -> list[str]:
    """The refs of the suites a finished worker collected (empty when it sent none)."""
    output = getattr(node, "workeroutput", None) or {}
    return [str(x) for x in output.get(SUITES_KEY) or ()]
