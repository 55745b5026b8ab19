"""Judge work (model inputs, batches) is an engine figure: summed over processes, kept out of reports."""

from __future__ import annotations

from pytest_mirage.engine import EngineStats, judge_work_lines
from pytest_mirage.judges.base import JudgeHealth


def test_judge_work_is_summed_over_workers_and_printed_with_the_engine_figures() -> None:
    one, two = JudgeHealth(items=3, calls=6, batches=2), JudgeHealth(items=3, calls=5, batches=3)
    worker = EngineStats()
    worker.add_judge_work({"support_llm (x)": two.to_json(), "idle": JudgeHealth().to_json()})
    controller = EngineStats()
    controller.add_judge_work({"support_llm (x)": one.to_json()})
    controller.merge(worker.to_dict())  # what a worker sends through workeroutput
    assert controller.judge_work == {"support_llm (x)": {"calls": 11, "batches": 5}}
    assert judge_work_lines(controller) == ["mirage judge work: support_llm (x) 11 model inputs in 5 batches "
                                            "(summed over the xdist workers, each batching its own items)"]
    assert judge_work_lines(EngineStats()) == []
    assert EngineStats.from_dict(controller.to_dict()).judge_work == controller.judge_work
