"""A suite run scored by judges that train-judge fine-tuned (tiny random BERT), with a PPI gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")


def test_trained_judges_score_a_run_and_feed_ppi(pytester: pytest.Pytester, tmp_path: Path) -> None:
    from pytest_mirage.__main__ import main
    from tests.helpers.judge_suite import tiny_classifier, write_suite

    suite = write_suite(tmp_path / "suite")
    assert main(["make-judge-data", str(suite), "--out", str(tmp_path / "data"), "--seed", "0"]) == 0
    base = tiny_classifier(tmp_path / "base")
    assert main(["train-judge", str(tmp_path / "data"), "--model", str(base), "--out", str(tmp_path / "judges"),
                 "--max-steps", "3", "--batch-size", "8", "--device", "cpu"]) == 0
    shutil.copytree(suite, pytester.path / "demo")
    labels = ["case_id,model,metric,label"] + [f"{c},extractive,ares_answer_faithfulness,{int(c != 'en-002')}"
                                                for c in ("en-001", "en-002", "en-003", "es-001", "es-002")]
    (pytester.path / "demo" / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    args = ["demo", f"--mirage-judges=ares=classifier:{tmp_path / 'judges'}?device=cpu",
            f"--mirage-cache={pytester.path / 'c'}", f"--mirage-report={pytester.path / 'r.json'}",
            "--mirage-gate=ares_answer_faithfulness.ppi_low >= 0.0", "-p", "no:randomly"]
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()
    rep = json.loads((pytester.path / "r.json").read_text())
    mine = [r for r in rep["results"] if r["model"] == "extractive"]
    assert len(mine) == 10
    for r in mine:
        for m in ("ares_context_relevance", "ares_answer_faithfulness", "ares_answer_relevance"):
            assert 0 < r["metrics"][m] < 1, (r["case_id"], m)
    gate = [g for g in rep["gates"] if "ppi_low" in g["expr"]]
    assert gate and gate[0]["passed"], gate
    assert rep["calibration"], "the labels calibrate the fine-tuned judge"
    # the same trained judges score the same values in a fresh process (no cache)
    shutil.rmtree(pytester.path / "c")
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK
    again = [r for r in json.loads((pytester.path / "r.json").read_text())["results"] if r["model"] == "extractive"]
    for a, b in zip(again, mine, strict=True):
        assert a["metrics"]["ares_answer_faithfulness"] == pytest.approx(b["metrics"]["ares_answer_faithfulness"],
                                                                          abs=1e-6)
