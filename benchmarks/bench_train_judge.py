"""What the fine-tuned ARES judge steps cost on this machine (issue 22), with a tiny random BERT.

    python benchmarks/bench_train_judge.py                       # khmer-telecom and mirage-mini
    python benchmarks/bench_train_judge.py --suites suites/khmer-telecom --epochs 1

For each suite: wall time of ``make-judge-data`` (building the rows: BM25 neighbours and
perturbations included, then writing), then ``train-judge`` of all three judges on the rows with a
2-layer, hidden-32 BERT built in a temporary folder (``--epochs`` epochs, no early stop before them
with ``--patience`` as large), then scoring every dev pair through the ``ares=classifier:DIR`` judge.
The tiny model measures the harness's own cost (tokenization, the loop, saving, loading); a real
checkpoint (mDeBERTa-v3-base, XLM-R) costs about its forward+backward time per row on top, which
this machine cannot show: no real checkpoint is reachable here. Figures are wall seconds on a
shared 2-core machine: expect noise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", default="suites/khmer-telecom,suites/mirage-mini")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=256)
    args = ap.parse_args()

    from pytest_mirage.cli.train_judge import make_judge_data, train_judges
    from pytest_mirage.judges import ares_data
    from pytest_mirage.judges.ares_classifier import AresClassifierJudge, _Classifier
    from pytest_mirage.judges.ares_train import TrainSettings
    from tests.helpers.judge_suite import tiny_classifier

    with tempfile.TemporaryDirectory() as tmp:
        base = tiny_classifier(Path(tmp) / "base")
        for suite in args.suites.split(","):
            name = Path(suite).name
            t0 = time.perf_counter()
            make_judge_data(str(ROOT / suite), Path(tmp) / name / "data", seed=0)
            t_data = time.perf_counter() - t0
            _manifest, rows = ares_data.load(Path(tmp) / name / "data")
            settings = TrainSettings(epochs=args.epochs, patience=args.epochs, batch_size=args.batch_size,
                                     max_length=args.max_length, device="cpu")
            t0 = time.perf_counter()
            cards = train_judges(Path(tmp) / name / "data", str(base), Path(tmp) / name / "judges", settings,
                                 ares_data.JUDGES)
            t_train = time.perf_counter() - t0
            judge = AresClassifierJudge(str(Path(tmp) / name / "judges"), metrics=tuple(ares_data.METRIC.values()),
                                        device="cpu")
            dev = [r for r in rows if r.split == "dev"]
            t0 = time.perf_counter()
            for metric, clf in judge._classifiers.items():
                assert isinstance(clf, _Classifier)
                clf.yes([(r.text_a, r.text_b) for r in dev if ares_data.METRIC[r.judge] == metric])
            t_score = time.perf_counter() - t0
            train_rows = sum(c["rows"]["train"] for c in cards.values())
            print(f"{name}: {len(rows)} rows ({train_rows} train, {len(dev)} dev); make-judge-data {t_data:.1f} s; "
                  f"train-judge {args.epochs} epoch(s), 3 judges {t_train:.1f} s "
                  f"({1000 * t_train / max(1, train_rows * args.epochs):.1f} ms per train row incl. dev passes and "
                  f"saving); scoring {len(dev)} dev pairs {t_score:.2f} s")


if __name__ == "__main__":
    main()
