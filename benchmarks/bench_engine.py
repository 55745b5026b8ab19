"""Engine benchmark: 2,000 cases against a local OpenAI-compatible server (issue #5).

1. cold run: every case goes to the server (100 ms latency per request) at concurrency 64, through
   the ``openai:`` adapter and the engine, writing the SQLite cache. Reported as a ratio to the
   ideal ``2000 x 0.1 s / 64`` (target <= 1.2x), with the peak memory growth of the run.
2. warm run: the same cases again; everything comes from the cache (0 calls).
3. replay run: the same answers from a ``replay:`` run file (target: warm <= 1.5x replay).

Runs 2 and 3 are timed end to end, from the ``--mirage-model`` spec to the answers (adapter
creation + ``run_requests``), best of ``--repeat``.

    python benchmarks/bench_engine.py [--cases 2000] [--latency 0.1] [--concurrency 64] [--json out.json]

The server runs in its own process by default (as a real endpoint would); ``--in-process`` puts it
on a thread of this process instead.

``--scenario local`` instead plays a small local server (llama.cpp-like: one request at a time,
``--token-ms`` per token, generating up to ``--context-limit`` tokens unless ``max_tokens`` is sent)
and runs ``--cases`` cases twice: with the adapter's defaults, and with the former defaults (no
``max_tokens``, ``--old-timeout`` seconds). It reports answers, errors, cut answers, requests not
sent, wall time and whether the server was still generating after the run.

    python benchmarks/bench_engine.py --scenario local [--cases 40] [--token-ms 0.5] [--context-limit 4000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
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

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec  # noqa: E402
from tests.helpers.cases import make_requests  # noqa: E402
from tests.helpers.fake_openai import FakeOpenAIServer  # noqa: E402


def peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class ServerProcess:
    """The fake server in a child process; stops when we close its stdin."""

    def __init__(self, latency: float) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.helpers.fake_openai", "--latency", str(latency)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert self.proc.stdout is not None
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.proc.kill()
            raise RuntimeError(f"fake server did not start (said {port!r})")
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def local_server(args: argparse.Namespace) -> int:
    """Defaults against a one-slot server that generates to its limit unless told (see module doc)."""
    words = " ".join(f"w{i}" for i in range(100))

    def answer(body: Any) -> str:
        return f"##Reason: {words}\n##Answer: done [1]"

    requests = make_requests(args.cases, name="bench")
    figures: dict[str, Any] = {"cases": args.cases, "token_ms": args.token_ms, "context_limit": args.context_limit}
    runs = {"defaults": "", "former_defaults": f"&max_tokens=none&timeout={args.old_timeout}"}
    for label, options in runs.items():
        with FakeOpenAIServer(answer=answer, serial=True, token_s=args.token_ms / 1000,
                              context_limit=args.context_limit) as server:
            adapter = ModelRegistry().create(parse_model_spec(f"openai:local?base_url={server.base_url}{options}"))
            stats = EngineStats()
            started = time.perf_counter()
            out = run_requests(adapter, requests, EngineSettings(cache_mode="off", concurrency=16, stats=stats))
            wall = time.perf_counter() - started
            time.sleep(0.5)  # time for the server to notice closed connections
            figures[label] = {
                "wall_s": round(wall, 2), "answers": sum(isinstance(a, Answer) for a in out),
                "errors": stats.errors, "cut_at_max_tokens": stats.truncated, "not_sent": stats.skipped,
                "calls": stats.calls, "failed_calls": stats.failed_calls,
                "server_requests": server.count, "server_generating_after": server.generating,
                "server_abandoned": server.abandoned, "problems": stats.problems}
            row = figures[label]
            print(f"{label:16} {row['answers']}/{args.cases} answers, {row['errors']} errors, "
                  f"{row['not_sent']} not sent, {row['calls']} calls ({row['failed_calls']} failed), "
                  f"{wall:.1f}s; server still generating after the run: {row['server_generating_after']}, "
                  f"abandoned generations: {row['server_abandoned']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", default="throughput", choices=("throughput", "local"))
    parser.add_argument("--token-ms", type=float, default=0.5, help="local: milliseconds per generated token")
    parser.add_argument("--context-limit", type=int, default=4000, help="local: tokens generated without max_tokens")
    parser.add_argument("--old-timeout", type=float, default=1.0,
                        help="local: the timeout of the former defaults, scaled like --token-ms")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--passages", type=int, default=3, help="passages per case")
    parser.add_argument("--passage-chars", type=int, default=0,
                        help="characters per passage (0: one short sentence; MIRACL passages are ~600)")
    parser.add_argument("--repeat", type=int, default=5, help="best of N for the warm and replay runs")
    parser.add_argument("--http", default="auto", choices=("auto", "httpx", "aiohttp"),
                        help="the openai SDK's HTTP transport (auto: aiohttp when installed)")
    parser.add_argument("--in-process", action="store_true", help="serve from a thread of this process")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.scenario == "local":
        if args.cases == 2000:
            args.cases = 40
        return local_server(args)

    def build() -> list[Any]:
        return make_requests(args.cases, name="bench", passages_per_case=args.passages,
                             passage_chars=args.passage_chars)

    started = time.perf_counter()
    requests = build()
    build_s = time.perf_counter() - started
    registry = ModelRegistry()
    work = Path(tempfile.mkdtemp(prefix="mirage-bench-"))
    in_process = FakeOpenAIServer(latency=args.latency).start() if args.in_process else None
    child = None if in_process else ServerProcess(args.latency)
    base_url = in_process.base_url if in_process else child.base_url  # type: ignore[union-attr]
    spec = f"openai:bench-model?base_url={base_url}&http={args.http}"
    settings = EngineSettings(cache_dir=work / "cache", concurrency=args.concurrency)
    try:
        # 1. cold
        adapter = registry.create(parse_model_spec(spec))
        rss_before = peak_rss_mib()
        stats = EngineStats()
        load_before = os.getloadavg()[0]
        started, cpu_started = time.perf_counter(), time.process_time()
        answers = run_requests(adapter, requests, EngineSettings(cache_dir=settings.cache_dir,
                                                                 concurrency=args.concurrency, stats=stats))
        cold_s = time.perf_counter() - started
        cold_cpu_s = time.process_time() - cpu_started
        rss_after = peak_rss_mib()
        errors = [a for a in answers if not isinstance(a, Answer)]
        if errors:
            raise SystemExit(f"cold run had {len(errors)} errors, e.g. {errors[0]}")
        ideal_s = args.cases * args.latency / args.concurrency

        # the same answers as a run file, for replay:
        run_file = work / "bench-model.jsonl"
        with run_file.open("w", encoding="utf-8") as fh:
            for a in answers:
                assert isinstance(a, Answer)
                fh.write(json.dumps({**a.to_run_line(), "suite": "bench"}, ensure_ascii=False) + "\n")

        def timed(model_spec: str, stats: EngineStats) -> float:
            started = time.perf_counter()
            model = registry.create(parse_model_spec(model_spec))
            out = run_requests(model, requests, EngineSettings(cache_dir=settings.cache_dir,
                                                               concurrency=args.concurrency, stats=stats))
            elapsed = time.perf_counter() - started
            bad = [a for a in out if not isinstance(a, Answer)]
            if bad:
                raise SystemExit(f"{model_spec}: {len(bad)} errors, e.g. {bad[0]}")
            if [a.output for a in out] != [a.output for a in answers]:  # type: ignore[union-attr]
                raise SystemExit(f"{model_spec}: answers differ from the cold run")
            return elapsed

        warm_stats = EngineStats()
        warm = [timed(spec, warm_stats) for _ in range(args.repeat)]
        replay = [timed(f"replay:{run_file}", EngineStats()) for _ in range(args.repeat)]
        if warm_stats.calls:
            raise SystemExit(f"warm runs made {warm_stats.calls} calls; expected none")
        cache_bytes = sum(p.stat().st_size for p in (work / "cache").iterdir())
    finally:
        if in_process is not None:
            in_process.stop()
        if child is not None:
            child.close()
        shutil.rmtree(work, ignore_errors=True)

    figures: dict[str, Any] = {
        "cases": args.cases, "latency_s": args.latency, "concurrency": args.concurrency,
        "server": "thread" if args.in_process else "process",
        "cold_s": round(cold_s, 3), "ideal_s": round(ideal_s, 3), "ratio_to_ideal": round(cold_s / ideal_s, 3),
        "cold_calls": stats.calls, "cold_client_cpu_s": round(cold_cpu_s, 3),
        "client_cpu_ms_per_request": round(1000 * cold_cpu_s / args.cases, 3),
        "http": adapter.http, "loadavg_1min_before": load_before,  # type: ignore[attr-defined]
        "peak_rss_mib": round(rss_after, 1),
        "rss_growth_mib": round(rss_after - rss_before, 1),
        "prompt_chars_mean": round(sum(len(r.prompt) for r in requests) / len(requests)),
        "warm_s": round(min(warm), 3), "replay_s": round(min(replay), 3),
        "warm_over_replay": round(min(warm) / min(replay), 3),
        # a harness run renders every prompt before either lookup: the same work on both sides
        "render_s": round(build_s, 3),
        "warm_over_replay_with_render": round((min(warm) + build_s) / (min(replay) + build_s), 3),
        "cache_bytes": cache_bytes,
        "python": platform.python_version(), "cpus": os.cpu_count(),
    }
    print(f"cold:   {cold_s:.2f}s for {args.cases} cases ({stats.calls} calls) = {figures['ratio_to_ideal']:.2f}x "
          f"the ideal {ideal_s:.3f}s (target <= 1.2x); client CPU {cold_cpu_s:.2f}s "
          f"({figures['client_cpu_ms_per_request']:.2f} ms/request, {figures['http']}), "
          f"load average before {load_before:.1f} on {os.cpu_count()} CPUs")
    print(f"memory: peak RSS {rss_after:.0f} MiB, +{rss_after - rss_before:.0f} MiB during the cold run")
    print(f"warm:   {min(warm):.3f}s (cache, 0 calls)   replay: {min(replay):.3f}s   "
          f"warm/replay = {figures['warm_over_replay']:.2f}x (target <= 1.5x); with prompt rendering "
          f"({build_s:.3f}s) on both sides {figures['warm_over_replay_with_render']:.2f}x; "
          f"mean prompt {figures['prompt_chars_mean']} chars")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
