"""Training the offline faithfulness judge (:mod:`pytest_mirage.metrics.offline_judge`), the ARES way.

The data: the faithful reference answers of the bundled suites and the synthetic variants
:func:`pytest_mirage.judges.perturb.generate` makes of them with the seed; the model: a standardised
L2 logistic regression with Platt calibration (scikit-learn, imported here only), written to
``pytest_mirage/metrics/offline_faithfulness.json`` by ``python benchmarks/train_faithfulness.py
--seed 0``. The same seed writes the same bytes on the same platform; the file records the SHA-256
of its training data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..metrics.offline_judge import FEATURES, MODEL_FORMAT, TRAIN_COMMAND, features
from ..suites.model import Passage
from .perturb import Example


def suite_triples(root: Path, *, khmer_limit: int = 40) -> list[Example]:
    """Faithful triples from the bundled suites under ``root/suites``: each case's question, its
    passages (khmer-telecom: the relevant corpus chunks and two others of the suite) and its first
    reference answer; khmer-telecom contributes its first ``khmer_limit`` cases (sorted by id) so
    that Khmer does not outweigh the other languages."""
    out: list[Example] = []
    for path in sorted((root / "suites" / "mirage-mini" / "cases").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            c = json.loads(line)
            passages = tuple(Passage(p["id"], p["text"], p.get("title")) for p in c["passages"])
            out.append(Example(c["id"], c["lang"], c["question"], passages, c["answers"][0], 1, "original",
                               tuple(c.get("relevant", ()))))
    km = root / "suites" / "khmer-telecom"
    corpus: dict[str, Passage] = {}
    for path in sorted((km / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                corpus[d["id"]] = Passage(d["id"], d["text"], d.get("title"))
    ids = sorted(corpus)
    cases = []
    for path in sorted((km / "cases").glob("*.jsonl")):
        cases += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases.sort(key=lambda c: c["id"])
    for i, c in enumerate(cases[:khmer_limit]):
        rel = [corpus[r] for r in c["relevant"] if r in corpus]
        others = [corpus[ids[(i * 7 + k * 13) % len(ids)]] for k in (1, 2)]
        passages = tuple(rel + [o for o in others if o not in rel])
        out.append(Example(c["id"], c["lang"], c["question"], passages, c["answers"][0], 1, "original",
                           tuple(p.id for p in rel)))
    return out


def verifiable(e: Example) -> bool:
    """Whether the fact check finds every number and month of a faithful reference answer in its
    passages. A reference that states a number its passages do not hold (a sum, a converted unit,
    outside knowledge) is not a clean faithful example: kept, it teaches the judge that an invented
    number is faithful about as often as the generator's edits teach it the opposite."""
    from ..metrics.verdicts import sentence_verdicts

    return not any(c.kind in ("number", "month") for v in sentence_verdicts(e.answer, e.passages, e.lang)
                   for c in v.missing)


def dataset_hash(examples: Sequence[Example]) -> str:
    blob = json.dumps([e.to_json() for e in examples], ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def feature_matrix(examples: Sequence[Example]) -> list[list[float]]:
    rows = []
    for e in examples:
        f = features(e.answer, e.passages, e.lang, e.question)
        rows.append([f[name] for name in FEATURES])
    return rows


def fit(rows: Sequence[Sequence[float]], labels: Sequence[int], seed: int, *, c: float = 0.1) -> dict[str, Any]:
    """Standardise, fit an L2 logistic regression, and calibrate it with Platt scaling fitted on
    5-fold out-of-fold decision values, both with balanced class weights (the generator makes more
    unfaithful examples than faithful ones; unweighted, that ratio would move every probability) (what scikit-learn's ``CalibratedClassifierCV(method=
    'sigmoid', ensemble=False)`` does, written out so that every part goes to the JSON file)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
    from sklearn.model_selection import StratifiedKFold  # type: ignore[import-untyped]

    x = np.asarray(rows, dtype=float)
    y = np.asarray(labels, dtype=int)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale

    def model() -> Any:
        return LogisticRegression(C=c, max_iter=10_000, tol=1e-10, class_weight="balanced")

    oof = np.zeros(len(y))
    for train_idx, test_idx in StratifiedKFold(5, shuffle=True, random_state=seed).split(z, y):
        oof[test_idx] = model().fit(z[train_idx], y[train_idx]).decision_function(z[test_idx])
    platt = LogisticRegression(C=1e6, max_iter=10_000, tol=1e-10, class_weight="balanced").fit(oof.reshape(-1, 1), y)
    final = model().fit(z, y)
    # P(faithful) = 1 / (1 + exp(a f + b)) with f the decision value: a = -w, b = -c of the 1-D fit
    return {"logistic": {"mean": [float(v) for v in mean], "scale": [float(v) for v in scale],
                         "coef": [float(v) for v in final.coef_[0]], "intercept": float(final.intercept_[0]),
                         "C": c},
            "calibration": {"method": "platt", "a": -float(platt.coef_[0][0]), "b": -float(platt.intercept_[0])}}


# The documented default threshold (flag an answer below it), chosen on fixtures/faithfulness/dev only:
# thresholds 0.45 to 0.55 flag the same 4 of its 39 faithful non-refusal answers (10.3 %, under the
# 15 % target) and 0.60 flags 17.9 %; the lowest of that plateau is kept, a margin for unseen clean
# answers longer than the dev set's (dev F1 of flagging 0.877 at 0.45, 0.949 at 0.55).
DEFAULT_THRESHOLD = 0.45


def train(root: Path, seed: int = 0, *, threshold: float = DEFAULT_THRESHOLD,
          progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The model JSON trained on the synthetic set of the suites under ``root`` with ``seed``."""
    from . import perturb

    every = suite_triples(root)
    triples = [t for t in every if verifiable(t)]
    examples = perturb.generate(triples, seed)
    if progress:
        progress(f"{len(every)} faithful triples, {len(triples)} with every number and month in their passages "
                 f"-> {len(examples)} examples; extracting features")
    rows = feature_matrix(examples)
    labels = [e.label for e in examples]
    params = fit(rows, labels, seed)
    kinds: dict[str, int] = {}
    langs: dict[str, int] = {}
    for e in examples:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
        langs[e.lang] = langs.get(e.lang, 0) + 1
    return {"format": MODEL_FORMAT, "version": 1, "features": list(FEATURES), **params, "threshold": threshold,
            "training": {"command": TRAIN_COMMAND.replace("--seed 0", f"--seed {seed}"), "seed": seed,
                         "data_sha256": dataset_hash(examples), "examples": len(examples),
                         "faithful": sum(labels), "unfaithful": len(labels) - sum(labels),
                         "triples": len(triples), "triples_dropped_unverifiable": len(every) - len(triples), "sources": ["suites/mirage-mini", "suites/khmer-telecom"],
                         "kinds": dict(sorted(kinds.items())), "languages": dict(sorted(langs.items()))}}


def dump(model: Mapping[str, Any]) -> str:
    """The file text of a model (sorted keys, shortest round-trip floats): same model, same bytes."""
    return json.dumps(model, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
