"""Hostile conditions: trickled and malformed responses, caches that cannot be written or only read,
a model that keeps failing, a local server that answers one request at a time, interrupts.

The HTTP faults come from a real server on 127.0.0.1 (tests/helpers/fake_openai.py) reached through
the openai SDK; disk faults from a size-limited process (RLIMIT_FSIZE), a tiny tmpfs and read-only
bind mounts where the machine allows them (each test says why when it skips).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mirage.engine import (
    CACHE_FILE,
    EngineSettings,
    EngineStats,
    RetryPolicy,
    run_requests,
    summary_lines,
)
from pytest_mirage.engine import cache as cache_module
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer, ModelRequest
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.adapters import CountingBatchAdapter, SlowAsyncAdapter
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

REPO = Path(__file__).parents[2]
FAST = RetryPolicy(max_retries=1, base_s=0.01, max_backoff_s=0.02)
TRANSPORTS = ["httpx"] + (["aiohttp"] if importlib.util.find_spec("aiohttp") else [])
needs_openai = pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="needs the openai extra")


def _openai(spec: str):  # type: ignore[no-untyped-def]
    from pytest_mirage.models.openai_adapter import create

    return create(parse_model_spec(spec))


class BigAnswers(CountingBatchAdapter):
    """Answers of about 2 kB each: a few fill a small disk."""

    def answer_batch(self, requests):  # type: ignore[no-untyped-def]
        return [Answer(a.case_id, a.model, a.output + " x" * 1000) if isinstance(a, Answer) else a
                for a in super().answer_batch(requests)]


# ---------------------------------------------------------------------------------------- HTTP bodies
@needs_openai
@pytest.mark.parametrize("http", TRANSPORTS)
def test_a_trickled_response_is_a_retried_timeout(http: str) -> None:
    # each 8-byte chunk comes within 0.1 s, so no single read times out; the whole body takes ~4 s
    with FakeOpenAIServer(default_faults=["trickle"] * 2, trickle_s=0.1) as server:
        adapter = _openai(f"openai:m?base_url={server.base_url}&timeout=0.5&http={http}")
        started = time.monotonic()
        out = run_requests(adapter, make_requests(1), EngineSettings(retry=FAST, cache_mode="off"))
        elapsed = time.monotonic() - started
        assert server.count == 2  # retried once (FAST allows one retry), like any timeout
    message = str(out[0])
    assert isinstance(out[0], ModelError), message
    assert "no complete response within 0.5s (timeout" in message and "gave up after 2 attempt(s)" in message
    assert elapsed < 3.0  # two deadlines of 0.5 s, far from the 8 s the trickled bodies would take


@needs_openai
@pytest.mark.parametrize("http", TRANSPORTS)
def test_bodies_that_are_not_utf8_are_errors_and_never_cached(tmp_path: Path, http: str) -> None:
    faults = {"q-0:": ["non_utf8"], "q-1:": ["surrogate"]}
    with FakeOpenAIServer(faults=faults) as server:
        adapter = _openai(f"openai:m?base_url={server.base_url}&http={http}")
        out = run_requests(adapter, make_requests(3), EngineSettings(cache_dir=tmp_path, retry=FAST))
        assert server.count == 3  # not retried: the server said what it meant to say
    assert isinstance(out[0], ModelError) and "the response body is not valid UTF-8 (byte 0xe9" in str(out[0])
    assert isinstance(out[1], ModelError) and "unpaired surrogate" in str(out[1])
    assert isinstance(out[2], Answer)
    cache = cache_module.AnswerCache(tmp_path)
    try:
        assert len(cache) == 1  # only the good answer
    finally:
        cache.close()


def test_answer_text_with_lone_surrogates_is_an_error_not_a_crash(tmp_path: Path) -> None:
    class Surrogates(CountingBatchAdapter):
        def answer_batch(self, requests):  # type: ignore[no-untyped-def]
            return [Answer(r.item_id, self.name, "bad \ud800 text") for r in requests]

    out = run_requests(Surrogates(), make_requests(2), EngineSettings(cache_dir=tmp_path))
    assert all(isinstance(e, ModelError) and "unpaired surrogate at position 4" in str(e) for e in out)


# ---------------------------------------------------------------------------------------- full disk
FULL_WORKER = """
import json, resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit fails instead of killing us
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
from pytest_mirage.models.base import Answer
from tests.unit.test_engine_hardening import BigAnswers
from tests.helpers.cases import make_requests
stats = EngineStats()
out = run_requests(BigAnswers(), make_requests(150), EngineSettings(cache_dir=Path(sys.argv[1]), stats=stats,
                                                                    batch_size=10))
