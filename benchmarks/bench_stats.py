"""Statistics benchmark and validation figures; output recorded in docs/statistics.md and
docs/performance.md.

    python benchmarks/bench_stats.py            # full run (about a minute on 2 cores)
    python benchmarks/bench_stats.py --quick    # fewer simulation runs
    python benchmarks/bench_stats.py --json figures.json

1. Speed: bootstrap intervals over 11,195 cases (MIRAGE-Bench's evaluation set) with 1,000
   resamples, one group and split into 18 languages x 8 metrics; the clustered bootstrap over
   5 repeats; a whole baseline comparison (records -> rows -> regression gates).
2. Regression gate simulation (200 seeded runs each): how often ``score.mean@hi drop <= D`` fails
   with 500 cases when the true drop is 5 points and when there is none.
3. PPI simulation (200 seeded runs): coverage of the PPI, judge-only and labels-only intervals with
   a judge biased by +0.1.
4. A surrogate file at the evaluation-cost limit: load and rank 100 models.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mirage.aggregate.expr import parse_regression_gate
from pytest_mirage.aggregate.regression import evaluate_regression_gates
from pytest_mirage.stats import (
    bootstrap_mean_ci,
    bootstrap_mean_cis,
    cases_needed,
    clustered_bootstrap_ci,
    compare_runs,
    minimum_detectable_effect,
    paired_test,
)
from tests.helpers.simulate_stats import ppi_coverage, regression_flag_rate, simulate_paired_scores

N_CASES = 11_195
# MIRACL v1.0 dev queries per language (docs/miracl-counts.md), scaled to MIRAGE's 11,195 pairs
MIRACL_DEV = {"ar": 2896, "bn": 411, "de": 305, "en": 799, "es": 648, "fa": 632, "fi": 1271, "fr": 343,
              "hi": 350, "id": 960, "ja": 860, "ko": 213, "ru": 1252, "sw": 482, "te": 828, "th": 733,
              "yo": 119, "zh": 393}
METRICS = ("language_match", "citation_recall", "citation_map", "char3_recall", "rouge_l", "support_lexical",
           "hit_at_k", "mrr_at_k")


def lang_sizes() -> dict[str, int]:
    total = sum(MIRACL_DEV.values())
    sizes = {lang: max(1, round(n * N_CASES / total)) for lang, n in MIRACL_DEV.items()}
    sizes["ar"] += N_CASES - sum(sizes.values())
    return sizes


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def speed() -> dict[str, float]:
    rng = np.random.default_rng(0)
    values = rng.random(N_CASES)
    groups = {(lang, m): rng.random(n) for lang, n in lang_sizes().items() for m in METRICS}
    repeats = [rng.random(5) for _ in range(N_CASES)]
    base_rows, cand_rows = [], []
    for lang, n in lang_sizes().items():
        for i in range(n):
            b = {m: float(v) for m, v in zip(METRICS, rng.random(len(METRICS)), strict=True)}
            base_rows.append({"suite": "mirage", "case_id": f"{lang}-{i}", "lang": lang, "model": "prod",
                              "metrics": b, "outcome": "passed"})
            cand_rows.append({"suite": "mirage", "case_id": f"{lang}-{i}", "lang": lang, "model": "prod",
                              "metrics": {m: min(1.0, v + 0.01) for m, v in b.items()}, "outcome": "passed"})
    gates = [parse_regression_gate(f"{m} drop <= 0.02") for m in METRICS]

    def full_comparison() -> None:
        comp = compare_runs(base_rows, cand_rows, n_boot=1000)
        evaluate_regression_gates(comp, gates)

    out = {
        "bootstrap_one_group_s": best_of(lambda: bootstrap_mean_ci(values, n_boot=1000)),
        "bootstrap_144_groups_s": best_of(lambda: bootstrap_mean_cis(groups, n_boot=1000)),
        "clustered_5_repeats_s": best_of(lambda: clustered_bootstrap_ci(repeats, n_boot=1000)),
        "compare_runs_and_gates_s": best_of(full_comparison, repeat=3),
    }
    comp = compare_runs(base_rows, cand_rows, n_boot=1000)
    out["comparison_rows"] = len(comp.rows)
    out["gate_results"] = len(evaluate_regression_gates(comp, gates))
    return out


def fast_flag_rate(drop: float, *, n: int = 500, runs: int = 200, kappa: float = 2.0, allowed: float = 0.0,
                   method: str = "t") -> tuple[float, float]:
    """(share flagged, mean sd of the per-case differences) on arrays (same test as the gate)."""
    flagged = 0
    sds = []
    for k in range(runs):
        base, cand = simulate_paired_scores(n, drop, kappa=kappa, seed=k)
        d = base - cand
        sds.append(float(d.std(ddof=1)))
        flagged += paired_test(d, null=allowed, alternative="greater", method=method, seed=k).p_value <= 0.05
    return flagged / runs, float(np.mean(sds))


def gate_simulation(runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for drop in (0.05, 0.0):
        res = regression_flag_rate(runs=runs, n_cases=500, drop=drop, allowed=0.0, n_boot=1000)
        out[f"full_path_drop_{drop}"] = res.to_json()
    for drop in (0.05, 0.0):
        rate, _ = fast_flag_rate(drop, runs=runs, method="sign_flip")
        out[f"sign_flip_drop_{drop}"] = rate
    out["allowed_0.02_drop_0.05"] = fast_flag_rate(0.05, runs=runs, allowed=0.02)[0]
    out["allowed_0.02_drop_0.02"] = fast_flag_rate(0.02, runs=runs, allowed=0.02)[0]
    sweep = []
    for kappa in (0.25, 0.5, 1.0, 2.0, 5.0, 20.0):
        power, sd = fast_flag_rate(0.05, runs=runs, kappa=kappa)
        false_alarm, _ = fast_flag_rate(0.0, runs=runs, kappa=kappa)
        mde = minimum_detectable_effect(500, sd, alternative="less")
        sweep.append({"kappa": kappa, "sd_diff": sd, "power": power, "false_alarms": false_alarm,
                      "mde_500": mde, "cases_for_80pct": cases_needed(0.05, sd, alternative="less")})
    out["kappa_sweep"] = sweep
    return out


def ppi_simulation(runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {"default": ppi_coverage(runs=runs).to_json()}
    out["by_labels"] = [{"n_labels": n, **ppi_coverage(runs=runs, n_labels=n).to_json()} for n in (50, 100, 300)]
    return out


def surrogate_at_the_limit(tmp: str) -> dict[str, float]:
    """A forest as expensive as a file may be: trees of depth 20 (a chain) summing to the
    MAX_EVAL_STEPS limit, on 25 training models; time to load it and rank 100 new models."""
    from pytest_mirage.arena import surrogate as sm

    depth = 20
    n_trees = sm.MAX_EVAL_STEPS // depth
    models = [f"m{i:02d}" for i in range(25)]
    strengths = {m: float(i) / 10 for i, m in enumerate(models)}
    # node 2k is inner (x0 <= k/depth ?), its left child 2k+1 a leaf, its right child the next inner
    left, right, feature, threshold, value = [], [], [], [], []
    for k in range(depth):
        left.append(2 * k + 1)
        right.append(2 * k + 2)
        feature.append(0)
        threshold.append(k / depth)
        value.append(1.0)
        left.append(-1)
        right.append(-1)
        feature.append(-1)
        threshold.append(0.0)
        value.append(k / 10)
    left.append(-1)
    right.append(-1)
    feature.append(-1)
    threshold.append(0.0)
    value.append(2.0)
    tree = {"left": left, "right": right, "feature": feature, "threshold": threshold, "value": value}
    doc = {"format": sm.FORMAT, "version": sm.FORMAT_VERSION, "created": "2025-01-01T00:00:00+00:00",
           "judge": "j", "suite": "s", "lang": "hi", "features": ["f"],
           "training": {"models": models, "strengths": strengths, "features": {m: {"f": 0.5} for m in models}},
           "health": None, "judge_reliability": None, "params": {},
           "forest": {"kind": "random_forest_regressor", "trees": [tree] * n_trees}}
    path = os.path.join(tmp, "limit.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    new = {f"new{i}": {"f": float(v)} for i, v in enumerate(np.linspace(0, 1, 100))}
    load_s = best_of(lambda: sm.load_surrogate(path, suite="s", lang="hi"), repeat=3)
    sur = sm.load_surrogate(path)
    rank_s = best_of(lambda: sur.rank(new), repeat=3)
    return {"trees": n_trees, "bytes": os.path.getsize(path), "load_s": load_s, "rank_100_models_s": rank_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="40 simulation runs instead of 200")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    runs = 40 if args.quick else 200
    figures: dict[str, Any] = {"python": platform.python_version(), "numpy": np.__version__,
                               "cpus": os.cpu_count(), "load": os.getloadavg()[0]}
    start = time.perf_counter()
    figures["speed"] = speed()
    print("speed (best of 5, seconds):")
    for k, v in figures["speed"].items():
        print(f"  {k}: {v:.4f}" if isinstance(v, float) else f"  {k}: {v}")
    figures["gates"] = gate_simulation(runs)
    g = figures["gates"]
    print(f"\nregression gate 'score.mean@hi drop <= 0', 500 cases, {runs} runs:")
    print(f"  full path (t test): true 5-point drop flagged {g['full_path_drop_0.05']['rate']:.1%}, "
          f"no drop flagged {g['full_path_drop_0.0']['rate']:.1%}")
    print(f"  sign-flip test: {g['sign_flip_drop_0.05']:.1%} / {g['sign_flip_drop_0.0']:.1%}")
    print(f"  'drop <= 0.02': true drop 0.05 flagged {g['allowed_0.02_drop_0.05']:.1%}, "
          f"true drop 0.02 flagged {g['allowed_0.02_drop_0.02']:.1%}")
    print("  kappa  sd_diff  power  false_alarms  mde@500  cases_for_80%")
    for r in g["kappa_sweep"]:
        print(f"  {r['kappa']:5}  {r['sd_diff']:.3f}  {r['power']:.1%}  {r['false_alarms']:.1%}  "
              f"{r['mde_500']:.4f}  {r['cases_for_80pct']}")
    figures["ppi"] = ppi_simulation(runs)
    d = figures["ppi"]["default"]
    print(f"\nPPI, judge biased +0.1, 2,000 cases, 200 labels, {runs} runs: coverage PPI {d['ppi']:.1%}, "
          f"judge-only {d['judge_only']:.1%}, labels-only {d['labels_only']:.1%}; "
          f"width PPI {d['ppi_width']:.4f} vs labels-only {d['labels_only_width']:.4f}")
    for r in figures["ppi"]["by_labels"]:
        print(f"  {r['n_labels']} labels: coverage {r['ppi']:.1%}, width {r['ppi_width']:.4f} "
              f"(labels only {r['labels_only_width']:.4f})")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        figures["surrogate_limit"] = surrogate_at_the_limit(tmp)
    sl = figures["surrogate_limit"]
    print(f"\nsurrogate at the evaluation-cost limit ({sl['trees']} trees of depth 20, {sl['bytes']:,} bytes): "
          f"load {sl['load_s']:.2f} s, rank 100 models {sl['rank_100_models_s']:.2f} s")
    figures["wall_s"] = time.perf_counter() - start
    print(f"\n{figures['wall_s']:.0f} s; load average {figures['load']:.1f} before the run; "
          f"python {figures['python']}, numpy {figures['numpy']}, {figures['cpus']} cpus")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
