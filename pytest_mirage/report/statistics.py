"""The statistics sections of a run's report, typed (:class:`Statistics`), and their JSON form.

The sections hold the values :mod:`pytest_mirage.stats` computed, in its own dataclasses where the
report keeps everything they hold (regression gate results, head-to-head counts, repeat summaries,
judge calibration), and in a small report form where the report keeps less (a sample's case counts
instead of its case ids; a comparison row without its per-case differences and test object).
``to_json()`` writes each section as the stats module's own ``to_json()`` does, so a report written
now has the bytes it had when the sections were dicts; :meth:`Statistics.from_json` reads them back
and names the field when one is missing or wrong.

NaN is how the stats modules say "undefined here" (no paired case, one class only); the JSON
report writes it as null and reading gives NaN again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .reading import Fields, bad

if TYPE_CHECKING:
    from ..aggregate.regression import RegressionGateResult
    from ..stats.calibration import Calibration
    from ..stats.headtohead import HeadToHead
    from ..stats.intervals import Interval
    from ..stats.paired import CaseChange, Comparison, ComparisonRow
    from ..stats.repeats import RepeatSummary
    from ..stats.sampling import Sample
    from ..stats.signals import SignalCalibration

# the sections in the order the JSON report writes them
SECTIONS = ("sample", "calibration", "baseline", "regressions", "head_to_head", "repeats")


def _flat_json(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


# ------------------------------------------------------------------------------------ sample


@dataclass(frozen=True, slots=True)
class SampleGroup:
    """A suite x language of a sampled run: how many of its cases were selected (the report keeps
    the counts; the ids are the results' own)."""

    suite: str
    lang: str
    selected: int
    total: int

    def to_json(self) -> dict[str, Any]:
        return _flat_json(self)


@dataclass(frozen=True, slots=True)
class SampleSection:
    """``--mirage-sample``: the rule (of the first suite's sample, as every suite is sampled with the
    same option), every suite's groups, and the one-line description the outputs show."""

    count: int | None
    share: float | None
    seed: int
    rule: str
    groups: tuple[SampleGroup, ...]
    description: str

    @classmethod
    def of(cls, samples: Sequence[Sample]) -> SampleSection:
        first = samples[0]
        return cls(first.count, first.share, first.seed, first.rule,
                   tuple(SampleGroup(g.suite, g.lang, len(g.selected), g.total) for s in samples for g in s.groups),
                   "; ".join(s.describe() for s in samples))

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "share": self.share, "seed": self.seed, "rule": self.rule,
                "groups": [g.to_json() for g in self.groups], "description": self.description}


# ------------------------------------------------------------------------------------ baseline


@dataclass(frozen=True, slots=True)
class BaselineRow:
    """A :class:`~pytest_mirage.stats.paired.ComparisonRow` as the report keeps it: the means, the
    change with its interval and p-value (None: no paired case, or not computable), without the
    per-case differences."""

    suite: str
    lang: str
    model: str
    baseline_model: str
    metric: str
    stat: str
    n: int
    baseline: float | None
    candidate: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    significant: bool
    test: str
    sd_diff: float | None
    mde: float | None
    unpaired: int

    @classmethod
    def of(cls, row: ComparisonRow) -> BaselineRow:
        return cls(**row.to_json())

    def to_json(self) -> dict[str, Any]:
        return _flat_json(self)


@dataclass(frozen=True, slots=True)
class BaselineSection:
    """``--mirage-baseline``: the comparison of this run with the saved one (see
    :class:`~pytest_mirage.stats.paired.Comparison`); ``path``: the baseline file."""

    path: str
    alpha: float
    seed: int
    n_boot: int
    test: str
    model_map: Mapping[str, str]
    rows: tuple[BaselineRow, ...]
    changes: tuple[CaseChange, ...]
    models_only_in_baseline: tuple[str, ...]
    models_only_in_candidate: tuple[str, ...]

    @classmethod
    def of(cls, path: str, comparison: Comparison) -> BaselineSection:
        c = comparison
        return cls(path, c.alpha, c.seed, c.n_boot, c.method, dict(c.model_map),
                   tuple(BaselineRow.of(r) for r in c.rows), c.changes, c.models_only_in_baseline,
                   c.models_only_in_candidate)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "alpha": self.alpha, "seed": self.seed, "n_boot": self.n_boot, "test": self.test,
                "model_map": dict(self.model_map), "rows": [r.to_json() for r in self.rows],
                "changes": [c.to_json() for c in self.changes],
                "models_only_in_baseline": list(self.models_only_in_baseline),
                "models_only_in_candidate": list(self.models_only_in_candidate)}


# ------------------------------------------------------------------------------------ others


@dataclass(frozen=True, slots=True)
class HeadToHeadRow:
    """Two models under test of one suite on one metric (``comparison.metric``)."""

    suite: str
    comparison: HeadToHead

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, **self.comparison.to_json()}