print(json.dumps({"answers": sum(isinstance(a, Answer) for a in out), "long": sum(
    isinstance(a, Answer) and len(a.output) > 2000 for a in out), "errors": stats.errors,
    "problems": stats.problems}))
"""


def _check_full_disk_outcome(answers: int, problems: list[str], cache: Path) -> None:
    assert answers == 150  # every answer received is kept
    assert len(problems) == 1, problems  # one clear problem, not one per case
    problem = problems[0]
    assert str(cache / CACHE_FILE) in problem and "cannot write to it" in problem
    assert "kept for this session only, not stored" in problem
    assert "delete the file" not in problem


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file size limits (RLIMIT_FSIZE)")
def test_a_cache_that_hits_a_file_size_limit_keeps_every_answer(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(FULL_WORKER, encoding="utf-8")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(script), str(cache), str(64 * 1024)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr
    result = json.loads(proc.stdout)
    _check_full_disk_outcome(result["answers"], result["problems"], cache)
    assert result["long"] == 150 and result["errors"] == 0
    assert "SQLITE_" in result["problems"][0] and "file size limit (ulimit -f) of 65536 bytes" in result["problems"][0]


@contextlib.contextmanager
def _mounted(kind: str, target: Path, *options: str) -> Iterator[None]:
    """Mount something at ``target`` for the test, or skip with the reason."""
    target.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("needs mount/umount")
    cmd = ["mount", *options, target.as_posix()] if kind == "remount" else ["mount", *options]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip() or 'mount failed'}): needs root or CAP_SYS_ADMIN")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", target.as_posix()], capture_output=True)


def test_a_cache_on_a_full_filesystem_keeps_every_answer(tmp_path: Path) -> None:
    disk = tmp_path / "tiny"
    disk.mkdir()
    with _mounted("tmpfs", disk, "-t", "tmpfs", "-o", "size=64k", "tmpfs", disk.as_posix()):
        cache = disk / "cache"
        stats = EngineStats()
        out = run_requests(BigAnswers(), make_requests(150), EngineSettings(cache_dir=cache, stats=stats,
                                                                            batch_size=10))
        _check_full_disk_outcome(sum(isinstance(a, Answer) for a in out), stats.problems, cache)
        assert "SQLITE_FULL" in stats.problems[0] and "ENOSPC" in stats.problems[0]
        assert summary_lines(stats)[-1] == f"mirage problem: {stats.problems[0]}"
        # the next run reads what was stored and asks only for the rest; the problem is said once again
        again = EngineStats()
        out = run_requests(BigAnswers(), make_requests(150), EngineSettings(cache_dir=cache, stats=again))
        assert sum(isinstance(a, Answer) for a in out) == 150 and again.hits + again.misses == 150


def test_a_write_failure_in_the_middle_of_a_run_loses_nothing(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    real_put = cache_module.AnswerCache.put
    written: list[str] = []

    def put(self, key, kind, model, answer):  # type: ignore[no-untyped-def]
        if len(written) >= 3:
            raise self._fail("write to it", sqlite3.OperationalError("database or disk is full"))
        written.append(answer.case_id)
        real_put(self, key, kind, model, answer)

    monkeypatch.setattr(cache_module.AnswerCache, "put", put)
    stats = EngineStats()
    adapter = SlowAsyncAdapter(delay=0)
    out = run_requests(adapter, make_requests(20), EngineSettings(cache_dir=tmp_path, stats=stats))
    assert all(isinstance(a, Answer) for a in out) and len(out) == 20
    assert len(written) == 3 and len(stats.problems) == 1 and "SQLITE_FULL" in stats.problems[0]
    monkeypatch.setattr(cache_module.AnswerCache, "put", real_put)
    again = SlowAsyncAdapter(delay=0)
    run_requests(again, make_requests(20), EngineSettings(cache_dir=tmp_path))
    assert len(again.attempts) == 17  # the three stored answers are reused


# ---------------------------------------------------------------------------------------- read-only caches
def _fill(cache: Path, n: int) -> None:
    out = run_requests(CountingBatchAdapter(), make_requests(n), EngineSettings(cache_dir=cache))
    assert all(isinstance(a, Answer) for a in out)


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as this process cannot write it: chmod for ordinary users, a read-only bind mount
    for root (root ignores permission bits); skips when neither is possible."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield folder
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    view = folder.with_name(folder.name + "-ro")
    with _mounted("bind", view, "--bind", folder.as_posix(), view.as_posix()):
        done = subprocess.run(["mount", "-o", "remount,ro,bind", view.as_posix()], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make a read-only bind mount ({done.stderr.strip()})")
        yield view


def test_replay_only_reads_a_read_only_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _fill(cache, 4)
    with _read_only(cache) as view:
        stats = EngineStats()
        adapter = CountingBatchAdapter()
        out = run_requests(adapter, make_requests(5), EngineSettings(cache_dir=view, cache_mode="replay-only",
                                                                     stats=stats))
        assert adapter.calls == 0 and stats.hits == 4
        assert [type(a).__name__ for a in out] == ["Answer"] * 4 + ["NotCached"]  # a ModelError
        assert "no cached answer" in str(out[4]) and "delete the file" not in str(out[4])
        assert stats.problems == []


def test_use_mode_on_a_read_only_cache_reads_it_and_says_why_nothing_is_stored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _fill(cache, 4)
    with _read_only(cache) as view:
        stats = EngineStats()
        adapter = CountingBatchAdapter()
        out = run_requests(adapter, make_requests(6), EngineSettings(cache_dir=view, stats=stats))
        assert all(isinstance(a, Answer) for a in out)
        assert adapter.batches == [["q-4", "q-5"]] and stats.hits == 4
        assert len(stats.problems) == 1, stats.problems
        problem = stats.problems[0]
        assert "cannot open it for writing" in problem and "writable" in problem and "delete the file" not in problem
        assert "cached answers are still read" in problem
        refresh = CountingBatchAdapter()
        out = run_requests(refresh, make_requests(2), EngineSettings(cache_dir=view, cache_mode="refresh"))
        assert refresh.calls == 2 and all(isinstance(a, Answer) for a in out)


def test_a_read_only_cache_left_by_a_killed_writer_is_read_completely(tmp_path: Path) -> None:
    # a killed run leaves its answers in the -wal file; read-only access must still see them
    cache = tmp_path / "cache"
    code = ("import os, sys; from pathlib import Path\n"
            "from pytest_mirage.engine import EngineSettings, run_requests\n"
            "from tests.helpers.adapters import CountingBatchAdapter\n"
            "from tests.helpers.cases import make_requests\n"
            "run_requests(CountingBatchAdapter(), make_requests(5), EngineSettings(cache_dir=Path(sys.argv[1])))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # os._exit skips closing the connection: no checkpoint, the WAL file stays
    subprocess.run([sys.executable, "-c", code.replace("run_requests(", "r = run_requests(") + "os._exit(0)\n",
                    str(cache)], env=env, cwd=REPO, check=True, timeout=60)
    with _read_only(cache) as view:
        adapter = CountingBatchAdapter()
        out = run_requests(adapter, make_requests(5), EngineSettings(cache_dir=view, cache_mode="replay-only"))
    assert adapter.calls == 0 and all(isinstance(a, Answer) for a in out)


def test_a_disk_io_error_gets_io_advice_not_delete_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(tmp_path, 2)

    def broken(self, keys):  # type: ignore[no-untyped-def]
        raise self._fail("read it", sqlite3.OperationalError("disk I/O error"))

    monkeypatch.setattr(cache_module.AnswerCache, "get_many", broken)
    out = run_requests(CountingBatchAdapter(), make_requests(2), EngineSettings(cache_dir=tmp_path,
                                                                                cache_mode="replay-only"))
    message = str(out[0])
    assert isinstance(out[0], ModelError) and "cannot read it (SQLITE_IOERR: disk I/O error" in message
    assert "check the device and the mount" in message and "delete the file" not in message
    stats = EngineStats()
    adapter = CountingBatchAdapter()
    out = run_requests(adapter, make_requests(2), EngineSettings(cache_dir=tmp_path, stats=stats))
    assert adapter.calls == 2 and all(isinstance(a, Answer) for a in out)
    assert len(stats.problems) == 1 and "every request of this run goes to the model" in stats.problems[0]


def test_errors_are_classified_by_sqlite_code_and_errno() -> None:
    assert cache_module.classify(OSError(28, "No space left on device"))[0] == "full"
    assert cache_module.classify(PermissionError(13, "Permission denied"))[0] == "readonly"
    assert cache_module.classify(OSError(30, "Read-only file system"))[1] == "EROFS: Read-only file system"
    assert cache_module.classify(sqlite3.OperationalError("attempt to write a readonly database"))[0] == "readonly"
    assert cache_module.classify(sqlite3.DatabaseError("file is not a database"))[0] == "corrupt"
    assert cache_module.classify(sqlite3.OperationalError("database is locked"))[0] == "busy"


def test_a_folder_that_cannot_be_created_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    stats = EngineStats()
    out = run_requests(CountingBatchAdapter(), make_requests(2), EngineSettings(cache_dir=blocker / "cache",
                                                                                stats=stats))
    assert all(isinstance(a, Answer) for a in out)
    assert len(stats.problems) == 1 and "cannot create its folder" in stats.problems[0]


def test_a_file_that_is_not_sqlite_is_still_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match=r"cannot open it as an SQLite database.*delete the file"):
        run_requests(CountingBatchAdapter(), make_requests(1), EngineSettings(cache_dir=tmp_path))


# ---------------------------------------------------------------------------------------- breaker
@needs_openai
def test_a_model_that_keeps_failing_the_same_way_is_not_called_for_the_rest(tmp_path: Path) -> None:
    with FakeOpenAIServer(default_faults=["401"] * 1000) as server:
        stats = EngineStats()
        adapter = _openai(f"openai:m?base_url={server.base_url}&concurrency=2")
        out = run_requests(adapter, make_requests(40), EngineSettings(stats=stats, cache_dir=tmp_path))
        assert server.count <= 5 + 2  # the limit, plus what was in flight when it tripped
    assert all(isinstance(e, ModelError) for e in out)
    skipped = [e for e in out if "not sent: the last 5 model answers failed the same way" in str(e)]
    assert len(skipped) == 40 - server.count == stats.skipped
    assert "HTTP 401" in str(skipped[0]) and "case engine-suite/" in str(skipped[0])
    assert len(stats.problems) == 1 and "stopped calling it after 5 model answers in a row" in stats.problems[0]
    assert stats.errors == 40 and stats.calls == server.count == stats.failed_calls


def test_successes_reset_the_breaker_and_different_failures_do_not_trip_it() -> None:
    def fail(req, attempt):  # type: ignore[no-untyped-def]
        n = int(req.case.id.split("-")[1])
        if n % 5 == 4:
            return None  # every fifth succeeds
        return ModelError("HTTP 400: context too long") if n < 20 else ModelError(f"HTTP 400: distinct {n}")

    stats = EngineStats()
    out = run_requests(SlowAsyncAdapter(delay=0, concurrency=1, fail=fail), make_requests(40),
                       EngineSettings(stats=stats))
    assert stats.skipped == 0 and stats.problems == []
    assert sum(isinstance(a, Answer) for a in out) == 8
    stats = EngineStats()
    run_requests(SlowAsyncAdapter(delay=0, concurrency=1, fail=fail), make_requests(40),
                 EngineSettings(stats=stats, breaker_after=0))
    assert stats.skipped == 0


def test_the_breaker_stops_batches_too() -> None:
    script = {f"q-{i}": [ModelError("CUDA out of memory")] for i in range(12)}
    adapter = CountingBatchAdapter(script=script, batch_size=3)
    stats = EngineStats()
    out = run_requests(adapter, make_requests(12), EngineSettings(stats=stats))
    assert adapter.batches == [["q-0", "q-1", "q-2"], ["q-3", "q-4", "q-5"]]
    assert stats.skipped == 6 and all(isinstance(e, ModelError) for e in out)


# ---------------------------------------------------------------------------------------- local servers
@needs_openai
def test_a_one_slot_server_with_default_options_finishes_and_is_left_idle(tmp_path: Path) -> None:
    # generates until 2,000 tokens unless max_tokens is sent; one request at a time
    with FakeOpenAIServer(serial=True, token_s=0.001, context_limit=2000) as server:
        stats = EngineStats()
        adapter = _openai(f"openai:local?base_url={server.base_url}")
        out = run_requests(adapter, make_requests(8), EngineSettings(stats=stats, cache_dir=tmp_path))
        assert all(isinstance(a, Answer) for a in out)
        assert all(r.body["max_tokens"] == 512 for r in server.log)
        time.sleep(0.2)
        assert server.generating == 0 and server.in_flight == 0
    assert stats.errors == 0


@needs_openai
def test_abandoned_requests_stop_when_the_run_ends(tmp_path: Path) -> None:
    # without max_tokens each answer takes 2 s; the timeout gives up, and the server must notice
    with FakeOpenAIServer(serial=True, token_s=0.001, context_limit=2000) as server:
        adapter = _openai(f"openai:local?base_url={server.base_url}&max_tokens=none&timeout=0.3&concurrency=4")
        out = run_requests(adapter, make_requests(4), EngineSettings(retry=RetryPolicy(max_retries=0)))
        message = str(out[0])
        assert isinstance(out[0], ModelError)
        assert "no complete response within 0.3s" in message and "no max_tokens" in message
        assert "concurrency 4" in message and "?max_tokens=N" in message
        deadline = time.monotonic() + 3
        while (server.generating or server.in_flight) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.generating == 0 and server.in_flight == 0
        assert server.completed == 0 and server.abandoned >= 1


INTERRUPT_WORKER = """
import sys
from pytest_mirage.engine import EngineSettings, run_requests
from pytest_mirage.models.openai_adapter import create
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests
adapter = create(parse_model_spec("openai:local?base_url=" + sys.argv[1] + "&max_tokens=none&concurrency=4"))
print("started", flush=True)
run_requests(adapter, make_requests(8), EngineSettings(cache_mode="off"))
"""


@needs_openai
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_an_interrupted_run_leaves_no_request_running(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(INTERRUPT_WORKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("OPENAI_API_KEY", None)
    with FakeOpenAIServer(token_s=0.01, context_limit=100_000) as server:  # 1,000 s per answer
        proc = subprocess.Popen([sys.executable, str(script), server.base_url], env=env, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        while server.generating < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.generating == 4
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
        assert "KeyboardInterrupt" in stderr
        deadline = time.monotonic() + 3
        while server.generating and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.generating == 0 and server.abandoned == 4


# ---------------------------------------------------------------------------------------- model identity
@needs_openai
def test_check_model_compares_the_name_with_the_servers_list() -> None:
    with FakeOpenAIServer(models=["llama-3.1-8b", "qwen2.5-7b"]) as server:
        wrong = _openai(f"openai:llama-3.1-8B?base_url={server.base_url}&check_model=true")
        out = run_requests(wrong, make_requests(3), EngineSettings())
        assert all(isinstance(e, ModelError) for e in out)
        message = str(out[0])
        assert "does not serve model 'llama-3.1-8B'" in message and "lists: llama-3.1-8b, qwen2.5-7b" in message
        assert "Did you mean: llama-3.1-8b?" in message
        assert [r.fault for r in server.log] == ["models"]  # listed once, no chat request sent
        right = _openai(f"openai:qwen2.5-7b?base_url={server.base_url}&check_model=true")
        assert all(isinstance(a, Answer) for a in run_requests(right, make_requests(3), EngineSettings()))
        unchecked = _openai(f"openai:anything?base_url={server.base_url}")
        run_requests(unchecked, make_requests(1), EngineSettings())
        assert [r.fault for r in server.log].count("models") == 2


def test_prompt_and_case_requests_in_one_cache(tmp_path: Path) -> None:
    from pytest_mirage.models.base import PromptRequest

    prompts = [PromptRequest(id="p1", prompt="Which answer is better?", label="judge"),
               PromptRequest(id="p2", prompt="Which answer is better?", label="judge"),
               PromptRequest(id="p3", prompt="Another question", label="judge", lang="de")]
    adapter = CountingBatchAdapter()
    out = run_requests(adapter, prompts, EngineSettings(cache_dir=tmp_path))
    assert [a.case_id for a in out if isinstance(a, Answer)] == ["p1", "p2", "p3"]
    assert adapter.batches == [["p1", "p3"]]  # the same prompt is asked once
    again = CountingBatchAdapter()
    cases: list[ModelRequest | PromptRequest] = [*make_requests(1), *prompts]
    out = run_requests(again, cases, EngineSettings(cache_dir=tmp_path))
    assert again.batches == [["q-0"]] and [a.case_id for a in out if isinstance(a, Answer)] == ["q-0", "p1", "p2", "p3"]
    failing = CountingBatchAdapter(script={"p9": [ModelError("HTTP 400: bad prompt")]})
    out = run_requests(failing, [PromptRequest(id="p9", prompt="x", label="judge")], EngineSettings())
    assert str(out[0]) == "prompt judge/p9: model batch:test: HTTP 400: bad prompt"


def test_the_breaker_also_ends_pending_retries() -> None:
    from tests.helpers.adapters import transient

    stats = EngineStats()
    adapter = SlowAsyncAdapter(delay=0.001, concurrency=4, fail=lambda req, n: transient("HTTP 503: down"))
    out = run_requests(adapter, make_requests(30), EngineSettings(
        stats=stats, retry=RetryPolicy(max_retries=2, base_s=0.01, max_backoff_s=0.02)))
    messages = [str(e) for e in out]
    assert all(isinstance(e, ModelError) for e in out)
    assert sum("gave up after 3 attempt(s)" in m for m in messages) >= 5
    not_retried = [m for m in messages if "not retried after" in m]
    not_sent = [m for m in messages if "not sent: the last 5 model answers failed the same way" in m]
    assert len(not_retried) + len(not_sent) > 0 and len(not_sent) == stats.skipped
    assert all("HTTP 503: down" in m for m in not_retried)
    assert stats.calls == sum(adapter.attempts.values()) < 30 * 3
    assert len(stats.problems) == 1
