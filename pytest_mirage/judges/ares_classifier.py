"""ARES's fine-tuned judges: a sequence classifier per metric whose P(label = yes) is the score.

``ares=classifier:DIR`` loads the three judges that ``python -m pytest_mirage train-judge`` wrote
into ``DIR`` (``DIR/context_relevance``, ``DIR/answer_faithfulness``, ``DIR/answer_relevance``);
``ares_answer_faithfulness=classifier:DIR`` loads one of them (``DIR`` or ``DIR/answer_faithfulness``).
A single-metric spec may also name any two-label ``AutoModelForSequenceClassification`` (a local
folder or a hub name): the label named ``yes`` (else index 1) is the positive one.

What each judge reads, as in training (judges/ares_data.py):

* ``ares_context_relevance``: (question, passage) for every passage the generator saw; the value is
  the highest probability (the context is relevant when one passage holds what is needed);
* ``ares_answer_faithfulness``: (the passages the answer cites, all passages when it cites none,
  joined in prompt order; the answer without citation markers). The passages are cut to fit the
  model, the answer kept whole when it fits;
* ``ares_answer_relevance``: (question, answer without citation markers).

No passages: context relevance and faithfulness are null; an empty answer: faithfulness and
relevance are null. The pairs of all items go through the model together (sorted by length, in
batches: the NLI judge's machinery).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from .base import JudgeHealth, JudgeItem, JudgeScore, import_backend
from .citing import cited_passages, local_identity, passage_text, resolve_device
from .nli import DEFAULT_BATCH_SIZE, DEFAULT_MAX_LENGTH, NLIJudge, dtype_kwarg

VERSION = "1"
CARD = "mirage-judge.json"  # written by train-judge next to each model
CARD_SCHEMA = "pytest-mirage/ares-judge/1"
JUDGE_DIRS = {"ares_context_relevance": "context_relevance", "ares_answer_faithfulness": "answer_faithfulness",
              "ares_answer_relevance": "answer_relevance"}
_POSITIVE_NAMES = ("yes", "relevant", "faithful", "positive", "true")


def read_card(folder: Path) -> dict[str, Any] | None:
    """The training card of a judge folder, or None when it has none (a classifier trained elsewhere)."""
    path = folder / CARD
    if not path.is_file():
        return None
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc}); retrain with train-judge") from None
    if not isinstance(card, dict) or card.get("schema") != CARD_SCHEMA or card.get("metric") not in JUDGE_DIRS:
        raise ConfigError(f"{path}: expected a {CARD_SCHEMA!r} card with a 'metric' of "
                          f"{', '.join(JUDGE_DIRS)}; retrain with train-judge")
    return card


def resolve_folders(model: str, metrics: Sequence[str]) -> dict[str, str]:
    """metric -> the checkpoint that scores it (a folder, or a hub name for a single metric)."""
    root = Path(model)
    if not root.exists() and (root.is_absolute() or model.startswith((".", "~"))):
        raise ConfigError(f"classifier:{model}: no such folder; give the folder train-judge wrote "
                          "(python -m pytest_mirage train-judge DATA --model CHECKPOINT --out DIR)")
    card = read_card(root) if root.is_dir() else None
    if card is not None:
        if list(metrics) != [card["metric"]]:
            raise ConfigError(f"classifier:{model}: this folder holds the {card['metric']} judge only, not "
                              f"{', '.join(metrics)}; name that metric ({card['metric']}=classifier:{model}) or give "
                              "the folder train-judge wrote all judges into")
        return {card["metric"]: model}
    if root.is_dir() and any((root / JUDGE_DIRS[m]).is_dir() for m in metrics):
        missing = [m for m in metrics if not (root / JUDGE_DIRS[m]).is_dir()]
        if missing:
            raise ConfigError(f"classifier:{model}: no trained judge for {', '.join(missing)} (expected "
                              f"{', '.join(str(root / JUDGE_DIRS[m]) for m in missing)}); train it with "
                              f"train-judge --judges {','.join(JUDGE_DIRS[m] for m in missing)}, or name only the "
                              "metrics this folder has")
        return {m: str(root / JUDGE_DIRS[m]) for m in metrics}
    if len(metrics) != 1:
        raise ConfigError(f"classifier:{model}: not a folder written by train-judge (with "
                          f"{', '.join(JUDGE_DIRS.values())} inside); for a classifier of your own, configure one "
                          "metric per spec, e.g. ares_answer_faithfulness=classifier:PATH")
    return {metrics[0]: model}


def positive_index(id2label: Mapping[Any, str], num_labels: int, where: str) -> int:
    """The index of the 'yes' label of a two-label classifier."""
    if num_labels != 2:
        raise ConfigError(f"{where}: the classifier has {num_labels} labels; an ARES judge is a two-label "
                          "classifier (no / yes): train one with python -m pytest_mirage train-judge")
    for idx, name in id2label.items():
        if str(name).strip().lower() in _POSITIVE_NAMES:
            return int(idx)
    return 1


def _fingerprint(folder: str) -> str:
    """What identifies the checkpoint's weights (the card's hash, else the files' sizes and times),
    so that a judge retrained into the same folder is not served from the score cache."""
    p = Path(folder)
    if not p.is_dir():
        return ""
    card = read_card(p)
    if card is not None and isinstance(card.get("weights_sha256"), str):
        return str(card["weights_sha256"])
    h = hashlib.sha256()
    for f in sorted(p.iterdir()):
        if f.is_file():
            st = f.stat()
            h.update(f"{f.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


class _Classifier(NLIJudge):
    """One two-label cross-encoder: the NLI judge's batching with a 'yes' label instead of entailment."""

    kind = "ares_classifier"

    def load(self) -> tuple[Any, Any, str, int, int | None, int]:
        if self._loaded is not None:
            return self._loaded
        torch = import_backend("torch", "ares classifier judge")
        transformers = import_backend("transformers", "ares classifier judge")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_name)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self.model_name, **dtype_kwarg(torch.float32))
        except (OSError, ValueError) as exc:
            raise ModelError(f"ares classifier: cannot load {self.model_name!r}: {exc}. Give a folder written by "
                             "python -m pytest_mirage train-judge, or a local two-label classifier saved with "
                             "save_pretrained") from exc
        yes = positive_index(model.config.id2label, int(model.config.num_labels), f"classifier:{self.model_name}")
        device = resolve_device(self.device)
        model.to(device)
        model.eval()
        limit = self.max_length or min(int(getattr(tokenizer, "model_max_length", DEFAULT_MAX_LENGTH) or
                                           DEFAULT_MAX_LENGTH), DEFAULT_MAX_LENGTH)
        self._loaded = (tokenizer, model, device, yes, None, limit)
        return self._loaded

    def yes(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(yes) of each (text_a, text_b) pair."""
        if not pairs:
            return []
        probs = self.probabilities(pairs)
        index = self.load()[3]
        return [p[index] for p in probs]


def pair_inputs(metric: str, item: JudgeItem) -> list[tuple[str, str]] | str:
    """The pairs a judge reads for ``item`` (context relevance: one per passage), or why it is null."""
    from ..prompts import strip_citations

    answer = strip_citations(item.answer).strip()
    if metric != "ares_answer_relevance" and not item.passages:
        return "the generator saw no passages"
    if metric != "ares_context_relevance" and not any(ch.isalnum() for ch in answer):
        return "the answer is empty"
    if metric == "ares_context_relevance":
        return [(item.question, passage_text(p)) for p in item.passages]
    if metric == "ares_answer_faithfulness":
        evidence = cited_passages(item) or list(item.passages)
        return [("\n\n".join(passage_text(p) for p in evidence), answer)]
    return [(item.question, answer)]


class AresClassifierJudge:
    """ARES context relevance, answer faithfulness and answer relevance from fine-tuned classifiers."""

    kind = "ares"

    def __init__(self, model: str, *, metrics: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE,
                 device: str = "auto", max_length: int | None = None) -> None:
        self.model_name = model
        self.metrics = tuple(metrics)
        self.max_length = max_length
        self.folders = resolve_folders(model, self.metrics)
        self.health = JudgeHealth()
        self._classifiers = {m: _Classifier(path, metrics=(m,), batch_size=batch_size, device=device,
                                            max_length=max_length) for m, path in self.folders.items()}
        for c in self._classifiers.values():
            c.health = self.health  # one health block for the judge

    def identity(self) -> Mapping[str, Any]:
        opts: dict[str, Any] = {"metrics": list(self.metrics),
                                "weights": {m: _fingerprint(p) for m, p in sorted(self.folders.items())}}
        if self.max_length is not None:
            opts["max_length"] = self.max_length
        return local_identity("ares_classifier", self.model_name, opts, VERSION)

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        self.health.items += len(items)
        values: list[dict[str, float | None]] = [{} for _ in items]
        reasons: list[dict[str, str]] = [{} for _ in items]
        for metric in self.metrics:
            inputs = [pair_inputs(metric, it) for it in items]
            flat = [pair for x in inputs if not isinstance(x, str) for pair in x]
            scores = iter(self._classifiers[metric].yes(flat))
            for i, x in enumerate(inputs):
                if isinstance(x, str):
                    values[i][metric], reasons[i][metric] = None, x
                else:
                    values[i][metric] = max(next(scores) for _ in x)
        out = [JudgeScore(v, r) for v, r in zip(values, reasons, strict=True)]
        self.health.count_nulls(out)
        return out

    def close(self) -> None:
        for c in self._classifiers.values():
            c.close()


def create(spec: Any, *, complete: Any = None, base_dir: Path | None = None) -> AresClassifierJudge:
    """Factory for :func:`pytest_mirage.judges.spec.create_judge` (``ares=classifier:DIR``)."""
    model = spec.model
    if base_dir is not None and model.startswith(("./", "../")):
        model = str((base_dir / model).resolve())
    return AresClassifierJudge(model, metrics=spec.metrics, batch_size=spec.option("batch_size", DEFAULT_BATCH_SIZE),
                               device=spec.option("device", "auto"), max_length=spec.option("max_length"))
