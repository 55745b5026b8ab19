"""Arena benchmark and validation figures (issue #6 points 6 and 7); output recorded in docs/arena.md.

    python benchmarks/bench_arena.py            # full run (about two minutes on 2 cores)
    python benchmarks/bench_arena.py --quick    # fewer tournaments and seeds
    python benchmarks/bench_arena.py --million  # only: 1M imported battles, fit + 200 bootstrap tournaments

Needs the dev extras (choix, scipy) for the reference loop and the cross-checks.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import choix
import numpy as np

from pytest_mirage.arena.bt import (
    Battle,
    battle_counts,
    bradley_terry,
    mle_strengths,
    resample_counts,
)
from pytest_mirage.arena.numerics import kendall_tau
from pytest_mirage.arena.surrogate import surrogate_health
from tests.helpers.simulate_arena import simulate_battles, simulate_features

QUALITIES = {f"sys{k:02d}": float(v) for k, v in enumerate(np.linspace(-1.5, 1.5, 19))}
NAMES = sorted(QUALITIES)


def _timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _choix_loop(battles: list[Battle], tournaments: int, seed: int, solver: str) -> np.ndarray:
    """The straightforward way: per tournament, rebuild the (winner, loser) list of the resampled
    queries and call choix (same resampling counts as ours, so the results are comparable)."""
    counts = battle_counts(battles)
    idx = {m: k for k, m in enumerate(counts.models)}
    by_query: dict[str, list[tuple[int, int]]] = {}
    for b in battles:
        a, c = idx[b.model_a], idx[b.model_b]
        if b.winner != "tie":
            by_query.setdefault(b.query_id, []).append((a, c) if b.winner == "A" else (c, a))
    mult = resample_counts(len(counts.query_ids), tournaments, seed)
    out = []
    for t in range(tournaments):
        pairs = [p for q, k in zip(counts.query_ids, mult[t], strict=True) for _ in range(int(k))
                 for p in by_query.get(q, [])]
        if solver == "ilsr":
            est = choix.ilsr_pairwise(len(counts.models), pairs, alpha=0.0, tol=1e-10)
        else:
            est = choix.opt_pairwise(len(counts.models), pairs, alpha=0.01, tol=1e-10)
        out.append(est - est.mean())
    return np.array(out)


def speed(quick: bool) -> None:
    print("## Speed: 19 models x 100 queries x 171 pairs, 200 bootstrap tournaments\n")
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}\n")
    print("| battles | ours (s) | choix ilsr loop (s) | ratio | choix opt_pairwise loop (s) | ratio | "
          "max abs diff vs opt_pairwise |")
    print("|---|---|---|---|---|---|---|")
    for order in ("random", "both"):
        battles = simulate_battles(QUALITIES, 100, seed=1, order=order)  # type: ignore[arg-type]
        ours_s = _timed(lambda b=battles: bradley_terry(b, tournaments=200, seed=0), 3 if quick else 5)
        ours = bradley_terry(battles, tournaments=200, seed=0)
        ilsr_t = 20 if quick else 200
        start = time.perf_counter()
        _choix_loop(battles, ilsr_t, 0, "ilsr")
        ilsr_s = (time.perf_counter() - start) * 200 / ilsr_t
        opt_t = 2 if quick else 5
        start = time.perf_counter()
        ref = _choix_loop(battles, opt_t, 0, "opt")
        opt_s = (time.perf_counter() - start) * 200 / opt_t
        diff = float(np.abs(ours.samples[:opt_t] - ref).max())
        note = "" if ilsr_t == 200 else f" (from {ilsr_t})"
        print(f"| {len(battles)} ({order} order) | {ours_s:.3f} | {ilsr_s:.1f}{note} | {ilsr_s / ours_s:.0f}x | "
              f"{opt_s:.0f} (from {opt_t}) | {opt_s / ours_s:.0f}x | {diff:.1e} |")
    print()


def cross_check() -> None:
    print("## Cross-check with choix\n")
    battles = [Battle("q1", "m0", "m1", "A"), Battle("q2", "m0", "m1", "A"),
               Battle("q3", "m1", "m2", "A"), Battle("q4", "m2", "m0", "A")]
    est = mle_strengths(battles, alpha=0.0)
    ref = choix.opt_pairwise(3, [(0, 1), (0, 1), (1, 2), (2, 0)], alpha=0.0, tol=1e-12)
    print(f"- choix testcase-pairwise: ours {[round(est[m], 4) for m in ('m0', 'm1', 'm2')]}, "
          f"choix {[round(float(v), 4) for v in ref - ref.mean()]}")
    worst = 0.0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        q = rng.normal(scale=0.5, size=8)
        bs = []
        for k in range(400):
            i, j = (int(v) for v in rng.choice(8, 2, replace=False))
            win = rng.random() < 1 / (1 + np.exp(q[j] - q[i]))
            bs.append(Battle(f"q{k % 50}", f"m{i}", f"m{j}", "A" if win else "B"))
        names = sorted({b.model_a for b in bs} | {b.model_b for b in bs})
        idx = {n: k for k, n in enumerate(names)}
        pairs = [(idx[b.model_a], idx[b.model_b]) if b.winner == "A" else (idx[b.model_b], idx[b.model_a])
                 for b in bs]
        for alpha in (0.0, 0.01, 1.0):
            ours = mle_strengths(bs, alpha=alpha)
            theirs = choix.opt_pairwise(len(names), pairs, alpha=alpha, tol=1e-12)
            theirs = theirs - theirs.mean()
            worst = max(worst, max(abs(ours[n] - theirs[k]) for k, n in enumerate(names)))
    print(f"- 10 random arenas x alpha in (0, 0.01, 1): max |ours - choix.opt_pairwise| = {worst:.1e}\n")


def bt_recovery(seeds: int) -> None:
    print(f"## (a) Bradley-Terry recovers the order of 19 systems (100 queries, both orders, {seeds} seeds)\n")
    print("| judge | Kendall tau mean | min | true strength inside the 95% CI |")
    print("|---|---|---|---|")
    settings: list[tuple[str, dict[str, float]]] = [("exact Bradley-Terry (noise 1)", {})] + [
        (f"noise {n}, answer noise 0.5, ties, position bias", {"judge_noise": n, "answer_noise": 0.5,
                                                              "tie_margin": 0.2, "position_bias": 0.2})
        for n in (0.5, 1.0, 2.0, 4.0)]
    for label, kw in settings:
        taus, cover = [], []
        for seed in range(seeds):
            lb = bradley_terry(simulate_battles(QUALITIES, 100, seed=seed, **kw),  # type: ignore[arg-type]
                               tournaments=200, seed=seed)
            got = lb.strengths()
            taus.append(kendall_tau([got[n] for n in NAMES], [QUALITIES[n] for n in NAMES]))
            cover.append(np.mean([r.ci_low <= QUALITIES[r.model] <= r.ci_high for r in lb.rows]))
        # coverage is only meaningful for the exact judge: otherwise the strengths live on another scale
        cov = f"{np.mean(cover):.2f}" if not kw else "-"
        print(f"| {label} | {np.mean(taus):.3f} | {np.min(taus):.3f} | {cov} |")
    print()
    print("Queries per tournament (judge noise 4, one random order per pair):\n")
    print("| queries | Kendall tau mean |")
    print("|---|---|")
    for n_q in (2, 5, 10, 25, 100):
        taus = []
        for seed in range(seeds):
            got = bradley_terry(simulate_battles(QUALITIES, n_q, seed=seed, judge_noise=4.0, order="random"),
                                tournaments=20, seed=seed).strengths()
            taus.append(kendall_tau([got[n] for n in NAMES], [QUALITIES[n] for n in NAMES]))
        print(f"| {n_q} | {np.mean(taus):.3f} |")
    print()


def surrogate(tournaments: int, seeds: int) -> None:
    print(f"## (b) Surrogate judge on held-out systems ({tournaments} tournaments, 100 trees, {seeds} seeds)\n")
    print("Battles: judge noise 1, answer_noise 0.5, tie_margin 0.2, position_bias 0.2. Features: 5 informative "
          "(logistic of quality + N(0, feature noise)) and 1 unrelated.\n")
    print("| feature noise | holdout | R² mean | R² 95% CI | tau (Table 2 style) | tau_cv | R²_cv |")
    print("|---|---|---|---|---|---|---|")
    configs: list[tuple[str, dict[str, int | float]]] = [
        ("0.1", {"noise": 0.1}), ("0.3", {"noise": 0.3}), ("0.6", {"noise": 0.6}),
        ("unrelated only", {"n_informative": 0, "n_noise": 5})]
    for label, kw in configs:
        for holdout in (None, ["sys02", "sys16"]):
            rows = []
            for seed in range(seeds):
                battles = simulate_battles(QUALITIES, 100, seed=seed, answer_noise=0.5, tie_margin=0.2,
                                           position_bias=0.2)
                feats = simulate_features(QUALITIES, seed=100 + seed, **kw)  # type: ignore[arg-type]
                rows.append(surrogate_health(feats, battles, holdout=holdout, tournaments=tournaments, seed=seed))
            hl = "4 random" if holdout is None else "sys02+sys16 fixed"
            print(f"| {label} | {hl} | {np.mean([h.r2_mean for h in rows]):.3f} | "
                  f"{np.mean([h.r2_ci_low for h in rows]):.2f} / {np.mean([h.r2_ci_high for h in rows]):.2f} | "
                  f"{np.mean([h.tau_mean for h in rows]):.3f} | {np.mean([h.tau_cv for h in rows]):.3f} | "
                  f"{np.mean([h.r2_cv for h in rows]):.3f} |")
    print()
    print("R² with 2 *random* held-out systems (MIRAGE's size, not its choice), feature noise 0.3:\n")
    battles = simulate_battles(QUALITIES, 100, seed=0, answer_noise=0.5, tie_margin=0.2, position_bias=0.2)
    h = surrogate_health(simulate_features(QUALITIES, noise=0.3, seed=100), battles, holdout=2,
                         tournaments=tournaments, seed=0)
    print(f"R² mean {h.r2_mean:.2f}, 95% CI {h.r2_ci_low:.2f} / {h.r2_ci_high:.2f}\n")


def million(tournaments: int = 200) -> None:
    """1,000,008 imported judgments (MIRAGE-Bench's JSON-lines shape, 19 models, 5,848 queries, one
    random order per pair, judge noise 1): read the file, fit, bootstrap; wall time per phase and the
    process's peak resident memory. The true strengths are known, so the fit is checked too."""
    import json
    import resource
    import tempfile
    from pathlib import Path

    from pytest_mirage.arena.imported import read_judgments

    print(f"## 1M imported battles, {tournaments} bootstrap tournaments\n")
    battles = simulate_battles(QUALITIES, 5848, seed=1, order="random")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "battles.jsonl"
        verdict = {"A": "A", "B": "B", "tie": "Tie"}
        with path.open("w", encoding="utf-8") as fh:
            for b in battles:
                fh.write(json.dumps({"query_id": b.query_id, "model_A": b.model_a, "model_B": b.model_b,
                                     "verdict": verdict[b.winner]}) + "\n")
        size = path.stat().st_size
        del battles
        start = time.perf_counter()
        rows = read_judgments(path)
        read_s = time.perf_counter() - start
    start = time.perf_counter()
    imported = [r.battle() for r in rows if r.winner is not None]
    convert_s = time.perf_counter() - start
    start = time.perf_counter()
    counts = battle_counts(imported)
    count_s = time.perf_counter() - start
    start = time.perf_counter()
    lb = bradley_terry(imported, tournaments=tournaments, seed=0)
    fit_s = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    got = lb.strengths()
    tau = kendall_tau([got[n] for n in NAMES], [QUALITIES[n] for n in NAMES])
    inside = sum(r.ci_low <= QUALITIES[r.model] <= r.ci_high for r in lb.rows)
    widths = [r.ci_high - r.ci_low for r in lb.rows]
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}\n")
    print("| phase | seconds |")
    print("|---|---|")
    print(f"| read {size / 1e6:.0f} MB JSON lines ({len(rows):,} judgments) | {read_s:.1f} |")
    print(f"| judgments -> battles | {convert_s:.1f} |")
    print(f"| aggregate to {len(counts.cell_wins):,} (query, pair) cells | {count_s:.1f} |")
    print(f"| bradley_terry: aggregate + MLE + {tournaments} tournaments | {fit_s:.1f} |")
    print(f"\npeak RSS {rss:.0f} MiB; Kendall tau vs the true strengths {tau:.3f}; true strength inside the 95% "
          f"CI for {inside}/{len(lb.rows)} models; CI width {min(widths):.3f}-{max(widths):.3f}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer tournaments and seeds")
    parser.add_argument("--million", action="store_true", help="only the 1M imported battles figure")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.million:
        million()
        print(f"total {time.perf_counter() - start:.0f} s")
        return
    speed(args.quick)
    cross_check()
    bt_recovery(seeds=2 if args.quick else 5)
    surrogate(tournaments=20 if args.quick else 100, seeds=1 if args.quick else 3)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
