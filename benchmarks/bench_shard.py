"""Sharded runs (``--mirage-shard K/N``) against one run, and the cost of ``merge``.

Builds a suite of ``--cases`` cases on disk (the bundled mirage-mini cases cycled under new ids, so
every MIRAGE language is there) and, in subprocesses, serially:

1. one run: ``pytest SUITE --mirage-model extractive?name=m01 ... --mirage-report one.json``;
2. the same as ``--shards`` shard runs one after another (``--mirage-shard K/N``, each writing its
   partial report), then ``python -m pytest_mirage merge`` of the partials;

and prints the CPU seconds (user + system) of each, the shards' sum against the one run, and the
merge's CPU, wall time and peak memory (its own ``ru_maxrss``). It checks that the merged report is
byte-identical to the one run's. ``--models`` sets how many models answer (the cheap offline
``extractive`` baseline under distinct names, so the figures are the harness's own cost).

    python benchmarks/bench_shard.py [--cases 11195] [--models 4] [--shards 4] [--metrics NAMES]
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
CHILD_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
             "PYTHONPATH": str(ROOT)}


def build_suite(folder: Path, n: int) -> None:
    src: list[dict[str, object]] = []
    for f in sorted((ROOT / "suites" / "mirage-mini" / "cases").glob("*.jsonl")):
        src += [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(f'[suite]\nname = "shard-{n}"\nmode = "oracle"\ncases = ["cases.jsonl"]\n')
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            case = dict(src[i % len(src)])
            case["id"] = f"{case['id']}-{i}"
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")


def cpu_of(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, proc.returncode


MERGE_CHILD = """
import resource, sys, time
from pytest_mirage.__main__ import main
t0 = time.perf_counter(); c0 = time.process_time()
code = main(sys.argv[1:])
print("MERGE", time.perf_counter() - t0, time.process_time() - c0,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=11195)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--metrics", default="", help="--mirage-metrics of the runs (default: all default metrics)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build_suite(work / "suite", args.cases)
        base = [sys.executable, "-m", "pytest", "suite", "-q", "-p", "no:cacheprovider", "--mirage-cache-mode=off",
                "--mirage-github=off", *(f"--mirage-model=extractive?name=m{i:02d}" for i in range(1, args.models + 1)),
                *([f"--mirage-metrics={args.metrics}"] if args.metrics else [])]
        items = args.cases * args.models
        cpu_of([*base, "--collect-only"], work)  # warm-up: bytecode, the OS page cache
        one_cpu, one_wall, one_rc = cpu_of([*base, "--mirage-report=one.json"], work)
        print(f"one run: {items} items, CPU {one_cpu:.1f} s, wall {one_wall:.1f} s, exit {one_rc}")
        total = 0.0
        parts = []
        for k in range(1, args.shards + 1):
            part = f"part-{k}.json"
            cpu, wall, rc = cpu_of([*base, f"--mirage-shard={k}/{args.shards}", f"--mirage-report={part}"], work)
            n = len(json.loads((work / part).read_text())["results"])
            print(f"shard {k}/{args.shards}: {n} results, CPU {cpu:.1f} s, wall {wall:.1f} s, exit {rc}")
            total += cpu
            parts.append(part)
        proc = subprocess.run([sys.executable, "-c", MERGE_CHILD, "merge", *parts, "--mirage-report=merged.json"],
                              cwd=work, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = [x for x in proc.stderr.splitlines() if x.startswith("MERGE ")]
        if not line:
            raise SystemExit(f"merge failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        _, wall_s, cpu_s, rss_kb = line[-1].split()
        size = sum((work / p).stat().st_size for p in parts)
        same = (work / "merged.json").read_bytes() == (work / "one.json").read_bytes()
        print(f"shards one after another: CPU {total:.1f} s = {total / one_cpu:.2f}x the one run; with the merge "
              f"{total + float(cpu_s):.1f} s = {(total + float(cpu_s)) / one_cpu:.2f}x")
        print(f"merge of {args.shards} partials ({items} results, {size / 1e6:.1f} MB): wall {float(wall_s):.1f} s, "
              f"CPU {float(cpu_s):.1f} s, peak RSS {int(rss_kb) / 1024:.0f} MiB, exit {proc.returncode} "
              f"(one run: {one_rc}); merged report byte-identical to the one run's: {same}")


if __name__ == "__main__":
    main()
