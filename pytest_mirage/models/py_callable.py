"""``py:MODULE:CALLABLE``: a team's own RAG pipeline (retrieval included) as a Python function.

The callable may be sync or async. It is called with the keyword arguments it declares among
``question`` (str), ``lang`` (ISO code), ``passages`` (tuple of :class:`~pytest_mirage.Passage`: the
oracle passages in oracle mode; in retrieval mode empty, or the harness's BM25 top-k with
``?retrieves=false``), ``case`` (the :class:`~pytest_mirage.Case`), ``suite``, ``mode``,
``prompt`` (the rendered MIRAGE prompt) and ``messages`` (the chat messages); a ``**kwargs``
parameter receives them all. Used as a judge (a bare prompt, no case), it gets ``question`` and
``prompt`` = the prompt, ``lang`` = the prompt's language or None, no passages, and ``case``,
``suite`` and ``mode`` = None. It returns the answer text, or a mapping (or dataclass) with
``text`` (or ``output``/``answer``) and optionally ``answer``, ``reason``, ``citations`` (passage
ids), ``retrieved`` (ranked ids it retrieved, or Passages), ``contexts`` (the texts it used, or
Passages) and ``usage``.

Options: ``retrieves`` (default true: the pipeline retrieves itself), ``threads`` (sync callables:
how many run at once in worker threads; default 1, in the engine's thread), ``concurrency``
(async callables: default the session's ``--mirage-concurrency``), ``adaptive`` (async callables:
``on`` lets the engine find the limit as for ``openai:``, within ``concurrency_min`` ..
``concurrency_max``; off by default: a pipeline is the team's own code, often local, whose limit is
theirs to set; a pipeline that raises :class:`~pytest_mirage.models.faults.TransientError` with
``signal="rate"`` on its API's 429s gets the shared pause either way when adaptive), ``cache_version``
(answers are cached only when this is set; change it whenever the pipeline changes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError, ModelError, did_you_mean
from ..suites.model import Passage
from .base import Answer, EngineRequest, ModelRequest
from .faults import TransientError
from .options import CAPACITY_OPTIONS, SpecOptions, capacity_bounds
from .registry import ModelSpec

OPTIONS = ("retrieves", "threads", "concurrency", "cache_version", *CAPACITY_OPTIONS)
ARGUMENTS = ("question", "lang", "passages", "case", "suite", "mode", "prompt", "messages")
RESULT_KEYS = ("text", "output", "answer", "reason", "citations", "retrieved", "contexts", "usage", "truncated")


def _load(spec: ModelSpec) -> Callable[..., Any]:
    module_name, _, attr = spec.arg.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"--mirage-model {spec.safe_raw!r}: expected py:MODULE:CALLABLE, e.g. py:mypkg.rag:answer")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--mirage-model {spec.safe_raw!r}: cannot import module {module_name!r} ({exc}); install "
                          "its package or add its folder to `pythonpath` under [tool.pytest.ini_options]") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: {module_name!r} has no attribute {attr!r}."
                              f"{did_you_mean(part, names)}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"--mirage-model {spec.safe_raw!r}: {attr!r} is a {type(obj).__name__}, not a callable")
    return obj  # type: ignore[no-any-return]


def _is_async(fn: Callable[..., Any]) -> bool:
    # an object whose class defines "async def __call__" is async too
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class PyCallableAdapter:
    """A Python callable answering one case at a time (see module doc)."""

    def __init__(self, spec: ModelSpec) -> None:
        opts = SpecOptions(spec, OPTIONS)
        self.fn = _load(spec)
        self.name = spec.display_name
        self.target = spec.arg
        self.retrieves = opts.flag("retrieves", True)
        self.is_async = _is_async(self.fn)
        self.threads = opts.integer("threads", 1, minimum=1) or 1
        self.concurrency = opts.integer("concurrency", None, minimum=1) if self.is_async else self.threads
        bounded = opts.raw("concurrency_min") is not None or opts.raw("concurrency_max") is not None
        if (bounded or opts.raw("adaptive") is not None) and not self.is_async:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: adaptive/concurrency_min/concurrency_max apply to "
                              f"async callables; {self.target} is sync (use ?threads=N)")
        self.capacity_bounds = capacity_bounds(opts, self.concurrency, default_on=bounded) if self.is_async else None
        if self.capacity_bounds is not None and not self.capacity_bounds.adaptive:
            self.capacity_bounds = None  # a fixed limit: the engine's plain semaphore, as before
        self.capacity_key = f"py {self.target}"
        self.cache_version = opts.text("cache_version")
        self._positional, self._keywords, self._all = self._plan(spec)

    def _plan(self, spec: ModelSpec) -> tuple[list[str], list[str], bool]:
        try:
            sig = inspect.signature(self.fn)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: cannot read the signature of {self.target!r} "
                              f"({exc}); wrap it in a def with named parameters") from exc
        positional: list[str] = []
        keywords: list[str] = []
        takes_all = False
        for p in sig.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                takes_all = True
            elif p.kind is p.VAR_POSITIONAL:
                continue
            elif p.name in ARGUMENTS:
                (positional if p.kind is p.POSITIONAL_ONLY else keywords).append(p.name)
            elif p.default is p.empty:
                raise ConfigError(f"--mirage-model {spec.safe_raw!r}: {self.target} has a required parameter "
                                  f"{p.name!r} the harness does not provide; it provides "
                                  f"{', '.join(ARGUMENTS)}.{did_you_mean(p.name, ARGUMENTS)}")
        return positional, keywords, takes_all

    def cache_identity(self) -> Mapping[str, Any] | None:
        # a pipeline's answers change with its code: cached only under an explicit version
        if self.cache_version is None:
            return None
        return {"kind": "py", "model": self.target, "cache_version": self.cache_version}

    def _arguments(self, request: EngineRequest) -> dict[str, Any]:
        if isinstance(request, ModelRequest):
            return {"question": request.case.question, "lang": request.case.lang, "passages": request.passages,
                    "case": request.case, "suite": request.suite, "mode": request.mode, "prompt": request.prompt,
                    "messages": request.messages}
        return {"question": request.prompt, "lang": request.lang, "passages": request.passages, "case": None,
                "suite": None, "mode": None, "prompt": request.prompt, "messages": request.messages}

    def _call(self, request: EngineRequest) -> Any:
        values = self._arguments(request)
        args = [values[n] for n in self._positional]
        if self._all:
            kwargs = {k: v for k, v in values.items() if k not in self._positional}
        else:
            kwargs = {n: values[n] for n in self._keywords}
        return self.fn(*args, **kwargs)

    async def answer_async(self, request: EngineRequest) -> Answer:
        try:
            if self.is_async:
                result = await self._call(request)
            elif self.threads > 1:
                result = await asyncio.to_thread(self._call, request)
            else:
                result = self._call(request)
            if inspect.isawaitable(result):
                result = await result
        except (TransientError, ModelError):
            raise
        except (TimeoutError, ConnectionError) as exc:
            raise TransientError(f"{self.target} raised {type(exc).__name__}: {exc}{_where(exc)}") from exc
        except Exception as exc:
            raise ModelError(f"{self.target} raised {type(exc).__name__}: {exc}{_where(exc)}") from exc
        return self._to_answer(request, result)

    def _to_answer(self, request: EngineRequest, result: Any) -> Answer:
        case_id = request.item_id
        if isinstance(result, Answer):
            return dataclasses.replace(result, case_id=case_id, model=self.name)
        if isinstance(result, str):
            return Answer(case_id=case_id, model=self.name, output=result)
        if dataclasses.is_dataclass(result) and not isinstance(result, type):
            # shallow: Passages inside stay Passages (asdict would turn them into dicts)
            result = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
        if not isinstance(result, Mapping):
            raise ModelError(f"{self.target} returned {type(result).__name__}; expected the answer text (str) "
                             f"or a mapping with 'text' and optional {', '.join(RESULT_KEYS[2:])}")
        unknown = [k for k in result if k not in RESULT_KEYS]
        if unknown:
            raise ModelError(f"{self.target} returned unknown key(s) {unknown}; expected "
                             f"{', '.join(RESULT_KEYS)}.{did_you_mean(str(unknown[0]), RESULT_KEYS)}")
        text = next((result[k] for k in ("text", "output", "answer") if result.get(k) is not None), None)
        if not isinstance(text, str):
            raise ModelError(f"{self.target} returned a mapping without a text: 'text' (or 'output'/'answer') "
                             f"must be a string, found {type(text).__name__}")
        answer = result.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise ModelError(f"{self.target} returned 'answer' of type {type(answer).__name__}; expected a string")
        reason = result.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ModelError(f"{self.target} returned 'reason' of type {type(reason).__name__}; expected a string")
        usage = result.get("usage") or {}
        if not isinstance(usage, Mapping):
            raise ModelError(f"{self.target} returned 'usage' of type {type(usage).__name__}; expected a mapping")
        truncated = result.get("truncated", False)
        if not isinstance(truncated, bool):
            raise ModelError(f"{self.target} returned 'truncated' of type {type(truncated).__name__}; expected "
                             "true or false (whether the answer was cut at an output limit)")
        return Answer(case_id=case_id, model=self.name, output=text, answer=answer, reason=reason,
                      citations=self._ids(result, "citations"), retrieved=self._ids(result, "retrieved"),
                      contexts=self._texts(result, "contexts"), usage=dict(usage), truncated=truncated)

    def _ids(self, result: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
        items = self._sequence(result, key)
        if items is None:
            return None
        return tuple(x.id if isinstance(x, Passage) else x for x in items)

    def _texts(self, result: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
        items = self._sequence(result, key)
        if items is None:
            return None
        return tuple(x.text if isinstance(x, Passage) else x for x in items)

    def _sequence(self, result: Mapping[str, Any], key: str) -> Sequence[Any] | None:
        items = result.get(key)
        if items is None:
            return None
        if isinstance(items, str) or not isinstance(items, Sequence):
            raise ModelError(f"{self.target} returned {key!r} of type {type(items).__name__}; expected a list of "
                             "strings (or Passages)")
        bad = [x for x in items if not isinstance(x, str | Passage)]
        if bad:
            raise ModelError(f"{self.target} returned {key!r} with a {type(bad[0]).__name__} item ({bad[0]!r}); "
                             "expected strings (or Passages)")
        return items

    async def aclose(self) -> None:
        return None

    def close(self) -> None:
        closer = getattr(self.fn, "close", None)
        if callable(closer):
            closer()


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"


def create(spec: ModelSpec) -> PyCallableAdapter:
    return PyCallableAdapter(spec)
