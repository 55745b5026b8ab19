"""Speed of the full deterministic metric set on 11,195 cases (the size of the MIRAGE test set).

    python benchmarks/bench_metrics.py [--cases 11195]

Cases come from the bundled suites (``suites/mirage-mini``: 18 languages, oracle mode;
``suites/khmer-telecom``: Khmer, retrieval mode), cycled until there are ``--cases`` of them, each
with a synthetic answer of one of four kinds: correct (reference + a cited sentence of a relevant
passage), wrong language (another case's reference), wrong passage (a cited sentence of a
non-relevant passage), uncited (a relevant sentence without citation). Reports:

* cases/s of ``MetricRegistry.compute`` over all built-in metrics (first call included: models load),
* seconds per metric,
* peak resident memory (ru_maxrss) before and after,
* the ratio of the full metric set to a tight loop calling the libraries the metrics use (fastText /
  langid / lingua, sacrebleu BLEU and chrF, rouge-score) directly on the same texts, i.e. the
  harness's own overhead around them (tokenization, char 3-grams, token F1, citations, retrieval
  and support are pure Python of ours and are counted as overhead).
"""

from __future__ import annotations

import argparse
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


def load_suites() -> list[Suite]:
    from pytest_mirage.suites.loader import load_suite

    suites = []
    for name in ("mirage-mini", "khmer-telecom"):
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
    """Forget the per-text caches (tokens, detector outputs, passage units): the synthetic cases
    repeat the suites' texts, real cases do not. Loaded models stay."""
    from pytest_mirage.metrics import common, support
    from pytest_mirage.text import tokenize as tok

    tok._tokens.cache_clear()
    langid.distribution.cache_clear()
    support._units.cache_clear()
    common._strip.cache_clear()


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
        for d in langid.DETECTOR_FOR.get(lang, ("fasttext",)):  # one detector call per answer
            langid.DETECTORS[d](hyp)
        for ref, ref_tok in refs:
            bleu.sentence_score(hyp_tok, [ref_tok])
            chrf.sentence_score(hyp, [ref])
            rouge.score(ref_tok, hyp_tok)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=11195)
    args = ap.parse_args()
    t_load = time.perf_counter()
    suites = load_suites()
    samples = make_samples(suites, args.cases)
    t_load = time.perf_counter() - t_load
    langs = sorted({s.case.lang for s in samples})
    print(f"{len(samples)} cases from {', '.join(s.name for s in suites)} ({len(langs)} languages), "
          f"built in {t_load:.1f} s; peak RSS before metrics {rss_mb():.0f} MB")
    reg = builtin_registry()
    names = [m.name for m in METRICS]

    t0 = time.perf_counter()
    nulls: dict[str, int] = defaultdict(int)
    for s in samples:
        clear_caches()
        mv = reg.compute(s, names)
        for k, v in mv.values.items():
            nulls[k] += v is None
    total = time.perf_counter() - t0
    peak = rss_mb()
    print(f"full metric set ({len(names)} metrics): {total:.1f} s, {len(samples) / total:.0f} cases/s; "
          f"peak RSS {peak:.0f} MB")

    per_metric = {}
    for name in names:
        t = time.perf_counter()
        for s in samples:
            clear_caches()
            reg.compute(s, [name])
        per_metric[name] = time.perf_counter() - t
    print("seconds per metric (each alone, caches cleared per case): " +
          ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_metric.items(), key=lambda kv: -kv[1])))
    print("null counts: " + ", ".join(f"{k} {v}" for k, v in sorted(nulls.items()) if v))

    t_again = time.perf_counter()
    for s in samples:
        clear_caches()
        reg.compute(s, names)
    warm = time.perf_counter() - t_again
    backed = ["language_match", "english_share", "bleu", "chrf", "rouge_l"]
    t_backed = time.perf_counter()
    for s in samples:
        clear_caches()
        reg.compute(s, backed)
    t_backed = time.perf_counter() - t_backed
    lib = library_loop(samples)
    print(f"warm full set {warm:.1f} s ({len(samples) / warm:.0f} cases/s); libraries alone {lib:.1f} s; "
          f"ratio full set / libraries {warm / lib:.2f}")
    print(f"library-backed metrics ({', '.join(backed)}) {t_backed:.1f} s: ratio to the libraries alone "
          f"{t_backed / lib:.2f}")


if __name__ == "__main__":
    main()
