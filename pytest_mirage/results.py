"""The result of one case for one model: what evaluation produces and every report consumes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["passed", "failed", "error", "reference"]


@dataclass(frozen=True, slots=True)
class RecordLine:
    """A model's answer to one case in the replay format: the line ``--mirage-record`` writes and
    ``replay:`` reads back (``pytest_mirage.suites.runs``). ``citations`` keeps the invalid ones
    after the valid ones, so a replay scores them the same; an absent optional field is None
    (``truncated``: False) and is left out of the JSON."""

    suite: str
    case_id: str
    model: str
    output: str
    answer: str | None = None
    citations: tuple[str, ...] | None = None
    retrieved: tuple[str, ...] | None = None
    contexts: tuple[str, ...] | None = None
    truncated: bool = False

    @property
    def answer_text(self) -> str:
        """The parsed answer, or the raw output when the answer was not parsed out of it."""
        return self.answer if self.answer is not None else self.output

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"suite": self.suite, "case_id": self.case_id, "model": self.model,
                                "output": self.output}
        if self.answer is not None:
            line["answer"] = self.answer
        for key, ids in (("citations", self.citations), ("retrieved", self.retrieved), ("contexts", self.contexts)):
            if ids is not None:
                line[key] = list(ids)
        if self.truncated:
            line["truncated"] = True
        return line

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RecordLine:
        """Read :meth:`to_json`'s form (``{"suite": ..., **Answer.to_run_line()}``); an unknown key is an
        error (a field this class would drop)."""
        unknown = sorted(set(d) - _RECORD_KEYS)
        if unknown:
            raise ValueError(f"record line of case {d.get('case_id')!r}: unknown keys {unknown}; expected only "
                             f"{sorted(_RECORD_KEYS)}")

        def ids(key: str) -> tuple[str, ...] | None:
            v = d.get(key)
            return None if v is None else tuple(v)

        return cls(suite=d["suite"], case_id=d["case_id"], model=d["model"], output=d["output"],
                   answer=d.get("answer"), citations=ids("citations"), retrieved=ids("retrieved"),
                   contexts=ids("contexts"), truncated=bool(d.get("truncated", False)))


_RECORD_KEYS = frozenset(f for f in RecordLine.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case for one model (JSON-serialisable with :meth:`to_json`).

    ``metrics`` holds every computed value (``None`` = not applicable, with the reason in
    ``reasons``); ``checks`` says per metric whether the case passed its threshold; ``failures`` are
    the messages of the missed thresholds; ``run_line`` is the answer in the replay format (None:
    no answer, the case errored).
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
    run_line: RecordLine | None = None
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
            "error": self.error, "run_line": self.run_line.to_json() if self.run_line else None,
            "repeat": self.repeat, "judge_replies": dict(self.judge_replies),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaseResult:
        return cls(suite=d["suite"], suite_ref=d.get("suite_ref", d["suite"]), case_id=d["case_id"],
                   lang=d["lang"], model=d["model"], metrics=d["metrics"], reasons=d.get("null_reasons", {}),
                   outcome=d["outcome"], failures=tuple(d.get("failures", ())), checks=d.get("checks", {}),
                   error=d.get("error"), run_line=RecordLine.from_json(d["run_line"]) if d.get("run_line") else None, repeat=int(d.get("repeat") or 0),
                   judge_replies=d.get("judge_replies") or {})

    @classmethod
    def errored(cls, *, suite: str, suite_ref: str, case_id: str, lang: str, model: str,
                error: str, repeat: int = 0) -> CaseResult:
        """A case whose model call or metrics failed: no values (never averaged in as zeros)."""
        return cls(suite=suite, suite_ref=suite_ref, case_id=case_id, lang=lang, model=model, metrics={},
                   outcome="error", error=error, repeat=repeat)
