"""The py:MODULE:CALLABLE adapter: a team's own pipeline as a sync or async function."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.py_callable import PyCallableAdapter, create
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec
from tests.helpers.cases import make_requests

_counter = itertools.count()


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Write a module with the given source; return its (unique) name."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(source: str) -> str:
        name = f"mirage_pipeline_{next(_counter)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return name

    return write


def test_sync_callable_gets_the_arguments_it_names(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        seen = []
        def answer(question, lang, passages):
            seen.append((question, lang, [p.id for p in passages]))
            return f"{lang}: {question} [{passages[0].id}]"
    """)
    adapter = ModelRegistry().create(parse_model_spec(f"py:{name}:answer"))
    assert isinstance(adapter, PyCallableAdapter) and adapter.retrieves is True
    reqs = make_requests(2)
    out = run_requests(adapter, reqs, EngineSettings())
    assert isinstance(out[1], Answer)
    assert out[1].output == f"de: {reqs[1].case.question} [{reqs[1].passages[0].id}]"
    assert out[1].model == f"py:{name}:answer" and out[1].answer is None  # parsed later by the plugin
    import importlib

    seen = importlib.import_module(name).seen
    assert seen[0] == (reqs[0].case.question, "en", [p.id for p in reqs[0].passages])


def test_async_callable_with_kwargs_and_structured_answer(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        import asyncio
        from dataclasses import dataclass

        @dataclass
        class Result:
            text: str
            citations: list
            retrieved: list
            contexts: list

        async def rag(**kw):
            await asyncio.sleep(0.01)
            hits = kw["case"].passages[:2]
            return Result(text="Answer [1]", citations=[hits[0].id], retrieved=list(hits),
                          contexts=[p.text for p in hits])
    """)
    adapter = create(parse_model_spec(f"py:{name}:rag?concurrency=4"))
    assert adapter.is_async and adapter.concurrency == 4
    req = make_requests(1)[0]
    out = run_requests(adapter, [req], EngineSettings())[0]
    assert isinstance(out, Answer)
    assert out.citations == ("doc0#0",)
    assert out.retrieved == ("doc0#0", "doc0#1")  # Passages become their ids
    assert out.contexts == ("Passage 0 about topic 0.", "Passage 1 about topic 0.")


def test_mapping_answers_are_validated(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        def pipe(case):
            i = int(case.id.split("-")[1])
            return [
                {"text": "full text", "answer": "short", "reason": "why", "citations": ["a#1"], "usage": {"prompt_tokens": 2}},
                {"answr": "typo"},
                {"text": 3},
                {"text": "x", "citations": "a#1"},
                42,
                None,
            ][i]
    """)
    out = run_requests(create(parse_model_spec(f"py:{name}:pipe")), make_requests(6), EngineSettings())
    first = out[0]
    assert isinstance(first, Answer)
    assert (first.output, first.answer, first.reason, first.citations) == ("full text", "short", "why", ("a#1",))
    assert first.usage == {"prompt_tokens": 2}
    errors = [str(e) for e in out[1:]]
    assert all(isinstance(e, ModelError) for e in out[1:])
    assert "unknown key(s) ['answr']" in errors[0] and "Did you mean: answer?" in errors[0]
    assert "must be a string, found int" in errors[1]
    assert "'citations' of type str; expected a list of strings" in errors[2]
    assert "returned int; expected the answer text" in errors[3]
    assert "returned NoneType" in errors[4]
    assert errors[0].startswith("case engine-suite/q-1: model py:")


