"""Speed of the full deterministic metric set on 11,195 cases (the size of the MIRAGE test set).

    python benchmarks/bench_metrics.py [--cases 11195] [--suites mirage-mini,khmer-telecom] [--quick]
                                       [--dump values.json] [--check values.json]

Cases come from the bundled suites (``suites/mirage-mini``: 18 languages, oracle mode;
``suites/khmer-telecom``: Khmer, retrieval mode), cycled until there are ``--cases`` of them, each
with a synthetic answer of one of four kinds: correct (reference + a cited sentence of a relevant
passage), wrong language (another case's reference), wrong passage (a cited sentence of a
non-relevant passage), uncited (a relevant sentence without citation). Reports:

* cases/s of ``MetricRegistry.compute`` over all built-in metrics (first call included: models load),
  per wall second and per CPU second of this process,
* seconds per metric,
* peak resident memory (ru_maxrss) before and after,
* the ratio of the full metric set to a tight loop calling the libraries the metrics use (fastText /
  langid / lingua, sacrebleu BLEU and chrF, rouge-score) directly on the same texts, i.e. the
  harness's own overhead around them (tokenization, char 3-grams, token F1, citations, retrieval
  and support are pure Python of ours and are counted as overhead).

``--dump PATH`` writes every metric value of every case (``repr`` of the float, so the file is
bit-exact) and ``--check PATH`` compares against such a file: the check that an optimisation left
the values unchanged. ``--quick`` skips the per-metric and library passes.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.metrics.base import Sample, builtin_registry  # noqa: E402
from pytest_mirage.metrics.builtin import METRICS  # noqa: E402
from pytest_mirage.metrics.common import answer_text  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.suites.model import Case, Passage, Suite  # noqa: E402
from pytest_mirage.text import langid  # noqa: E402
from pytest_mirage.text.tokenize import split_sentences, tokenize  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_suites(names: tuple[str, ...] = ("mirage-mini", "khmer-telecom")) -> list[Suite]:
    from pytest_mirage.suites.loader import load_suite

    suites = []
    for name in names:
        try:
            suites.append(load_suite(ROOT / "suites" / name))
        except Exception as exc:  # a suite being written may be incomplete: use the others
            print(f"skipping suites/{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    if not suites:
        raise SystemExit("no bundled suite could be loaded")
    return suites


def first_sentence(p: Passage, lang: str) -> str:
    return (split_sentences(p.text, lang) or [p.text])[0]


def make_samples(suites: list[Suite], n: int, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    pool: list[tuple[Suite, Case]] = [(s, c) for s in suites for c in s.cases if c.answers and c.relevant]
    samples = []
    for i in range(n):
        suite, case = pool[i % len(pool)]
        if suite.mode == "retrieval":
            assert suite.corpus is not None
            by_id = {p.id: p for p in suite.corpus}
            others = rng.sample([p.id for p in suite.corpus if p.id not in case.relevant], 9)
            retrieved = others[:]
            retrieved.insert(rng.randrange(10), case.relevant[0])
            context = tuple(by_id[r] for r in retrieved)
            ret: tuple[str, ...] | None = tuple(retrieved)
        else:
            context, ret = case.passages, None
        ctx_ids = {p.id: p for p in context}
        rel = next((ctx_ids[r] for r in case.relevant if r in ctx_ids), context[0])
        nonrel = next((p for p in context if p.id not in case.relevant), context[-1])
        kind = i % 4
        if kind == 0:
            text = f"{case.answers[0]} [{rel.id}]\n{first_sentence(rel, case.lang)} [{rel.id}]"
            cited = (rel.id,)
        elif kind == 1:
            _, other = pool[(i * 7 + 3) % len(pool)]
            text = f"{other.answers[0]} [{rel.id}]"
            cited = (rel.id,)
        elif kind == 2:
            text = f"{first_sentence(nonrel, case.lang)} [{nonrel.id}]"
            cited = (nonrel.id,)
        else:
            text = first_sentence(rel, case.lang)
            cited = ()
        answer = Answer(case.id, "synthetic", f"##Reason: ...\n##Answer: {text}", answer=text, citations=cited,
                        retrieved=ret)
        samples.append(Sample(case, answer, context, k=int(suite.settings.get("k", 3)), mode=suite.mode))
    return samples


def clear_caches() -> None:
    """Forget the per-text caches (tokens, detector outputs, passage units, reference analyses): the
    synthetic cases repeat the suites' texts, real cases do not. Loaded models stay."""
    from pytest_mirage.metrics import common, support
    from pytest_mirage.text import tokenize as tok

    for owner, name in ((tok, "_tokens"), (langid, "distribution"), (support, "_units"), (common, "_strip")):
        fn = getattr(owner, name, None)
        if fn is not None:
            fn.cache_clear()
    try:
        from pytest_mirage.metrics import analysis
    except ImportError:  # before the shared per-case analysis existed
        return
    analysis.clear_caches()


