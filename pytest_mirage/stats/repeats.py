"""Repeated sampling: each case run N times (``repeat`` = 0..N-1 on the records).

Per case: the pass rate over its repeats, whether all repeats passed (``pass^N``) and whether it
is flaky (some repeats pass, some fail: the case straddles its threshold). Per suite x language x
model: the mean and pass rate over all samples with intervals from the bootstrap clustered by
case (repeats of one case are not independent evidence), the share of cases that pass every
repeat, and the unbiased ``pass^k`` estimate for any k <= N (the chance that k fresh runs of a
case all pass; tau-bench's pass^k).

A repeat whose model call errored counts as not passed (and is counted in ``errors``): a case
that passes only when the call works is not reliable.
"""

from __future__ import annotations

import math
import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._common import DEFAULT_ALPHA, DEFAULT_BOOT, StatsError, check_count
from .intervals import Interval, clustered_bootstrap_ci, wilson_interval
from .records import CaseRecord, to_record

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt,
}

GroupKey = tuple[str, str, str]  # suite, lang, model


def pass_hat_k(passes: int, n: int, k: int) -> float:
    """Unbiased estimate of P(k independent runs all pass) from ``passes`` of ``n`` repeats:
    ``C(passes, k) / C(n, k)`` (0 when passes < k)."""
    c = check_count(passes, "passes", minimum=0)
    total = check_count(n, "n")
    kk = check_count(k, "k")
    if c > total:
        raise StatsError(f"passes={c} > n={total}")
    if kk > total:
        raise StatsError(f"k={kk} > n={total}: pass^k needs at least k repeats per case")
    return math.comb(c, kk) / math.comb(total, kk)


@dataclass(frozen=True, slots=True)
class CaseRepeats:
    """One case's repeats: ``passes`` of ``samples`` passed (``errors`` of them errored)."""

    suite: str
    case_id: str
    lang: str
    model: str
    samples: int
    passes: int
    errors: int
    values: tuple[float, ...]  # non-null metric values of the repeats

    @property
    def pass_rate(self) -> float:
        return self.passes / self.samples if self.samples else math.nan

    @property
    def all_pass(self) -> bool:
        return self.samples > 0 and self.passes == self.samples

    @property
    def flaky(self) -> bool:
        return 0 < self.passes < self.samples

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "case_id": self.case_id, "lang": self.lang, "model": self.model,
                "samples": self.samples, "passes": self.passes, "errors": self.errors,
                "pass_rate": self.pass_rate, "all_pass": self.all_pass, "flaky": self.flaky}


def case_repeats(records: Iterable[Any], metric: str, *, threshold: tuple[str, float] | None = None) -> list[CaseRepeats]:
    """Group samples by (suite, case_id, model) and count passes on ``metric``.

    ``threshold=(op, value)`` (e.g. ``(">=", 0.5)``) decides a pass from the value; without it the
    records' own ``checks[metric]`` are used (the case threshold the run applied). A sample with no
    decision (null value, or no check on that metric) is not counted; an errored sample is a fail.
    """
    if threshold is not None:
        op, value = threshold
        if op not in OPS:
            raise StatsError(f"threshold operator {op!r}; expected one of {list(OPS)}")
        if not math.isfinite(float(value)):
            raise StatsError(f"threshold value {value!r}; expected a finite number")
    groups: dict[tuple[str, str, str], list[CaseRecord]] = defaultdict(list)
    for i, raw in enumerate(records):
        r = to_record(raw, "results", i)
        groups[(r.suite, r.case_id, r.model)].append(r)
    out: list[CaseRepeats] = []
    for (suite, case_id, model), rs in sorted(groups.items()):
        langs = {r.lang for r in rs}
        if len(langs) > 1:
            raise StatsError(f"case {case_id!r} of suite {suite!r} (model {model!r}) has repeats in several "
                             f"languages {sorted(langs)}")
        reps = [r.repeat for r in rs]
        if len(set(reps)) != len(reps):
            dup = sorted({x for x in reps if reps.count(x) > 1})
            raise StatsError(f"case {case_id!r} of suite {suite!r} (model {model!r}) has repeat {dup[0]} "
                             "more than once; every sample needs its own repeat index")
        samples = passes = errors = 0
        values: list[float] = []
        for r in sorted(rs, key=lambda r: r.repeat):
            if r.errored:
                samples += 1
                errors += 1
                continue
            v = r.metrics.get(metric)
            if v is not None:
                values.append(v)
            if threshold is not None:
                if v is None:
                    continue
                ok = OPS[threshold[0]](v, float(threshold[1]))
            else:
                if metric not in r.checks:
                    continue
                ok = r.checks[metric]
            samples += 1
            passes += bool(ok)
        out.append(CaseRepeats(suite, case_id, rs[0].lang, model, samples, passes, errors, tuple(values)))
    return out


