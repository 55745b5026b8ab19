"""Paired comparison of a candidate run with a baseline run, case by case.

Both runs answer the same cases, so the per-case difference ``d_i = candidate_i - baseline_i``
removes the case-difficulty variance that dominates a RAG metric: a paired test needs far fewer
cases than comparing two means. Per suite x language x model x metric this module reports the mean
difference, a seeded paired-bootstrap interval and a paired test p-value; cases present in only
one run are listed, never silently dropped.

The paired test is Student's one-sample t-test on the differences (the default) or a sign-flip
permutation test; see docs/statistics.md for why t is the default.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..defaults import TEST_METHODS
from ..errors import did_you_mean
from ._common import (
    DEFAULT_ALPHA,
    DEFAULT_BOOT,
    StatsError,
    check_alpha,
    check_alternative,
    check_count,
    vector,
)
from .intervals import bootstrap_mean_cis
from .power import DEFAULT_POWER, minimum_detectable_effect
from .records import CaseRecord, to_record

TestMethod = Literal["t", "sign_flip"]
DEFAULT_PERMUTATIONS = 9999
# up to this many pairs the sign-flip test enumerates all 2^n sign patterns (exact p-value)
EXACT_SIGN_FLIP_MAX = 16
ALL_LANGS = "all"


@dataclass(frozen=True, slots=True)
class TestResult:
    """A paired test of ``mean(d) = null`` against ``alternative``.

    ``p_value`` is NaN when the test cannot be computed (fewer than 2 pairs); ``note`` says why.
    """

    statistic: float
    p_value: float
    n: int
    method: str
    alternative: str
    null: float
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"statistic": None if math.isnan(self.statistic) else self.statistic,
                "p_value": None if math.isnan(self.p_value) else self.p_value, "n": self.n,
                "method": self.method, "alternative": self.alternative, "null": self.null,
                "note": self.note or None}


def paired_test(differences: ArrayLike, *, null: float = 0.0, alternative: str = "two-sided",
                method: str = "t", n_perm: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> TestResult:
    """Test whether the mean per-case difference equals ``null``.

    ``alternative="less"``: the true mean difference is below ``null`` (what a regression gate
    asks with ``null = -allowed_drop``). ``method="t"``: one-sample t-test on ``d - null``
    (df = n - 1). ``method="sign_flip"``: permutation test that flips the signs of ``d - null``
    (exact for n <= 16, else ``n_perm`` seeded random flips with the +1 correction
    ``p = (1 + #{T* as extreme}) / (n_perm + 1)``); valid when the differences are symmetric around
    their mean. When every difference is equal the t statistic is undefined; the p-value is then 0
    or 1 (the data leave no doubt on which side of ``null`` the mean lies).
    """
    d = vector(differences, "differences")
    alt = check_alternative(alternative)
    if method not in TEST_METHODS:
        raise StatsError(f"method={method!r}; expected one of {list(TEST_METHODS)}")
    nul = float(null)
    if not math.isfinite(nul):
        raise StatsError(f"null={null!r}; expected a finite number")
    n = int(d.size)
    if n < 2:
        return TestResult(math.nan, math.nan, n, method, alt, nul,
                          f"{n} paired case{'s' * (n != 1)}: a paired test needs at least 2")
    c = d - nul
    mean = float(c.mean())
    sd = float(c.std(ddof=1))
    scale = max(1.0, float(np.abs(c).max()))
    if sd <= 1e-12 * scale:
        return TestResult(math.copysign(math.inf, mean) if mean else 0.0, _degenerate_p(mean, alt, scale),
                          n, method, alt, nul, "every difference is equal")
    if method == "t":
        from scipy.special import stdtr  # type: ignore[import-untyped]

        t = mean / (sd / math.sqrt(n))
        df = n - 1
        if alt == "less":
            p = float(stdtr(df, t))
        elif alt == "greater":
            p = float(stdtr(df, -t))
        else:
            p = min(1.0, 2.0 * float(stdtr(df, -abs(t))))
        return TestResult(t, p, n, "t", alt, nul)
    return _sign_flip(c, alt, nul, check_count(n_perm, "n_perm"), seed)


def _degenerate_p(mean: float, alt: str, scale: float) -> float:
    if abs(mean) <= 1e-12 * scale:
        return 1.0
    if alt == "two-sided":
        return 0.0
    return 0.0 if (mean < 0) == (alt == "less") else 1.0


def _sign_flip(c: NDArray[np.float64], alt: str, nul: float, n_perm: int, seed: int) -> TestResult:
    n = c.size
    observed = float(c.sum())
    tol = 1e-9 * max(1.0, float(np.abs(c).sum()))

    def extreme(t: NDArray[np.float64]) -> int:
        if alt == "less":
            return int(np.count_nonzero(t <= observed + tol))
        if alt == "greater":
            return int(np.count_nonzero(t >= observed - tol))
        return int(np.count_nonzero(np.abs(t) >= abs(observed) - tol))

    if n <= EXACT_SIGN_FLIP_MAX:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        hits = extreme(signs @ c)
        return TestResult(observed / n, hits / signs.shape[0], n, "sign_flip", alt, nul,
                          f"exact over {signs.shape[0]} sign patterns")
    rng = np.random.default_rng(seed)
    hits = 0
    rows = max(1, 2_000_000 // n)
    for start in range(0, n_perm, rows):
        k = min(rows, n_perm - start)
        signs = rng.integers(0, 2, size=(k, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += extreme(signs @ c)
    return TestResult(observed / n, (1 + hits) / (n_perm + 1), n, "sign_flip", alt, nul,
                      f"{n_perm} random sign flips (seeded)")


# ---------------------------------------------------------------- run comparison


@dataclass(frozen=True, slots=True, eq=False)
class ComparisonRow:
    """The paired comparison of one suite x language x model x metric statistic.

    ``stat`` is ``mean`` (metric values) or ``pass_rate`` (per-case threshold checks as 0/1).
    ``delta = candidate_mean - baseline_mean`` over the ``n`` paired cases, with the seeded
    paired-bootstrap interval ``ci_low..ci_high`` and the two-sided paired-test ``p_value`` of
    ``delta = 0``. ``mde``: the smallest true change this many pairs detect (two-sided ``alpha``,
    80% power, observed spread of the differences). ``unpaired``: cases in both runs without a
    value on one side (null, or the case errored), left out of the pairs.
    """

    suite: str
    lang: str
    model: str
    baseline_model: str
    metric: str
    stat: str
    n: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    alpha: float
    sd_diff: float
    mde: float
    unpaired: int
    test: TestResult
    diffs: NDArray[np.float64] = field(repr=False)

    @property
    def significant(self) -> bool:
        """The change is significant at ``alpha`` (unadjusted; for marking the leaderboard)."""
        return not math.isnan(self.p_value) and self.p_value <= self.alpha

    def to_json(self) -> dict[str, Any]:
        def f(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {"suite": self.suite, "lang": self.lang, "model": self.model,
                "baseline_model": self.baseline_model, "metric": self.metric, "stat": self.stat,
                "n": self.n, "baseline": f(self.baseline_mean), "candidate": f(self.candidate_mean),
                "delta": f(self.delta), "ci_low": f(self.ci_low), "ci_high": f(self.ci_high),
                "p_value": f(self.p_value), "significant": self.significant, "test": self.test.method,
                "sd_diff": f(self.sd_diff), "mde": f(self.mde), "unpaired": self.unpaired}


@dataclass(frozen=True, slots=True)
class CaseChange:
    """A case present in only one run, or whose language differs between the runs."""

    suite: str
    model: str
    case_id: str
    lang: str
    change: str  # "added" | "removed" | "language changed"

    def to_json(self) -> dict[str, str]:
        return {"suite": self.suite, "model": self.model, "case_id": self.case_id, "lang": self.lang,
                "change": self.change}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Everything :func:`compare_runs` found. ``model_map`` maps candidate -> baseline names."""

    rows: tuple[ComparisonRow, ...]
    changes: tuple[CaseChange, ...]
    models_only_in_baseline: tuple[str, ...]
    models_only_in_candidate: tuple[str, ...]
    model_map: Mapping[str, str]
    alpha: float
    seed: int
    n_boot: int
    method: str

    @property
    def added(self) -> tuple[CaseChange, ...]:
        return tuple(c for c in self.changes if c.change == "added")

    @property
    def removed(self) -> tuple[CaseChange, ...]:
        return tuple(c for c in self.changes if c.change == "removed")

    def row(self, suite: str, lang: str, model: str, metric: str, stat: str = "mean") -> ComparisonRow | None:
        for r in self.rows:
            if (r.suite, r.lang, r.model, r.metric, r.stat) == (suite, lang, model, metric, stat):
                return r
        return None

    def to_json(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "seed": self.seed, "n_boot": self.n_boot, "test": self.method,
                "model_map": dict(self.model_map), "rows": [r.to_json() for r in self.rows],
                "changes": [c.to_json() for c in self.changes],
                "models_only_in_baseline": list(self.models_only_in_baseline),
                "models_only_in_candidate": list(self.models_only_in_candidate)}


@dataclass
class _Case:
    lang: str
    values: dict[str, list[float]] = field(default_factory=dict)
    checks: dict[str, list[float]] = field(default_factory=dict)
    samples: int = 0


def _collect(records: Iterable[Any], side: str, rename: Mapping[str, str]) -> dict[tuple[str, str, str], _Case]:
    """Per (suite, model, case_id): the non-null values of every sample (repeats pooled)."""
    out: dict[tuple[str, str, str], _Case] = {}
    for i, raw in enumerate(records):
        r: CaseRecord = to_record(raw, f"{side} results", i)
        model = rename.get(r.model, r.model)
        key = (r.suite, model, r.case_id)
        case = out.get(key)
        if case is None:
            case = out[key] = _Case(r.lang)
        elif case.lang != r.lang:
            raise StatsError(f"{side} results[{i}]: case {r.case_id!r} of suite {r.suite!r} (model {r.model!r}) "
                             f"has language {r.lang!r} here and {case.lang!r} in an earlier entry")
        case.samples += 1
        if r.errored:
            continue
        for name, v in r.metrics.items():
            if v is not None:
                case.values.setdefault(name, []).append(v)
        for name, ok in r.checks.items():
            case.checks.setdefault(name, []).append(1.0 if ok else 0.0)
    return out


def _mean(values: list[float]) -> float:
    return values[0] if len(values) == 1 else math.fsum(values) / len(values)


def _models(records: Sequence[Any]) -> set[str]:
    out = set()
    for r in records:
        m = r.get("model") if isinstance(r, Mapping) else getattr(r, "model", None)
        if isinstance(m, str):
            out.add(m)
    return out


def compare_runs(baseline: Iterable[Any], candidate: Iterable[Any], *,
                 model_map: Mapping[str, str] | None = None, metrics: Sequence[str] | None = None,
                 alpha: float = DEFAULT_ALPHA, n_boot: int = DEFAULT_BOOT, seed: int = 0,
                 method: str = "t", include_all: bool = True) -> Comparison:
    """Pair the cases of ``candidate`` with those of ``baseline`` and compare every metric.

    Records are the JSON report's ``results`` entries (or ``CaseResult`` objects); a case is
    identified by (suite, case_id, model). ``model_map`` renames candidate models to the baseline
    name they are compared with (``{"openai:gpt-4o-new": "openai:gpt-4o"}``: the candidate run's
    new model against production); unmapped models pair with the model of the same name. With
    repeated samples each case's value is the mean of its samples (the case is the unit).

    Rows: per suite x language (and ``"all"`` languages when ``include_all``) x model x metric,
    ``stat="mean"`` from metric values and ``stat="pass_rate"`` from threshold checks when both
    runs have them. ``metrics`` restricts the metrics (unknown names are an error). Intervals are
    percentile bootstraps of the mean difference (``n_boot`` resamples, ``seed``); p-values are
    two-sided paired tests (``method``) of no change.
    """
    a = check_alpha(alpha)
    b = check_count(n_boot, "n_boot")
    if method not in TEST_METHODS:
        raise StatsError(f"method={method!r}; expected one of {list(TEST_METHODS)}")
    base_rows = list(baseline)
    cand_rows = list(candidate)
    mapping = dict(model_map or {})
    cand_models = _models(cand_rows)
    for src, dst in mapping.items():
        if src not in cand_models:
            raise StatsError(f"model map {src!r} -> {dst!r}: the candidate run has no model {src!r}"
                             f"{did_you_mean(src, cand_models)}; candidate models: {sorted(cand_models)}")
    targets: dict[str, list[str]] = defaultdict(list)
    for m in cand_models:
        targets[mapping.get(m, m)].append(m)
    clash = {t: sorted(ms) for t, ms in targets.items() if len(ms) > 1}
    if clash:
        raise StatsError(f"model map: several candidate models would be compared with the same baseline model: "
                         f"{clash}; map one candidate model to each baseline model")
    back = {mapping.get(m, m): m for m in cand_models}  # baseline name -> candidate name
    base = _collect(base_rows, "baseline", {})
    cand = _collect(cand_rows, "candidate", mapping)
    base_models = {k[1] for k in base}
    cand_targets = {k[1] for k in cand}
    common_models = base_models & cand_targets
    if metrics is not None:
        known = {n for c in (*base.values(), *cand.values()) for n in (*c.values, *c.checks)}
        for name in metrics:
            if name not in known:
                raise StatsError(f"metric {name!r} has no value in either run{did_you_mean(name, known)}; "
                                 f"metrics with values: {sorted(known)}")
    wanted = None if metrics is None else set(metrics)

    changes: list[CaseChange] = []
    diffs: dict[tuple[str, str, str, str, str], list[float]] = defaultdict(list)
    sides: dict[tuple[str, str, str, str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    unpaired: dict[tuple[str, str, str, str, str], int] = defaultdict(int)
    for key in sorted(set(base) | set(cand)):
        suite, model, case_id = key
        if model not in common_models:
            continue
        shown = back.get(model, model)
        bc, cc = base.get(key), cand.get(key)
        if bc is None or cc is None:
            present = cc if bc is None else bc
            assert present is not None
            changes.append(CaseChange(suite, shown, case_id, present.lang, "added" if bc is None else "removed"))
            continue
        if bc.lang != cc.lang:
            changes.append(CaseChange(suite, shown, case_id, f"{bc.lang}->{cc.lang}", "language changed"))
            continue
        langs = (bc.lang, ALL_LANGS) if include_all else (bc.lang,)
        for stat, bvals, cvals in (("mean", bc.values, cc.values), ("pass_rate", bc.checks, cc.checks)):
            for name in sorted(set(bvals) | set(cvals)):
                if wanted is not None and name not in wanted:
                    continue
                bv, cv = bvals.get(name), cvals.get(name)
                if not bv or not cv:
                    for lang in langs:
                        unpaired[(suite, lang, model, name, stat)] += 1
                    continue
                bm, cm = _mean(bv), _mean(cv)
                for lang in langs:
                    gk = (suite, lang, model, name, stat)
                    diffs[gk].append(cm - bm)
                    pair = sides[gk]
                    pair[0].append(bm)
                    pair[1].append(cm)
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in diffs.items()}
    cis = bootstrap_mean_cis(arrays, n_boot=b, seed=seed, alpha=a)
    rows: list[ComparisonRow] = []
    for gk in sorted(set(arrays) | set(unpaired)):
        suite, lang, model, name, stat = gk
        d = arrays.get(gk, np.empty(0))
        n = int(d.size)
        if n == 0:
            test = TestResult(math.nan, math.nan, 0, method, "two-sided", 0.0, "no paired case")
            rows.append(ComparisonRow(suite, lang, back.get(model, model), model, name, stat, 0, math.nan,
                                      math.nan, math.nan, math.nan, math.nan, math.nan, a, math.nan,
                                      math.nan, unpaired.get(gk, 0), test, d))
            continue
        test = paired_test(d, method=method, seed=seed)
        ci = cis[gk]
        sd = float(d.std(ddof=1)) if n > 1 else math.nan
        mde = (minimum_detectable_effect(n, sd, alpha=a, power=DEFAULT_POWER)
               if n > 1 and sd > 0 else math.nan)
        base_side, cand_side = sides[gk]
        rows.append(ComparisonRow(suite, lang, back.get(model, model), model, name, stat, n,
                                  float(np.mean(base_side)), float(np.mean(cand_side)), float(d.mean()), ci.low,
                                  ci.high, test.p_value, a, sd, mde, unpaired.get(gk, 0), test, d))
    rows.sort(key=lambda r: (r.suite, r.lang == ALL_LANGS, r.lang, r.model, r.metric, r.stat))
    return Comparison(rows=tuple(rows), changes=tuple(changes),
                      models_only_in_baseline=tuple(sorted(base_models - cand_targets)),
                      models_only_in_candidate=tuple(sorted(back.get(m, m) for m in cand_targets - base_models)),
                      model_map=mapping, alpha=a, seed=seed, n_boot=b, method=method)
