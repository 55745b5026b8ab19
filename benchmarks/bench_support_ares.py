"""How well ``support_lexical`` separates faithful from unfaithful answers on the ARES NQ set.

    python benchmarks/bench_support_ares.py [--shared PATH]

Rows of ``../shared/data/ares-synthetic/nq_synthetic_queries.tsv`` with ``Answer_Faithfulness_Label``
set (Yes/No) become one case each: the row's document is the only passage, the generated answer
(no citations, so every sentence is checked against the passage) is the answer. Reports the ROC AUC
of ``support_lexical`` against the label, and for comparison the AUC of the 0/1 variant "share of
sentences with >= 50% of their words covered".
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.metrics.base import Sample, builtin_registry  # noqa: E402
from pytest_mirage.metrics.support import sentence_support  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.suites.model import Case, Passage  # noqa: E402


def auc(labels: list[bool], scores: list[float]) -> float:
    """ROC AUC (Mann-Whitney U with ties counted half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT / ".." / "shared")
    args = ap.parse_args()
    path = args.shared / "data" / "ares-synthetic" / "nq_synthetic_queries.tsv"
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["Answer_Faithfulness_Label"] in ("Yes", "No")]
    reg = builtin_registry()
    labels, soft, hard, nulls = [], [], [], 0
    t0 = time.perf_counter()
    for i, r in enumerate(rows):
        passage = Passage(f"ares{i}#0", r["document"])
        case = Case(suite="ares", id=str(i), lang="en", question=r["synthetic_query"], passages=(passage,),
                    relevant=(passage.id,), answers=())
        answer = Answer(case.id, "ares", r["generated_answer"], answer=r["generated_answer"], citations=())
        v = reg.compute(Sample(case, answer, (passage,)), ["support_lexical"]).values["support_lexical"]
        if v is None:
            nulls += 1
            continue
        sents = sentence_support(r["generated_answer"], (passage,), "en")
        labels.append(r["Answer_Faithfulness_Label"] == "Yes")
        soft.append(v)
        hard.append(sum(s.coverage >= 0.5 for s in sents) / len(sents))
    elapsed = time.perf_counter() - t0
    print(f"rows with a faithfulness label: {len(rows)} (Yes: {sum(r['Answer_Faithfulness_Label'] == 'Yes' for r in rows)}),"
          f" scored: {len(labels)}, null: {nulls}")
    print(f"ROC AUC support_lexical (mean sentence coverage): {auc(labels, soft):.3f}")
    print(f"ROC AUC 0/1 variant (sentences >= 50% covered):    {auc(labels, hard):.3f}")
    print(f"mean support_lexical: Yes {sum(s for s, y in zip(soft, labels, strict=True) if y) / sum(labels):.3f}, "
          f"No {sum(s for s, y in zip(soft, labels, strict=True) if not y) / (len(labels) - sum(labels)):.3f}")
    print(f"{len(rows)} cases in {elapsed:.2f} s")


if __name__ == "__main__":
    main()
