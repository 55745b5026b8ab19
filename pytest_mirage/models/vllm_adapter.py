"""``vllm:MODEL``: vLLM's offline engine, all prompts of a run in one ``LLM.chat`` call.

vLLM schedules the whole batch itself (continuous batching), so the engine hands it every request
that missed the cache at once. The engine (``LLM``) is built on the first batch that needs it and
kept for the session; a fully cached run never starts it.

Options: ``tensor_parallel_size`` (GPUs to shard over, 1), ``dtype`` (``auto``), ``max_model_len``,
``gpu_memory_utilization`` (0.9), ``temperature`` (0.1, as in MIRAGE), ``top_p`` (1.0),
``max_tokens`` (512), ``seed`` (0), ``chat`` (true: ``LLM.chat`` with the model's chat template;
false: ``LLM.generate`` on the plain prompt, for base models), ``batch_size`` (requests per call;
default all), ``truncated`` (``keep``: cut answers are kept and flagged; or ``error``),
``trust_remote_code`` (false), ``name`` (the display name).

Structured output: a request with a :class:`~pytest_mirage.models.base.ResponseFormat` (LLM judges
with ``structured=auto|on``) gets its own sampling parameters with vLLM's guided decoding on the
JSON schema (``StructuredOutputsParams`` in newer vLLM, ``GuidedDecodingParams`` in older ones); a
vLLM without either answers such requests with an error naming the fix.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError, ModelError
from .base import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, Answer, EngineRequest, ResponseFormat
from .options import SpecOptions
from .registry import ModelSpec

OPTIONS = ("tensor_parallel_size", "dtype", "max_model_len", "gpu_memory_utilization", "temperature", "top_p",
           "max_tokens", "seed", "chat", "batch_size", "truncated", "trust_remote_code")


class VLLMAdapter:
    """Offline vLLM generation over whole batches (see module doc)."""

    retrieves = False
    cache_scope = "messages"  # the model sees only the rendered messages
    structured_output = True  # guided decoding on a request's JSON schema

    def __init__(self, spec: ModelSpec) -> None:
        opts = SpecOptions(spec, OPTIONS)
        if not spec.arg:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: no model; expected vllm:NAME_OR_PATH, e.g. "
                              "vllm:Qwen/Qwen2.5-7B-Instruct")
        if importlib.util.find_spec("vllm") is None:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: vllm is not installed; install it on a GPU machine "
                              'with: pip install "pytest-mirage[vllm]" (or use openai: against a vllm server)')
        self.source = spec.arg
        self.name = spec.display_name
        self.tensor_parallel_size = opts.integer("tensor_parallel_size", 1, minimum=1) or 1
        self.dtype = opts.text("dtype", "auto") or "auto"
        self.max_model_len = opts.integer("max_model_len", None, minimum=1)
        self.gpu_memory_utilization = opts.number("gpu_memory_utilization", 0.9, minimum=0.01)
        self.temperature = opts.number("temperature", DEFAULT_TEMPERATURE, minimum=0.0)
        self.top_p = opts.number("top_p", 1.0, minimum=0.0)
        self.max_tokens = opts.integer("max_tokens", DEFAULT_MAX_TOKENS, minimum=1)
        self.seed = opts.integer("seed", 0)
        self.chat = opts.flag("chat", True)
        self.batch_size = opts.integer("batch_size", None, minimum=1)
        self.truncated = opts.choice("truncated", "keep", ("keep", "error"))
        self.trust_remote_code = opts.flag("trust_remote_code", False)
        self._llm: Any = None
        self._params: Any = None
        self._vllm: Any = None
        self._guided: dict[str, Any] = {}  # response format name + schema -> its sampling parameters
        self._load_error: str | None = None

    def cache_identity(self) -> Mapping[str, Any] | None:
        # tensor parallelism and memory settings change speed, not answers: left out of the key
        return {"kind": "vllm", "model": self.source, "dtype": self.dtype, "temperature": self.temperature,
                "top_p": self.top_p, "max_tokens": self.max_tokens, "seed": self.seed, "chat": self.chat,
                "truncated": self.truncated}

    def _load(self) -> None:
        if self._llm is not None or self._load_error is not None:
            return
        vllm: Any = importlib.import_module("vllm")  # GPU machines only; never imported before this
        self._vllm = vllm
        LLM, SamplingParams = vllm.LLM, vllm.SamplingParams

        kwargs: dict[str, Any] = {"model": self.source, "tensor_parallel_size": self.tensor_parallel_size,
                                  "dtype": self.dtype, "gpu_memory_utilization": self.gpu_memory_utilization,
                                  "seed": self.seed, "trust_remote_code": self.trust_remote_code}
        if self.max_model_len is not None:
            kwargs["max_model_len"] = self.max_model_len
        try:
            self._llm = LLM(**kwargs)
        except Exception as exc:  # CUDA, OOM, missing weights: every case reports it
            self._load_error = (f"vllm model {self.source!r}: cannot start the engine "
                                f"({type(exc).__name__}: {exc}); check the model path, the GPU and "
                                "tensor_parallel_size/gpu_memory_utilization/max_model_len")
            return
        self._params = SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens,
                                      seed=self.seed)

    def _guided_params(self, fmt: ResponseFormat) -> Any:
        """Sampling parameters that constrain the output to ``fmt``'s JSON schema (built once per
        format); raises ValueError when this vLLM has no guided decoding."""
        key = fmt.name + "\0" + fmt.schema_json
        if key not in self._guided:
            module: Any = getattr(self._vllm, "sampling_params", None)
            kwargs: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p,
                                      "max_tokens": self.max_tokens, "seed": self.seed}
            if hasattr(module, "StructuredOutputsParams"):  # vLLM >= 0.10.2
                kwargs["structured_outputs"] = module.StructuredOutputsParams(json=fmt.schema)
            elif hasattr(module, "GuidedDecodingParams"):  # vLLM 0.6.3 - 0.10
                kwargs["guided_decoding"] = module.GuidedDecodingParams(json=fmt.schema)
            else:
                raise ValueError("this vllm version has no guided decoding (StructuredOutputsParams or "
                                 "GuidedDecodingParams); upgrade vllm, or give the judge spec structured=off")
            self._guided[key] = self._vllm.SamplingParams(**kwargs)
        return self._guided[key]

    def _run(self, chunk: Sequence[EngineRequest]) -> list[Any]:
        params: Any = self._params
        if any(r.response_format is not None for r in chunk):  # one parameter set per request
            params = [self._params if r.response_format is None else self._guided_params(r.response_format)
                      for r in chunk]
        if self.chat:
            return list(self._llm.chat([r.messages for r in chunk], sampling_params=params, use_tqdm=False))
        return list(self._llm.generate([r.prompt for r in chunk], sampling_params=params, use_tqdm=False))

    def answer_batch(self, requests: Sequence[EngineRequest]) -> list[Answer | Exception]:
        self._load()
        if self._load_error is not None:
            return [ModelError(f"{r.noun} {r.ref}: {self._load_error}") for r in requests]
        out: list[Answer | Exception] = []
        size = self.batch_size or max(1, len(requests))
        for start in range(0, len(requests), size):
            chunk = list(requests[start:start + size])
            try:
                outputs = self._run(chunk)
            except (ValueError, RuntimeError) as exc:
                if len(chunk) == 1:
                    out.append(self._error(chunk[0], f"generation failed ({type(exc).__name__}: {exc})"))
                    continue
                # one prompt over max_model_len fails the whole call: isolate it
                for r in chunk:
                    out.extend(self.answer_batch([r]))
                continue
            if len(outputs) != len(chunk):
                raise RuntimeError(f"vllm returned {len(outputs)} outputs for {len(chunk)} prompts")
            out.extend(self._convert(r, o) for r, o in zip(chunk, outputs, strict=True))
        return out

    def _error(self, request: EngineRequest, reason: str) -> ModelError:
        return ModelError(f"{request.noun} {request.ref}: vllm model {self.source!r}: {reason}")

    def _convert(self, request: EngineRequest, output: Any) -> Answer | Exception:
        if not output.outputs:
            return self._error(request, "vllm returned no completion")
        completion = output.outputs[0]
        text = str(completion.text)
        finish = getattr(completion, "finish_reason", None)
        usage = {"prompt_tokens": len(output.prompt_token_ids or ()),
                 "completion_tokens": len(completion.token_ids or ()), "finish_reason": finish}
        if finish == "length" and self.truncated == "error":
            error = self._error(request, f"the output was cut at max_tokens={self.max_tokens}: {text[:200]!r}; "
                                         "raise ?max_tokens=N or keep cut answers (flagged truncated) with "
                                         "?truncated=keep")
            error.usage = usage  # type: ignore[attr-defined]
            return error
        if not text.strip():
            return self._error(request, f"generated no text (finish_reason={finish!r})")
        return Answer(case_id=request.item_id, model=self.name, output=text.strip(), usage=usage,
                      truncated=finish == "length")

    def close(self) -> None:
        self._llm = None


def create(spec: ModelSpec) -> VLLMAdapter:
    return VLLMAdapter(spec)
