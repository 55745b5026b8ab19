"""Language-identification accuracy on the real MIRACL v1.0 dev questions (18 MIRAGE languages).

    python benchmarks/bench_langid.py [--shared PATH] [--per-lang N]

For each language L it reports, over the dev questions of L:
  * n, undetermined (too short / no letters: the metric is null),
  * accuracy: share of questions with language_match(q, L) >= 0.5,
  * mean language_match,
  * false positives: share of questions of the *other* 17 languages (up to 100 each) with
    language_match(q, L) >= 0.5,
  * "answer-length" accuracy: the same on texts made of 3 consecutive questions (answers are
    usually longer than questions),
  * for comparison, the top-1 accuracy of each raw detector alone (fastText lid.176 small model,
    langid.py, lingua low-accuracy mode).
Prints a Markdown table (the one in docs/metrics.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.langcodes import MIRAGE_LANGUAGES  # noqa: E402
from pytest_mirage.text import langid  # noqa: E402
from pytest_mirage.text.langid import Undetermined, language_probability  # noqa: E402


def load(shared: Path) -> dict[str, list[str]]:
    out = {}
    for lang in MIRAGE_LANGUAGES:
        path = shared / "data" / "miracl-v1.0-dev" / f"topics.miracl-v1.0-{lang}-dev.tsv"
        out[lang] = [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines() if "\t" in line]
    return out


def prob(text: str, lang: str) -> float | None:
    try:
        return language_probability(text, lang)
    except Undetermined:
        return None


def top1(name: str, text: str) -> str:
    dist = langid.DETECTORS[name](langid.clean_text(text))
    return max(dist, key=lambda k: dist[k])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT / ".." / "shared")
    ap.add_argument("--others", type=int, default=100, help="questions per other language for false positives")
    args = ap.parse_args()
    queries = load(args.shared)
    t0 = time.perf_counter()
    rows = []
    calls = 0
    for lang, qs in queries.items():
        ps = [prob(q, lang) for q in qs]
        calls += len(qs)
        det = [p for p in ps if p is not None]
        acc = sum(p >= 0.5 for p in det) / len(qs)
        long_texts = [" ".join(qs[i:i + 3]) for i in range(0, len(qs) - 2, 3)]
        lp = [prob(t, lang) for t in long_texts]
        calls += len(long_texts)
        long_acc = sum(p is not None and p >= 0.5 for p in lp) / len(long_texts)
        others = [q for other, oq in queries.items() if other != lang for q in oq[: args.others]]
        fp = [prob(q, lang) for q in others]
        calls += len(others)
        fpr = sum(p is not None and p >= 0.5 for p in fp) / len(others)
        raw = {name: sum(top1(name, q) in langid.EQUIVALENT.get(lang, {lang}) for q in qs) / len(qs)
               for name in ("fasttext", "langid", "lingua")}
        rows.append((lang, len(qs), len(qs) - len(det), acc, sum(det) / max(1, len(det)), fpr, long_acc, raw))
    elapsed = time.perf_counter() - t0
    print("| lang | questions | undetermined | accuracy (P >= 0.5) | mean P | false positives | "
          "accuracy, 3-question texts | fastText top-1 | langid top-1 | lingua top-1 | detector |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for lang, n, und, acc, mean, fpr, long_acc, raw in rows:
        det = "script" if lang in langid.SCRIPT_DECIDED or lang in ("ja", "zh") else "+".join(langid.detectors_for(lang))
        print(f"| {lang} | {n} | {und} | {acc:.3f} | {mean:.3f} | {fpr:.3f} | {long_acc:.3f} | "
              f"{raw['fasttext']:.3f} | {raw['langid']:.3f} | {raw['lingua']:.3f} | {det} |")
    print(f"\n{calls} language_match calls in {elapsed:.1f} s (including the raw-detector columns)")


if __name__ == "__main__":
    main()
