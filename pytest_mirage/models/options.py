"""Typed reading of option values, with errors that name where the value came from and the fix.

The plain functions (:func:`parse_int`, :func:`parse_number`, :func:`parse_flag`,
:func:`parse_choice`) are the one parser of integer, number, boolean and choice settings: the
session settings use them with ``where`` naming the flag or ini key, and :class:`SpecOptions` with
``where`` naming a model spec's ``?key=value`` option. Every message reads
``WHERE: found X; expected ...``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, TypeVar

from ..errors import ConfigError, did_you_mean
from ..jsonutil import DuplicateKeyError, loads_unique
from .credentials import safe_option_value, secret_name
from .registry import ModelSpec

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
MAX_INTEGER = 2**63 - 1  # bound of every integer option without a tighter maximum
COMMON_OPTIONS = ("name",)  # understood by every kind (see ModelSpec.display_name)
D = TypeVar("D")


def _found(raw: Any) -> str:
    return repr(raw) if isinstance(raw, str) else str(raw)


def _bounds(kind: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} from {minimum:g} to {maximum:g}"
    if minimum is not None:
        return f"{kind} >= {minimum:g}"
    if maximum is not None:
        return f"{kind} <= {maximum:g}"
    return kind


def parse_int(raw: Any, where: str, default: D, minimum: int | None = None,
              maximum: int | None = None) -> int | D:
    """``raw`` (None or "" give ``default``) as an integer within the bounds, else a
    :class:`~pytest_mirage.errors.ConfigError` ``WHERE: found X; expected an integer >= MIN``.

    Booleans, fractions (``2.5``), ``nan`` and text such as ``1e3`` are not integers.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    expected = _bounds("an integer", minimum, maximum)
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    elif isinstance(raw, str):
        try:
            value = int(raw.strip())
        except ValueError:
            value = None
    if value is None or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ConfigError(f"{where}: found {_found(raw):.60}; expected {expected}")
    if abs(value) > MAX_INTEGER:  # no option takes more: SQLite, numpy and the HTTP APIs stop at 64 bits
        raise ConfigError(f"{where}: found an integer of {len(str(abs(value)))} digits; expected {expected}, "
                          f"at most {MAX_INTEGER}")
    return value


def parse_number(raw: Any, where: str, default: D, minimum: float | None = None,
                 maximum: float | None = None) -> float | D:
    """``raw`` (None or "" give ``default``) as a finite number within the bounds, else a
    :class:`~pytest_mirage.errors.ConfigError` ``WHERE: found X; expected a number >= MIN``.

    ``nan`` and ``inf`` are refused: a timeout of ``nan`` would never fire and never be reported.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    expected = _bounds("a finite number", minimum, maximum)
    value: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            value = None
    if (value is None or not math.isfinite(value) or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)):
        raise ConfigError(f"{where}: found {_found(raw)}; expected {expected}")
    return value


def parse_flag(raw: Any, where: str, default: bool) -> bool:
    """``raw`` as a boolean (``true/false``, ``yes/no``, ``on/off``, ``1/0``; None or "" give ``default``)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{where}: found {_found(raw)}; expected true or false")


def parse_choice(raw: Any, where: str, default: str, choices: Iterable[str]) -> str:
    """``raw`` as one of ``choices`` (None or "" give ``default``), with a did-you-mean on a typo."""
    options = tuple(choices)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    text = str(raw).strip()
    if text not in options:
        raise ConfigError(f"{where}: found {_found(raw)}; expected one of {', '.join(options)}."
                          f"{did_you_mean(text, options)}")
    return text


class SpecOptions:
    """Options of one ``--mirage-model`` spec; unknown ``?keys`` are an error with a suggestion.

    Values come from the spec's own ``?key=value`` first, then from the session-wide defaults the
    plugin puts in ``ModelSpec.defaults`` (e.g. ``base_url`` from ``--mirage-openai-base-url``).
    ``name`` (the display name) is known to every kind.
    """

    def __init__(self, spec: ModelSpec, known: Iterable[str]) -> None:
        self.spec = spec
        self.known = sorted({*known, *COMMON_OPTIONS})
        for key in spec.options:
            if key not in self.known:
                hint = (" (credentials never go in a spec: put the key in an environment variable and name it "
                        "with ?api_key_env=NAME where the kind supports it)") if secret_name(key) else ""
                raise ConfigError(f"--mirage-model {spec.safe_raw!r}: unknown option {key!r} for {spec.kind}: "
                                  f"models{hint}; known options: {', '.join(self.known)}."
                                  f"{did_you_mean(key, self.known)}")

    def where(self, key: str) -> str:
        return f"--mirage-model {self.spec.safe_raw!r}: option {key}"

    def raw(self, key: str) -> Any:
        value = self.spec.option(key)
        return None if value == "" else value

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.raw(key)
        return default if value is None else str(value)

    def number(self, key: str, default: D, minimum: float | None = None,
               maximum: float | None = None) -> float | D:
        return parse_number(self.raw(key), self.where(key), default, minimum, maximum)

    def integer(self, key: str, default: D, minimum: int | None = None, maximum: int | None = None) -> int | D:
        return parse_int(self.raw(key), self.where(key), default, minimum, maximum)

    def flag(self, key: str, default: bool) -> bool:
        return parse_flag(self.raw(key), self.where(key), default)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        return parse_choice(self.raw(key), self.where(key), default, choices)

    def json_object(self, key: str) -> dict[str, Any]:
        value = self.raw(key)
        if value is None:
            return {}
        if isinstance(value, dict):
            return dict(value)
        shown = repr(safe_option_value(key, str(value)))
        try:
            data = loads_unique(str(value))
        except DuplicateKeyError as exc:
            raise ConfigError(f"{self.where(key)}: {exc}") from None
        except RecursionError:
            raise ConfigError(f"{self.where(key)}: the JSON is nested too deeply; expected a JSON object such as "
                              '{"top_p": 0.9}') from None
        except ValueError as exc:
            raise ConfigError(f"{self.where(key)}: found {shown}, which is not JSON ({exc}); "
                              'expected a JSON object such as {"top_p": 0.9}') from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self.where(key)}: found {shown}; expected a JSON object such as "
                              '{"top_p": 0.9}')
        return data
