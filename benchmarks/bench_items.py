"""Per-item cost of the plugin's item loop, against a bare parametrized pytest module of the same size.

Builds a suite of N cases on disk (the bundled mirage-mini cases cycled under new ids; 11,195 is the
size of the MIRAGE-Bench test set) and runs, in subprocesses, serially:

* ``pytest SUITE --mirage-model control:oracle`` and ``--mirage-model extractive`` (every item:
  answer, all default metrics, thresholds; the session end: leaderboard, gates),
* the same with ``--mirage-metrics citation_recall`` (one metric that costs next to nothing): the
  item loop itself (collection, answering, result records, reports) without the metric pass,
* ``pytest test_bare.py`` with ``@pytest.mark.parametrize("i", range(N))`` and an empty body,

at 1x, 2x and 4x of ``--cases``, and prints the CPU seconds (user + system of the child) per item
of each. The item loop is linear when the cost per item stays flat across sizes.

``--xdist N`` adds, at the first scale, the same runs with ``pytest -n N`` (pytest-xdist) and prints
their wall time and cases per wall second, the bare module's included: the floor that pytest and
xdist themselves set for one test item per case on this machine.

    python benchmarks/bench_items.py [--cases 11195] [--scales 1,2,4] [--models control:oracle,extractive]
                                     [--loop-metrics citation_recall]   # "" to skip the loop-only runs
                                     [--xdist 2]

Children run without ``PYTHONDONTWRITEBYTECODE`` (compiled bytecode is cached as for users; one
warm-up run writes it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_suite(folder: Path, n: int) -> None:
    src: list[dict[str, object]] = []
    for f in sorted((ROOT / "suites" / "mirage-mini" / "cases").glob("*.jsonl")):
        src += [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(f'[suite]\nname = "items-{n}"\nmode = "oracle"\ncases = ["cases.jsonl"]\n')
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            case = dict(src[i % len(src)])
            case["id"] = f"{case['id']}-{i}"
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def cpu_of(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process (and its children: xdist workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=11195)
    ap.add_argument("--scales", default="1,2,4")
    ap.add_argument("--models", default="control:oracle,extractive")
    ap.add_argument("--loop-metrics", default="citation_recall",
                    help="metrics of the loop-only runs (the item loop without the full metric pass); '' skips them")
    ap.add_argument("--xdist", type=int, default=0, help="also run the first scale with pytest -n N")
    args = ap.parse_args()
    scales = [int(x) for x in args.scales.split(",")]
    models = [m for m in args.models.split(",") if m]
    runs = [(m, m, []) for m in models]
    if args.loop_metrics:
        runs += [(f"{m} (loop: {args.loop_metrics})", m, [f"--mirage-metrics={args.loop_metrics}"]) for m in models]
    labels = [label for label, _, _ in runs]
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in scales:
            n = args.cases * scale
            work = Path(tmp) / f"x{scale}"
            build_suite(work / "suite", n)
            (work / "test_bare.py").write_text(f"import pytest\n\n@pytest.mark.parametrize('i', range({n}))\n"
                                               "def test_bare(i):\n    pass\n")
            (work / "pytest.ini").write_text("[pytest]\n")
            if scale == scales[0]:  # compiled bytecode written once, outside the measured runs
                cpu_of([*base, "test_bare.py", "-p", "no:mirage", "--co"], work)
                cpu_of([*base, "suite", "--co", f"--mirage-model={models[0] if models else 'control:oracle'}"], work)
            bare_cpu, _ = cpu_of([*base, "test_bare.py", "-p", "no:mirage"], work)
            row = {"n": n, "bare": bare_cpu / n * 1000}
            for label, model, extra in runs:
                cpu, wall = cpu_of([*base, "suite", f"--mirage-model={model}", "--mirage-no-leaderboard", *extra],
                                   work)
                row[label] = cpu / n * 1000
                row[f"{label} wall"] = wall
            rows.append(row)
            print(f"n={n}: bare {row['bare']:.3f} ms/item; " + "; ".join(
                f"{m} {row[m]:.3f} ms/item ({row[m] / row['bare']:.2f}x bare, {row[f'{m} wall']:.0f} s wall)"
                for m in labels), flush=True)
            if args.xdist and scale == scales[0]:
                xdist_runs(args.xdist, n, base, runs, work)
    print("\n| cases | bare module | " + " | ".join(labels) + " |")
    print("|---:|---:|" + "---:|" * len(labels))
    for r in rows:
        cells = " | ".join(f"{r[m]:.3f} ms ({r[m] / r['bare']:.2f}x)" for m in labels)
        print(f"| {r['n']:,} | {r['bare']:.3f} ms | {cells} |")


def xdist_runs(workers: int, n: int, base: list[str], runs: list[tuple[str, str, list[str]]], work: Path) -> None:
    """The bare module and every run with ``pytest -n workers``: wall, cases per wall second, CPU."""
    xd = [*base, "-n", str(workers)]
    cpu, wall = cpu_of([*xd, "test_bare.py", "-p", "no:mirage"], work)
    print(f"n={n}, pytest -n {workers}: bare module {wall:.1f} s wall ({n / wall:.0f} items per wall second), "
          f"{cpu:.1f} s CPU", flush=True)
    for label, model, extra in runs:
        cpu, wall = cpu_of([*xd, "suite", f"--mirage-model={model}", "--mirage-no-leaderboard", *extra], work)
        print(f"n={n}, pytest -n {workers}: {label} {wall:.1f} s wall ({n / wall:.0f} cases per wall second), "
              f"{cpu:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
