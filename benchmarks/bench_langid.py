"""language_match accuracy on the real MIRACL v1.0 dev questions (18 MIRAGE languages), through the
metric itself: every value comes from ``MetricRegistry.compute(Sample(...), ["language_match"])``.

    python benchmarks/bench_langid.py [--data ../shared/data/miracl-v1.0-dev] [--half eval|all]

Each question becomes the answer of a case of its language (one-language text of question length);
the rule is ``language_match >= 0.5`` and a null value (too short to tell) counts as a miss.
For each language L it reports over the questions of L (``--half eval``: the odd positions, which
``benchmarks/calibrate_langid.py`` never read; ``all``: every question):

* pass: share of L's questions with ``language_match >= 0.5`` for target L;
* null: questions too short to tell;
* false positives: share of the questions of the other 17 languages that pass for target L (all of
  them, and among those written in L's script, the only ones a script rule does not exclude);
* answer-length pass: the same on texts of 3 consecutive questions of L;
* the decision used (script, or detectors with the calibrated threshold).
Prints the Markdown table of ``docs/metrics.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.metrics import builtin_registry  # noqa: E402
from pytest_mirage.metrics.base import Sample  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.suites.model import Case  # noqa: E402
from pytest_mirage.text import langid  # noqa: E402
from pytest_mirage.text.langcodes import MIRAGE_LANGUAGES  # noqa: E402

REG = builtin_registry()
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "miracl-v1.0-dev"


def load(data: Path, half: str) -> dict[str, list[str]]:
    out = {}
    for lang in MIRAGE_LANGUAGES:
        path = data / f"topics.miracl-v1.0-{lang}-dev.tsv"
        qs = [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines() if "\t" in line]
        out[lang] = qs[1::2] if half == "eval" else qs
    return out


def language_match(text: str, lang: str) -> float | None:
    case = Case(suite="bench", id="q", lang=lang, question=text, passages=(), relevant=(), answers=())
    sample = Sample(case, Answer("q", "bench", text, answer=text, citations=()), ())
    return REG.compute(sample, ["language_match"]).values["language_match"]


def passes(text: str, lang: str) -> bool:
    v = language_match(text, lang)
    return v is not None and v >= 0.5


def decision(lang: str) -> str:
    if lang in langid.SCRIPT_DECIDED:
        return "script" + (" + plausibility" if lang in langid.calibration()["plausibility"] else "")
    if lang in ("ja", "zh"):
        return "script (kana)"
    detectors, tau, denamed = langid.detection_config(lang)
    return f"{'+'.join(detectors)}, tau {tau:.2f}" + (", names aside" if denamed else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--half", choices=("eval", "all"), default="eval")
    args = ap.parse_args()
    queries = load(args.data, args.half)
    t0 = time.perf_counter()
    rows = []
    worst_fp = 0.0
    for lang, qs in queries.items():
        values = [language_match(q, lang) for q in qs]
        acc = sum(v is not None and v >= 0.5 for v in values) / len(qs)
        nulls = sum(v is None for v in values)
        long_texts = [" ".join(qs[i:i + 3]) for i in range(0, len(qs) - 2, 3)]
        long_acc = sum(passes(t, lang) for t in long_texts) / len(long_texts)
        scripts = langid.LANG_SCRIPTS[lang]
        others = [(o, q) for o, oq in queries.items() if o != lang for q in oq]
        fp_all = [passes(q, lang) for _, q in others]
        same = [hit for (o, _), hit in zip(others, fp_all, strict=True) if langid.LANG_SCRIPTS[o] & scripts]
        fp = sum(fp_all) / len(fp_all)
        fp_same = sum(same) / len(same) if same else None
        worst_fp = max(worst_fp, fp)
        rows.append((lang, len(qs), nulls, acc, fp, fp_same, len(same), long_acc, decision(lang)))
        print(f"{lang} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    print("| lang | questions | null | pass (>= 0.5) | false positives (all others) | "
          "false positives (same script) | pass, 3-question texts | decision |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, n, nulls, acc, fp, fp_same, n_same, long_acc, how in rows:
        same = f"{fp_same:.4f} (of {n_same})" if fp_same is not None else "— (no other language)"
        print(f"| {lang} | {n} | {nulls} | {acc:.3f} | {fp:.4f} | {same} | {long_acc:.3f} | {how} |")
    print(f"\nminimum pass {min(r[3] for r in rows):.3f}; minimum 3-question pass {min(r[7] for r in rows):.3f}; "
          f"maximum false positives {worst_fp:.4f}; {time.perf_counter() - t0:.0f} s ({args.half} half)")


if __name__ == "__main__":
    main()
