"""``kind:arg`` model specs resolved through a registry of lazily imported factories."""

from __future__ import annotations

import importlib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from ..errors import ConfigError, did_you_mean
from .base import ModelAdapter
from .credentials import mask_text, safe_option_value, secret_name

# kind -> "module:attr" of a factory(spec: ModelSpec) -> ModelAdapter, imported only when used.
BUILTIN_KINDS: dict[str, str] = {
    "extractive": "pytest_mirage.models.extractive:create",
    "replay": "pytest_mirage.models.replay:create",
    "control": "pytest_mirage.models.control:create",
    "openai": "pytest_mirage.models.openai_adapter:create",
    "vllm": "pytest_mirage.models.vllm_adapter:create",
    "hf": "pytest_mirage.models.hf_adapter:create",
    "py": "pytest_mirage.models.py_callable:create",
}


# Options that change how a model is reached or scheduled, not what it answers: left out of the
# model's display name, so ``timeout=300`` or a base URL never becomes part of a leaderboard name.
TRANSPORT_OPTIONS = frozenset({
    "name", "base_url", "api_key_env", "timeout", "concurrency", "http", "check_model", "cache_tag",
    "cache_version", "threads", "batch_size", "device", "tensor_parallel_size", "gpu_memory_utilization",
    "max_model_len", "truncated", "trust_remote_code", "adaptive", "concurrency_min", "concurrency_max",
})
NAME_MAX_CHARS = 120


@dataclass(frozen=True, slots=True, repr=False)
class ModelSpec:
    """A parsed ``--mirage-model`` value: ``kind[:arg][?key=value&...]``.

    ``raw`` is the text as given and may hold credentials: show :attr:`safe_raw` in messages and
    use :attr:`display_name` as the model's name in results.
    """

    raw: str
    kind: str
    arg: str
    options: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)  # session-wide options (base URL, ...)

    def option(self, key: str, default: Any = None) -> Any:
        if key in self.options:
            return self.options[key]
        return self.defaults.get(key, default)

    @property
    def safe_raw(self) -> str:
        """The spec with every credential masked (URL user info and query values, secret-named
        options, secret keys inside JSON values): what error messages show."""
        head = f"{self.kind}:{mask_text(self.arg)}" if self.arg else self.kind
        if not self.options:
            return head
        return head + "?" + "&".join(f"{k}={safe_option_value(k, v)}" for k, v in self.options.items())

    @property
    def display_name(self) -> str:
        """The model's name in results, reports and run lines.

        ``name=`` when the spec gives one; else ``kind:arg`` followed by the options that change
        answers (``temperature``, ``max_tokens``, ``extra``, ...) in the order given, without the
        transport options (:data:`TRANSPORT_OPTIONS`: ``timeout``, ``concurrency``, ``base_url``,
        ``http``, ...) and with credentials masked.
        """
        given = self.options.get("name")
        if given is not None:
            return mask_text(given.strip())
        head = f"{self.kind}:{mask_text(self.arg)}" if self.arg else self.kind
        kept = [(k, v) for k, v in self.options.items() if k not in TRANSPORT_OPTIONS and not secret_name(k)]
        if not kept:
            return head
        return head + "?" + "&".join(f"{k}={safe_option_value(k, v)}" for k, v in kept)

    def __repr__(self) -> str:  # tracebacks and --showlocals print this: never the raw text
        return f"ModelSpec({self.safe_raw!r})"

    __str__ = __repr__


def parse_model_spec(raw: str, defaults: Mapping[str, Any] | None = None) -> ModelSpec:
    text = raw.strip()
    if not text:
        raise ConfigError("--mirage-model: empty spec; expected kind:arg, e.g. extractive or openai:gpt-4o-mini")
    opts: dict[str, str] = {}
    # options after '?' (but keep Windows drive letters and URLs in args intact)
    if "?" in text:
        text, query = text.split("?", 1)
        opts = dict(parse_qsl(query, keep_blank_values=True))
    kind, _, arg = text.partition(":")
    spec = ModelSpec(raw=raw, kind=kind, arg=arg, options=opts, defaults=dict(defaults or {}))
    if "name" in opts:
        _check_name(spec, opts["name"])
    return spec


def _check_name(spec: ModelSpec, name: str) -> None:
    where = f"--mirage-model {spec.safe_raw!r}: option name"
    stripped = name.strip()
    if not stripped:
        raise ConfigError(f"{where}: found an empty name; expected a short label such as name=llama-local")
    if len(stripped) > NAME_MAX_CHARS:
        raise ConfigError(f"{where}: found {len(stripped)} characters; expected at most {NAME_MAX_CHARS}")
    bad = next((c for c in stripped if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn")), None)
    if bad is not None:
        raise ConfigError(f"{where}: found the control or invisible character U+{ord(bad):04X}; expected "
                          "printable text")


Factory = Callable[[ModelSpec], ModelAdapter]


class ModelRegistry:
    """Model kinds; plugins add theirs with the ``pytest_mirage_register_models`` hook."""

    def __init__(self) -> None:
        self._kinds: dict[str, str | Factory] = dict(BUILTIN_KINDS)

    def register(self, kind: str, factory: str | Factory) -> None:
        """Register ``kind`` with a factory or a lazy ``"module:attr"`` path to one."""
        self._kinds[kind] = factory

    @property
    def kinds(self) -> list[str]:
        return sorted(self._kinds)

    def check(self, spec: ModelSpec) -> None:
        if spec.kind not in self._kinds:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: unknown model kind {spec.kind!r}; known kinds: "
                              f"{', '.join(self.kinds)}.{did_you_mean(spec.kind, self.kinds)}")

    def create(self, spec: ModelSpec) -> ModelAdapter:
        self.check(spec)
        factory = self._kinds[spec.kind]
        if isinstance(factory, str):
            mod_name, _, attr = factory.partition(":")
            try:
                module = importlib.import_module(mod_name)
            except ImportError as exc:
                raise ConfigError(f"--mirage-model {spec.safe_raw!r}: the {spec.kind!r} adapter cannot be imported "
                                  f"({exc}); install it with: pip install \"pytest-mirage[{spec.kind}]\"") from exc
            factory = getattr(module, attr)
        return factory(spec)


