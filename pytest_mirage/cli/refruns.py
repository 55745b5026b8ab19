"""Re-runnable production of a suite's reference runs (``python -m pytest_mirage make-runs``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelError
from ..evaluate.answering import answer_cases
from ..evaluate.requests import finalize_answer
from ..models.registry import ModelRegistry, parse_model_spec
from ..suites.resolve import load_ref, suite_ref


def make_runs(suite: str, models: list[str], *, trusted: Sequence[Path] = ()) -> list[Path]:
    """Answer every case of ``suite`` with each offline model and write ``runs/<model>.jsonl``.
    ``trusted``: folders outside the suite folder that its ``[source]`` may read."""
    from ..suites.runs import write_run_lines

    ref = suite_ref(suite, Path.cwd())
    s = load_ref(ref, trusted)
    registry = ModelRegistry()
    written = []
    for raw in models:
        ad = registry.create(parse_model_spec(raw))
        lines = []
        for req, ans in answer_cases(ad, s, s.cases):
            if isinstance(ans, BaseException):
                raise ModelError(f"{raw} failed on case {req.case.id}: {ans}")
            lines.append({"suite": s.name, **finalize_answer(req, ans).to_run_line()})
        out = s.root / "runs" / f"{raw.replace(':', '-').replace('/', '-')}.jsonl"
        write_run_lines(out, lines)
        written.append(out)
    return written
