"""The SQLite answer cache and the four cache modes, driven through run_requests."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from pytest_mirage.engine import (
    CACHE_FILE,
    EngineSettings,
    EngineStats,
    cache_key,
    run_requests,
    summary_lines,
)
from pytest_mirage.engine import cache as cache_module
from pytest_mirage.errors import ConfigError, MirageWarning, ModelError
from pytest_mirage.models.base import Answer
from tests.helpers.adapters import CountingBatchAdapter
from tests.helpers.cases import make_requests

IDENTITY = {"kind": "batch-test", "model": "m1"}


def settings(tmp_path: Path, mode: str = "use", stats: EngineStats | None = None) -> EngineSettings:
    return EngineSettings(cache_dir=tmp_path / "cache", cache_mode=mode, stats=stats)


def test_request_document_describes_what_the_key_covers() -> None:
    req = make_requests(1)[0]
    doc = cache_module.request_document(IDENTITY, req)
    assert doc["template_version"] == cache_module.TEMPLATE_VERSION
    assert doc["request"]["messages"] == [{"role": "user", "content": req.prompt}]
    assert doc["request"]["passages"][0] == [req.passages[0].id, req.passages[0].title, req.passages[0].text]
    assert doc["adapter"] == IDENTITY
    key = cache_key(IDENTITY, req)
    assert len(key) == 64 and int(key, 16) >= 0  # a SHA-256 hex digest


def test_key_changes_with_messages_parameters_model_and_template_version(monkeypatch: pytest.MonkeyPatch) -> None:
    req = make_requests(1)[0]
    base = cache_key(IDENTITY, req)
    assert cache_key(dict(IDENTITY), make_requests(1)[0]) == base  # stable across equal objects
    assert cache_key(IDENTITY, dataclasses.replace(req, prompt=req.prompt + " ")) != base
    assert cache_key({**IDENTITY, "temperature": 0.2}, req) != base
    assert cache_key({**IDENTITY, "model": "m2"}, req) != base
    assert cache_key({**IDENTITY, "kind": "other"}, req) != base
    case = req.case
    changed = [
        dataclasses.replace(req, case=dataclasses.replace(case, id="q-x")),
        dataclasses.replace(req, case=dataclasses.replace(case, lang="fr")),
        dataclasses.replace(req, case=dataclasses.replace(case, question=case.question + "?")),
        dataclasses.replace(req, mode="retrieval"),
        dataclasses.replace(req, passages=req.passages[:-1]),
        dataclasses.replace(req, passages=(dataclasses.replace(req.passages[0], title=None), *req.passages[1:])),
        dataclasses.replace(req, passages=(dataclasses.replace(req.passages[0], title=""), *req.passages[1:])),
        dataclasses.replace(req, passages=(dataclasses.replace(req.passages[0], text="x"), *req.passages[1:])),
    ]
    keys = {cache_key(IDENTITY, r) for r in changed}
    assert base not in keys and len(keys) == len(changed)
    monkeypatch.setattr(cache_module, "TEMPLATE_VERSION", "999")
    assert cache_key(IDENTITY, req) != base


def test_messages_scope_ignores_what_the_model_never_sees() -> None:
    req = make_requests(1)[0]
    hidden = dataclasses.replace(req, passages=(dataclasses.replace(req.passages[0], text="other"),
                                                *req.passages[1:]))
    assert cache_key(IDENTITY, hidden, "messages") == cache_key(IDENTITY, req, "messages")
    assert cache_key(IDENTITY, hidden, "request") != cache_key(IDENTITY, req, "request")
    assert cache_key(IDENTITY, req, "messages") != cache_key(IDENTITY, req, "request")
    shown = dataclasses.replace(req, prompt=req.prompt.replace("Passage 0", "Passage zero"))
    assert cache_key(IDENTITY, shown, "messages") != cache_key(IDENTITY, req, "messages")


def test_use_mode_calls_only_the_misses_and_marks_hits(tmp_path: Path) -> None:
    reqs = make_requests(6)
    stats = EngineStats()
    first = CountingBatchAdapter()
    out1 = run_requests(first, reqs[:4], settings(tmp_path, stats=stats))
    assert first.calls == 4 and all(isinstance(a, Answer) for a in out1)
    second = CountingBatchAdapter()
    out2 = run_requests(second, reqs, settings(tmp_path, stats=stats))
    assert second.batches == [["q-4", "q-5"]]
    assert [a.case_id for a in out2 if isinstance(a, Answer)] == [f"q-{i}" for i in range(6)]
    assert [bool(a.usage.get("cached")) for a in out2 if isinstance(a, Answer)] == [True] * 4 + [False] * 2
    assert out2[0].output == "answer to q-0"  # type: ignore[union-attr]
    assert (stats.requests, stats.hits, stats.misses, stats.calls) == (10, 4, 6, 6)
    assert stats.prompt_tokens == 6 * 3 and stats.completion_tokens == 6 * 2  # hits cost no tokens
    assert summary_lines(stats)[0].startswith("mirage engine: 10 requests, 4 cache hits, 6 misses, 6 model calls")


def test_refresh_calls_everything_and_overwrites(tmp_path: Path) -> None:
    reqs = make_requests(3)
    run_requests(CountingBatchAdapter(), reqs, settings(tmp_path))
    again = CountingBatchAdapter()
    run_requests(again, reqs, settings(tmp_path, "refresh"))
    assert again.calls == 3
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as conn:
        assert conn.execute("SELECT COUNT(*) FROM answers_v2").fetchone()[0] == 3


def test_off_mode_neither_reads_nor_writes(tmp_path: Path) -> None:
    reqs = make_requests(3)
    run_requests(CountingBatchAdapter(), reqs, settings(tmp_path, "off"))
    assert not (tmp_path / "cache").exists()
    run_requests(CountingBatchAdapter(), reqs, settings(tmp_path))
    off = CountingBatchAdapter()
    run_requests(off, reqs, settings(tmp_path, "off"))
    assert off.calls == 3


def test_replay_only_fails_on_a_miss_naming_the_case_and_passes_on_a_warm_cache(tmp_path: Path) -> None:
    reqs = make_requests(3)
    cold = CountingBatchAdapter()
    out = run_requests(cold, reqs, settings(tmp_path, "replay-only"))
    assert cold.calls == 0
    assert all(isinstance(e, ModelError) for e in out)
    assert "case engine-suite/q-1" in str(out[1]) and "replay-only never calls a model" in str(out[1])
    run_requests(CountingBatchAdapter(), reqs[:2], settings(tmp_path))
    warm = CountingBatchAdapter()
    stats = EngineStats()
    out = run_requests(warm, reqs, settings(tmp_path, "replay-only", stats))
    assert warm.calls == 0
    assert [type(a).__name__ for a in out] == ["Answer", "Answer", "NotCached"]  # a ModelError subclass: judges tell a miss from a failure
    assert (stats.hits, stats.misses, stats.errors) == (2, 1, 1)


def test_replay_only_without_a_cache_folder_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="replay-only needs a cache folder"):
        EngineSettings(cache_mode="replay-only")


def test_unknown_mode_suggests_the_closest() -> None:
    with pytest.raises(ConfigError, match=r"found 'refesh'.*Did you mean: refresh\?"):
        EngineSettings(cache_mode="refesh")


def test_errors_are_never_cached(tmp_path: Path) -> None:
    reqs = make_requests(2)
    failing = CountingBatchAdapter(script={"q-0": [ModelError("HTTP 400: bad request")]})
    out = run_requests(failing, reqs, settings(tmp_path))
    assert isinstance(out[0], ModelError) and "case engine-suite/q-0: model batch:test: HTTP 400" in str(out[0])
    again = CountingBatchAdapter()
    run_requests(again, reqs, settings(tmp_path))
    assert again.batches == [["q-0"]]


def test_uncacheable_adapters_always_run_even_in_replay_only(tmp_path: Path) -> None:
    reqs = make_requests(2)
    local = CountingBatchAdapter(identity={})  # cache_identity() -> None
    out = run_requests(local, reqs, settings(tmp_path, "replay-only"))
    assert local.calls == 2 and all(isinstance(a, Answer) for a in out)
    assert not (tmp_path / "cache" / CACHE_FILE).exists()


def test_identical_requests_are_answered_once(tmp_path: Path) -> None:
    reqs = make_requests(2)
    adapter = CountingBatchAdapter()
    out = run_requests(adapter, [reqs[0], reqs[1], reqs[0]], settings(tmp_path))
    assert adapter.calls == 2
    assert [a.case_id for a in out if isinstance(a, Answer)] == ["q-0", "q-1", "q-0"]


def test_identity_with_a_secret_is_refused(tmp_path: Path) -> None:
    adapter = CountingBatchAdapter(identity={"kind": "x", "model": "m", "api_key": "sk-123456789"})
    with pytest.raises(ConfigError, match="looks like a secret"):
        run_requests(adapter, make_requests(1), settings(tmp_path))
    ok = CountingBatchAdapter(identity={"kind": "x", "model": "m", "max_tokens": 5, "tokenizer": "t"})
    assert isinstance(run_requests(ok, make_requests(1), settings(tmp_path))[0], Answer)


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match=r"cannot open it as an SQLite database.*delete the file"):
        run_requests(CountingBatchAdapter(), make_requests(1), settings(tmp_path))


def test_an_unreadable_entry_is_a_warning_and_a_miss(tmp_path: Path) -> None:
    reqs = make_requests(1)
    run_requests(CountingBatchAdapter(), reqs, settings(tmp_path))
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as conn:
        conn.execute("UPDATE answers_v2 SET meta = '{\"usage\": 1}'")
    adapter = CountingBatchAdapter()
    with pytest.warns(MirageWarning, match="entry for case 'q-0' is unreadable"):
        out = run_requests(adapter, reqs, settings(tmp_path))
    assert adapter.calls == 1 and isinstance(out[0], Answer)
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as conn:
        conn.execute("UPDATE answers_v2 SET meta = 'not json'")
    out = run_requests(CountingBatchAdapter(), reqs, settings(tmp_path, "replay-only"))
    assert isinstance(out[0], ModelError) and "unreadable" in str(out[0])


def test_structured_fields_round_trip(tmp_path: Path) -> None:
    answer = Answer(case_id="q-0", model="m", output="text [a#0]", answer="text", citations=("a#0",),
                    retrieved=("a#0", "b#1"), contexts=("ctx",), reason="why", usage={"prompt_tokens": 4})
    output, meta = cache_module.encode_answer(answer)
    assert output == "text [a#0]"
    back = cache_module.decode_answer(output, meta, "q-0", "m")
    assert dataclasses.replace(back, usage={}) == dataclasses.replace(answer, usage={})
    assert back.usage == {"prompt_tokens": 4, "cached": True}


def test_wal_mode_is_on(tmp_path: Path) -> None:
    run_requests(CountingBatchAdapter(), make_requests(1), settings(tmp_path))
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
