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

``--bundled`` checks exactness on the whole bundled suites instead (mirage-mini and khmer-telecom,
their reference controls and recorded run, the arena from seeded imported battles, a baseline with
a regression gate): one run, then N in {1, 2, 3, 5} shards merged; JSON, Markdown and HTML must be
byte-identical to the one run's (the test suite checks a seeded subset of the same).

    python benchmarks/bench_shard.py --bundled [--ns 1,2,3,5]
"""

from __future__ import annotations

import argparse
import hashlib
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


BUNDLED_MODELS = ("control:oracle", "extractive", "control:no-citations", "control:random-passages",
                  "control:wrong-language")  # best first: the seeded verdicts favour the earlier one


def bundled_battles(path: Path) -> None:
    rows = []
    for f in sorted((ROOT / "suites").glob("*/cases/*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            cid = json.loads(line)["id"]
            for x, a in enumerate(BUNDLED_MODELS):
                for b in BUNDLED_MODELS[x + 1:]:
                    u = int.from_bytes(hashlib.sha256(f"{a}/{b}/{cid}".encode()).digest()[:8], "big") / 2**64
                    rows.append({"query_id": cid, "model_A": a, "model_B": b,
                                 "verdict": "Tie" if u < 0.15 else ("A" if u < 0.8 else "B")})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def bundled(ns: list[int]) -> None:
    """Exactness of N shards merged on the whole bundled suites (see the module doc)."""
    outputs = ("json", "md", "html")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bundled_battles(work / "battles.jsonl")
        common = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                  "--mirage-suite=mirage-mini", "--mirage-suite=khmer-telecom", "--mirage-github=off",
                  "--mirage-scoring=default", "--mirage-cache-mode=off"]
        cpu, wall, rc = cpu_of([*common, "--mirage-lang=km,en,zh,ar,hi", "--mirage-report=base.json"], work)
        print(f"baseline run (5 languages): CPU {cpu:.1f} s, wall {wall:.1f} s, exit {rc}")
        args = [*common, "--mirage-battles=battles.jsonl", "--mirage-baseline=base.json",
                "--mirage-gate=citation_recall.mean drop <= 0.01", "--mirage-gate=rouge_l.mean >= 0.5"]
        cpu, wall, rc = cpu_of([*args, *(f"--mirage-{o}=one.{e}" for o, e in
                                         (("report", "json"), ("markdown", "md"), ("html", "html")))], work)
        rep = json.loads((work / "one.json").read_text())
        print(f"one run: {len(rep['results'])} results, {len(rep['arena'])} arena rows, baseline "
              f"{'yes' if rep.get('baseline') else 'no'}, {len(rep['gates'])} gates "
              f"({sum(g['passed'] is False for g in rep['gates'])} failed); CPU {cpu:.1f} s, wall {wall:.1f} s, exit {rc}")
        ok = True
        for n in ns:
            parts = []
            for k in range(1, n + 1):
                cpu_of([*args, f"--mirage-shard={k}/{n}", f"--mirage-report=part-{n}-{k}.json"], work)
                parts.append(f"part-{n}-{k}.json")
            proc = subprocess.run([sys.executable, "-m", "pytest_mirage", "merge", *parts,
                                   f"--mirage-report=m{n}.json", f"--mirage-markdown=m{n}.md", f"--mirage-html=m{n}.html"],
                                  cwd=work, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            same = {e: (work / f"m{n}.{e}").read_bytes() == (work / f"one.{e}").read_bytes() for e in outputs}
            ok = ok and all(same.values()) and proc.returncode == rc
            print(f"N={n}: merge exit {proc.returncode} (one run {rc}); byte-identical: "
                  + ", ".join(f"{e} {'yes' if v else 'NO'}" for e, v in same.items()))
        print("all identical" if ok else "DIFFERENCES FOUND")
        if not ok:
            raise SystemExit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=11195)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--metrics", default="", help="--mirage-metrics of the runs (default: all default metrics)")
    ap.add_argument("--no-one-run", action="store_true", help="only the shards and the merge (merge time and memory "
                    "at a size where the one run would take too long)")
    ap.add_argument("--bundled", action="store_true", help="exactness on the whole bundled suites (see above)")
    ap.add_argument("--ns", default="1,2,3,5", help="with --bundled: the shard counts")
    args = ap.parse_args()
    if args.bundled:
        bundled([int(x) for x in args.ns.split(",")])
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build_suite(work / "suite", args.cases)
        base = [sys.executable, "-m", "pytest", "suite", "-q", "-p", "no:cacheprovider", "--mirage-cache-mode=off",
                "--mirage-github=off", *(f"--mirage-model=extractive?name=m{i:02d}" for i in range(1, args.models + 1)),
                *([f"--mirage-metrics={args.metrics}"] if args.metrics else [])]
        items = args.cases * args.models
        cpu_of([*base, "--collect-only"], work)  # warm-up: bytecode, the OS page cache
        one_cpu, one_wall, one_rc = float("nan"), float("nan"), 1
        if not args.no_one_run:
            one_cpu, one_wall, one_rc = cpu_of([*base, "--mirage-report=one.json"], work)
            print(f"one run: {items} items, CPU {one_cpu:.1f} s, wall {one_wall:.1f} s, exit {one_rc}", flush=True)
        total = 0.0
        parts = []
        for k in range(1, args.shards + 1):
            part = f"part-{k}.json"
            cpu, wall, rc = cpu_of([*base, f"--mirage-shard={k}/{args.shards}", f"--mirage-report={part}"], work)
            n = len(json.loads((work / part).read_text())["results"])
            print(f"shard {k}/{args.shards}: {n} results, CPU {cpu:.1f} s, wall {wall:.1f} s, exit {rc}", flush=True)
            total += cpu
            parts.append(part)
        proc = subprocess.run([sys.executable, "-c", MERGE_CHILD, "merge", *parts, "--mirage-report=merged.json"],
                              cwd=work, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = [x for x in proc.stderr.splitlines() if x.startswith("MERGE ")]
        if not line:
            raise SystemExit(f"merge failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        _, wall_s, cpu_s, rss_kb = line[-1].split()
        size = sum((work / p).stat().st_size for p in parts)
        same = None if args.no_one_run else (work / "merged.json").read_bytes() == (work / "one.json").read_bytes()
        print(f"shards one after another: CPU {total:.1f} s = {total / one_cpu:.2f}x the one run; with the merge "
              f"{total + float(cpu_s):.1f} s = {(total + float(cpu_s)) / one_cpu:.2f}x")
        print(f"merge of {args.shards} partials ({items} results, {size / 1e6:.1f} MB): wall {float(wall_s):.1f} s, "
              f"CPU {float(cpu_s):.1f} s, peak RSS {int(rss_kb) / 1024:.0f} MiB, exit {proc.returncode} "
              f"(one run: {one_rc}); merged report byte-identical to the one run's: {same}")


if __name__ == "__main__":
    main()