def test_exceptions_name_the_case_type_and_location(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        calls = {}
        def pipe(case):
            calls[case.id] = calls.get(case.id, 0) + 1
            if case.id == "q-0":
                raise ValueError("index not built")
            if case.id == "q-1" and calls[case.id] == 1:
                raise ConnectionError("vector store reset")
            return "ok"
    """)
    out = run_requests(create(parse_model_spec(f"py:{name}:pipe")), make_requests(2), EngineSettings())
    assert isinstance(out[0], ModelError)
    assert f"{name}:pipe raised ValueError: index not built (at " in str(out[0])
    assert f"{name}.py:6)" in str(out[0])
    assert isinstance(out[1], Answer)  # ConnectionError is transient: retried and recovered


def test_answers_are_cached_only_under_a_cache_version(module, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        calls = []
        def pipe(question):
            calls.append(question)
            return "a"
    """)
    import importlib

    calls = importlib.import_module(name).calls
    reqs = make_requests(2)
    settings = EngineSettings(cache_dir=tmp_path / "c")
    unversioned = create(parse_model_spec(f"py:{name}:pipe"))
    assert unversioned.cache_identity() is None
    run_requests(unversioned, reqs, settings)
    run_requests(unversioned, reqs, settings)
    assert len(calls) == 4
    versioned = create(parse_model_spec(f"py:{name}:pipe?cache_version=v1"))
    stats = EngineStats()
    run_requests(versioned, reqs, EngineSettings(cache_dir=tmp_path / "c", stats=stats))
    run_requests(versioned, reqs, EngineSettings(cache_dir=tmp_path / "c", stats=stats))
    assert len(calls) == 6 and stats.hits == 2


def test_sync_callables_run_in_threads_when_asked(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        import threading, time
        lock = threading.Lock()
        state = {"now": 0, "max": 0}
        def pipe(question):
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.05)
            with lock:
                state["now"] -= 1
            return "a"
    """)
    import importlib

    state = importlib.import_module(name).state
    run_requests(create(parse_model_spec(f"py:{name}:pipe")), make_requests(4), EngineSettings())
    assert state["max"] == 1  # default: one at a time, in the engine's thread
    run_requests(create(parse_model_spec(f"py:{name}:pipe?threads=4")), make_requests(8), EngineSettings())
    assert state["max"] == 4


def test_retrieves_option(module) -> None:  # type: ignore[no-untyped-def]
    name = module("def pipe(question):\n    return 'a'\n")
    assert create(parse_model_spec(f"py:{name}:pipe?retrieves=false")).retrieves is False


@pytest.mark.parametrize(("arg", "message"), [
    ("nomodule_xyz:answer", "cannot import module 'nomodule_xyz'.*pythonpath"),
    ("{mod}", r"expected py:MODULE:CALLABLE"),
    ("{mod}:answr", r"has no attribute 'answr'.*Did you mean: answer\?"),
    ("{mod}:VALUE", "'VALUE' is a int, not a callable"),
    ("{mod}:needs_more", "required parameter 'top_k' the harness does not provide"),
    ("{mod}:answer?thread=2", r"unknown option 'thread'.*Did you mean: threads\?"),
])
def test_bad_specs_are_config_errors(module, arg: str, message: str) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        VALUE = 3
        def answer(question):
            return "a"
        def needs_more(question, top_k):
            return "a"
    """)
    with pytest.raises(ConfigError, match=message):
        create(parse_model_spec("py:" + arg.format(mod=name)))


def test_a_pipeline_can_serve_as_a_judge_on_bare_prompts(module) -> None:  # type: ignore[no-untyped-def]
    from pytest_mirage.models.base import PromptRequest

    name = module("""
        seen = []
        def judge(question, prompt, lang, case, passages, mode):
            seen.append((question, prompt, lang, case, passages, mode))
            return {"text": "A is better", "truncated": len(prompt) > 20}
    """)
    adapter = create(parse_model_spec(f"py:{name}:judge"))
    assert not hasattr(adapter, "answer_batch")  # only the engine drives it
    prompts = [PromptRequest(id="j1", prompt="Which is better?", label="judge", lang="sw"),
               PromptRequest(id="j2", prompt="Which is better, A or B, and why?", label="judge")]
    out = run_requests(adapter, prompts, EngineSettings())
    assert [(a.case_id, a.output, a.truncated) for a in out] == [  # type: ignore[union-attr]
        ("j1", "A is better", False), ("j2", "A is better", True)]
    import importlib

    assert importlib.import_module(name).seen[0] == ("Which is better?", "Which is better?", "sw", None, (), None)


def test_truncated_must_be_a_boolean(module) -> None:  # type: ignore[no-untyped-def]
    name = module("""
        def answer(question):
            return {"text": "x", "truncated": "yes"}
    """)
    out = run_requests(create(parse_model_spec(f"py:{name}:answer")), make_requests(1), EngineSettings())
    assert isinstance(out[0], ModelError) and "'truncated' of type str; expected true or false" in str(out[0])
