"""``hf:PATH_OR_NAME``: local generation with Hugging Face transformers, in batches.

The prompt goes through the tokenizer's chat template when it has one (instruct models), else it
is used as plain text. Batches are left-padded; generation is greedy at temperature 0 and sampled
(with a fixed seed) above it. The model loads on the first batch that misses the cache, so a fully
cached run never loads it.

Options: ``device`` (``auto``: cuda when available, else cpu; or ``cpu``, ``cuda``, ``cuda:1``),
``dtype`` (``auto``, ``float32``, ``float16``, ``bfloat16``), ``batch_size`` (8), ``temperature``
(0.1, as in MIRAGE), ``top_p`` (1.0), ``max_tokens`` (new tokens, 512), ``seed`` (0),
``chat_template`` (true: use it when the tokenizer has one), ``truncated`` (``keep``: an answer cut
at ``max_tokens`` is kept and flagged; ``error``: it is an error), ``trust_remote_code`` (false),
``name`` (the display name).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from .base import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, Answer, EngineRequest
from .options import SpecOptions
from .registry import ModelSpec

OPTIONS = ("device", "dtype", "batch_size", "temperature", "top_p", "max_tokens", "seed", "chat_template",
           "truncated", "trust_remote_code")
DTYPES = ("auto", "float32", "float16", "bfloat16")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".json", ".model", ".txt")


def folder_fingerprint(path: Path) -> str | None:
    """A digest of a local model folder's files (names, sizes, modification times), or None when
    ``path`` is not a folder: re-saving a model there starts a fresh cache."""
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(path.iterdir()):
        if file.is_file() and file.name.endswith(_WEIGHT_SUFFIXES):
            st = file.stat()
            digest.update(f"{file.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


class HFAdapter:
    """Batched ``model.generate`` with a causal LM (see module doc)."""

    retrieves = False
    cache_scope = "messages"  # the model sees only the rendered messages

    def __init__(self, spec: ModelSpec) -> None:
        opts = SpecOptions(spec, OPTIONS)
        if not spec.arg:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: no model; expected hf:PATH_OR_NAME, e.g. "
                              "hf:Qwen/Qwen2.5-0.5B-Instruct or hf:./my-model")
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            # checked without importing: torch takes seconds to import, and only a cache miss needs it
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: {' and '.join(missing)} not installed; "
                              'install them with: pip install "pytest-mirage[hf]"')
        self.source = spec.arg
        self.name = spec.display_name
        self.device = opts.text("device", "auto") or "auto"
        self.dtype = opts.choice("dtype", "auto", DTYPES)
        self.batch_size = opts.integer("batch_size", 8, minimum=1)
        self.temperature = opts.number("temperature", DEFAULT_TEMPERATURE, minimum=0.0) or 0.0
        self.top_p = opts.number("top_p", 1.0, minimum=0.0)
        self.max_tokens: int = opts.integer("max_tokens", DEFAULT_MAX_TOKENS, minimum=1)
        self.seed = opts.integer("seed", 0)
        self.use_chat_template = opts.flag("chat_template", True)
        self.truncated = opts.choice("truncated", "keep", ("keep", "error"))
        self.trust_remote_code = opts.flag("trust_remote_code", False)
        self._fingerprint = folder_fingerprint(Path(self.source))
        self._model: Any = None
        self._tokenizer: Any = None
        self._load_error: ModelError | None = None

    def cache_identity(self) -> Mapping[str, Any] | None:
        return {"kind": "hf", "model": self.source, "files": self._fingerprint, "dtype": self.dtype,
                "temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                "seed": self.seed, "chat_template": self.use_chat_template, "truncated": self.truncated}

    # ------------------------------------------------------------------ loading
    def _load(self) -> None:
        if self._model is not None or self._load_error is not None:
            return
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        dtype = "auto" if self.dtype == "auto" else getattr(torch, self.dtype)
        # transformers 4.56 renamed torch_dtype to dtype (the old name logs a deprecation)
        new_name = tuple(int(x) for x in transformers.__version__.split(".")[:2] if x.isdigit()) >= (4, 56)
        dtype_arg = {"dtype" if new_name else "torch_dtype": dtype}
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(  # type: ignore[no-untyped-call]
                self.source, trust_remote_code=self.trust_remote_code)
            model: Any = AutoModelForCausalLM.from_pretrained(self.source, trust_remote_code=self.trust_remote_code,
                                                              **dtype_arg)
        except (OSError, ValueError, RuntimeError) as exc:
            self._load_error = ModelError(f"hf model {self.source!r}: cannot load it ({type(exc).__name__}: {exc}); "
                                          "give a local folder saved with save_pretrained, or a model name "
                                          "present in the Hugging Face cache")
            return
        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        tokenizer.padding_side = "left"  # decoder-only models continue from the right edge
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                self._load_error = ModelError(f"hf model {self.source!r}: its tokenizer has neither a pad nor an "
                                              "eos token; batched generation needs one")
                return
            tokenizer.pad_token = tokenizer.eos_token
        self._tokenizer = tokenizer
        self._model = model.to(device).eval()

    def _render(self, request: EngineRequest) -> tuple[str, bool]:
        tok = self._tokenizer
        if self.use_chat_template and getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(request.messages, tokenize=False, add_generation_prompt=True)
            return str(text), True
        return request.prompt, False

    # ------------------------------------------------------------------ generation
    def answer_batch(self, requests: Sequence[EngineRequest]) -> list[Answer | Exception]:
        self._load()
        if self._load_error is not None:
            return [ModelError(f"{r.noun} {r.ref}: {self._load_error}") for r in requests]
        out: list[Answer | Exception] = []
        size = self.batch_size or len(requests)
        for start in range(0, len(requests), size):
            chunk = list(requests[start:start + size])
            try:
                out.extend(self._generate(chunk))
            except (RuntimeError, ValueError) as exc:
                if len(chunk) == 1:
                    r = chunk[0]
                    out.append(ModelError(f"{r.noun} {r.ref}: hf model {self.source!r}: "
                                          f"generation failed ({type(exc).__name__}: {exc})"))
                else:
                    # one bad prompt (too long, ...) must not fail its neighbours: retry one by one
                    out.extend(self._one_by_one(chunk))
        return out

    def _one_by_one(self, chunk: list[EngineRequest]) -> list[Answer | Exception]:
        results: list[Answer | Exception] = []
        for r in chunk:
            try:
                results.extend(self._generate([r]))
            except (RuntimeError, ValueError) as exc:
                results.append(ModelError(f"{r.noun} {r.ref}: hf model {self.source!r}: "
                                          f"generation failed ({type(exc).__name__}: {exc})"))
        return results

    def _generate(self, chunk: list[EngineRequest]) -> list[Answer | Exception]:
        import torch

        tok, model = self._tokenizer, self._model
        rendered = [self._render(r) for r in chunk]
        texts = [t for t, _ in rendered]
        templated = rendered[0][1]
        # a chat template writes its own special tokens (BOS ...); plain prompts get the usual ones
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=not templated,
                  return_token_type_ids=False).to(model.device)
        kwargs: dict[str, Any] = {"max_new_tokens": self.max_tokens, "pad_token_id": tok.pad_token_id}
        if tok.eos_token_id is not None:
            kwargs["eos_token_id"] = tok.eos_token_id
        if self.temperature > 0:
            kwargs.update(do_sample=True, temperature=self.temperature, top_p=self.top_p)
            torch.manual_seed(self.seed or 0)
        else:
            kwargs.update(do_sample=False)
        with torch.inference_mode():
            generated = model.generate(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], **kwargs)
        width = enc["input_ids"].shape[1]
        results: list[Answer | Exception] = []
        stop_ids = {i for i in (tok.eos_token_id, tok.pad_token_id) if i is not None}
        for row, req in enumerate(chunk):
            ids = generated[row, width:].tolist()
            finished = False
            for pos, token in enumerate(ids):
                if token in stop_ids:
                    ids, finished = ids[:pos], True
                    break
            text = tok.decode(ids, skip_special_tokens=True).strip()
            where = f"{req.noun} {req.ref}: hf model {self.source!r}"
            cut = not finished and len(ids) >= self.max_tokens
            usage = {"prompt_tokens": int(enc["attention_mask"][row].sum()), "completion_tokens": len(ids),
                     "finish_reason": "length" if cut else "stop"}
            if cut and self.truncated == "error":
                error = ModelError(f"{where}: the output was cut at max_tokens={self.max_tokens}: {text[:200]!r}; "
                                   "raise ?max_tokens=N or keep cut answers (flagged truncated) with ?truncated=keep")
                error.usage = usage  # type: ignore[attr-defined]
                results.append(error)
                continue
            if not text:
                results.append(ModelError(f"{where}: generated no text ({len(ids)} tokens, all special)"))
                continue
            results.append(Answer(case_id=req.item_id, model=self.name, output=text, usage=usage, truncated=cut))
        return results

    def close(self) -> None:
        self._model = None
        self._tokenizer = None


def create(spec: ModelSpec) -> HFAdapter:
    return HFAdapter(spec)
