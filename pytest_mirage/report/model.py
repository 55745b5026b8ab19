"""The typed report of one run (:class:`RunReport`) and its versioned JSON form.

The session end builds a :class:`RunReport` once; every output is rendered from it: the terminal
lines, the JSON file (:meth:`RunReport.to_json`), Markdown and HTML. A JSON report written earlier
is read back with :meth:`RunReport.from_json`, which validates every field it reads and names the
field when one is wrong. Floats are rounded to 6 decimals in the JSON, so a run with and without
xdist writes the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._version import __version__
from ..aggregate.gates import GateResult
from ..results import CaseResult
from .format import report_value
from .leaderboard import LeaderboardRow
from .reading import FIX as _FIX
from .reading import MISSING as _MISSING
from .reading import SCHEMA as SCHEMA
from .reading import ReportFormatError as ReportFormatError
from .reading import bad as _bad
from .reading import is_number as _is_num
from .statistics import Statistics

if TYPE_CHECKING:
    from ..aggregate.regression import RegressionGateResult


@dataclass(frozen=True, slots=True)
class SuiteInfo:
    name: str
    mode: str | None = None
    languages: tuple[str, ...] = ()
    cases: int | None = None
    reference_models: tuple[str, ...] = ()
    scoring: str | None = None  # the metric definitions: "default" or "mirage" (MIRAGE-Bench's code)


@dataclass(frozen=True, slots=True)
class ArenaRow:
    """A model's Bradley-Terry strength in one suite x language (``lang="all"``: the suite-level fit)."""

    suite: str
    lang: str
    model: str
    strength: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int


@dataclass(frozen=True, slots=True)
class SurrogateInfo:
    suite: str
    lang: str
    path: str | None
    features: tuple[str, ...]
    training_models: tuple[str, ...]
    judge: str | None
    health: Mapping[str, Any] | None = None
    created: str | None = None


@dataclass(frozen=True, slots=True)
class SurrogateScore:
    suite: str
    lang: str
    model: str
    score: float | None
    rank: int


@dataclass(frozen=True, slots=True)
class MetricInfo:
    higher_is_better: bool
    source: str
    description: str


BETTER, WORSE = "▲", "▼"  # a leaderboard value that changed significantly against the baseline
EXCERPT_CHARS = 600  # passage text shown per passage of a failed case
ANSWER_CHARS = 1500  # answer text shown per failed case


@dataclass(frozen=True, slots=True)
class PassageView:
    """A passage of a failed case as the report shows it (an excerpt), and its role."""

    id: str
    text: str
    title: str | None = None
    relevant: bool = False
    cited: bool = False


SENTENCE_VERDICTS = ("supported", "unsupported", "no_content", "refusal")  # metrics/verdicts.py VERDICTS


@dataclass(frozen=True, slots=True)
class SentenceView:
    """One answer sentence of a failed case and its faithfulness verdict (``verdict``: supported,
    unsupported, no_content or refusal), the passage sentence it aligns to (``aligned_passage``: its
    passage id, None without evidence), the facts no passage states (``kind: text``) and why it is
    unsupported (``reason``)."""

    text: str
    verdict: str
    aligned_passage: str | None = None
    aligned_sentence: str = ""
    missing: tuple[str, ...] = ()
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "verdict": self.verdict, "aligned_passage": self.aligned_passage,
                "aligned_sentence": self.aligned_sentence, "missing": list(self.missing), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class CaseDetail:
    """What a reader needs to see why a case failed: question, answer, passages and citations side by
    side, and the raw replies of any judge that scored it."""

    suite: str
    case_id: str
    lang: str
    model: str
    source: str  # "file:line" of the case in its golden file
    question: str
    answer: str | None  # an excerpt of the answer text (None: the model gave none)
    citations: tuple[str, ...] = ()
    invalid_citations: tuple[str, ...] = ()
    passages: tuple[PassageView, ...] = ()
    judges: Mapping[str, str] = field(default_factory=dict)  # judge kind -> raw reply (excerpt)
    # the answer's sentence verdicts when a faithfulness signal was computed (absent from the JSON when empty)
    sentences: tuple[SentenceView, ...] = ()


