"""The numbers behind the HTML report's plots, computed once from a :class:`~.model.RunReport`.

* **Heatmap** (model x language, one per suite and metric): the leaderboard's means and default
  score; the ``all`` column is the suite-level row.
* **Per-language bars with intervals**: the mean of each headline metric per suite x language x
  model with a 95% percentile bootstrap interval over cases
  (:func:`~pytest_mirage.stats.intervals.bootstrap_mean_cis`: 1,000 resamples, seed 0, the same
  numbers as a ``ci_low``/``ci_high`` gate on the same cases), from the report's per-case results.
  Cases whose model failed (errors) and null values are left out, as in the leaderboard.
* **Bradley-Terry strengths**: the arena rows as they are (bootstrap mean and 95% interval over
  tournaments, computed by the arena step).
* **Distributions**: per suite and metric, the per-case values in 10 equal bins, counted per
  language x model so that the page can add up the counts of what the filters leave visible.
  Metrics whose values lie in [0, 1] use the bins [0, 0.1), ..., [0.9, 1]; others span their
  observed range.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .format import HEADLINE_METRICS
from .model import ArenaRow, RunReport

BINS = 10
N_BOOT = 1000
SEED = 0
SCORE = "score"


@dataclass(frozen=True, slots=True)
class Mean:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


@dataclass(frozen=True, slots=True)
class Histogram:
    lo: float
    hi: float
    counts: dict[str, dict[str, list[int]]]  # model -> lang -> counts per bin

    def edges(self) -> list[float]:
        return [self.lo + (self.hi - self.lo) * i / BINS for i in range(BINS + 1)]


@dataclass(frozen=True, slots=True)
class SuiteFigures:
    suite: str
    models: tuple[str, ...]  # in the order of the suite-level ranking
    references: frozenset[str]
    langs: tuple[str, ...]  # the suite's languages, sorted ("all" not included)
    heat_metrics: tuple[str, ...]  # "score", then the headline metrics with a value
    heat: dict[str, dict[tuple[str, str], float | None]]  # metric -> (model, lang incl. "all") -> mean
    bar_metrics: tuple[str, ...]
    bars: dict[str, dict[tuple[str, str], Mean]]  # metric -> (model, lang incl. "all") -> mean and CI
    arena: dict[str, tuple[ArenaRow, ...]]  # lang ("all" first) -> rows in rank order
    hist_metrics: tuple[str, ...]
    hists: dict[str, Histogram]
    colours: dict[str, int]  # model -> palette index, the same in every suite of the report

    def colour(self, model: str) -> int:
        return self.colours.get(model, 0)


@dataclass(frozen=True, slots=True)
class Figures:
    suites: tuple[SuiteFigures, ...]
    lower_is_better: frozenset[str]

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for s in self.suites for m in s.models))

    @property
    def langs(self) -> tuple[str, ...]:
        return tuple(sorted({la for s in self.suites for la in s.langs}))

    @property
    def references(self) -> frozenset[str]:
        return frozenset().union(*(s.references for s in self.suites)) if self.suites else frozenset()


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def _histogram(values: dict[tuple[str, str], list[float]]) -> Histogram:
    flat = [v for vs in values.values() for v in vs]
    lo, hi = min(flat), max(flat)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    elif hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for (model, lang), vs in values.items():
        c = [0] * BINS
        for v in vs:
            c[min(BINS - 1, max(0, int((v - lo) / (hi - lo) * BINS)))] += 1
        counts[model][lang] = c
    return Histogram(lo, hi, dict(counts))


def _ordered(present: set[str], first: Sequence[str]) -> tuple[str, ...]:
    return tuple(m for m in dict.fromkeys([*first, *sorted(present)]) if m in present)


def build_figures(report: RunReport, *, n_boot: int = N_BOOT, seed: int = SEED) -> Figures:
    """Every plot's numbers (see the module doc)."""
    from ..stats.intervals import bootstrap_mean_cis

    suite_order = list(dict.fromkeys([s.name for s in report.suites]
                                     + sorted({r.suite for r in report.leaderboard}
                                              | {r.suite for r in report.results})))
    refs = report.reference_models
    colours: dict[str, int] = {}  # filled below, shared by every suite
    # per-case values: (suite, lang, model, metric) -> values
    values: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for r in report.results:
        if r.outcome == "error":
            continue
        for k, v in r.metrics.items():
            if _finite(v):
                values[(r.suite, r.lang, r.model, k)].append(float(v))  # type: ignore[arg-type]
                values[(r.suite, "all", r.model, k)].append(float(v))  # type: ignore[arg-type]
    bar_keys = {k: vs for k, vs in values.items() if k[3] in HEADLINE_METRICS}
    cis = bootstrap_mean_cis(bar_keys, n_boot=n_boot, seed=seed) if bar_keys else {}
    out = []
    for suite in suite_order:
        rows = [r for r in report.leaderboard if r.suite == suite]
        ranked = sorted((r for r in rows if r.lang == "all"), key=lambda r: (r.rank, r.model))
        models_present = {r.model for r in rows} | {r.model for r in report.results if r.suite == suite}
        models = _ordered(models_present, [r.model for r in ranked])
        langs = tuple(sorted(({r.lang for r in rows} | {r.lang for r in report.results if r.suite == suite})
                             - {"all"}))
        if not models:
            continue
        heat: dict[str, dict[tuple[str, str], float | None]] = defaultdict(dict)
        for row in rows:
            heat[SCORE][(row.model, row.lang)] = row.score
            for k, v in row.metrics.items():
                if k in HEADLINE_METRICS:
                    heat[k][(row.model, row.lang)] = v if v is None or math.isfinite(v) else None
        heat_metrics = tuple(m for m in (SCORE, *HEADLINE_METRICS)
                             if m in heat and any(_finite(v) for v in heat[m].values()))
        bars: dict[str, dict[tuple[str, str], Mean]] = defaultdict(dict)
        for (su, lang, model, metric), ci in cis.items():
            if su == suite:
                bars[metric][(model, lang)] = Mean(ci.estimate, ci.low, ci.high, ci.n)
        bar_metrics = tuple(m for m in HEADLINE_METRICS if m in bars)
        arena: dict[str, list[ArenaRow]] = defaultdict(list)
        for a in report.arena:
            if a.suite == suite:
                arena[a.lang].append(a)
        arena_sorted = {la: tuple(sorted(arena[la], key=lambda a: (a.rank, a.model)))
                        for la in (["all"] if "all" in arena else []) + sorted(set(arena) - {"all"})}
        per_metric: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(dict)
        for (su, lang, model, metric), vs in values.items():
            if su == suite and lang != "all":
                per_metric[metric][(model, lang)] = vs
        hist_metrics = tuple(m for m in (*HEADLINE_METRICS, *sorted(per_metric)) if m in per_metric)
        hist_metrics = tuple(dict.fromkeys(hist_metrics))
        hists = {m: _histogram(per_metric[m]) for m in hist_metrics}
        out.append(SuiteFigures(suite, models, frozenset(refs.get(suite, set())), langs, heat_metrics, dict(heat),
                                bar_metrics, dict(bars), arena_sorted, hist_metrics, hists, colours))
    # models under test first (in the order of the run), then the reference systems
    for m in [*report.models, *(m for f in out for m in f.models)]:
        colours.setdefault(m, len(colours))
    lower = frozenset(k for k, m in report.metric_info.items() if not m.higher_is_better)
    return Figures(tuple(out), lower)
