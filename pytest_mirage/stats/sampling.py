"""A seeded, stable subset of cases per suite x language, for cheap gates on every pull request.

Each case gets a key ``sha256(seed, suite, case_id)``; a group keeps the ``k`` cases with the
smallest keys (``k`` = the count, or ``ceil(share * n)``). The choice depends only on case ids and
the seed, never on file order, the machine or the process (Python's ``hash()`` is salted per
process; sha256 is not), and it is stable when a suite grows: adding a case changes the selection
by at most that case entering and one other leaving (for a share, one more old case may enter).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import StatsError

GroupKey = tuple[str, str]  # suite, lang


def case_key(suite: str, case_id: str, seed: int = 0) -> int:
    """The case's sort key for sampling (first 8 bytes of the sha256 of seed, suite and case id)."""
    digest = hashlib.sha256(f"{seed}\x1f{suite}\x1f{case_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True, slots=True)
class GroupSample:
    suite: str
    lang: str
    selected: tuple[str, ...]  # case ids, sorted
    total: int

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "lang": self.lang, "selected": len(self.selected), "total": self.total}


@dataclass(frozen=True, slots=True)
class Sample:
    """The selection of every group and the rule that made it (for the report header)."""

    groups: tuple[GroupSample, ...]
    count: int | None
    share: float | None
    seed: int

    @property
    def selected(self) -> frozenset[tuple[str, str]]:
        """(suite, case_id) of every selected case."""
        return frozenset((g.suite, c) for g in self.groups for c in g.selected)

    def contains(self, suite: str, case_id: str) -> bool:
        return (suite, case_id) in self.selected

    @property
    def rule(self) -> str:
        what = f"{self.count} cases" if self.count is not None else f"{self.share:.0%} of the cases"
        return f"{what} per suite x language (seed {self.seed})"

    def describe(self) -> str:
        chosen = sum(len(g.selected) for g in self.groups)
        total = sum(g.total for g in self.groups)
        return f"sampled {self.rule}: {chosen:,} of {total:,} cases"

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "share": self.share, "seed": self.seed, "rule": self.rule,
                "groups": [g.to_json() for g in self.groups]}


def _size(n: int, count: int | None, share: float | None) -> int:
    if count is not None:
        return min(n, count)
    assert share is not None
    return min(n, math.ceil(share * n - 1e-9))


def sample_cases(cases: Mapping[GroupKey, Iterable[str]], *, count: int | None = None, share: float | None = None,
                 seed: int = 0) -> Sample:
    """Select a subset of each group's case ids: ``count`` per group, or a ``share`` in (0, 1].

    A group with fewer cases than ``count`` keeps them all; a share keeps at least one case of a
    non-empty group. Duplicate case ids in a group are an error.
    """
    if (count is None) == (share is None):
        raise StatsError("sample_cases: give exactly one of count (cases per suite x language) or share (0-1]")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise StatsError(f"sample count {count!r}; expected an integer >= 1 (cases per suite x language)")
    if share is not None and not (isinstance(share, int | float) and 0.0 < float(share) <= 1.0):
        raise StatsError(f"sample share {share!r}; expected a number in (0, 1], e.g. 0.2 for 20%")
    groups = []
    for (suite, lang), ids in sorted(cases.items()):
        id_list = list(ids)
        if len(set(id_list)) != len(id_list):
            dup = next(c for c in id_list if id_list.count(c) > 1)
            raise StatsError(f"suite {suite!r} [{lang}]: case id {dup!r} appears twice")
        k = _size(len(id_list), count, None if share is None else float(share))
        chosen = sorted(id_list, key=lambda c: (case_key(suite, c, seed), c))[:k]
        groups.append(GroupSample(suite, lang, tuple(sorted(chosen)), len(id_list)))
    return Sample(tuple(groups), count, None if share is None else float(share), seed)


def parse_sample(value: str) -> tuple[int | None, float | None]:
    """``"0.2"`` or ``"20%"`` -> share; ``"50"`` -> count per suite x language."""
    text = value.strip()
    if text.isdigit() and int(text) >= 1:
        return int(text), None
    percent = text.endswith("%")
    try:
        v = float(text[:-1] if percent else text)
    except ValueError:
        v = math.nan
    v = v / 100.0 if percent else v
    if not 0.0 < v <= 1.0:  # also NaN
        raise StatsError(f"sample {value!r}: expected a share in (0, 1] such as 0.2 or 20% (of each suite x "
                         "language), or a whole number of cases per suite x language such as 50")
    return None, v
