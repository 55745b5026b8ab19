"""``support_nli``: MIRAGE-Bench's support feature with any NLI checkpoint (transformers).

For every answer sentence that carries a citation, each passage it cites is a premise and the
sentence without its markers the hypothesis; the judge runs the NLI model on every (passage,
sentence) pair of every item together, sorted by length and cut into batches, and reports

* ``support_nli``: the mean entailment probability over the item's (sentence, citation) pairs,
* ``support_nli_neutral``: the mean neutral probability over the same pairs (a surrogate feature).

Sentences without a citation are not scored (MIRAGE-Bench checks cited sentences); a citation
that names no passage is a pair with probability 0 (it supports nothing); an answer that cites
nothing is null. The entailment and neutral labels are found in the model's ``id2label``
(``entailment``/``ENTAILMENT``/``entail``...). Premises longer than the model accepts are cut by
the tokenizer (``truncation="only_first"``: the hypothesis is kept whole when it fits).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from .base import JudgeHealth, JudgeItem, JudgeScore, import_backend, null_score
from .citing import cited_sentences, local_identity, passage_text, resolve_device

VERSION = "1"
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_LENGTH = 512
# special tokens before, between and after the two texts of a pair; token types of the two halves
Layout = tuple[list[int], list[int], list[int], tuple[int, int]]


def label_indices(id2label: Mapping[Any, str]) -> tuple[int, int | None]:
    """(entailment index, neutral index or None) from a model's ``id2label``."""
    entail = neutral = None
    for idx, name in id2label.items():
        low = str(name).strip().lower()
        if low.startswith("entail") and entail is None:
            entail = int(idx)
        elif low.startswith("neutral") and neutral is None:
            neutral = int(idx)
    if entail is None:
        raise ConfigError(f"support_nli: the model's id2label {dict(id2label)} has no entailment label; expected "
                          "an NLI checkpoint whose labels include one starting with 'entail' (set id2label in "
                          "its config.json)")
    return entail, neutral


