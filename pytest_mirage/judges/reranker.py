"""``reranker_score``: MIRAGE-Bench's reranker feature through FlagEmbedding's ``FlagReranker``.

The score of an item is the mean *raw* reranker score (no sigmoid, so it may exceed 1) of the
question against each distinct passage the answer cites; every distinct (question, passage) pair
of every item goes to the reranker in one ``compute_score`` call, which sorts and batches them. An
answer that cites no passage is null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelError
from .base import JudgeHealth, JudgeItem, JudgeScore, import_backend, null_score
from .citing import cited_passages, local_identity, passage_text, resolve_device, token_limit

VERSION = "1"
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_LENGTH = 512


class RerankerJudge:
    """Mean raw cross-encoder score of the question against the cited passages."""

    kind = "reranker_score"
    metrics: tuple[str, ...] = ("reranker_score",)

    def __init__(self, model: str, *, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "auto",
                 max_length: int = DEFAULT_MAX_LENGTH, fp16: bool = False) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self.fp16 = fp16
        self.health = JudgeHealth()
        self._model: Any = None
        self._limit = max_length

    def identity(self) -> Mapping[str, Any]:
        return local_identity(self.kind, self.model_name, {"max_length": self.max_length, "fp16": self.fp16},
                              VERSION)

    def load(self) -> Any:
        if self._model is not None:
            return self._model
        flag = import_backend("FlagEmbedding", "reranker_score")
        device = resolve_device(self.device)
        try:
            self._model = flag.FlagReranker(self.model_name, use_fp16=self.fp16 and device != "cpu", devices=device,
                                       batch_size=self.batch_size, max_length=self.max_length, normalize=False)
        except (OSError, ValueError) as exc:
            raise ModelError(f"reranker_score: cannot load the reranker {self.model_name!r}: {exc}. Give a local "
                             "folder or a model name the Hugging Face hub (or its cache) can provide") from exc
        self._limit = token_limit(self._model.tokenizer, self.max_length)
        return self._model

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Raw reranker scores of (query, passage) pairs, in one batched call.

        Identical pairs are scored once: the systems of a run answer the same questions and cite
        the same passages, and a pair's score does not depend on which answer cited it."""
        if not pairs:
            return []
        model = self.load()
        unique = list(dict.fromkeys(pairs))
        raw = model.compute_score([list(p) for p in unique], batch_size=self.batch_size,
                                  max_length=self._limit, normalize=False)
        values = [float(raw)] if isinstance(raw, int | float) else [float(x) for x in raw]
        self.health.calls += len(unique)
        self.health.batches += -(-len(unique) // self.batch_size)
        by_pair = dict(zip(unique, values, strict=True))
        return [by_pair[p] for p in pairs]

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        self.health.items += len(items)
        cited = [cited_passages(it) for it in items]
        pairs = [(it.question, passage_text(p)) for it, ps in zip(items, cited, strict=True) for p in ps]
        values = iter(self.scores(pairs))
        out: list[JudgeScore] = []
        for ps in cited:
            if not ps:
                out.append(null_score(self.metrics, "the answer cites no passage"))
                continue
            got = [next(values) for _ in ps]
            out.append(JudgeScore({"reranker_score": sum(got) / len(got)}))
        self.health.count_nulls(out)
        return out

    def close(self) -> None:
        self._model = None


def create(spec: Any, *, complete: Any = None, base_dir: Path | None = None) -> RerankerJudge:
    """Factory for :func:`pytest_mirage.judges.spec.create_judge` (``reranker_score=flag:NAME_OR_PATH``)."""
    model = spec.model
    if base_dir is not None and model.startswith(("./", "../")):
        model = str((base_dir / model).resolve())
    return RerankerJudge(model, batch_size=spec.option("batch_size", DEFAULT_BATCH_SIZE),
                         device=spec.option("device", "auto"),
                         max_length=spec.option("max_length", DEFAULT_MAX_LENGTH), fp16=spec.option("fp16", False))
