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
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ConfigError, did_you_mean
from ..jsonutil import DuplicateKeyError, loads_unique
from .credentials import safe_option_value, secret_name
from .registry import ModelSpec

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
MAX_INTEGER = 2**63 - 1  # bound of every integer option without a tighter maximum
COMMON_OPTIONS = ("name",)  # understood by every kind (see ModelSpec.display_name)
CAPACITY_OPTIONS = ("adaptive", "concurrency_min", "concurrency_max")  # adaptive kinds (openai:, async py:)
DEFAULT_START = 4  # a cautious first limit: a one-slot server queues only three behind the first
REMOTE_START = 16  # the first limit for a remote API (not loopback or a private network): the former fixed one
DEFAULT_MIN = 1
DEFAULT_MAX = 128
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


@dataclass(frozen=True, slots=True)
class CapacityBounds:
    """How a model's in-flight limit may move: ``start`` (None: the limit learned in the previous run
    of this endpoint, else :data:`DEFAULT_START`), ``minimum`` and ``maximum``. ``adaptive`` False:
    a fixed limit of ``start`` (the user's ``concurrency=N``); rate limits are still honoured."""

    start: int | None = None
    minimum: int = DEFAULT_MIN
    maximum: int = DEFAULT_MAX
    adaptive: bool = True
    default_start: int = DEFAULT_START  # the start when nothing is stored (an adapter may know better)

    def __post_init__(self) -> None:
        if self.minimum < 1 or self.maximum < self.minimum:
            raise ConfigError(f"capacity bounds: found concurrency_min={self.minimum}, concurrency_max={self.maximum}; "
                              "expected 1 <= concurrency_min <= concurrency_max")
        if self.start is not None and self.start < 1:
            raise ConfigError(f"capacity start: found {self.start}; expected an integer >= 1")

    def first(self, stored: int | None) -> int:
        """The first limit: the fixed one, else the start given, the stored one or the default, in bounds."""
        start = self.start if self.start is not None else stored if stored is not None else self.default_start
        return start if not self.adaptive else max(self.minimum, min(self.maximum, start))


def capacity_bounds(opts: SpecOptions, concurrency: int | None, default_on: bool = True,
                    default_start: int = DEFAULT_START) -> CapacityBounds | None:
    """The capacity settings of a spec: ``concurrency=N`` (or ``--mirage-concurrency N``) is a fixed
    limit; ``adaptive=off`` gives none (the engine's former fixed limit and per-request retries);
    ``concurrency_min`` / ``concurrency_max`` bound the adaptive limit (defaults 1 and 128);
    ``default_start``: the first limit when no earlier run of the endpoint left one."""
    adaptive = opts.flag("adaptive", default_on)
    minimum = opts.integer("concurrency_min", DEFAULT_MIN, minimum=1)
    maximum = opts.integer("concurrency_max", DEFAULT_MAX, minimum=1)
    bounded = opts.raw("concurrency_min") is not None or opts.raw("concurrency_max") is not None
    if not adaptive:
        if bounded:
            raise ConfigError(f"{opts.where('adaptive')}: found off with concurrency_min/concurrency_max, which bound the "
                              "adaptive limit; drop them, or set a fixed limit with ?concurrency=N")
        return None
    if concurrency is not None:
        if bounded and "concurrency" in opts.spec.options:
            raise ConfigError(f"{opts.where('concurrency')}: found {concurrency} with concurrency_min/concurrency_max; "
                              "concurrency=N is a fixed limit: drop it to let the limit adapt within the bounds")
        if not bounded:
            return CapacityBounds(start=concurrency, minimum=concurrency, maximum=concurrency, adaptive=False)
    if maximum < minimum:
        raise ConfigError(f"{opts.where('concurrency_max')}: found {maximum}, below concurrency_min={minimum}; expected "
                          "concurrency_min <= concurrency_max")
    return CapacityBounds(minimum=minimum, maximum=maximum, default_start=max(minimum, min(maximum, default_start)))