def library_loop(samples: list[Sample]) -> float:
    """The libraries alone: language detectors, sacrebleu BLEU/chrF, rouge-score, on the same texts."""
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU, CHRF

    class Split:  # rouge-score on the same (pre-tokenized) tokens: its LCS is the library's cost
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    bleu, chrf = BLEU(tokenize="none", effective_order=True), CHRF()
    rouge = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Split())
    prepared = []
    for s in samples:  # inputs prepared outside the timed loop
        hyp = answer_text(s)
        prepared.append((s.case.lang, hyp, " ".join(tokenize(hyp, s.case.lang)),
                         [(r, " ".join(tokenize(r, s.case.lang))) for r in s.case.answers]))
    t0 = time.perf_counter()
    for lang, hyp, hyp_tok, refs in prepared:
        for d in langid.detectors_for(lang) or ("fasttext",):  # one detector call per answer
            langid.DETECTORS[d](hyp)
        for ref, ref_tok in refs:
            bleu.sentence_score(hyp_tok, [ref_tok])
            chrf.sentence_score(hyp, [ref])
            rouge.score(ref_tok, hyp_tok)
    return time.perf_counter() - t0


def run_pass(reg: object, samples: list[Sample], names: list[str],
             values: list[dict[str, float | None]] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one metric pass, caches cleared per case."""
    t0, c0 = time.perf_counter(), time.process_time()
    for s in samples:
        clear_caches()
        mv = reg.compute(s, names)  # type: ignore[attr-defined]
        if values is not None:
            values.append(dict(mv.values))
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=11195)
    ap.add_argument("--quick", action="store_true", help="only the full-set passes")
    ap.add_argument("--suites", default="mirage-mini,khmer-telecom",
                    help="bundled suites to cycle (mirage-mini alone: the 18 MIRAGE languages, oracle mode)")
    ap.add_argument("--dump", type=Path, help="write every value (repr) to this JSON file")
    ap.add_argument("--check", type=Path, help="compare every value with this JSON file (bit-exact)")
    args = ap.parse_args()
    t_load = time.perf_counter()
    suites = load_suites(tuple(args.suites.split(",")))
    samples = make_samples(suites, args.cases)
    t_load = time.perf_counter() - t_load
    langs = sorted({s.case.lang for s in samples})
    print(f"{len(samples)} cases from {', '.join(s.name for s in suites)} ({len(langs)} languages), "
          f"built in {t_load:.1f} s; peak RSS before metrics {rss_mb():.0f} MB")
    reg = builtin_registry()
    names = [m.name for m in METRICS]

    values: list[dict[str, float | None]] = []
    wall, cpu = run_pass(reg, samples, names, values)
    peak = rss_mb()
    print(f"full metric set ({len(names)} metrics), first pass (models load): {wall:.1f} s wall, {cpu:.1f} s CPU; "
          f"{len(samples) / wall:.0f} cases/s, {len(samples) / cpu:.0f} cases per CPU-second; peak RSS {peak:.0f} MB")
    nulls: dict[str, int] = defaultdict(int)
    for row in values:
        for k, v in row.items():
            nulls[k] += v is None
    print("null counts: " + ", ".join(f"{k} {v}" for k, v in sorted(nulls.items()) if v))
    table = [{k: (None if v is None else repr(v)) for k, v in row.items()} for row in values]
    if args.dump:
        args.dump.write_text(json.dumps(table), encoding="utf-8")
        print(f"values written to {args.dump}")
    if args.check:
        expected = json.loads(args.check.read_text(encoding="utf-8"))
        diffs = [(i, k, e.get(k), row.get(k)) for i, (e, row) in enumerate(zip(expected[:len(table)], table, strict=True))
                 for k in sorted(set(e) | set(row)) if e.get(k) != row.get(k)]
        by_metric: dict[str, int] = defaultdict(int)
        for _, k, _, _ in diffs:
            by_metric[k] += 1
        print(f"check against {args.check}: {len(diffs)} differing values "
              + (", ".join(f"{k} {n}" for k, n in sorted(by_metric.items())) if diffs else "(bit-identical)"))
        for d in diffs[:10]:
            print("  case", d)

    wall, cpu = run_pass(reg, samples, names)
    print(f"warm full set: {wall:.1f} s wall ({len(samples) / wall:.0f} cases/s), {cpu:.1f} s CPU "
          f"({len(samples) / cpu:.0f} cases per CPU-second, {1000 * cpu / len(samples):.2f} ms per case)")
    if args.quick:
        return
    per_metric = {}
    for name in names:
        per_metric[name] = run_pass(reg, samples, [name])[1]
    print("CPU seconds per metric (each alone, caches cleared per case): " +
          ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_metric.items(), key=lambda kv: -kv[1])))
    backed = ["language_match", "english_share", "bleu", "chrf", "rouge_l"]
    t_backed = run_pass(reg, samples, backed)[0]
    lib = library_loop(samples)
    print(f"libraries alone {lib:.1f} s; ratio full set / libraries {wall / lib:.2f}")
    print(f"library-backed metrics ({', '.join(backed)}) {t_backed:.1f} s: ratio to the libraries alone "
          f"{t_backed / lib:.2f}")


if __name__ == "__main__":
    main()
