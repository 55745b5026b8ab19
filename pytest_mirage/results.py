"""The result of one case for one model: what evaluation produces and every report consumes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["passed", "failed", "error", "reference"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case for one model (JSON-serialisable with :meth:`to_json`).

    ``metrics`` holds every computed value (``None`` = not applicable, with the reason in
    ``reasons``); ``checks`` says per metric whether the case passed its threshold; ``failures`` are
    the messages of the missed thresholds; ``run_line`` is the answer in the replay format.
    """

    suite: str
    suite_ref: str
    case_id: str
    lang: str
    model: str
    metrics: Mapping[str, float | None]
    reasons: Mapping[str, str] = field(default_factory=dict)
    outcome: Outcome = "passed"
    failures: tuple[str, ...] = ()
    checks: Mapping[str, bool] = field(default_factory=dict)
    error: str | None = None
    run_line: Mapping[str, Any] | None = None
    repeat: int = 0  # the sample index with --mirage-repeat
    judge_replies: Mapping[str, str] = field(default_factory=dict)  # judge kind -> reply text (per-case view)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """What the result is about: two suites outside the rootdir may share node ids, never keys."""
        return (self.suite_ref, self.case_id, self.model, self.repeat)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "suite_ref": self.suite_ref, "case_id": self.case_id, "lang": self.lang,
            "model": self.model, "metrics": dict(self.metrics), "null_reasons": dict(self.reasons),
            "outcome": self.outcome, "failures": list(self.failures), "checks": dict(self.checks),
            "error": self.error, "run_line": dict(self.run_line) if self.run_line else None,
            "repeat": self.repeat, "judge_replies": dict(self.judge_replies),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaseResult:
        return cls(suite=d["suite"], suite_ref=d.get("suite_ref", d["suite"]), case_id=d["case_id"],
                   lang=d["lang"], model=d["model"], metrics=d["metrics"], reasons=d.get("null_reasons", {}),
                   outcome=d["outcome"], failures=tuple(d.get("failures", ())), checks=d.get("checks", {}),
                   error=d.get("error"), run_line=d.get("run_line"), repeat=int(d.get("repeat") or 0),
                   judge_replies=d.get("judge_replies") or {})

    @classmethod
    def errored(cls, *, suite: str, suite_ref: str, case_id: str, lang: str, model: str,
                error: str, repeat: int = 0) -> CaseResult:
        """A case whose model call or metrics failed: no values (never averaged in as zeros)."""
        return cls(suite=suite, suite_ref=suite_ref, case_id=case_id, lang=lang, model=model, metrics={},
                   outcome="error", error=error, repeat=repeat)
