"""Fine-tuning ARES's judges (§3.2): one two-label cross-encoder per metric, with transformers.

:func:`train_judge` trains one judge on the ``train`` rows of a dataset written by
``make-judge-data`` (judges/ares_data.py): a plain seeded loop (AdamW, linear decay, cross-entropy,
batches in a seeded order, dropout on), evaluated on the ``dev`` rows after every epoch; training
stops when the dev loss has not improved for ``patience`` epochs (ARES: three) and the best epoch's
weights are kept. The folder gets the model and tokenizer (``save_pretrained``) and a card,
``mirage-judge.json``: the base checkpoint, the dataset's sha256 and suite, the settings, the epochs,
and the dev accuracy and ROC AUC overall, per language and per kind of row. torch and transformers
are imported here only, when a judge is trained.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from .ares_classifier import CARD, CARD_SCHEMA
from .ares_data import METRIC, Row
from .base import import_backend
from .citing import resolve_device, token_limit

LABELS = {0: "no", 1: "yes"}


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """How a judge is trained (every field is recorded in its card)."""

    epochs: int = 10
    patience: int = 3  # epochs without a lower dev loss before stopping (ARES §3.2)
    batch_size: int = 16
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    max_length: int = 256
    max_steps: int | None = None  # stop after this many optimizer steps (a budget; None: epochs only)
    seed: int = 0
    device: str = "auto"

    def check(self) -> None:
        for name in ("epochs", "patience", "batch_size", "max_length"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"train-judge: --{name.replace('_', '-')} {getattr(self, name)!r}: expected an "
                                  "integer of at least 1")
        if not 0 < self.learning_rate < 1:
            raise ConfigError(f"train-judge: --learning-rate {self.learning_rate!r}: expected a value in (0, 1), "
                              "e.g. 2e-5")
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigError(f"train-judge: --max-steps {self.max_steps!r}: expected an integer of at least 1")


def _seed_all(torch: Any, seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _encode(tokenizer: Any, rows: Sequence[Row], max_length: int) -> Any:
    a = [r.text_a for r in rows]
    b = [r.text_b for r in rows]
    try:  # the passage/question side is cut first: the answer is what is judged
        return tokenizer(a, b, truncation="only_first", max_length=max_length, padding=True, return_tensors="pt")
    except Exception:  # the second text alone is longer than the limit
        return tokenizer(a, b, truncation="longest_first", max_length=max_length, padding=True, return_tensors="pt")


def _batches(n: int, size: int, order: Sequence[int]) -> list[list[int]]:
    return [list(order[i:i + size]) for i in range(0, n, size)]


def _evaluate(torch: Any, model: Any, tokenizer: Any, rows: Sequence[Row], settings: TrainSettings,
              device: str) -> tuple[float, list[float]]:
    """(mean cross-entropy, P(yes) per row) on ``rows``."""
    model.eval()
    loss_sum, probs = 0.0, []
    with torch.inference_mode():
        for idx in _batches(len(rows), settings.batch_size, range(len(rows))):
            batch = [rows[i] for i in idx]
            enc = {k: v.to(device) for k, v in _encode(tokenizer, batch, settings.max_length).items()}
            labels = torch.tensor([r.label for r in batch], device=device)
            out = model(**enc, labels=labels)
            loss_sum += float(out.loss) * len(batch)
            probs += torch.softmax(out.logits.float(), dim=-1)[:, 1].cpu().tolist()
    return loss_sum / max(1, len(rows)), probs


def scores_table(rows: Sequence[Row], probs: Sequence[float]) -> dict[str, Any]:
    """Accuracy (P(yes) >= 0.5 against the label) and ROC AUC overall, per language and per kind."""
    from ..stats.calibration import roc_auc

    def block(sel: Sequence[int]) -> dict[str, Any]:
        y = [rows[i].label for i in sel]
        p = [probs[i] for i in sel]
        acc = sum((pi >= 0.5) == (yi == 1) for pi, yi in zip(p, y, strict=True)) / len(sel)
        auc = roc_auc(y, p) if len(set(y)) == 2 else math.nan
        return {"n": len(sel), "positives": sum(y), "accuracy": round(acc, 6),
                "roc_auc": None if math.isnan(auc) else round(auc, 6)}

    everything = list(range(len(rows)))
    langs = sorted({r.lang for r in rows})
    kinds = sorted({r.kind for r in rows})
    return {"overall": block(everything),
            "per_lang": {lang: block([i for i in everything if rows[i].lang == lang]) for lang in langs},
            "per_kind": {kind: block([i for i in everything if rows[i].kind == kind]) for kind in kinds}}


def train_judge(judge: str, rows: Sequence[Row], base_model: str, out_dir: Path, settings: TrainSettings,
                manifest: Mapping[str, Any], progress: Any = None) -> dict[str, Any]:
    """Fine-tune ``base_model`` for ``judge`` on its ``train`` rows, stop early on its ``dev`` rows,
    save the best epoch into ``out_dir`` and return its card."""
    settings.check()
    torch = import_backend("torch", "train-judge")
    transformers = import_backend("transformers", "train-judge")
    mine = [r for r in rows if r.judge == judge]
    train = [r for r in mine if r.split == "train"]
    dev = [r for r in mine if r.split == "dev"]
    for name, part in (("train", train), ("dev", dev)):
        if len({r.label for r in part}) < 2:
            raise ConfigError(f"train-judge {judge}: the {name} split has {len(part)} rows and not both labels; "
                              "a judge needs positives and negatives in both splits (more cases, or make-judge-data "
                              "--dev-share)")
    _seed_all(torch, settings.seed)
    device = resolve_device(settings.device)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(base_model)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            base_model, num_labels=2, id2label=LABELS, label2id={v: k for k, v in LABELS.items()},
            ignore_mismatched_sizes=True)
    except (OSError, ValueError) as exc:
        raise ModelError(f"train-judge: cannot load the checkpoint {base_model!r}: {exc}. Give a local folder saved "
                         "with save_pretrained or a model name the Hugging Face hub (or its cache) can "
                         "provide") from exc
    # never more tokens than the checkpoint accepts (a tiny or distilled model may take 128)
    settings = replace(settings, max_length=token_limit(tokenizer, settings.max_length))
    model.to(device)
    optim = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    per_epoch = math.ceil(len(train) / settings.batch_size)
    total = per_epoch * settings.epochs if settings.max_steps is None else min(per_epoch * settings.epochs,
                                                                                settings.max_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: max(0.0, 1.0 - step / max(1, total)))
    gen = torch.Generator().manual_seed(settings.seed)
    best_loss, best_epoch, best_state, stale, steps = math.inf, 0, None, 0, 0
    history: list[dict[str, float]] = []
    for epoch in range(1, settings.epochs + 1):
        model.train()
        order = torch.randperm(len(train), generator=gen).tolist()
        train_loss = 0.0
        seen = 0
        for idx in _batches(len(train), settings.batch_size, order):
            if settings.max_steps is not None and steps >= settings.max_steps:
                break
            batch = [train[i] for i in idx]
            enc = {k: v.to(device) for k, v in _encode(tokenizer, batch, settings.max_length).items()}
            out = model(**enc, labels=torch.tensor([r.label for r in batch], device=device))
            out.loss.backward()
            optim.step()
            sched.step()
            optim.zero_grad()
            steps += 1
            train_loss += float(out.loss.detach()) * len(batch)
            seen += len(batch)
        dev_loss, _probs = _evaluate(torch, model, tokenizer, dev, settings, device)
        history.append({"epoch": epoch, "train_loss": round(train_loss / max(1, seen), 6),
                        "dev_loss": round(dev_loss, 6), "steps": steps})
        if progress is not None:
            progress(f"{judge}: epoch {epoch} train loss {train_loss / max(1, seen):.4f} dev loss {dev_loss:.4f}")
        if dev_loss < best_loss:
            best_loss, best_epoch, stale = dev_loss, epoch, 0
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        else:
            stale += 1
        if stale >= settings.patience or (settings.max_steps is not None and steps >= settings.max_steps):
            break
    assert best_state is not None
    model.load_state_dict(best_state)
    _loss, probs = _evaluate(torch, model, tokenizer, dev, settings, device)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    weights = sorted(p for p in out_dir.iterdir() if p.suffix in (".safetensors", ".bin"))
    h = hashlib.sha256()
    for p in weights:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    card = {"schema": CARD_SCHEMA, "judge": judge, "metric": METRIC[judge], "base_model": base_model,
            "data_sha256": str(manifest.get("data_sha256")), "suite": manifest.get("suite"),
            "suite_hash": manifest.get("suite_hash"), "data_seed": manifest.get("seed"),
            "settings": asdict(settings), "device": device, "rows": {"train": len(train), "dev": len(dev)},
            "epochs_run": len(history), "best_epoch": best_epoch, "steps": steps, "history": history,
            "dev": scores_table(dev, probs), "weights_sha256": h.hexdigest(),
            "versions": {"torch": str(torch.__version__), "transformers": str(transformers.__version__)}}
    (out_dir / CARD).write_text(json.dumps(card, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
                                encoding="utf-8")
    return card
