"""generate-suite benchmark: 1,000 cases through the engine against a 100 ms loopback server (issue #22).

A synthetic English corpus (1,000 one-chunk documents of words drawn, seeded, from the project's own
docs) goes through ``generate_suite``: 1,000 question calls, then one answer call per question that
passed the question filters, at concurrency 64, through the real ``openai:`` adapter and the SQLite
cache. The server (``tests/helpers/fake_openai.py``, in its own process) plays a generator: the
question repeats the passage's opening words, the answer its first sentence, so nearly every
candidate survives and both phases are full.

Reported: the wall time of the two engine phases against the ideal ``calls x latency / concurrency``
(target <= 1.2x), the time of the filters (language ID, BM25 round trip, duplicates, the offline
faithfulness judge) and writing, and a warm rerun (every answer from the cache, 0 calls).

    python benchmarks/bench_generate.py [--cases 1000] [--latency 0.1] [--concurrency 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the tests.helpers package is in the repo
    sys.path.insert(0, str(ROOT))

from pytest_mirage.cli.generate import GenerateOptions, generate_suite  # noqa: E402
from pytest_mirage.engine import EngineSettings, EngineStats  # noqa: E402


def echo_generator(body: Any) -> str:
    """Question: the passage's first eight words as a question; answer: its first sentence."""
    prompt = body["messages"][-1]["content"]
    passage = prompt.rsplit("Document: ", 1)[1].rsplit("\n", 1)[0]
    if prompt.endswith("Query:"):
        return "What does the guide say about " + " ".join(passage.split()[:8]).rstrip(".") + "?"
    return passage.split(". ")[0].rstrip(".") + "."


def serve(latency: float) -> int:
    from tests.helpers.fake_openai import FakeOpenAIServer

    server = FakeOpenAIServer(latency=latency, answer=echo_generator).start()
    print(server.port, flush=True)
    try:
        sys.stdin.read()  # until the parent closes the pipe
    finally:
        server.stop()
    return 0


def write_corpus(folder: Path, n: int, seed: int) -> None:
    words = sorted({w.lower() for p in (ROOT / "docs").glob("*.md")
                    for w in re.findall(r"[A-Za-z]{4,12}", p.read_text(encoding="utf-8"))})
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(n):
        sentences = [" ".join(rng.choice(words) for _ in range(12)).capitalize() + "." for _ in range(4)]
        (folder / f"doc{i:04d}.txt").write_text(" ".join(sentences) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.latency)
    work = Path(tempfile.mkdtemp(prefix="mirage-bench-gen-"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", "--latency", str(args.latency)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert child.stdout is not None
        port = child.stdout.readline().strip()
        if not port.isdigit():
            raise SystemExit(f"fake server did not start (said {port!r})")
        write_corpus(work / "docs", args.cases, 0)
        few = work / "few.jsonl"
        few.write_text(json.dumps({"question": "What does the guide say about the opening hours?",
                                   "answer": "The office opens at nine.",
                                   "passage": "The office opens at nine. It closes at five."}) + "\n", encoding="utf-8")

        def run(out: str) -> tuple[float, Any, EngineStats]:
            stats = EngineStats()
            opts = GenerateOptions(out=work / out, corpus=work / "docs", model="openai:bench-generator",
                                   few_shot=few, lang="en", n=args.cases, per_doc=1,
                                   engine=EngineSettings(cache_dir=work / "cache", concurrency=args.concurrency,
                                                         stats=stats),
                                   model_defaults={"base_url": f"http://127.0.0.1:{port}/v1"})
            started = time.perf_counter()
            result = generate_suite(opts, say=lambda line: None)
            return time.perf_counter() - started, result, stats

        load_before = os.getloadavg()[0]
        cold_s, cold, cold_stats = run("cold")
        warm_s, _warm, warm_stats = run("warm")
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    t = cold.stats["timings_s"]
    engine_s = t["questions_s"] + t["answers_s"]
    ideal_s = cold_stats.calls * args.latency / args.concurrency
    figures = {
        "cases_sampled": cold.sampled, "cases_kept": cold.kept, "dropped": {k: v for k, v in cold.drops.items() if v},
        "calls": cold_stats.calls, "errors": cold_stats.errors, "latency_s": args.latency,
        "concurrency": args.concurrency, "engine_s": round(engine_s, 3), "ideal_s": round(ideal_s, 3),
        "ratio_to_ideal": round(engine_s / ideal_s, 3), "phases_s": t, "cold_total_s": round(cold_s, 3),
        "warm_total_s": round(warm_s, 3), "warm_calls": warm_stats.calls, "warm_cache_hits": warm_stats.hits,
        "loadavg_1min_before": round(load_before, 2), "cpus": os.cpu_count(),
    }
    print(f"cold: {cold.sampled} passages, {cold.kept} cases kept; {cold_stats.calls} calls in {engine_s:.2f}s "
          f"(questions {t['questions_s']:.2f}s + answers {t['answers_s']:.2f}s) = {figures['ratio_to_ideal']:.2f}x "
          f"the ideal {ideal_s:.3f}s (target <= 1.2x); filters {t['question_filters_s'] + t['answer_filters_s']:.2f}s; "
          f"total {cold_s:.2f}s; load average before {load_before:.1f} on {os.cpu_count()} CPUs")
    print(f"warm: {warm_s:.2f}s, {warm_stats.calls} calls, {warm_stats.hits} from the cache")
    if warm_stats.calls:
        raise SystemExit(f"the warm run made {warm_stats.calls} calls; expected none")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
