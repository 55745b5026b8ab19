"""Progress: plain lines at a bounded rate off a terminal, labelled with what is being done."""

from __future__ import annotations

import pytest

from pytest_mirage.engine import EngineSettings, ProgressReporter, PromptRequest, run_requests
from pytest_mirage.errors import ModelError
from tests.helpers.adapters import CountingBatchAdapter, SlowAsyncAdapter
from tests.helpers.cases import make_requests


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_come_at_most_once_per_interval_with_rate_and_eta() -> None:
    lines: list[str] = []
    clock = Clock()
    bar = ProgressReporter(100, "model answers", "openai:m", True, "lines", interval_s=10.0,
                           write=lines.append, clock=clock)
    assert lines == ["mirage model answers [openai:m]: 100 to go"]
    for _ in range(40):  # 40 answers in 20 s, one every 0.5 s
        clock.now += 0.5
        bar.advance(1, errors=1 if len(lines) == 1 and bar.done == 3 else 0)
    assert lines[1:] == ["mirage model answers [openai:m]: 20/100 done, 1 errors, 2.00/s, ETA 40s",
                         "mirage model answers [openai:m]: 40/100 done, 1 errors, 2.00/s, ETA 30s"]
    clock.now += 95
    bar.advance(60)
    bar.close()
    assert lines[-1] == "mirage model answers [openai:m]: 100/100 done, 1 errors, 1m55s"
    assert len(lines) == 4


def test_judge_calls_are_labelled_as_such() -> None:
    lines: list[str] = []
    settings = EngineSettings(progress=True, progress_min=1, progress_style="lines", progress_write=lines.append)
    prompts = [PromptRequest(id=f"p{i}", prompt=f"compare {i}", label="judge") for i in range(3)]
    run_requests(CountingBatchAdapter(name="openai:judge"), prompts, settings)
    assert lines == ["mirage judge calls [openai:judge]: 3 to go",
                     "mirage judge calls [openai:judge]: 3/3 done, 0 errors, 0s"]
    lines.clear()
    run_requests(SlowAsyncAdapter(delay=0, fail=lambda r, n: ModelError("no") if r.item_id == "q-1" else None),
                 make_requests(2), settings)
    assert lines[-1].startswith("mirage model answers [async:test]: 2/2 done, 1 errors")


def test_nothing_is_shown_below_the_minimum_or_when_off(capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[str] = []
    run_requests(CountingBatchAdapter(), make_requests(3), EngineSettings(
        progress=True, progress_min=5, progress_style="lines", progress_write=lines.append))
    run_requests(CountingBatchAdapter(), make_requests(3), EngineSettings(progress=False, progress_style="lines"))
    assert lines == [] and capsys.readouterr().err == ""


def test_auto_style_writes_lines_to_stderr_without_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    run_requests(CountingBatchAdapter(), make_requests(3), EngineSettings(progress=True, progress_min=1))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["mirage model answers [batch:test]: 3 to go",
                                         "mirage model answers [batch:test]: 3/3 done, 0 errors, 0s"]
