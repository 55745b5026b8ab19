"""Kill-and-resume, and several processes (like xdist workers) sharing one cache file."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from pytest_mirage.engine import CACHE_FILE, EngineSettings, EngineStats, run_requests
from pytest_mirage.models.base import Answer
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import create

REPO = Path(__file__).parents[2]
N = 60

WORKER = """
import sys
from pathlib import Path
from pytest_mirage.engine import EngineSettings, run_requests
from pytest_mirage.models.base import Answer
from pytest_mirage.models.openai_adapter import create
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests

url, cache, start, stop, concurrency = sys.argv[1:6]
requests = make_requests(int(sys.argv[6]))[int(start):int(stop)]
adapter = create(parse_model_spec("openai:fake?base_url=" + url))
out = run_requests(adapter, requests, EngineSettings(cache_dir=Path(cache), concurrency=int(concurrency)))
print(sum(isinstance(a, Answer) for a in out), flush=True)
"""


def _spawn(tmp_path: Path, url: str, cache: Path, start: int, stop: int, concurrency: int) -> subprocess.Popen[str]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen([sys.executable, str(script), url, str(cache), str(start), str(stop), str(concurrency),
                             str(N)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _cached_cases(cache: Path) -> set[str]:
    path = cache / CACHE_FILE
    if not path.exists():
        return set()
    try:
        with closing(sqlite3.connect(path, timeout=5)) as conn:
            return {row[0] for row in conn.execute("SELECT case_id FROM answers_v2")}
    except sqlite3.OperationalError:  # the table is not created yet
        return set()


def test_a_killed_run_resumes_with_exactly_the_missing_calls(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    reqs = make_requests(N)
    with FakeOpenAIServer(latency=0.1) as server:
        proc = _spawn(tmp_path, server.base_url, cache, 0, N, 4)
        deadline = time.monotonic() + 60
        while len(_cached_cases(cache)) < 12:
            assert proc.poll() is None, f"worker ended early: {proc.communicate()}"
            if time.monotonic() > deadline:  # a hang guard, not a speed check
                pytest.fail("the worker made no progress in 60 s")
            time.sleep(0.01)
        proc.kill()  # SIGKILL: no cleanup, like a killed CI job
        proc.communicate(timeout=30)
        time.sleep(0.2)  # let the server finish answering the requests that were in flight
        done = _cached_cases(cache)
        calls_before = server.count
        assert 12 <= len(done) < N
        assert calls_before >= len(done)

        stats = EngineStats()
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}"))
        out = run_requests(adapter, reqs, EngineSettings(cache_dir=cache, concurrency=16, stats=stats))
        resumed = list(server.log)[calls_before:]
    assert all(isinstance(a, Answer) for a in out)
    assert server.count - calls_before == N - len(done)  # exactly the missing calls
    asked = {r.content.split("question ", 1)[1].split(":", 1)[0] for r in resumed}
    assert asked == {r.case.id for r in reqs} - done  # and none that had completed
    assert (stats.hits, stats.misses, stats.calls) == (len(done), N - len(done), N - len(done))


def test_processes_share_one_cache_file_safely(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeOpenAIServer(latency=0.02) as server:
        procs = [_spawn(tmp_path, server.base_url, cache, 0, 40, 8),
                 _spawn(tmp_path, server.base_url, cache, 20, 60, 8)]
        results = [p.communicate(timeout=120) for p in procs]
        for proc, (stdout, stderr) in zip(procs, results, strict=True):
            assert proc.returncode == 0, stderr
            assert stdout.strip() == "40"
        assert 60 <= server.count <= 80
        calls = server.count
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}"))
        stats = EngineStats()
        out = run_requests(adapter, make_requests(N), EngineSettings(cache_dir=cache, cache_mode="replay-only",
                                                                    stats=stats))
        assert server.count == calls
    assert all(isinstance(a, Answer) for a in out) and stats.hits == N
    assert _cached_cases(cache) == {f"q-{i}" for i in range(N)}
