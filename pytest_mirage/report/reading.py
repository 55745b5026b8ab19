"""Reading a JSON report back: the error that names the bad field, and a field reader for objects.

:meth:`pytest_mirage.report.model.RunReport.from_json` and the statistics sections
(:mod:`pytest_mirage.report.statistics`) read through these, so every bad or missing value is a
:class:`ReportFormatError` that names where it is (``baseline.rows[3].delta``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import MirageError

SCHEMA = "pytest-mirage/report/1"
FIX = f"render a report written by pytest-mirage with --mirage-report PATH (schema {SCHEMA!r}), unchanged"
MISSING: Any = object()


class ReportFormatError(MirageError):
    """A report dict is not a valid ``pytest-mirage/report/1`` report; the message names the field."""


def bad(where: str, value: Any, expected: str) -> ReportFormatError:
    found = "nothing (missing)" if value is MISSING else repr(value)[:120]
    return ReportFormatError(f"report field {where}: found {found}; expected {expected}; {FIX}")


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class Fields:
    """One JSON object, read field by field. Every field is required (the report writes them all,
    null included); a missing or mistyped one raises :class:`ReportFormatError` with its path.

    Numbers are returned as they were read (an integer stays an integer), so writing the report
    again gives the same bytes.
    """

    __slots__ = ("obj", "where")

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, Mapping):
            raise bad(where, obj, "an object")
        self.obj: Mapping[str, Any] = obj
        self.where = where

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def raw(self, key: str) -> Any:
        return self.obj.get(key, MISSING)

    def has(self, key: str) -> bool:
        return key in self.obj

    def text(self, key: str) -> str:
        v = self.raw(key)
        if not isinstance(v, str):
            raise bad(self._at(key), v, "a string")
        return v

    def opt_text(self, key: str) -> str | None:
        v = self.raw(key)
        if v is not None and not isinstance(v, str):
            raise bad(self._at(key), v, "a string or null")
        return v

    def note(self, key: str = "note") -> str:
        """A note the report writes as null when empty."""
        return self.opt_text(key) or ""

    def integer(self, key: str) -> int:
        v = self.raw(key)
        if not isinstance(v, int) or isinstance(v, bool):
            raise bad(self._at(key), v, "an integer")
        return v

    def opt_integer(self, key: str) -> int | None:
        v = self.raw(key)
        return None if v is None else self.integer(key)

    def number(self, key: str) -> float:
        v = self.raw(key)
        if not is_number(v):
            raise bad(self._at(key), v, "a number")
        return v  # type: ignore[no-any-return]

    def opt_number(self, key: str) -> float | None:
        v = self.raw(key)
        return None if v is None else self.number(key)

    def nan_number(self, key: str) -> float:
        """A statistic the stats modules keep as NaN when undefined and the report writes as null."""
        v = self.opt_number(key)
        return math.nan if v is None else v

    def flag(self, key: str) -> bool:
        v = self.raw(key)
        if not isinstance(v, bool):
            raise bad(self._at(key), v, "true or false")
        return v

    def opt_flag(self, key: str) -> bool | None:
        v = self.raw(key)
        return None if v is None else self.flag(key)

    def texts(self, key: str) -> tuple[str, ...]:
        v = self.raw(key)
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise bad(self._at(key), v, "a list of strings")
        return tuple(v)

    def text_map(self, key: str) -> dict[str, str]:
        m = self.fields(key)
        return {str(k): m.text(str(k)) for k in m.obj}

    def fields(self, key: str) -> Fields:
        return Fields(self.raw(key), self._at(key))

    def opt_fields(self, key: str) -> Fields | None:
        v = self.raw(key)
        return None if v is None else Fields(v, self._at(key))

    def items(self, key: str) -> list[Fields]:
        """A list of objects."""
        v = self.raw(key)
        if not isinstance(v, list):
            raise bad(self._at(key), v, "a list of objects")
        return [Fields(x, f"{self._at(key)}[{i}]") for i, x in enumerate(v)]
