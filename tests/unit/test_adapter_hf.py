"""The hf: adapter on a tiny random Llama the test builds and saves (no hub, ~0.1 s to build)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
from pytest_mirage.errors import ModelError
from pytest_mirage.models.base import Answer, ModelRequest
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from pytest_mirage.models.hf_adapter import HFAdapter, create  # noqa: E402

CHAT_TEMPLATE = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")
SENTENCES = ["What is the capital of Germany?", "Berlin is the capital.", "Mji mkuu wa Kenya ni Nairobi.",
             "เมืองหลวงของไทยคือกรุงเทพ", "រាជធានីនៃកម្ពុជាគឺភ្នំពេញ", "question answer passage"]


def build_model(folder: Path, chat_template: str | None) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(SENTENCES * 5, trainer)
    kwargs: dict[str, Any] = {"chat_template": chat_template} if chat_template else {}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   **kwargs)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                         initializer_range=0.5, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model(tmp_path_factory.mktemp("tiny-chat"), CHAT_TEMPLATE)


@pytest.fixture(scope="module")
def base_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model(tmp_path_factory.mktemp("tiny-base"), None)


def short_requests(n: int) -> list[ModelRequest]:
    # short prompts of different lengths, so batches need padding
    return [dataclasses.replace(r, prompt=f"{SENTENCES[i % len(SENTENCES)]} " * (1 + i % 3))
            for i, r in enumerate(make_requests(n))]


def adapter(path: Path, options: str = "") -> HFAdapter:
    return create(parse_model_spec(f"hf:{path}?device=cpu&max_tokens=6&truncated=keep&temperature=0{options}"))


def test_batched_generation_equals_one_by_one(chat_model: Path) -> None:
    reqs = short_requests(5)
    batched = adapter(chat_model, "&batch_size=5")
    stats = EngineStats()
    out = run_requests(batched, reqs, EngineSettings(stats=stats))
    single = run_requests(adapter(chat_model, "&batch_size=1"), reqs, EngineSettings())
    assert all(isinstance(a, Answer) for a in out + single), out + single
    assert [a.output for a in out] == [a.output for a in single]  # type: ignore[union-attr]
    assert [a.case_id for a in out] == [r.case.id for r in reqs]  # type: ignore[union-attr]
    assert stats.calls == 5 and stats.completion_tokens == sum(a.usage["completion_tokens"] for a in out)  # type: ignore[union-attr]
    # the display name keeps the options that change answers, not device or truncation policy
    assert out[0].model == f"hf:{chat_model}?max_tokens=6&temperature=0"  # type: ignore[union-attr]


def test_chat_template_is_used_when_the_tokenizer_has_one(chat_model: Path, base_model: Path) -> None:
    from transformers import AutoTokenizer

    req = short_requests(1)[0]
    tok = AutoTokenizer.from_pretrained(chat_model)
    templated = f"<s>user: {req.prompt}\nassistant:"
    with_template = run_requests(adapter(chat_model), [req], EngineSettings())[0]
    assert isinstance(with_template, Answer)
    assert with_template.usage["prompt_tokens"] == len(tok(templated, add_special_tokens=False)["input_ids"])
    without = run_requests(adapter(chat_model, "&chat_template=false"), [req], EngineSettings())[0]
    plain = run_requests(adapter(base_model), [req], EngineSettings())[0]
    assert isinstance(without, Answer) and isinstance(plain, Answer)
    assert without.usage["prompt_tokens"] == len(tok(req.prompt)["input_ids"])
    assert plain.usage["prompt_tokens"] == without.usage["prompt_tokens"]


def test_sampling_is_seeded(chat_model: Path) -> None:
    reqs = short_requests(3)
    runs = [run_requests(adapter(chat_model, "&temperature=0.9&seed=3"), reqs, EngineSettings()) for _ in range(2)]
    assert [a.output for a in runs[0]] == [a.output for a in runs[1]]  # type: ignore[union-attr]


def test_truncated_output_is_kept_and_flagged_by_default(chat_model: Path, tmp_path: Path) -> None:
    model = create(parse_model_spec(f"hf:{chat_model}?device=cpu&max_tokens=3&temperature=0"))
    out = run_requests(model, short_requests(2), EngineSettings(cache_dir=tmp_path))
    for res in out:
        assert isinstance(res, Answer)
        assert res.truncated == (res.usage["finish_reason"] == "length")  # else it stopped early
    assert any(isinstance(r, Answer) and r.truncated for r in out)
    cached = run_requests(model, short_requests(2), EngineSettings(cache_dir=tmp_path))
    assert [a.truncated for a in cached] == [a.truncated for a in out]  # type: ignore[union-attr]


def test_truncated_output_is_an_error_when_asked(chat_model: Path) -> None:
    model = create(parse_model_spec(f"hf:{chat_model}?device=cpu&max_tokens=3&temperature=0&truncated=error"))
    stats = EngineStats()
    out = run_requests(model, short_requests(2), EngineSettings(stats=stats))
    for req, res in zip(short_requests(2), out, strict=True):
        if isinstance(res, ModelError):
            assert f"case engine-suite/{req.case.id}: hf model" in str(res)
            assert "cut at max_tokens=3" in str(res) and "?truncated=keep" in str(res)
        else:  # the random model happened to stop early
            assert isinstance(res, Answer) and res.usage["finish_reason"] == "stop"
    assert any(isinstance(r, ModelError) for r in out)
    assert stats.completion_tokens >= 3  # the tokens of the failed call are counted


def test_a_warm_cache_never_loads_the_model(chat_model: Path, tmp_path: Path) -> None:
    reqs = short_requests(3)
    settings = EngineSettings(cache_dir=tmp_path)
    first = run_requests(adapter(chat_model), reqs, settings)
    fresh = adapter(chat_model)
    second = run_requests(fresh, reqs, settings)
    assert fresh._model is None
    assert [a.output for a in first] == [a.output for a in second]  # type: ignore[union-attr]
    assert all(a.usage.get("cached") for a in second)  # type: ignore[union-attr]


def test_an_unloadable_model_fails_each_case_with_the_reason(tmp_path: Path) -> None:
    out = run_requests(adapter(tmp_path / "missing-model"), short_requests(2), EngineSettings())
    assert all(isinstance(e, ModelError) for e in out)
    assert "case engine-suite/q-1: hf model" in str(out[1]) and "cannot load it" in str(out[1])
