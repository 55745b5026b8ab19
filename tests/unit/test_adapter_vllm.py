"""The vllm: adapter. The real engine needs vllm and a GPU (skipped without them); the plumbing is
checked against a stand-in ``vllm`` module that records how it is called."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_mirage.engine import EngineSettings, run_requests
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests


@dataclass
class _Completion:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class _Output:
    prompt_token_ids: list[int]
    outputs: list[_Completion]


@dataclass
class _Recorder:
    llm_kwargs: list[dict[str, Any]] = field(default_factory=list)
    chat_calls: list[list[Any]] = field(default_factory=list)
    generate_calls: list[list[Any]] = field(default_factory=list)
    params: list[dict[str, Any]] = field(default_factory=list)
    call_params: list[Any] = field(default_factory=list)  # the sampling_params of each chat/generate call


@dataclass(frozen=True)
class _Guided:
    json: Any


def _fake_vllm(recorder: _Recorder, max_prompt_chars: int = 10**9,
               guided: str | None = "StructuredOutputsParams") -> types.ModuleType:
    class SamplingParams:
        def __init__(self, **kwargs: Any) -> None:
            recorder.params.append(kwargs)

    class LLM:
        def __init__(self, **kwargs: Any) -> None:
            recorder.llm_kwargs.append(kwargs)

        def _answer(self, text: str) -> _Output:
            if len(text) > max_prompt_chars:
                raise ValueError(f"prompt of {len(text)} chars exceeds max_model_len")
            finish = "length" if "cut" in text else "stop"
            return _Output(prompt_token_ids=list(range(len(text.split()))),
                           outputs=[_Completion(text=f" reply to {text[:20]}", token_ids=[1, 2, 3],
                                                finish_reason=finish)])

        def chat(self, conversations: list[list[dict[str, str]]], sampling_params: Any = None,
                 use_tqdm: bool = True) -> list[_Output]:
            recorder.chat_calls.append(conversations)
            recorder.call_params.append(sampling_params)
            return [self._answer(c[-1]["content"]) for c in conversations]

        def generate(self, prompts: list[str], sampling_params: Any = None, use_tqdm: bool = True) -> list[_Output]:
            recorder.generate_calls.append(prompts)
            return [self._answer(p) for p in prompts]

    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.LLM = LLM  # type: ignore[attr-defined]
    module.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    # guided decoding: StructuredOutputsParams (vLLM >= 0.10.2), GuidedDecodingParams (older), or none
    module.sampling_params = types.SimpleNamespace(**({guided: _Guided} if guided else {}))  # type: ignore[attr-defined]
    return module


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(rec))
    return rec


def _create(spec: str) -> Any:
    from pytest_mirage.models.vllm_adapter import create

    return create(parse_model_spec(spec))


def test_whole_batch_goes_to_one_chat_call_with_the_options(recorder: _Recorder, tmp_path: Any) -> None:
    reqs = make_requests(7)
    adapter = _create("vllm:Qwen/Qwen2.5-7B-Instruct?tensor_parallel_size=2&max_tokens=128&max_model_len=8192")
    assert recorder.llm_kwargs == []  # nothing starts before a batch needs it
    out = run_requests(adapter, reqs, EngineSettings(cache_dir=tmp_path))
    assert len(recorder.chat_calls) == 1 and len(recorder.chat_calls[0]) == 7
    assert recorder.chat_calls[0][0] == reqs[0].messages
    kwargs = recorder.llm_kwargs[0]
    assert kwargs["model"] == "Qwen/Qwen2.5-7B-Instruct" and kwargs["tensor_parallel_size"] == 2
    assert kwargs["max_model_len"] == 8192
    assert recorder.params == [{"temperature": 0.1, "top_p": 1.0, "max_tokens": 128, "seed": 0}]
    assert all(isinstance(a, Answer) for a in out)
    first = out[0]
    assert isinstance(first, Answer) and first.output.startswith("reply to")
    assert first.usage["completion_tokens"] == 3 and first.model == "vllm:Qwen/Qwen2.5-7B-Instruct?max_tokens=128"
    # a warm cache needs no engine at all
    again = _create("vllm:Qwen/Qwen2.5-7B-Instruct?tensor_parallel_size=4&max_tokens=128&max_model_len=8192")
    run_requests(again, reqs, EngineSettings(cache_dir=tmp_path))
    assert len(recorder.llm_kwargs) == 1


def test_base_models_use_generate_on_the_plain_prompt(recorder: _Recorder) -> None:
    reqs = make_requests(2)
    run_requests(_create("vllm:some/base-model?chat=false"), reqs, EngineSettings())
    assert recorder.chat_calls == [] and recorder.generate_calls == [[r.prompt for r in reqs]]


def test_one_bad_prompt_does_not_fail_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    reqs = make_requests(3)
    reqs[1] = dataclasses.replace(reqs[1], prompt=reqs[1].prompt * 3)  # longer than the model takes
    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(rec, max_prompt_chars=len(reqs[0].prompt) * 2))
    out = run_requests(_create("vllm:m"), reqs, EngineSettings())
    assert len(rec.chat_calls) == 1 + len(reqs)  # the batch, then one by one
    assert isinstance(out[0], Answer) and isinstance(out[2], Answer)
    assert isinstance(out[1], ModelError) and "exceeds max_model_len" in str(out[1])
    assert "case engine-suite/q-1: vllm model 'm': generation failed (ValueError" in str(out[1])


def test_truncated_outputs_are_kept_and_flagged_or_errors_when_asked(recorder: _Recorder) -> None:
    import dataclasses

    req = dataclasses.replace(make_requests(1)[0], prompt="please cut here")
    out = run_requests(_create("vllm:m?max_tokens=5"), [req], EngineSettings())
    assert isinstance(out[0], Answer) and out[0].truncated and out[0].usage["finish_reason"] == "length"
    out = run_requests(_create("vllm:m?max_tokens=5&truncated=error"), [req], EngineSettings())
    assert isinstance(out[0], ModelError) and "cut at max_tokens=5" in str(out[0])


def test_bad_options_are_config_errors(recorder: _Recorder) -> None:
    with pytest.raises(ConfigError, match=r"unknown option 'tp'.*known options:.*tensor_parallel_size"):
        _create("vllm:m?tp=2")
    with pytest.raises(ConfigError, match="tensor_parallel_size: found '0'"):
        _create("vllm:m?tensor_parallel_size=0")


def test_missing_vllm_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    with pytest.raises(ConfigError, match=r'pip install "pytest-mirage\[vllm\]"'):
        _create("vllm:m")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs vllm (GPU machines only)")
@pytest.mark.skipif(not os.environ.get("MIRAGE_VLLM_MODEL"), reason="set MIRAGE_VLLM_MODEL to a local model")
def test_real_vllm_engine_answers_a_batch() -> None:
    model = os.environ["MIRAGE_VLLM_MODEL"]
    out = run_requests(_create(f"vllm:{model}?max_tokens=256&truncated=keep"), make_requests(4), EngineSettings())
    assert all(isinstance(a, Answer) and a.output for a in out), out


@pytest.mark.parametrize(("api", "field_name"), [("StructuredOutputsParams", "structured_outputs"),
                                                 ("GuidedDecodingParams", "guided_decoding")])
def test_structured_requests_get_guided_decoding_on_their_schema(monkeypatch: pytest.MonkeyPatch, api: str,
                                                                 field_name: str) -> None:
    from pytest_mirage.judges.structured import SCHEMAS, response_format
    from pytest_mirage.models.base import PromptRequest

    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(rec, guided=api))
    fmt = response_format("yes_no")
    reqs = [PromptRequest(id="a", prompt="plain", label="judge t"),
            PromptRequest(id="b", prompt="json one", label="judge t", response_format=fmt),
            PromptRequest(id="c", prompt="json two", label="judge t", response_format=fmt)]
    out = run_requests(_create("vllm:m?max_tokens=64"), reqs, EngineSettings())
    assert all(isinstance(a, Answer) for a in out)
    [params] = rec.call_params  # one call, one parameter set per request
    assert isinstance(params, list) and len(params) == 3
    assert params[1] is params[2] and params[0] is not params[1]  # built once per format
    assert rec.params[1] == {"temperature": 0.1, "top_p": 1.0, "max_tokens": 64, "seed": 0,
                             field_name: _Guided(json=SCHEMAS["yes_no"])}
    plain_only = _Recorder()
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(plain_only))
    run_requests(_create("vllm:m"), reqs[:1], EngineSettings())
    assert len(plain_only.params) == 1 and plain_only.call_params == [plain_only.call_params[0]]
    assert not isinstance(plain_only.call_params[0], list)  # a batch without formats keeps one parameter set


def test_a_vllm_without_guided_decoding_fails_only_the_structured_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mirage.judges.structured import response_format
    from pytest_mirage.models.base import PromptRequest

    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(_Recorder(), guided=None))
    reqs = [PromptRequest(id="a", prompt="plain", label="judge t"),
            PromptRequest(id="b", prompt="json", label="judge t", response_format=response_format("yes_no"))]
    plain, structured = run_requests(_create("vllm:m"), reqs, EngineSettings())
    assert isinstance(plain, Answer)
    assert isinstance(structured, ModelError) and "no guided decoding" in str(structured)
    assert "structured=off" in str(structured)
