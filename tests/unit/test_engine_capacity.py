"""Adaptive capacity (issue 25): the controller on simulated servers in virtual time.

Every run here goes through ``run_requests`` with a virtual-time event loop, so the figures are the
simulated server's seconds, exact and independent of the machine's load (no wall time is asserted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.engine import (
    EngineSettings,
    EngineStats,
    RetryPolicy,
    run_requests,
    summary_lines,
)
from pytest_mirage.engine.capacity import (
    CAPACITY_FILE,
    CapacityController,
    parse_duration,
    parse_rate_headers,
)
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.options import CapacityBounds, SpecOptions, capacity_bounds
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.capacity_sim import SimAdapter, SimServer, VirtualClock, virtual_loop
from tests.helpers.cases import make_requests


def simulate(server: SimServer, n: int, timeout: float = 60.0, **kwargs: Any) -> tuple[list[Any], float, dict[str, Any],
                                                                                         EngineStats, SimAdapter]:
    clock = VirtualClock()
    settings_kw = {k: kwargs.pop(k) for k in ("retry", "cache_dir", "breaker_after", "concurrency") if k in kwargs}
    adapter = SimAdapter(server, timeout=timeout, **kwargs)
    stats = EngineStats()
    out = run_requests(adapter, make_requests(n), EngineSettings(loop_factory=virtual_loop(clock), stats=stats,
                                                                 **settings_kw))
    return out, clock.now, stats.capacity.get(adapter.name, {}), stats, adapter


def answered(out: list[Any]) -> int:
    return sum(isinstance(a, Answer) for a in out)


def test_one_slot_server_queues_no_request_into_a_timeout() -> None:
    # the case scaled: one slot, 0.25 s an answer, a 2 s timeout; the former fixed 16 in flight
    # made 7 of 40 answers
    server = SimServer(slots=1, service_s=0.25)
    out, took, cap, stats, adapter = simulate(server, 40, timeout=2.0)
    assert answered(out) == 40 and stats.errors == 0
    assert took <= 1.3 * 40 * 0.25
    assert adapter.timeouts == 0 and server.abandoned_s == 0
    assert cap["concurrency"] <= 2  # learned: more in flight only adds latency
    assert cap["concurrency_max_used"] == 4  # the cautious start; never more


def test_the_former_fixed_limit_loses_most_of_the_one_slot_run() -> None:
    # the baseline the controller is measured against: the same server, 16 in flight, per-request retries
    server = SimServer(slots=1, service_s=0.25)
    out, _, _, _, _ = simulate(server, 40, timeout=2.0, bounds=None,
                               retry=RetryPolicy(max_retries=4, base_s=0.5, max_backoff_s=20))
    assert answered(out) < 40
    assert server.abandoned_s > 2.5


def test_a_slow_one_slot_server_ends_at_one_in_flight() -> None:
    # llama.cpp on two cores: 8 s an answer, the default 60 s timeout
    server = SimServer(slots=1, service_s=8.0)
    out, took, cap, _, adapter = simulate(server, 52, timeout=60.0)
    assert answered(out) == 52 and adapter.timeouts == 0
    assert took <= 1.05 * 52 * 8.0
    assert cap["concurrency"] == 1


def test_a_first_timeout_halves_the_limit_and_costs_the_case_nothing() -> None:
    # 1 s an answer with a 2.5 s timeout: the cautious start of 4 already queues two into the timeout
    server = SimServer(slots=1, service_s=1.0)
    out, _, cap, stats, adapter = simulate(server, 30, timeout=2.5, retry=RetryPolicy(max_retries=0))
    assert answered(out) == 30 and stats.errors == 0  # no attempt used although retries are 0
    assert adapter.timeouts >= 1 and cap["queue_timeouts"] == cap["timeouts"] == adapter.timeouts
    assert cap["concurrency"] == 1 and cap["backoffs"] >= 1


def test_a_server_too_slow_even_alone_fails_by_the_retry_policy() -> None:
    # one request at a time still times out: not the queue's fault, the usual attempts apply
    server = SimServer(slots=1, service_s=5.0)
    out, _, cap, _, _ = simulate(server, 3, timeout=1.0, retry=RetryPolicy(max_retries=1, base_s=0.01),
                                 bounds=CapacityBounds(start=1))
    assert answered(out) == 0
    assert all("gave up after 2 attempt(s); learned limit: 1 in flight" in str(e) for e in out), out
    assert cap["concurrency"] == 1


def test_four_slots_stay_at_four() -> None:
    server = SimServer(slots=4, service_s=0.25)
    out, took, cap, _, _ = simulate(server, 160)
    assert answered(out) == 160
    assert took <= 1.3 * 160 * 0.25 / 4
    assert 4 <= cap["concurrency"] <= 6 and server.max_busy == 4


def test_sixty_four_slots_are_found() -> None:
    server = SimServer(slots=64, service_s=0.1)
    out, took, cap, _, _ = simulate(server, 1000)
    assert answered(out) == 1000
    assert took <= 1000 * 0.1 / 16  # faster than the former fixed 16 (6.25 s)
    assert server.max_busy == 64 and cap["concurrency"] >= 64


def test_the_upper_bound_holds() -> None:
    server = SimServer(slots=64, service_s=0.1)
    _, _, cap, _, _ = simulate(server, 400, bounds=CapacityBounds(maximum=10))
    assert server.max_busy == 10 and cap["concurrency_max_used"] == 10 and cap["bounds"] == [1, 10]


def test_a_fixed_concurrency_is_the_users_word() -> None:
    server = SimServer(slots=1, service_s=0.25)
    _, _, cap, _, _ = simulate(server, 40, timeout=30.0, concurrency=8)
    assert cap["adaptive"] is False and cap["concurrency"] == 8 and cap["max_in_flight"] == 8


def test_a_token_bucket_without_headers_learns_a_rate_from_retry_after() -> None:
    # 10 requests/s (burst 10), 429 with Retry-After: 1 beyond; the former defaults answered 54/100
    server = SimServer(slots=64, service_s=0.05, rate=10, burst=10)
    out, took, cap, stats, _ = simulate(server, 100, retry=RetryPolicy(max_retries=0), breaker_after=5)
    assert answered(out) == 100 and stats.errors == 0  # 429s used no attempt and tripped no breaker
    assert took <= 1.3 * 100 / 10
    assert server.rejected <= 30 and cap["responses_429"] == server.rejected == stats.rate_limited
    assert 5 <= cap["rate_per_s"] <= 12


def test_one_retry_after_pauses_the_whole_queue_once() -> None:
    server = SimServer(slots=64, service_s=0.05, rate=10, burst=10)
    simulate(server, 100)
    first = server.rejected_at[0]
    # nothing reaches the server during the pause the first 429 asked for (no herd of retries)
    assert not [t for t in server.arrivals if first + 1e-9 < t < first + 1.0 - 1e-9]


def test_ratelimit_headers_pace_before_any_429() -> None:
    server = SimServer(slots=64, service_s=0.05, rate=10, burst=10, send_headers=True)
    out, took, cap, _, _ = simulate(server, 100)
    assert answered(out) == 100 and server.rejected <= 8
    assert took <= 1.3 * 100 / 10
    assert cap["header_rate_per_s"] == pytest.approx(10, rel=0.2)


def test_token_headers_pace_by_the_request_size() -> None:
    # 2,000 tokens/s, 500 tokens a request: 4 requests/s although the request bucket is large
    server = SimServer(slots=64, service_s=0.05, rate=1000, burst=1000, token_rate=2000, token_burst=2000,
                       send_headers=True)
    out, took, _, _, _ = simulate(server, 40, tokens_per_request=500)
    assert answered(out) == 40 and server.rejected <= 4
    assert took >= (40 * 500 - 2000) / 2000 * 0.9  # it cannot be faster than the bucket allows


def test_a_server_that_slows_down_mid_run_loses_no_answer() -> None:
    server = SimServer(slots=4, service_s=lambda t: 0.1 if t < 5 else 0.6)
    out, _, _, stats, adapter = simulate(server, 300, timeout=2.0)
    assert answered(out) == 300 and stats.errors == 0 and adapter.timeouts == 0


def test_a_server_that_slows_under_a_large_limit_is_backed_off_before_timeouts() -> None:
    server = SimServer(slots=16, service_s=lambda t: 0.1 if t < 2 else 0.5)
    out, _, cap, stats, adapter = simulate(server, 300, timeout=1.5)
    assert answered(out) == 300 and stats.errors == 0
    assert cap["concurrency"] <= 32 and adapter.timeouts <= 16


def test_a_flapping_server_loses_no_answer() -> None:
    # capacity 8, then 2, then 8 ... every 4 s
    server = SimServer(slots=lambda t: 8 if int(t // 4) % 2 == 0 else 2, service_s=0.2)
    out, took, cap, stats, _ = simulate(server, 400, timeout=2.0)
    assert answered(out) == 400 and stats.errors == 0
    assert took <= 1.3 * 400 * 0.2 / 5  # 5 slots on average
    assert 1 <= cap["concurrency_min_used"] <= cap["concurrency_max_used"] <= 128


def test_total_waiting_is_bounded_and_the_message_says_so() -> None:
    server = SimServer(slots=1, service_s=0.1, rate=0.001, burst=0, retry_after=100)
    out, _, _, _, _ = simulate(server, 2)
    assert answered(out) == 0
    message = str(out[0])
    assert "HTTP 429" in message and "more than the 600s the engine waits per request" in message
    assert "learned limit:" in message and "requests/s" in message


def test_a_retry_after_beyond_the_wait_limit_ends_the_request() -> None:
    server = SimServer(slots=1, service_s=0.1, rate=0.001, burst=0, retry_after=3600)
    out, _, _, _, _ = simulate(server, 1)
    assert "retry after 3600s" in str(out[0]) and len(server.arrivals) == 1


def test_the_learned_capacity_is_the_next_runs_start(tmp_path: Path) -> None:
    first = SimServer(slots=1, service_s=0.25)
    _, _, cap1, _, _ = simulate(first, 40, timeout=2.0, cache_dir=tmp_path)
    stored = json.loads((tmp_path / CAPACITY_FILE).read_text(encoding="utf-8"))
    assert stored["sim"]["concurrency"] == cap1["concurrency"]
    second = SimServer(slots=1, service_s=0.25)
    _, _, cap2, _, _ = simulate(second, 40, timeout=2.0, cache_dir=tmp_path)
    assert cap2["started_from"] == "stored" and cap2["concurrency_start"] == cap1["concurrency"]
    assert second.max_busy == 1 and cap2["concurrency_max_used"] <= 2


def test_an_unreadable_capacity_file_is_reported_and_ignored(tmp_path: Path) -> None:
    (tmp_path / CAPACITY_FILE).write_text("{not json", encoding="utf-8")
    out, _, cap, stats, _ = simulate(SimServer(slots=2, service_s=0.1), 10, cache_dir=tmp_path)
    assert answered(out) == 10 and cap["started_from"] == "default"
    assert any("not JSON" in p and CAPACITY_FILE in p for p in stats.problems)


def test_summary_line_and_stats_carry_the_learned_figures() -> None:
    server = SimServer(slots=64, service_s=0.05, rate=10, burst=10)
    _, _, cap, stats, _ = simulate(server, 50)
    lines = summary_lines(stats)
    line = next(x for x in lines if x.startswith("mirage capacity [sim:server]"))
    assert f"learned {cap['concurrency']} in flight" in line and "requests/s (learned)" in line
    assert f"{server.rejected} responses 429" in line and "waited on rate limits" in line
    assert cap["waited_s"] > 0
    merged = EngineStats.from_dict(json.loads(json.dumps(stats.to_dict())))  # through xdist's workeroutput
    merged.merge(stats.to_dict())
    assert merged.capacity["sim:server"]["responses_429"] == 2 * cap["responses_429"]


def test_progress_lines_show_the_current_limit() -> None:
    lines: list[str] = []
    clock = VirtualClock()
    run_requests(SimAdapter(SimServer(slots=2, service_s=0.1)), make_requests(30),
                 EngineSettings(loop_factory=virtual_loop(clock), progress=True, progress_style="lines",
                                progress_write=lines.append, progress_min=1))
    assert lines[-1].startswith("mirage model answers [sim:server]: 30/30 done, 0 errors, limit ")
    assert " in flight" in lines[-1]


def test_adaptive_off_keeps_the_former_behaviour() -> None:
    # no controller: a 429 uses an attempt (here: the only one)
    server = SimServer(slots=64, service_s=0.05, rate=10, burst=10)
    out, _, cap, stats, _ = simulate(server, 30, bounds=None, retry=RetryPolicy(max_retries=0))
    assert cap == {} and stats.errors > 0 and "HTTP 429" in str(next(e for e in out if isinstance(e, ModelError)))


# ------------------------------------------------------------------ headers and options
def test_reset_durations_in_openais_format() -> None:
    assert parse_duration("1s") == 1.0 and parse_duration("6m0s") == 360.0
    assert parse_duration("20ms") == pytest.approx(0.02) and parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("0.5") == 0.5
    assert parse_duration("soon") is None and parse_duration("5x") is None and parse_duration("-1") is None


def test_rate_headers_are_read_per_kind() -> None:
    parsed = parse_rate_headers({"X-RateLimit-Limit-Requests": "500", "x-ratelimit-remaining-requests": "499",
                                 "x-ratelimit-reset-requests": "120ms", "x-ratelimit-limit-tokens": "30000",
                                 "x-ratelimit-remaining-tokens": "bad", "x-ratelimit-reset-tokens": "1s"})
    assert set(parsed) == {"requests"}
    assert parsed["requests"].limit == 500 and parsed["requests"].reset_s == pytest.approx(0.12)
    ctl = CapacityController(CapacityBounds(), 0.0)
    ctl.on_send(0, 0.0)
    ctl.on_headers(0, {"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
                       "x-ratelimit-reset-requests": "120ms"}, 0.1)
    assert ctl.mirrors["requests"].rate == pytest.approx(500 / 60)  # 500 a minute


def _options(raw: str) -> SpecOptions:
    return SpecOptions(parse_model_spec(raw), ("concurrency", "adaptive", "concurrency_min", "concurrency_max"))


def test_local_endpoints_start_cautiously_and_remote_apis_at_16() -> None:
    from pytest_mirage.models.openai_adapter import create

    assert create(parse_model_spec("openai:m?base_url=http://127.0.0.1:8080/v1")).capacity_bounds.default_start == 4
    assert create(parse_model_spec("openai:m?base_url=http://192.168.1.5:8000/v1")).capacity_bounds.default_start == 4
    assert create(parse_model_spec("openai:m?base_url=http://localhost:11434/v1")).capacity_bounds.default_start == 4
    assert create(parse_model_spec("openai:m?base_url=https://api.example.com/v1")).capacity_bounds.default_start == 16


def test_capacity_options() -> None:
    assert capacity_bounds(_options("openai:m"), None) == CapacityBounds()
    assert capacity_bounds(_options("openai:m?concurrency=3"), 3) == CapacityBounds(3, 3, 3, adaptive=False)
    assert capacity_bounds(_options("openai:m?adaptive=off"), None) is None
    assert capacity_bounds(_options("openai:m?concurrency_min=2&concurrency_max=8"), None) == CapacityBounds(None, 2, 8)
    spec = parse_model_spec("openai:m?concurrency_max=8", {"concurrency": 16})  # the session's limit
    bounds = capacity_bounds(SpecOptions(spec, ("concurrency", *("adaptive", "concurrency_min", "concurrency_max"))), 16)
    assert bounds == CapacityBounds(None, 1, 8)  # the spec's own bounds win over the session-wide fixed limit
    with pytest.raises(ConfigError, match="concurrency_max: found 2, below concurrency_min=4"):
        capacity_bounds(_options("openai:m?concurrency_min=4&concurrency_max=2"), None)
    with pytest.raises(ConfigError, match="concurrency=N is a fixed limit"):
        capacity_bounds(_options("openai:m?concurrency=4&concurrency_max=8"), 4)
    with pytest.raises(ConfigError, match="bound the adaptive limit"):
        capacity_bounds(_options("openai:m?adaptive=off&concurrency_max=8"), None)
    with pytest.raises(ConfigError, match="option adaptive: found 'maybe'; expected true or false"):
        capacity_bounds(_options("openai:m?adaptive=maybe"), None)


def test_long_answers_of_a_parallel_server_do_not_shrink_the_limit() -> None:
    # a remote API (openai: starts those at 16) with 40 s answers under a 60 s timeout: the latency is the
    # server's, not a queue's; the cut of the latency guard that does not shorten it is taken back
    server = SimServer(slots=64, service_s=40.0)
    out, took, cap, _, adapter = simulate(server, 200, timeout=60.0, bounds=CapacityBounds(default_start=16))
    assert answered(out) == 200 and adapter.timeouts == 0
    assert cap["concurrency_max_used"] >= 64 and took <= 200 * 40.0 / 16  # no slower than the former fixed 16


def test_py_pipelines_adapt_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mirage.models.py_callable import create

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "capacity_pipeline.py").write_text(
        "import asyncio\n\nasync def rag(question):\n    await asyncio.sleep(0.01)\n    return 'Answer [1]'\n\n"
        "def sync_rag(question):\n    return 'Answer [1]'\n", encoding="utf-8")
    assert create(parse_model_spec("py:capacity_pipeline:rag")).capacity_bounds is None  # the former fixed limit
    bounds = create(parse_model_spec("py:capacity_pipeline:rag?adaptive=on")).capacity_bounds
    assert bounds is not None and bounds.adaptive
    assert create(parse_model_spec("py:capacity_pipeline:rag?concurrency_max=8")).capacity_bounds == \
        CapacityBounds(None, 1, 8)
    adapter = create(parse_model_spec("py:capacity_pipeline:rag?adaptive=on"))
    stats = EngineStats()
    out = run_requests(adapter, make_requests(12), EngineSettings(stats=stats))
    assert answered(out) == 12 and stats.capacity["py:capacity_pipeline:rag"]["adaptive"]
    with pytest.raises(ConfigError, match="apply to async callables"):
        create(parse_model_spec("py:capacity_pipeline:sync_rag?adaptive=on"))