@dataclass(frozen=True, slots=True)
class CollectionError:
    nodeid: str
    message: str


Status = Literal["passed", "failed"]


@dataclass(frozen=True, slots=True)
class RunReport:
    """Everything one run reports (see module doc)."""

    models: tuple[str, ...]
    suites: tuple[SuiteInfo, ...]
    results: tuple[CaseResult, ...]
    leaderboard: tuple[LeaderboardRow, ...]
    gates: tuple[GateResult, ...]
    status: Status = "passed"
    exitstatus: int = 0
    arena: tuple[ArenaRow, ...] = ()
    judge: Mapping[str, Any] = field(default_factory=dict)
    surrogates: tuple[SurrogateInfo, ...] = ()
    surrogate_scores: tuple[SurrogateScore, ...] = ()
    metric_info: Mapping[str, MetricInfo] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    fatal: tuple[str, ...] = ()
    collection_errors: tuple[CollectionError, ...] = ()
    cases: tuple[CaseDetail, ...] = ()  # failed and errored cases, for the per-case view
    # sample, judge calibration, baseline comparison, regression gates, head-to-head, repeats
    # (pytest_mirage.report.statistics; docs/statistics.md)
    statistics: Statistics = field(default_factory=Statistics)
    repeats: int = 1  # samples per case (--mirage-repeat)
    judge_health: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # metric judge -> its health
    version: str = __version__

    def baseline_marks(self) -> dict[tuple[str, str, str, str], str]:
        """``BETTER``/``WORSE`` per (suite, lang, model, metric) whose mean changed significantly
        against the baseline (the comparison's unadjusted paired test), for the leaderboards."""
        base = self.statistics.baseline
        marks: dict[tuple[str, str, str, str], str] = {}
        for r in base.rows if base is not None else ():
            if r.stat != "mean" or not r.significant or r.delta is None or r.delta == 0:
                continue
            info = self.metric_info.get(r.metric)
            higher = True if info is None else info.higher_is_better
            marks[(r.suite, r.lang, r.model, r.metric)] = BETTER if (r.delta > 0) == higher else WORSE
        return marks

    def baseline_mark_note(self, marks: Mapping[tuple[str, str, str, str], str]) -> str | None:
        """The legend of ``marks`` (:meth:`baseline_marks`), or None when nothing is marked."""
        if not marks:
            return None
        base = self.statistics.baseline
        if base is None:
            raise ValueError("baseline marks without a baseline comparison: marks come from RunReport.baseline_marks()")
        return (f"{BETTER} / {WORSE}: significantly better / worse than the baseline run (paired "
                f"{base.test} test, alpha {base.alpha}, unadjusted; deltas under "
                "'Baseline comparison')")

    @property
    def failed_regressions(self) -> list[RegressionGateResult]:
        return self.statistics.failed_regressions

    @property
    def reference_models(self) -> dict[str, set[str]]:
        """Suite -> names of its reference systems (from the suites and the leaderboard rows)."""
        refs = {s.name: set(s.reference_models) for s in self.suites}
        for r in self.leaderboard:
            if r.reference:
                refs.setdefault(r.suite, set()).add(r.model)
        return refs

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if g.passed is False]

    # ------------------------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-able dict. Deterministic: sorted, no timestamps, rounded floats."""
        v = report_value
        judge_nulls = any(r.judge_nulls for r in self.leaderboard)
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "version": self.version,
            "models": list(self.models),
            "suites": [{"name": s.name, "mode": s.mode, "languages": list(s.languages), "cases": s.cases,
                        "reference_models": list(s.reference_models), "scoring": s.scoring}
                       for s in self.suites],
            "results": [{"suite": r.suite, "case_id": r.case_id, "lang": r.lang, "model": r.model,
                         "metrics": {k: v(x) for k, x in r.metrics.items()}, "null_reasons": dict(r.reasons),
                         "outcome": r.outcome, "failures": list(r.failures), "checks": dict(r.checks),
                         "error": r.error, **({"repeat": r.repeat} if self.repeats > 1 else {})}
                        for r in sorted(self.results, key=lambda r: (r.suite, r.lang, r.case_id, r.model, r.repeat))],
            "leaderboard": [{"suite": r.suite, "lang": r.lang, "model": r.model, "rank": r.rank,
                             "score": v(r.score), "metrics": {k: v(x) for k, x in r.metrics.items()},
                             "n": r.n, "errors": r.errors, "reference": r.reference,
                             # only when some row has one: a report without judge nulls keeps its bytes
                             **({"judge_nulls": r.judge_nulls, "judge_null_reason": r.judge_null_reason}
                                if judge_nulls else {})}
                            for r in self.leaderboard],
            "gates": [{**g.to_json(), "value": v(g.value)} for g in self.gates],
        }
        if self.metric_info:
            out["metric_info"] = {k: {"higher_is_better": m.higher_is_better, "source": m.source,
                                      "description": m.description} for k, m in self.metric_info.items()}
        if self.arena or self.judge:
            out["arena"] = [{"suite": a.suite, "lang": a.lang, "model": a.model, "strength": v(a.strength),
                             "ci_low": v(a.ci_low), "ci_high": v(a.ci_high), "rank": a.rank} for a in self.arena]
            out["judge"] = _rounded(dict(self.judge))
        if self.surrogates:
            out["surrogate"] = [_rounded({"suite": s.suite, "lang": s.lang, "path": s.path,
                                          "features": list(s.features), "training_models": list(s.training_models),
                                          "judge": s.judge, "health": dict(s.health) if s.health else None,
                                          **({"created": s.created} if s.created else {})})
                                for s in self.surrogates]
        if self.surrogate_scores:
            out["surrogate_scores"] = [{"suite": s.suite, "lang": s.lang, "model": s.model,
                                        "surrogate_score": v(s.score), "surrogate_rank": s.rank}
                                       for s in self.surrogate_scores]
        if self.problems or self.fatal:
            out["problems"] = list(self.problems)
            out["fatal"] = list(self.fatal)
        if self.collection_errors:
            out["collection_errors"] = [{"nodeid": e.nodeid, "message": e.message} for e in self.collection_errors]
        if self.cases:
            out["cases"] = [{"suite": c.suite, "case_id": c.case_id, "lang": c.lang, "model": c.model,
                             "source": c.source, "question": c.question, "answer": c.answer,
                             "citations": list(c.citations), "invalid_citations": list(c.invalid_citations),
                             "passages": [{"id": p.id, "title": p.title, "text": p.text, "relevant": p.relevant,
                                           "cited": p.cited} for p in c.passages],
                             "judges": dict(c.judges),
                             **({"sentences": [v.to_json() for v in c.sentences]} if c.sentences else {})}
                            for c in self.cases]
        for key, value in self.statistics.to_json().items():
            out[key] = _rounded(value)
        if self.judge_health:
            out["judge_health"] = {k: dict(v) for k, v in sorted(self.judge_health.items())}
        out["status"] = self.status
        out["exitstatus"] = self.exitstatus
        return out

    @classmethod
    def from_json(cls, report: Any) -> RunReport:
        """Read a JSON report back (as written by :meth:`to_json`); raises :class:`ReportFormatError`."""
        return _Reader(report).read()