@dataclass(frozen=True, slots=True)
class CalibrationSection:
    """Judge agreement and PPI means of one suite from its human labels (``labels``: the file), and
    every faithfulness signal of the run against the answers' faithfulness labels (``faithfulness``:
    per signal x language, :mod:`pytest_mirage.stats.signals`; absent from the JSON when empty)."""

    suite: str
    labels: str
    calibration: Calibration
    faithfulness: tuple[SignalCalibration, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {"suite": self.suite, "labels": self.labels, **self.calibration.to_json()}
        if self.faithfulness:
            out["faithfulness"] = [r.to_json() for r in self.faithfulness]
        return out


@dataclass(frozen=True, slots=True)
class Statistics:
    """The statistics a run computed beyond the leaderboard and gates; a section the run did not
    compute is ``None`` or empty (and absent from the JSON report)."""

    sample: SampleSection | None = None
    calibration: tuple[CalibrationSection, ...] = ()
    baseline: BaselineSection | None = None
    regressions: tuple[RegressionGateResult, ...] = ()
    head_to_head: tuple[HeadToHeadRow, ...] = ()
    repeats: tuple[RepeatSummary, ...] = ()

    @property
    def failed_regressions(self) -> list[RegressionGateResult]:
        return [g for g in self.regressions if g.failed is True]

    def to_json(self) -> dict[str, Any]:
        """The sections the run has, as the JSON report writes them (before rounding)."""
        out: dict[str, Any] = {}
        if self.sample is not None:
            out["sample"] = self.sample.to_json()
        if self.calibration:
            out["calibration"] = [c.to_json() for c in self.calibration]
        if self.baseline is not None:
            out["baseline"] = self.baseline.to_json()
        if self.regressions:
            out["regressions"] = [g.to_json() for g in self.regressions]
        if self.head_to_head:
            out["head_to_head"] = [h.to_json() for h in self.head_to_head]
        if self.repeats:
            out["repeats"] = [s.to_json() for s in self.repeats]
        return out

    @classmethod
    def from_json(cls, report: Mapping[str, Any]) -> Statistics:
        """The sections of a JSON report (the whole report dict); raises
        :class:`~pytest_mirage.report.reading.ReportFormatError` naming a missing or bad field."""
        r = Fields(report, "")
        return cls(
            sample=_sample(r.fields("sample")) if r.has("sample") else None,
            calibration=tuple(_calibration(c) for c in r.items("calibration")) if r.has("calibration") else (),
            baseline=_baseline(r.fields("baseline")) if r.has("baseline") else None,
            regressions=tuple(_regression(g) for g in r.items("regressions")) if r.has("regressions") else (),
            head_to_head=tuple(_head_to_head(h) for h in r.items("head_to_head")) if r.has("head_to_head") else (),
            repeats=tuple(_repeats(s) for s in r.items("repeats")) if r.has("repeats") else ())


# ------------------------------------------------------------------------------------ reading


def _interval(f: Fields) -> Interval:
    from ..stats.intervals import Interval

    return Interval(f.nan_number("estimate"), f.nan_number("low"), f.nan_number("high"), f.integer("n"),
                    f.number("level"), f.text("method"))


def _sample(f: Fields) -> SampleSection:
    return SampleSection(f.opt_integer("count"), f.opt_number("share"), f.integer("seed"), f.text("rule"),
                         tuple(SampleGroup(g.text("suite"), g.text("lang"), g.integer("selected"), g.integer("total"))
                               for g in f.items("groups")), f.text("description"))


def _baseline(f: Fields) -> BaselineSection:
    from ..stats.paired import CaseChange

    rows = []
    for r in f.items("rows"):
        rows.append(BaselineRow(r.text("suite"), r.text("lang"), r.text("model"), r.text("baseline_model"),
                                r.text("metric"), r.text("stat"), r.integer("n"), r.opt_number("baseline"),
                                r.opt_number("candidate"), r.opt_number("delta"), r.opt_number("ci_low"),
                                r.opt_number("ci_high"), r.opt_number("p_value"), r.flag("significant"),
                                r.text("test"), r.opt_number("sd_diff"), r.opt_number("mde"), r.integer("unpaired")))
    changes = tuple(CaseChange(c.text("suite"), c.text("model"), c.text("case_id"), c.text("lang"), c.text("change"))
                    for c in f.items("changes"))
    return BaselineSection(f.text("path"), f.number("alpha"), f.integer("seed"), f.integer("n_boot"), f.text("test"),
                           f.text_map("model_map"), tuple(rows), changes, f.texts("models_only_in_baseline"),
                           f.texts("models_only_in_candidate"))


def _regression(g: Fields) -> RegressionGateResult:
    from ..aggregate.regression import RegressionGateResult

    return RegressionGateResult(
        expr=g.text("expr"), source=g.text("source"), suite=g.text("suite"), lang=g.text("lang"),
        model=g.text("model"), baseline_model=g.text("baseline_model"), n=g.integer("n"), allowed=g.number("allowed"),
        worsening=g.nan_number("worsening"), ci_low=g.nan_number("ci_low"), ci_high=g.nan_number("ci_high"),
        p_value=g.nan_number("p_value"), p_adjusted=g.nan_number("p_adjusted"), family=g.integer("family"),
        alpha=g.number("alpha"), failed=g.opt_flag("failed"), note=g.note())


def _head_to_head(h: Fields) -> HeadToHeadRow:
    from ..stats.headtohead import HeadToHead

    return HeadToHeadRow(h.text("suite"), HeadToHead(
        model_a=h.text("model_a"), model_b=h.text("model_b"), wins=h.integer("wins"), ties=h.integer("ties"),
        losses=h.integer("losses"), p_value=h.nan_number("p_value"), win_rate=_interval(h.fields("win_rate")),
        unit=h.text("unit"), metric=h.note("metric"), unpaired=h.integer("unpaired")))


def _repeats(s: Fields) -> RepeatSummary:
    from ..stats.repeats import RepeatSummary

    hats = s.fields("pass_hat")
    pass_hat = {}
    for k in hats.obj:
        if not str(k).isdigit():
            raise bad(f"{hats.where}.{k}", k, "a number of repeats k (1, 2, ...) as the key")
        pass_hat[int(k)] = hats.number(str(k))
    return RepeatSummary(s.text("suite"), s.text("lang"), s.text("model"), s.text("metric"), s.integer("cases"),
                         s.integer("samples"), _interval(s.fields("mean")), _interval(s.fields("pass_rate")),
                         _interval(s.fields("all_pass")), pass_hat, s.texts("flaky"))


def _calibration(c: Fields) -> CalibrationSection:
    from ..stats.calibration import (
        Agreement,
        Calibration,
        CalibrationBin,
        GroupCalibration,
        MetricAgreement,
        PPIEstimate,
        UnmatchedLabel,
    )
    from ..stats.intervals import Interval

    agreements = []
    for a in c.items("agreement"):
        bins = tuple(CalibrationBin(b.number("low"), b.number("high"), b.integer("n"), b.nan_number("mean_score"),
                                    b.nan_number("label_rate")) for b in a.items("bins"))
        agreements.append(MetricAgreement(a.text("suite"), a.text("metric"), Agreement(
            n=a.integer("n"), positives=a.integer("positives"), accuracy=a.nan_number("accuracy"),
            kappa=a.nan_number("kappa"), roc_auc=a.nan_number("roc_auc"), ece=a.nan_number("ece"),
            threshold=a.number("threshold"), bins=bins, note=a.note())))
    groups = []
    for g in c.items("ppi"):
        p = g.opt_fields("ppi")
        ppi = None
        if p is not None:
            raw = p.opt_fields("raw")
            ppi = PPIEstimate(
                interval=Interval(p.nan_number("estimate"), p.nan_number("low"), p.nan_number("high"),
                                  p.integer("n_labelled"), p.number("level"), "ppi"),
                judge_mean=p.nan_number("judge_mean"), rectifier=p.nan_number("rectifier"),
                se_judge=p.nan_number("se_judge"), se_rectifier=p.nan_number("se_rectifier"), n_all=p.integer("n_all"),
                n_labelled=p.integer("n_labelled"), judge_only=_interval(p.fields("judge_only")),
                labels_only=_interval(p.fields("labels_only")), raw=None if raw is None else _interval(raw))
        groups.append(GroupCalibration(g.text("suite"), g.text("model"), g.text("metric"), ppi, g.note()))
    unmatched = tuple(UnmatchedLabel(u.text("where"), u.text("case_id"), u.text("model"), u.text("metric"),
                                     u.text("reason")) for u in c.items("unmatched_labels"))
    signals = tuple(_signal(r) for r in c.items("faithfulness")) if c.has("faithfulness") else ()
    return CalibrationSection(c.text("suite"), c.text("labels"),
                              Calibration(tuple(agreements), tuple(groups), unmatched), signals)


def _signal(r: Fields) -> SignalCalibration:
    from ..stats.signals import SignalCalibration

    return SignalCalibration(
        suite=r.text("suite"), metric=r.text("metric"), lang=r.text("lang"), n=r.integer("n"),
        faithful=r.integer("faithful"), nulls=r.integer("nulls"), roc_auc=r.nan_number("roc_auc"),
        threshold=r.nan_number("threshold"), strict=r.flag("strict"), threshold_source=r.text("threshold_source"),
        flagged=r.integer("flagged"), precision=r.nan_number("precision"), recall=r.nan_number("recall"),
        f1=r.nan_number("f1"), target_precision=r.number("target_precision"),
        precision_threshold=r.nan_number("precision_threshold"), precision_recall=r.nan_number("precision_recall"),
        note=r.note())
