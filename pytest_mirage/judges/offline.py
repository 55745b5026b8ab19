"""Training the offline faithfulness judge (:mod:`pytest_mirage.metrics.offline_judge`), the ARES way.

The data: the faithful reference answers of the bundled suites and the synthetic variants
:func:`pytest_mirage.judges.perturb.generate` makes of them with the seed, and the hand-labelled
development sets :data:`HAND_SETS` (weighted so that, together, they weigh as much as the
synthetic examples); the model: a standardised
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


#: The hand-labelled development sets the judge is also trained on (``fixtures/faithfulness/...``):
#: realistic answers (paraphrases, LLM-style openings, refusals in a chat assistant's wording) that
#: no edit of a reference answer makes. The held-out sets (``test``, ``holdout``, ``holdout2``, ``holdout3``, ``holdout4``, ``holdout5``, ``holdout6``, ``holdout7``) are
#: never read.
HAND_SETS = ("dev", "dev2")


def hand_labelled(root: Path, sets: Sequence[str] = HAND_SETS) -> list[Example]:
    """The labelled answers of ``root/fixtures/faithfulness/SET/*.jsonl`` for each of ``sets``."""
    out: list[Example] = []
    for name in sets:
        for path in sorted((root / "fixtures" / "faithfulness" / name).glob("*.jsonl")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                if r.get("label") not in ("faithful", "unfaithful"):
                    raise ValueError(f"{path}:{n}: label {r.get('label')!r}: expected 'faithful' or 'unfaithful'")
                passages = tuple(Passage(p["id"], p["text"], p.get("title")) for p in r["passages"])
                out.append(Example(r["id"], r["lang"], r["question"], passages, r["answer"],
                                   int(r["label"] == "faithful"), r["kind"]))
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


def fit(rows: Sequence[Sequence[float]], labels: Sequence[int], seed: int, *, c: float = 0.1,
        signs: Sequence[int] | None = None, weights: Sequence[float] | None = None) -> dict[str, Any]:
    """Standardise, fit an L2 logistic regression whose coefficients keep the signs ``signs`` (+1:
    the feature may only raise P(faithful), -1: only lower it, 0: free; default :data:`SIGNS`), and
    calibrate it with Platt scaling fitted on 5-fold out-of-fold decision values (what
    scikit-learn's ``CalibratedClassifierCV(method='sigmoid', ensemble=False)`` does), both with
    balanced class weights (the generator makes more unfaithful examples than faithful ones;
    unweighted, that ratio would move every probability). Written out so that every part goes to the
    JSON file. The sign constraints keep the model monotone in its evidence: on correlated features
    an unconstrained fit gives some a weight of the wrong sign (an unsupported negation *raising*
    P(faithful)), which holds on the synthetic data and not on answers unlike it. ``weights``: one per
    example (default 1), multiplying its class weight in the fit and in the calibration."""
    import numpy as np
    from scipy.optimize import minimize  # type: ignore[import-untyped]
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
    from sklearn.model_selection import StratifiedKFold  # type: ignore[import-untyped]

    x = np.asarray(rows, dtype=float)
    y = np.asarray(labels, dtype=int)
    ew = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    sg = list(SIGNS if signs is None else signs)
    bounds = [(0.0, None) if g > 0 else (None, 0.0) if g < 0 else (None, None) for g in sg] + [(None, None)]

    def train_lr(zt: Any, yt: Any, wt: Any) -> tuple[Any, float]:
        pos, neg = float(wt[yt == 1].sum()), float(wt[yt == 0].sum())
        sw = wt * np.where(yt == 1, (pos + neg) / (2.0 * max(pos, 1e-12)), (pos + neg) / (2.0 * max(neg, 1e-12)))
        ys = 2.0 * yt - 1.0

        def loss(theta: Any) -> tuple[float, Any]:
            w, b0 = theta[:-1], theta[-1]
            m = ys * (zt @ w + b0)
            # log(1 + exp(-m)), stably, and its derivative -1 / (1 + exp(m))
            ll = np.logaddexp(0.0, -m)
            g = -sw * ys / (1.0 + np.exp(m))
            value = c * float(sw @ ll) + 0.5 * float(w @ w)
            grad = np.concatenate([c * (zt.T @ g) + w, [c * float(g.sum())]])
            return value, grad

        res = minimize(loss, np.zeros(zt.shape[1] + 1), jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 20_000, "ftol": 1e-15, "gtol": 1e-10})
        return res.x[:-1], float(res.x[-1])

    oof = np.zeros(len(y))
    for train_idx, test_idx in StratifiedKFold(5, shuffle=True, random_state=seed).split(z, y):
        w, b0 = train_lr(z[train_idx], y[train_idx], ew[train_idx])
        oof[test_idx] = z[test_idx] @ w + b0
    platt = LogisticRegression(C=1e6, max_iter=10_000, tol=1e-10, class_weight="balanced").fit(
        oof.reshape(-1, 1), y, sample_weight=ew)
    coef, intercept = train_lr(z, y, ew)
    # P(faithful) = 1 / (1 + exp(a f + b)) with f the decision value: a = -w, b = -c of the 1-D fit
    return {"logistic": {"mean": [float(v) for v in mean], "scale": [float(v) for v in scale],
                         "coef": [float(v) for v in coef], "intercept": intercept, "C": c,
                         "signs": sg, "class_weight": "balanced"},
            "calibration": {"method": "platt", "a": -float(platt.coef_[0][0]), "b": -float(platt.intercept_[0])}}


#: The sign each coefficient may take (+1: raises P(faithful), -1: lowers it, 0: free), by feature.
_SIGN_OF = {
    "lex_mean": 1, "lex_min": 1, "lex_low_share": -1, "qlex_min": 1, "qlex_mean": 1, "uncovered_log": -1,
    "max_uncovered_log": -1, "align_min": 1, "align_mean": 1, "order_min": 1, "order_mean": 1, "facts_log": 0,
    "facts_share": 1, "comparison_unsupported": -1, "unsupported_share": -1, "baseless": -1, "substitutions": -1,
    "inversion_max": -1, "sentences_log": 0, "units_log": 0,
}
SIGNS: tuple[int, ...] = tuple(_SIGN_OF.get(f, -1 if f.startswith("unsup_") else 0) for f in FEATURES)


# The documented default threshold (flag an answer below it): 0.4. The probability is calibrated on
# the training data, whose faithful answers (mostly the suites' references and their variants) copy
# their passages more than real answers do; on paraphrased answers it runs low. 0.4 is the largest
# threshold in steps of 0.05 at which the model flags at most 12 % (a margin under the 15 % target)
# of the faithful non-refusal answers of fixtures/faithfulness/dev2 when those are predicted by
# models trained without their language (two folds of the 19 languages, session 9; AUC 0.754):
# 11.3 %, with F1 0.68 at flagging the unfaithful ones (0.45 would flag 13.5 %, 0.5 17.3 %).
DEFAULT_THRESHOLD = 0.4


def train(root: Path, seed: int = 0, *, threshold: float = DEFAULT_THRESHOLD,
          progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The model JSON trained on the synthetic set of the suites under ``root`` with ``seed``."""
    from . import perturb

    every = suite_triples(root)
    triples = [t for t in every if verifiable(t)]
    synthetic = perturb.generate(triples, seed)
    hand = hand_labelled(root)
    examples = synthetic + hand
    # the hand-labelled answers weigh as much, together, as the synthetic ones
    hand_weight = len(synthetic) / len(hand) if hand else 0.0
    weights = [1.0] * len(synthetic) + [hand_weight] * len(hand)
    if progress:
        progress(f"{len(every)} faithful triples, {len(triples)} with every number and month in their passages "
                 f"-> {len(synthetic)} synthetic examples, and {len(hand)} hand-labelled ones "
                 f"({', '.join(HAND_SETS)}; weight {hand_weight:.3f} each); extracting features")
    rows = feature_matrix(examples)
    labels = [e.label for e in examples]
    params = fit(rows, labels, seed, weights=weights)
    kinds: dict[str, int] = {}
    langs: dict[str, int] = {}
    for e in examples:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
        langs[e.lang] = langs.get(e.lang, 0) + 1
    return {"format": MODEL_FORMAT, "version": 1, "features": list(FEATURES), **params, "threshold": threshold,
            "training": {"command": TRAIN_COMMAND.replace("--seed 0", f"--seed {seed}"), "seed": seed,
                         "data_sha256": dataset_hash(examples), "examples": len(examples),
                         "faithful": sum(labels), "unfaithful": len(labels) - sum(labels),
                         "triples": len(triples), "triples_dropped_unverifiable": len(every) - len(triples),
                         "sources": ["suites/mirage-mini", "suites/khmer-telecom",
                                     *(f"fixtures/faithfulness/{h}" for h in HAND_SETS)],
                         "synthetic": len(synthetic), "hand_labelled": len(hand), "hand_weight": hand_weight,
                         "kinds": dict(sorted(kinds.items())), "languages": dict(sorted(langs.items()))}}


def dump(model: Mapping[str, Any]) -> str:
    """The file text of a model (sorted keys, shortest round-trip floats): same model, same bytes."""
    return json.dumps(model, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