# probabilities that may be far below the report's last decimal: kept to 6 significant digits
# (a p-value of 3.7e-08 must not be written as 0.0)
SIGNIFICANT_KEYS = frozenset({"p_value", "p_adjusted", "p_values", "p", "p_holm"})


def _significant(x: Any) -> Any:
    if isinstance(x, float) and math.isfinite(x):
        return float(f"{x:.6g}")
    if isinstance(x, list | tuple):
        return [_significant(v) for v in x]
    return _rounded(x)


def _rounded(obj: Any) -> Any:
    if isinstance(obj, float):
        return report_value(obj)
    if isinstance(obj, Mapping):
        return {k: _significant(x) if k in SIGNIFICANT_KEYS else _rounded(x) for k, x in obj.items()}
    if isinstance(obj, list | tuple):
        return [_rounded(x) for x in obj]
    return obj


# ------------------------------------------------------------------------------------ validation
class _Reader:
    """Field readers that name the field of a bad value (``leaderboard[3].metrics.bleu``)."""

    def __init__(self, report: Any) -> None:
        if not isinstance(report, Mapping):
            raise ReportFormatError(f"report: found {type(report).__name__}; expected a mapping (the JSON report "
                                    f"loaded with json.load); {_FIX}")
        self.r = report

    @staticmethod
    def text(obj: Mapping[str, Any], key: str, where: str) -> str:
        v = obj.get(key, _MISSING)
        if not isinstance(v, str):
            raise _bad(f"{where}.{key}", v, "a string")
        return v

    @staticmethod
    def opt_text(obj: Mapping[str, Any], key: str, where: str) -> str | None:
        v = obj.get(key)
        if v is not None and not isinstance(v, str):
            raise _bad(f"{where}.{key}", v, "a string or null")
        return v

    @staticmethod
    def number(obj: Mapping[str, Any], key: str, where: str) -> float | None:
        v = obj.get(key, _MISSING)
        if v is None:
            return None
        if not _is_num(v):
            raise _bad(f"{where}.{key}", v, "a number or null")
        return float(v)

    @staticmethod
    def integer(obj: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
        v = obj.get(key, _MISSING)
        if v is _MISSING and default is not None:
            return default
        if not isinstance(v, int) or isinstance(v, bool):
            raise _bad(f"{where}.{key}", v, "an integer")
        return v

    @staticmethod
    def mapping(obj: Mapping[str, Any], key: str, where: str, required: bool = True) -> Mapping[str, Any]:
        v = obj.get(key, _MISSING if required else {})
        if v is None and not required:
            return {}
        if not isinstance(v, Mapping):
            raise _bad(f"{where}.{key}", v, "an object")
        return v

    @staticmethod
    def texts(obj: Mapping[str, Any], key: str, where: str, required: bool = True) -> tuple[str, ...]:
        v = obj.get(key, _MISSING if required else [])
        if v is None and not required:
            return ()
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _bad(f"{where}.{key}" if where else key, v, "a list of strings")
        return tuple(v)

    def rows(self, key: str, required: bool = True) -> list[Mapping[str, Any]]:
        v = self.r.get(key, _MISSING)
        if not required and (v is _MISSING or v is None):
            return []
        if not isinstance(v, list):
            raise _bad(key, v, "a list of objects")
        for i, item in enumerate(v):
            if not isinstance(item, Mapping):
                raise _bad(f"{key}[{i}]", item, "an object")
        return v

    def _sentences(self, c: Mapping[str, Any], where: str) -> tuple[SentenceView, ...]:
        v = c.get("sentences", [])
        if not isinstance(v, list):
            raise _bad(f"{where}.sentences", v, "a list of objects")
        out = []
        for i, s in enumerate(v):
            w = f"{where}.sentences[{i}]"
            if not isinstance(s, Mapping):
                raise _bad(w, s, "an object")
            verdict = self.text(s, "verdict", w)
            if verdict not in SENTENCE_VERDICTS:
                raise _bad(f"{w}.verdict", verdict, f"one of {', '.join(SENTENCE_VERDICTS)}")
            out.append(SentenceView(self.text(s, "text", w), verdict, self.opt_text(s, "aligned_passage", w),
                                    self.text(s, "aligned_sentence", w), self.texts(s, "missing", w),
                                    self.text(s, "reason", w)))
        return tuple(out)

    def numbers(self, obj: Mapping[str, Any], key: str, where: str) -> dict[str, float | None]:
        m = self.mapping(obj, key, where)
        return {str(k): self.number(m, k, f"{where}.{key}") for k in m}

    def read(self) -> RunReport:
        r = self.r
        schema = r.get("schema", _MISSING)
        if schema != SCHEMA:
            raise _bad("schema", schema, repr(SCHEMA))
        suites = []
        for i, s in enumerate(self.rows("suites")):
            w = f"suites[{i}]"
            cases = s.get("cases")
            if cases is not None and (not isinstance(cases, int) or isinstance(cases, bool)):
                raise _bad(f"{w}.cases", cases, "an integer")
            suites.append(SuiteInfo(self.text(s, "name", w), self.opt_text(s, "mode", w),
                                    self.texts(s, "languages", w, required=False), cases,
                                    self.texts(s, "reference_models", w, required=False),
                                    self.opt_text(s, "scoring", w)))
        results = []
        for i, x in enumerate(self.rows("results")):
            w = f"results[{i}]"
            outcome = self.text(x, "outcome", w)
            if outcome not in ("passed", "failed", "error", "reference"):
                raise _bad(f"{w}.outcome", outcome, "passed, failed, error or reference")
            failures = x.get("failures") or []
            results.append(CaseResult(
                suite=self.text(x, "suite", w), suite_ref=self.text(x, "suite", w), case_id=self.text(x, "case_id", w),
                lang=self.text(x, "lang", w), model=self.text(x, "model", w), metrics=self.numbers(x, "metrics", w)
                if "metrics" in x else {}, reasons={str(k): str(v) for k, v in self.mapping(x, "null_reasons", w,
                                                                                            required=False).items()},
                outcome=outcome,  # type: ignore[arg-type]
                failures=tuple(str(f) for f in failures) if isinstance(failures, list) else (str(failures),),
                checks={str(k): bool(v) for k, v in self.mapping(x, "checks", w, required=False).items()},
                error=self.opt_text(x, "error", w), repeat=self.integer(x, "repeat", w, default=0)))
        board = []
        for i, x in enumerate(self.rows("leaderboard")):
            w = f"leaderboard[{i}]"
            ref = x.get("reference", _MISSING)
            if not isinstance(ref, bool):
                raise _bad(f"{w}.reference", ref, "true or false")
            nulls = x.get("judge_nulls", 0)
            if isinstance(nulls, int) and not isinstance(nulls, bool) and not 0 <= nulls <= self.integer(x, "n", w):
                raise _bad(f"{w}.judge_nulls", nulls, "a count of cases from 0 to the row's n")
            board.append(LeaderboardRow(self.text(x, "suite", w), self.text(x, "lang", w), self.text(x, "model", w),
                                        self.integer(x, "rank", w), self.number(x, "score", w), self.numbers(x, "metrics", w),
                                        self.integer(x, "n", w), ref, self.integer(x, "errors", w, default=0),
                                        self.integer(x, "judge_nulls", w, default=0),
                                        self.opt_text(x, "judge_null_reason", w)))
        gates = []
        for i, g in enumerate(self.rows("gates")):
            w = f"gates[{i}]"
            passed = g.get("passed", _MISSING)
            if passed is not None and not isinstance(passed, bool):
                raise _bad(f"{w}.passed", passed, "true, false or null (not evaluable)")
            gates.append(GateResult(self.text(g, "suite", w), self.text(g, "lang", w), self.text(g, "model", w),
                                    self.text(g, "expr", w), self.opt_text(g, "source", w) or "",
                                    self.number(g, "value", w), passed, self.integer(g, "n", w),
                                    self.integer(g, "errors", w, default=0), self.opt_text(g, "note", w) or ""))
        arena = []
        for i, a in enumerate(self.rows("arena", required=False)):
            w = f"arena[{i}]"
            arena.append(ArenaRow(self.text(a, "suite", w), self.text(a, "lang", w), self.text(a, "model", w),
                                  self.number(a, "strength", w), self.number(a, "ci_low", w), self.number(a, "ci_high", w),
                                  self.integer(a, "rank", w)))
        judge = r.get("judge") or {}
        if not isinstance(judge, Mapping):
            raise _bad("judge", judge, "an object")
        for k, val in judge.items():
            if k == "undecided_by_model" and isinstance(val, Mapping):  # per model: a count each
                for model, n in val.items():
                    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                        raise _bad(f"judge.{k}.{model}", n, "a count (an integer >= 0)")
            elif val is not None and not isinstance(val, int | float | str | bool):
                raise _bad(f"judge.{k}", val, "a number, string, boolean or null")
        surrogates = []
        for i, e in enumerate(self.rows("surrogate", required=False)):
            w = f"surrogate[{i}]"
            health = e.get("health")
            if health is not None and not isinstance(health, Mapping):
                raise _bad(f"{w}.health", health, "an object or null")
            for k in health or {}:
                self.number(health, k, f"{w}.health")  # type: ignore[arg-type]
            surrogates.append(SurrogateInfo(self.text(e, "suite", w), self.text(e, "lang", w),
                                            self.opt_text(e, "path", w), self.texts(e, "features", w, required=False),
                                            self.texts(e, "training_models", w, required=False),
                                            self.opt_text(e, "judge", w), health, self.opt_text(e, "created", w)))
        scores = []
        for i, s in enumerate(self.rows("surrogate_scores", required=False)):
            w = f"surrogate_scores[{i}]"
            scores.append(SurrogateScore(self.text(s, "suite", w), self.text(s, "lang", w), self.text(s, "model", w),
                                         self.number(s, "surrogate_score", w), self.integer(s, "surrogate_rank", w)))
        info = {}
        for k, m in (r.get("metric_info") or {}).items():
            if not isinstance(m, Mapping):
                raise _bad(f"metric_info.{k}", m, "an object")
            info[str(k)] = MetricInfo(bool(m.get("higher_is_better", True)), str(m.get("source") or ""),
                                      str(m.get("description") or ""))
        errors = [CollectionError(self.text(e, "nodeid", f"collection_errors[{i}]"),
                                  self.text(e, "message", f"collection_errors[{i}]"))
                  for i, e in enumerate(self.rows("collection_errors", required=False))]
        cases = []
        for i, c in enumerate(self.rows("cases", required=False)):
            w = f"cases[{i}]"
            passages = []
            for j, pv in enumerate(c.get("passages") or []):
                if not isinstance(pv, Mapping):
                    raise _bad(f"{w}.passages[{j}]", pv, "an object")
                passages.append(PassageView(self.text(pv, "id", f"{w}.passages[{j}]"),
                                            self.text(pv, "text", f"{w}.passages[{j}]"),
                                            self.opt_text(pv, "title", f"{w}.passages[{j}]"),
                                            bool(pv.get("relevant")), bool(pv.get("cited"))))
            cases.append(CaseDetail(self.text(c, "suite", w), self.text(c, "case_id", w), self.text(c, "lang", w),
                                    self.text(c, "model", w), self.opt_text(c, "source", w) or "",
                                    self.text(c, "question", w), self.opt_text(c, "answer", w),
                                    self.texts(c, "citations", w, required=False),
                                    self.texts(c, "invalid_citations", w, required=False), tuple(passages),
                                    {str(k): str(v) for k, v in self.mapping(c, "judges", w, required=False).items()},
                                    self._sentences(c, w)))
        statistics = Statistics.from_json(r)
        status = r.get("status", "passed")
        if status not in ("passed", "failed"):
            raise _bad("status", status, "passed or failed")
        version = r.get("version")
        return RunReport(
            models=self.texts(r, "models", ""), suites=tuple(suites), results=tuple(results),
            leaderboard=tuple(board), gates=tuple(gates), status=status,
            exitstatus=self.integer(r, "exitstatus", "", default=0), arena=tuple(arena), judge=dict(judge),
            surrogates=tuple(surrogates), surrogate_scores=tuple(scores), metric_info=info,
            problems=self.texts(r, "problems", "", required=False), fatal=self.texts(r, "fatal", "", required=False),
            collection_errors=tuple(errors), cases=tuple(cases), statistics=statistics,
            repeats=max((x.repeat for x in results), default=0) + 1,
            judge_health={str(k): dict(v) for k, v in (r.get("judge_health") or {}).items() if isinstance(v, Mapping)},
            version=str(version) if version is not None else "")


def as_report(report: RunReport | Mapping[str, Any] | Sequence[Any]) -> RunReport:
    """A :class:`RunReport`, from itself or from a JSON report dict (validated)."""
    return report if isinstance(report, RunReport) else RunReport.from_json(report)