def dtype_kwarg(dtype: Any) -> dict[str, Any]:
    """``from_pretrained``'s dtype argument: ``dtype`` since transformers 4.56, ``torch_dtype`` before."""
    version = str(importlib.import_module("transformers").__version__)
    major, minor = (int(x) for x in version.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def support_pairs(item: JudgeItem) -> list[tuple[str | None, str]]:
    """(premise or None for a citation naming no passage, hypothesis) for every (cited sentence,
    citation) of ``item``."""
    by_id = {p.id: p for p in item.passages}
    pairs: list[tuple[str | None, str]] = []
    for s in cited_sentences(item):
        pairs.extend((passage_text(by_id[c]), s.text) for c in s.cited)
        pairs.extend((None, s.text) for _ in s.invalid)
    return pairs


class NLIJudge:
    """Entailment of cited sentences by their passages, with an NLI sequence classifier."""

    kind = "support_nli"

    def __init__(self, model: str, *, metrics: Sequence[str] | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 device: str = "auto", max_length: int | None = None, dtype: str = "auto",
                 revision: str | None = None) -> None:
        self.model_name = model
        self.metrics: tuple[str, ...] = tuple(metrics) if metrics else ("support_nli", "support_nli_neutral")
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self.dtype = dtype
        self.revision = revision
        self.health = JudgeHealth()
        self._loaded: tuple[Any, Any, str, int, int | None, int] | None = None
        self._pair_layout: Layout | None = None
        self._layout_read = False
        self._backend_tokenize = True  # tokenize through a fast tokenizer's backend (False: its __call__)

    def identity(self) -> Mapping[str, Any]:
        opts = {"dtype": self.dtype, "max_length": self.max_length, "revision": self.revision}
        return local_identity(self.kind, self.model_name, {k: v for k, v in opts.items() if v is not None},
                              VERSION)

    def load(self) -> tuple[Any, Any, str, int, int | None, int]:
        """Tokenizer, model, device, entailment index, neutral index and max length (loaded once)."""
        if self._loaded is not None:
            return self._loaded
        torch = import_backend("torch", "support_nli")
        transformers = import_backend("transformers", "support_nli")
        kwargs: dict[str, Any] = {"revision": self.revision} if self.revision else {}
        dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_name, **kwargs)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self.model_name, **kwargs, **(dtype_kwarg(dtypes[self.dtype]) if self.dtype in dtypes else {}))
        except (OSError, ValueError) as exc:
            raise ModelError(f"support_nli: cannot load the NLI checkpoint {self.model_name!r}: {exc}. Give a local "
                             "folder saved with save_pretrained, or a model name the Hugging Face hub (or its "
                             "cache) can provide") from exc
        entail, neutral = label_indices(model.config.id2label)
        device = resolve_device(self.device)
        model.to(device)
        model.eval()
        limit = self.max_length or min(int(getattr(tokenizer, "model_max_length", DEFAULT_MAX_LENGTH) or
                                           DEFAULT_MAX_LENGTH), DEFAULT_MAX_LENGTH)
        self._loaded = (tokenizer, model, device, entail, neutral, limit)
        return self._loaded

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Class probabilities for (premise, hypothesis) pairs.

        Identical pairs are run once. Every distinct text is tokenized once (a passage is the
        premise of many sentences, of many models' answers) and the pairs are assembled with the
        tokenizer's own special-token layout, the premise cut to fit (``only_first``); then the
        pairs are sorted by length and run in batches of at most ``batch_size``
        (:func:`length_batches`)."""
        if not pairs:
            return []
        unique = list(dict.fromkeys(pairs))
        encoded = self._encode(unique)
        probs: list[list[float]] = [[] for _ in unique]
        for idx in length_batches([len(seq) for seq, _tt in encoded], self.batch_size):
            for i, p in zip(idx, self._forward([encoded[i] for i in idx]), strict=True):
                probs[i] = p
        self.health.calls += len(unique)
        position = {pair: i for i, pair in enumerate(unique)}
        return [probs[position[pair]] for pair in pairs]

    def _encode(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        """(input ids, token type ids) of every pair."""
        tokenizer, _model, _dev, _e, _n, limit = self.load()
        layout = self._layout()
        if layout is None:  # a tokenizer whose pair layout could not be read: let it build every pair
            out = []
            for premise, hypothesis in pairs:
                try:
                    enc = tokenizer(premise, hypothesis, truncation="only_first", max_length=limit)
                except Exception:  # the hypothesis alone is longer than the limit: cut both sides
                    enc = tokenizer(premise, hypothesis, truncation="longest_first", max_length=limit)
                out.append((list(enc["input_ids"]), list(enc.get("token_type_ids") or [0] * len(enc["input_ids"]))))
            return out
        prefix, mid, suffix, (type_a, type_b) = layout
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        ids = dict(zip(texts, self._text_ids(texts, limit), strict=True))
        room = limit - len(prefix) - len(mid) - len(suffix)
        head, tail = len(prefix) + len(mid), len(suffix)
        out = []
        for premise, hypothesis in pairs:
            b = ids[hypothesis][:max(1, room - 1)]
            a = ids[premise][:max(0, room - len(b))]
            out.append(([*prefix, *a, *mid, *b, *suffix], [type_a] * (head + len(a)) + [type_b] * (len(b) + tail)))
        return out

    def _text_ids(self, texts: Sequence[str], limit: int) -> list[list[int]]:
        """Token ids of each text without special tokens, cut at ``limit``.

        A fast tokenizer's Rust backend is called directly: the same ids as
        ``tokenizer(texts, add_special_tokens=False)``, without transformers building a Python
        encoding dict per text, which costs about as much as the tokenization itself on passages
        of a few hundred characters."""
        tokenizer = self.load()[0]
        backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
        if backend is not None and self._backend_tokenize:
            # what the tokenizer's own call does for truncation=False, padding=False: it sets both
            # on its backend at every call, so its later calls are not affected
            if backend.truncation is not None:
                backend.no_truncation()
            if backend.padding is not None:
                backend.no_padding()
            encode = getattr(backend, "encode_batch_fast", None) or backend.encode_batch
            return [enc.ids[:limit] for enc in encode(list(texts), add_special_tokens=False)]
        return [list(x) for x in tokenizer(list(texts), add_special_tokens=False, truncation=True,
                                           max_length=limit)["input_ids"]]

    def _layout(self) -> Layout | None:
        """The special tokens a pair gets before, between and after its two texts, and the token
        types of the two halves, read from the tokenizer by encoding a probe pair."""
        if self._layout_read:
            return self._pair_layout
        tokenizer = self.load()[0]
        layout: Layout | None = None
        try:
            a = tokenizer("premise", add_special_tokens=False)["input_ids"]
            b = tokenizer("hypothesis", add_special_tokens=False)["input_ids"]
            enc = tokenizer("premise", "hypothesis")
            full = list(enc["input_ids"])
            types = list(enc.get("token_type_ids") or [0] * len(full))
            i = _find(full, a, 0)
            j = _find(full, b, i + len(a)) if i >= 0 else -1
            if i >= 0 and j >= 0:
                layout = (full[:i], full[i + len(a):j], full[j + len(b):], (types[i], types[j]))
        except Exception:
            layout = None
        self._pair_layout, self._layout_read = layout, True
        return layout

    def _forward(self, batch: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        import numpy as np
        import torch

        tokenizer, model, device, _e, _n, _limit = self.load()
        width = max(len(seq) for seq, _tt in batch)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        left = getattr(tokenizer, "padding_side", "right") == "left"
        # one flat list per tensor, converted by numpy: torch.tensor on nested lists costs several
        # times more, and the mask is a comparison of positions with the lengths
        flat_ids: list[int] = []
        flat_types: list[int] = []
        lengths: list[int] = []
        for seq, tt in batch:
            fill = [pad] * (width - len(seq))
            zeros = [0] * (width - len(seq))
            if left:
                flat_ids += fill
                flat_ids += seq
                flat_types += zeros
                flat_types += tt
            else:
                flat_ids += seq
                flat_ids += fill
                flat_types += tt
                flat_types += zeros
            lengths.append(len(seq))
        shape = (len(batch), width)
        ids = torch.from_numpy(np.array(flat_ids, dtype=np.int64).reshape(shape))
        positions = torch.arange(width)
        length = torch.tensor(lengths, dtype=torch.long)[:, None]
        mask = (positions >= width - length) if left else (positions < length)
        inputs = {"input_ids": ids, "attention_mask": mask.long()}
        if "token_type_ids" in getattr(tokenizer, "model_input_names", ()):
            inputs["token_type_ids"] = torch.from_numpy(np.array(flat_types, dtype=np.int64).reshape(shape))
        with torch.inference_mode():
            logits = model(**{k: v.to(device) for k, v in inputs.items()}).logits.float()
        self.health.batches += 1
        result: list[list[float]] = torch.softmax(logits, dim=-1).cpu().tolist()
        return result

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        self.health.items += len(items)
        per_item = [support_pairs(it) for it in items]
        flat = [(p, h) for pairs in per_item for p, h in pairs if p is not None]
        results: list[JudgeScore] = []
        if flat:
            probs = iter(self.probabilities(flat))
            _tok, _model, _dev, entail, neutral, _limit = self.load()
        for it, pairs in zip(items, per_item, strict=True):
            if not it.passages:
                results.append(null_score(self.metrics, "the generator saw no passages"))
                continue
            if not pairs:
                results.append(null_score(self.metrics, "the answer cites no passage (MIRAGE-Bench support is "
                                                        "computed on cited sentences)"))
                continue
            ent: list[float] = []
            neu: list[float] = []
            for premise, _h in pairs:
                if premise is None:  # a citation naming no passage supports nothing
                    ent.append(0.0)
                    neu.append(0.0)
                    continue
                p = next(probs)
                ent.append(p[entail])
                neu.append(p[neutral] if neutral is not None else 0.0)
            values: dict[str, float | None] = {}
            reasons: dict[str, str] = {}
            if "support_nli" in self.metrics:
                values["support_nli"] = sum(ent) / len(ent)
            if "support_nli_neutral" in self.metrics:
                if neutral is None:
                    values["support_nli_neutral"] = None
                    reasons["support_nli_neutral"] = "the NLI model has no neutral label"
                else:
                    values["support_nli_neutral"] = sum(neu) / len(neu)
            results.append(JudgeScore(values, reasons))
        self.health.count_nulls(results)
        return results

    def close(self) -> None:
        self._loaded = None
        self._pair_layout, self._layout_read = None, False


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indices of the sequences sorted by length, cut into batches of at most ``size``.

    A batch also ends where the length changes once it is more than half full: most batches then
    hold sequences of one length, which need no padding, and a model given an all-ones mask skips
    the attention mask (transformers' SDPA path; on a CPU a tiny BERT runs such batches about 8%
    faster). Every batch but the last of a length run is more than half full, so there are at most
    about twice as many batches as with plain cuts every ``size``."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) >= size or (lengths[i] != lengths[current[-1]] and 2 * len(current) > size)):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _find(seq: list[int], sub: list[int], start: int) -> int:
    """Index of the first occurrence of ``sub`` in ``seq`` at or after ``start``, else -1."""
    for i in range(start, len(seq) - len(sub) + 1):
        if seq[i:i + len(sub)] == sub:
            return i
    return -1


def create(spec: Any, *, complete: Any = None, base_dir: Path | None = None) -> NLIJudge:
    """Factory for :func:`pytest_mirage.judges.spec.create_judge` (``support_nli=hf:NAME_OR_PATH``)."""
    model = spec.model
    if base_dir is not None and model.startswith(("./", "../")):
        model = str((base_dir / model).resolve())
    return NLIJudge(model, metrics=spec.metrics, batch_size=spec.option("batch_size", DEFAULT_BATCH_SIZE),
                    device=spec.option("device", "auto"), max_length=spec.option("max_length"),
                    dtype=spec.option("dtype", "auto"), revision=spec.option("revision"))
