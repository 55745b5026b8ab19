"""Suite self-check: can this suite tell a good system from a broken one?

Runs the control systems (and the extractive baseline) on every case and checks that
``control:oracle`` ranks first on the default score and is not beaten on any score metric, and that
each broken control ranks last on the metric it breaks. A failure usually means a suite bug: reference
answers in the wrong language, relevant ids that do not match the answers, passages in another
language, ...
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..evaluate.answering import answer_cases
from ..evaluate.case import evaluate
from ..metrics.base import MetricRegistry, builtin_registry
from ..models.registry import ModelRegistry, parse_model_spec
from ..report.leaderboard import SCORE_METRICS, LeaderboardRow, build_leaderboard
from ..results import CaseResult
from ..suites.model import Suite

SYSTEMS = ("control:oracle", "control:wrong-language", "control:no-citations", "control:random-passages",
           "extractive")
# broken control -> the metrics it must be last on
BROKEN: dict[str, tuple[str, ...]] = {
    "control:wrong-language": ("language_match",),
    "control:no-citations": ("citation_recall", "citation_map"),
    "control:random-passages": ("citation_recall",),
}
TOLERANCE = 0.02  # the oracle may trail another system by this much on a metric
# language ID of short, reworded reference answers is noisier than of copied passage text
TOLERANCES = {"language_match": 0.05}
# lexical support rewards copying passage text word for word: a correct reworded reference answer
# legitimately scores below a system that copies passages, so it is not an "oracle must win" metric
NOT_ORACLE_METRICS = frozenset({"support_lexical", "support_lexical_uncited", "faithfulness"})


@dataclass
class SelfCheck:
    suite: str
    board: list[LeaderboardRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def run_systems(suite: Suite, registry: MetricRegistry | None = None,
                systems: tuple[str, ...] = SYSTEMS) -> list[CaseResult]:
    registry = registry or builtin_registry()
    models = ModelRegistry()
    names = [m for m in registry.defaults() if m in registry]
    out: list[CaseResult] = []
    for raw in systems:
        ad = models.create(parse_model_spec(raw))
        for req, ans in answer_cases(ad, suite, suite.cases):
            if isinstance(ans, BaseException):
                raise ans
            out.append(evaluate(req, ans.with_model(raw), registry, names, (), suite_ref=suite.name,
                                reference=True))
    return out


def self_check(suite: Suite, registry: MetricRegistry | None = None, per_language: bool = True) -> SelfCheck:
    results = run_systems(suite, registry)
    board = build_leaderboard(results, SYSTEMS)
    check = SelfCheck(suite.name, board)
    groups: dict[str, list[LeaderboardRow]] = defaultdict(list)
    for row in board:
        if per_language or row.lang == "all":
            groups[row.lang].append(row)
    for lang, rows in sorted(groups.items()):
        by = {r.model: r for r in rows}
        oracle = by["control:oracle"]
        if oracle.rank != 1:
            top = min(rows, key=lambda r: r.rank)
            check.problems.append(f"[{lang}] control:oracle ranks {oracle.rank} on the default score "
                                  f"({_f(oracle.score)}), below {top.model} ({_f(top.score)})")
        for metric in SCORE_METRICS:
            ov = oracle.metrics.get(metric)
            if ov is None or metric in NOT_ORACLE_METRICS:
                continue
            tol = TOLERANCES.get(metric, TOLERANCE)
            for r in rows:
                v = r.metrics.get(metric)
                if r.model != "control:oracle" and v is not None and v > ov + tol:
                    check.problems.append(f"[{lang}] control:oracle {metric} {ov:.3f} < {r.model} {v:.3f}: "
                                          "check the reference answers and relevant ids of this language")
        for control, metrics in BROKEN.items():
            for metric in metrics:
                cv = by[control].metrics.get(metric)
                if cv is None:
                    continue
                others = [r.metrics.get(metric) for r in rows if r.model != control]
                lowest = min((v for v in others if v is not None), default=None)
                if lowest is not None and cv > lowest + 1e-9:
                    check.problems.append(f"[{lang}] {control} is not last on {metric} ({cv:.3f} > {lowest:.3f}): "
                                          "the suite cannot detect this failure")
    return check


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"
