"""Train the offline faithfulness judge (``pytest_mirage/metrics/offline_faithfulness.json``).

    python benchmarks/train_faithfulness.py --seed 0            # rewrite the shipped model
    python benchmarks/train_faithfulness.py --seed 0 --check    # retrain and compare, write nothing

Data: the faithful reference answers of the bundled suites (``suites/mirage-mini``, 18 languages;
``suites/khmer-telecom``, its first 40 cases) and the synthetic unfaithful edits and faithful
variants that :mod:`pytest_mirage.judges.perturb` makes of them with the seed (the ARES recipe,
weak and strong negatives), and the hand-labelled development sets ``fixtures/faithfulness/dev`` and
``.../dev2`` (396 answers, weighted to weigh as much as the synthetic examples together). The
held-out sets (``.../test``, ``.../holdout``, ``.../holdout2``, ``.../holdout3``, ``.../holdout4``, ``.../holdout5``, ``.../holdout6``, ``.../holdout7``) and ``../shared/data`` are never read. Needs scikit-learn (``pip install scikit-learn``); the same seed writes
the same bytes on the same platform (the file records the training data's SHA-256).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_mirage.judges import offline  # noqa: E402
from pytest_mirage.metrics.offline_judge import MODEL_FILE  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "pytest_mirage" / "metrics" / MODEL_FILE)
    ap.add_argument("--check", action="store_true", help="retrain and compare with --out; write nothing")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    model = offline.train(ROOT, args.seed, progress=lambda m: print(m, file=sys.stderr))
    text = offline.dump(model)
    took = time.perf_counter() - t0
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{'identical to' if same else 'DIFFERS from'} {args.out} ({took:.1f} s)")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    t = model["training"]
    print(f"wrote {args.out}: {t['examples']} examples ({t['faithful']} faithful), data sha256 "
          f"{t['data_sha256'][:12]}, {took:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
