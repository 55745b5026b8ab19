"""``kind:arg`` model specs resolved through a registry of lazily imported factories."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from ..errors import ConfigError, did_you_mean
from .base import ModelAdapter

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


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed ``--mirage-model`` value: ``kind[:arg][?key=value&...]``."""

    raw: str
    kind: str
    arg: str
    options: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)  # session-wide options (base URL, ...)

    def option(self, key: str, default: Any = None) -> Any:
        if key in self.options:
            return self.options[key]
        return self.defaults.get(key, default)


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
    return ModelSpec(raw=raw, kind=kind, arg=arg, options=opts, defaults=dict(defaults or {}))


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
            raise ConfigError(f"--mirage-model {spec.raw!r}: unknown model kind {spec.kind!r}; known kinds: "
                              f"{', '.join(self.kinds)}.{did_you_mean(spec.kind, self.kinds)}")

    def create(self, spec: ModelSpec) -> ModelAdapter:
        self.check(spec)
        factory = self._kinds[spec.kind]
        if isinstance(factory, str):
            mod_name, _, attr = factory.partition(":")
            try:
                module = importlib.import_module(mod_name)
            except ImportError as exc:
                raise ConfigError(f"--mirage-model {spec.raw!r}: the {spec.kind!r} adapter cannot be imported "
                                  f"({exc}); install it with: pip install \"pytest-mirage[{spec.kind}]\"") from exc
            factory = getattr(module, attr)
        return factory(spec)


