"""Capacity benchmark (issue 25): default options against servers of 1, 4 and 64 slots and a rate-limited one.

Each scenario runs ``openai:`` with the engine's defaults (adaptive capacity) against a loopback
:class:`~tests.helpers.capacity_server.SlotServer` in its own process, and, for comparison, with the
former fixed limit (``?adaptive=off``: 16 in flight, per-request retries). Reported per run: answers,
wall time and its ratio to the ideal, 429 responses, the server's slot time on abandoned requests,
the most requests the server worked on at once, and what the controller learned.

    python benchmarks/bench_capacity.py [--only one-slot,four-slots,...] [--json out.json]

Scenarios (the issue's "Done when"):

* ``one-slot``: 40 answers x 0.25 s, one slot, ``?timeout=2`` (ideal: serial, 10 s)
* ``four-slots``: 160 x 0.25 s, four slots (ideal 10 s)
* ``64-slots``: 1,000 x 0.1 s, 64 slots (ideal 1.5625 s; the former fixed 16: 6.25 s)
* ``rate-limited``: 100 answers x 0.05 s, 10 requests/s (burst 10), 429 with ``Retry-After: 1`` beyond (ideal 10 s)
* ``rate-headers``: the same with ``x-ratelimit-*`` headers on every answer
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec  # noqa: E402
from tests.helpers.cases import make_requests  # noqa: E402

SCENARIOS: dict[str, dict[str, Any]] = {
    "one-slot": {"cases": 40, "server": ["--slots", "1", "--service", "0.25"], "options": "&timeout=2",
                 "ideal_s": 40 * 0.25},
    "four-slots": {"cases": 160, "server": ["--slots", "4", "--service", "0.25"], "options": "", "ideal_s": 160 * 0.25 / 4},
    "64-slots": {"cases": 1000, "server": ["--slots", "64", "--service", "0.1"], "options": "", "ideal_s": 1000 * 0.1 / 64},
    "rate-limited": {"cases": 100, "server": ["--slots", "64", "--service", "0.05", "--rate", "10", "--burst", "10"],
                     "options": "", "ideal_s": 100 / 10},
    "rate-headers": {"cases": 100, "server": ["--slots", "64", "--service", "0.05", "--rate", "10", "--burst", "10",
                                              "--ratelimit-headers"], "options": "", "ideal_s": 100 / 10},
}


class Server:
    """The slot server in a child process; ``stats()`` asks it for its figures."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.helpers.capacity_server", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert self.proc.stdout is not None
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.proc.kill()
            raise RuntimeError(f"slot server did not start (said {port!r})")
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def stats(self) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())  # type: ignore[no-any-return]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_one(name: str, scenario: dict[str, Any], mode: str, cache_dir: Path | None, port: int) -> dict[str, Any]:
    # one port per scenario: the learned capacity is kept per endpoint (URL and model)
    server = Server([*scenario["server"], "--port", str(port)])
    try:
        extra = "&adaptive=off" if mode == "fixed-16" else ""
        spec = f"openai:bench?base_url={server.base_url}{scenario['options']}{extra}"
        adapter = ModelRegistry().create(parse_model_spec(spec))
        stats = EngineStats()
        requests = make_requests(scenario["cases"], name=f"bench-{name}")
        started = time.perf_counter()
        out = run_requests(adapter, requests, EngineSettings(cache_dir=cache_dir, cache_mode="off" if cache_dir is None
                                                             else "refresh", stats=stats))
        wall = time.perf_counter() - started
        time.sleep(0.3 if name == "one-slot" else 0.05)  # the server finishes what was abandoned
        served = server.stats()
    finally:
        server.close()
    answers = sum(isinstance(a, Answer) for a in out)
    capacity = next(iter(stats.capacity.values()), {})
    return {"scenario": name, "mode": mode, "cases": scenario["cases"], "answers": answers, "errors": stats.errors,
            "wall_s": round(wall, 2), "ideal_s": scenario["ideal_s"], "wall_over_ideal": round(wall / scenario["ideal_s"], 2),
            "responses_429": served["rejected_429"], "abandoned_s": served["abandoned_s"], "server_max_busy": served["max_busy"],
            "calls": stats.calls, "retries": stats.retries, "capacity": capacity, "problems": stats.problems}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenario names")
    parser.add_argument("--modes", default="adaptive,fixed-16", help="adaptive (the defaults) and/or fixed-16")
    parser.add_argument("--stored", action="store_true",
                        help="also run each adaptive scenario a second time from the capacity the first one stored")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = []
    for name in args.only.split(","):
        scenario = SCENARIOS[name]
        port = free_port()
        for mode in args.modes.split(","):
            store = Path(tempfile.mkdtemp(prefix="mirage-capacity-")) if mode == "adaptive" else None
            runs = [mode] + (["adaptive-stored"] if args.stored and mode == "adaptive" else [])
            for label in runs:
                row = run_one(name, scenario, label if label != "adaptive-stored" else "adaptive", store, port)
                row["mode"] = label
                rows.append(row)
                cap = row["capacity"]
                learned = (f"learned {cap.get('concurrency')} in flight (start {cap.get('concurrency_start')}, "
                           f"max {cap.get('concurrency_max_used')})" if cap.get("adaptive") else "fixed")
                rate = cap.get("header_rate_per_s") or cap.get("rate_per_s")
                print(f"{name:13} {label:16} {row['answers']}/{row['cases']} answered, {row['wall_s']:6.2f}s = "
                      f"{row['wall_over_ideal']:.2f}x ideal {row['ideal_s']:g}s, {row['responses_429']:3} x 429, "
                      f"abandoned {row['abandoned_s']:.2f}s, server busy <= {row['server_max_busy']}, {learned}"
                      f"{f', {rate:g} req/s' if rate else ''}", flush=True)
    if args.json:
        meta = {"python": platform.python_version(), "cpus": os.cpu_count(), "loadavg_1min": os.getloadavg()[0]}
        args.json.write_text(json.dumps({"meta": meta, "runs": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
