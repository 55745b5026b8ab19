"""Typed reading of a model spec's ``?key=value`` options, with errors that name the spec and the fix."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError, did_you_mean
from ..models.registry import ModelSpec

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class SpecOptions:
    """Options of one ``--mirage-model`` spec; unknown ``?keys`` are an error with a suggestion.

    Values come from the spec's own ``?key=value`` first, then from the session-wide defaults the
    plugin puts in ``ModelSpec.defaults`` (e.g. ``base_url`` from ``--mirage-openai-base-url``).
    """

    def __init__(self, spec: ModelSpec, known: Iterable[str]) -> None:
        self.spec = spec
        self.known = sorted(known)
        for key in spec.options:
            if key not in self.known:
                raise ConfigError(f"--mirage-model {spec.raw!r}: unknown option {key!r} for {spec.kind}: models; "
                                  f"known options: {', '.join(self.known)}.{did_you_mean(key, self.known)}")

    def _where(self, key: str) -> str:
        return f"--mirage-model {self.spec.raw!r}: option {key}"

    def raw(self, key: str) -> Any:
        value = self.spec.option(key)
        return None if value == "" else value

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.raw(key)
        return default if value is None else str(value)

    def number(self, key: str, default: float | None, minimum: float | None = None) -> float | None:
        value = self.raw(key)
        if value is None:
            return default
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected a number") from None
        if minimum is not None and number < minimum:
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected a number >= {minimum:g}")
        return number

    def integer(self, key: str, default: int | None, minimum: int | None = None) -> int | None:
        value = self.raw(key)
        if value is None:
            return default
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected an integer") from None
        if minimum is not None and number < minimum:
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected an integer >= {minimum}")
        return number

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ConfigError(f"{self._where(key)}: found {value!r}; expected true or false")

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.text(key, default)
        assert value is not None
        if value not in choices:
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected one of {', '.join(choices)}."
                              f"{did_you_mean(value, choices)}")
        return value

    def json_object(self, key: str) -> dict[str, Any]:
        value = self.raw(key)
        if value is None:
            return {}
        if isinstance(value, dict):
            return dict(value)
        try:
            data = json.loads(str(value))
        except ValueError as exc:
            raise ConfigError(f"{self._where(key)}: found {value!r}, which is not JSON ({exc}); expected a JSON "
                              'object such as {"top_p": 0.9}') from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self._where(key)}: found {value!r}; expected a JSON object such as "
                              '{"top_p": 0.9}')
        return data
