"""Adaptive capacity end to end (issue 25): ``openai:`` with default options against the tests' loopback
server given slots and a rate limit. Counts are asserted, never wall times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, RetryPolicy, run_requests
from pytest_mirage.engine.capacity import CAPACITY_FILE
from pytest_mirage.errors import ConfigError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.openai_adapter import create
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.capacity_server import SlotServer
from tests.helpers.cases import make_requests

pytest.importorskip("openai")
NO_RETRIES = RetryPolicy(max_retries=0)


def test_one_slot_server_with_default_options(tmp_path: Path) -> None:
    # 0.2 s an answer, a 1 s timeout: the former fixed 16 in flight timed most of these out
    with SlotServer(slots=1, service_s=0.2) as server:
        adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&timeout=1"))
        stats = EngineStats()
        out = run_requests(adapter, make_requests(16), EngineSettings(cache_dir=tmp_path, stats=stats))
        abandoned, key = server.abandoned, f"openai {server.base_url} m"
    assert all(isinstance(a, Answer) for a in out), [str(a) for a in out if not isinstance(a, Answer)]
    assert abandoned == 0 and stats.errors == 0
    cap = stats.capacity["openai:m"]
    assert cap["adaptive"] and cap["max_in_flight"] <= 4
    stored = json.loads((tmp_path / CAPACITY_FILE).read_text(encoding="utf-8"))
    assert stored[key]["concurrency"] == cap["concurrency"]


def test_rate_limited_server_429s_use_no_attempt() -> None:
    # 5 requests/s, 429 with Retry-After: 1 beyond; no retries allowed and a breaker at 3
    with SlotServer(slots=16, service_s=0.02, rate=5, burst=5) as server:
        adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}"))
        stats = EngineStats()
        out = run_requests(adapter, make_requests(20), EngineSettings(cache_mode="off", retry=NO_RETRIES,
                                                                      breaker_after=3, stats=stats))
        rejected = server.rejected
    assert all(isinstance(a, Answer) for a in out), [str(a) for a in out if not isinstance(a, Answer)]
    assert rejected >= 1 and stats.rate_limited == rejected and stats.capacity["openai:m"]["responses_429"] == rejected
    assert stats.capacity["openai:m"]["rate_per_s"] is not None


def test_ratelimit_headers_are_read_from_real_responses() -> None:
    with SlotServer(slots=16, service_s=0.02, rate=5, burst=5, ratelimit_headers=True) as server:
        adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}"))
        stats = EngineStats()
        out = run_requests(adapter, make_requests(15), EngineSettings(cache_mode="off", stats=stats))
        rejected = server.rejected
    assert all(isinstance(a, Answer) for a in out)
    assert rejected <= 2
    assert stats.capacity["openai:m"]["header_rate_per_s"] == pytest.approx(5, rel=0.3)


def test_a_fixed_concurrency_still_honours_rate_limits() -> None:
    with SlotServer(slots=16, service_s=0.02, rate=5, burst=5) as server:
        adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&concurrency=3"))
        stats = EngineStats()
        out = run_requests(adapter, make_requests(12), EngineSettings(cache_mode="off", retry=NO_RETRIES, stats=stats))
        busiest = server.max_busy
    assert all(isinstance(a, Answer) for a in out) and busiest <= 3
    assert stats.capacity["openai:m"]["adaptive"] is False


def test_insufficient_quota_is_not_waited_for() -> None:
    body = json.dumps({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                                 "code": "insufficient_quota"}}).encode()
    with SlotServer(slots=1, service_s=0.01, canned={"q-0:": (429, body)}) as server:
        adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}"))
        out = run_requests(adapter, make_requests(1), EngineSettings(cache_mode="off"))
        calls = server.count
    assert calls == 1 and "no quota left" in str(out[0])


def test_adapter_capacity_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="concurrency=N is a fixed limit"):
        create(parse_model_spec("openai:m?base_url=http://127.0.0.1:1/v1&concurrency=2&concurrency_max=8"))
    adapter = create(parse_model_spec("openai:m?base_url=http://127.0.0.1:1/v1&adaptive=off"))
    assert adapter.capacity_bounds is None