@dataclass(frozen=True, slots=True)
class RepeatSummary:
    """Statistics of one suite x language x model over all samples of all its cases."""

    suite: str
    lang: str
    model: str
    metric: str
    cases: int
    samples: int
    mean: Interval  # mean metric value over all samples, clustered-bootstrap CI
    pass_rate: Interval  # share of passing samples, clustered-bootstrap CI
    all_pass: Interval  # share of cases whose every repeat passed (pass^N), Wilson CI
    pass_hat: Mapping[int, float]  # k -> unbiased pass^k averaged over cases (k <= min repeats)
    flaky: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "metric": self.metric,
                "cases": self.cases, "samples": self.samples, "mean": self.mean.to_json(),
                "pass_rate": self.pass_rate.to_json(), "all_pass": self.all_pass.to_json(),
                "pass_hat": {str(k): v for k, v in self.pass_hat.items()}, "flaky": list(self.flaky)}


def summarize_repeats(records: Iterable[Any], metric: str, *, threshold: tuple[str, float] | None = None,
                      alpha: float = DEFAULT_ALPHA, n_boot: int = DEFAULT_BOOT, seed: int = 0) -> dict[GroupKey, RepeatSummary]:
    """Per (suite, lang, model): :class:`RepeatSummary` of ``metric`` (see :func:`case_repeats`)."""
    per: dict[GroupKey, list[CaseRepeats]] = defaultdict(list)
    for c in case_repeats(records, metric, threshold=threshold):
        per[(c.suite, c.lang, c.model)].append(c)
    out: dict[GroupKey, RepeatSummary] = {}
    for key, cs in sorted(per.items()):
        decided = [c for c in cs if c.samples]
        mean = clustered_bootstrap_ci([c.values for c in cs], n_boot=n_boot, seed=seed, alpha=alpha)
        rate = clustered_bootstrap_ci([[1.0] * c.passes + [0.0] * (c.samples - c.passes) for c in decided],
                                      n_boot=n_boot, seed=seed, alpha=alpha)
        all_pass = wilson_interval(sum(c.all_pass for c in decided), len(decided), alpha=alpha)
        kmax = min((c.samples for c in decided), default=0)
        pass_hat = {k: sum(pass_hat_k(c.passes, c.samples, k) for c in decided) / len(decided)
                    for k in range(1, kmax + 1)}
        out[key] = RepeatSummary(key[0], key[1], key[2], metric, len(cs), sum(c.samples for c in cs), mean, rate,
                                 all_pass, pass_hat, tuple(c.case_id for c in cs if c.flaky))
    return out


def samples_by_case(records: Iterable[Any], metric: str) -> dict[GroupKey, list[list[float]]]:
    """Per (suite, lang, model): each case's non-null sample values, for a clustered gate statistic
    (``clustered_bootstrap_ci(groups[key])``)."""
    per: dict[GroupKey, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for i, raw in enumerate(records):
        r = to_record(raw, "results", i)
        v = r.value(metric)
        bucket = per[(r.suite, r.lang, r.model)][f"{r.suite}\x1f{r.case_id}"]
        if v is not None:
            bucket.append(v)
    return {k: [vals for _, vals in sorted(cases.items())] for k, cases in sorted(per.items())}


def flaky_cases(summaries: Mapping[GroupKey, RepeatSummary]) -> list[tuple[str, str, str, str]]:
    """(suite, lang, model, case_id) of every flaky case, sorted."""
    return sorted((s.suite, s.lang, s.model, c) for s in summaries.values() for c in s.flaky)
