"""Pairwise judgments made elsewhere, read from a file (``--mirage-battles FILE``).

The rows are those of MIRAGE-Bench's released pairwise judgments (GPT-4o as the judge; one
dataset configuration per language), written as JSON lines, e.g. with
``datasets.load_dataset(NAME, LANG, split="dev").to_json("battles-LANG.jsonl")``::

    {"query_id": "703838#0", "model_A": "gpt-4o-azure", "model_B": "google/gemma-1.1-7b-it", "verdict": "A"}

* ``query_id``: the case id (a string; an integer is read as its decimal string);
* ``model_A`` / ``model_B`` (or ``model_a`` / ``model_b``): the two models, A shown first;
* ``verdict``: ``"A"``, ``"B"``, or a tie (``"Tie"``, ``"tie"``, ``"C"``); ``null`` or ``""``
  records a judgment without a usable verdict (counted as a parse failure, as for a live judge);
* ``language`` (or ``lang``), optional: restricts the row to cases of that language.

Other fields (the judge's explanation, timestamps) are ignored. Anything else -- a line that is not
a JSON object, a missing or mistyped field, an unknown verdict, a model against itself -- is an
:class:`JudgmentFileError` naming the file, line and field; no row is dropped silently.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .bt import Battle, Winner
from .numerics import ArenaError

MAX_FILE_BYTES = 1 << 30  # 1 GiB: MIRAGE-Bench's judgments for all 18 languages are far smaller
MAX_LINE_CHARS = 1 << 20
MAX_NAME_CHARS = 300
VERDICTS: dict[str, Winner] = {"A": "A", "B": "B", "Tie": "tie", "tie": "tie", "TIE": "tie", "C": "tie"}


class JudgmentFileError(ArenaError):
    """A file of imported pairwise judgments that cannot be read as given."""


@dataclass(frozen=True, slots=True)
class ImportedJudgment:
    """One row of the file. ``winner`` is None when the row carries no usable verdict."""

    query_id: str
    model_a: str
    model_b: str
    winner: Winner | None
    lang: str | None
    line: int

    def battle(self) -> Battle:
        if self.winner is None:
            raise ArenaError(f"line {self.line}: a judgment without a verdict is not a battle")
        return Battle(self.query_id, self.model_a, self.model_b, self.winner)


def _field(row: dict[str, Any], names: Sequence[str], where: str, *, required: bool = True) -> str | None:
    for name in names:
        if name in row:
            value = row[name]
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise JudgmentFileError(f"{where}: field {name!r} is {value!r:.60}; expected a string")
            text = str(value).strip()
            if not text or len(text) > MAX_NAME_CHARS or any(ord(ch) < 32 for ch in text):
                raise JudgmentFileError(f"{where}: field {name!r} is {value!r:.60}; expected a non-empty name of at "
                                   f"most {MAX_NAME_CHARS} printable characters")
            return text
    if required:
        raise JudgmentFileError(f"{where}: missing field {names[0]!r} (a row needs query_id, model_A, model_B and "
                           "verdict, as in MIRAGE-Bench's pairwise judgments)")
    return None


def _json_int(where: str, digits: str) -> int:
    """An integer of the file; one longer than any name (``query_id``: 5,000 digits) is an error
    naming the line (Python's ``int()`` refuses more than 4,300 digits, with a ValueError)."""
    if len(digits.lstrip("-")) > MAX_NAME_CHARS:
        raise JudgmentFileError(f"{where}: a number of {len(digits.lstrip('-')):,} digits; a query_id or model "
                                f"name has at most {MAX_NAME_CHARS} characters (write long ids as strings)")
    return int(digits)


def parse_judgment(row: Any, where: str, line: int) -> ImportedJudgment:
    """One decoded row; ``where`` names the file and line in errors."""
    if not isinstance(row, dict):
        raise JudgmentFileError(f"{where}: expected a JSON object per line, found {type(row).__name__}")
    query_id = _field(row, ("query_id",), where)
    model_a = _field(row, ("model_A", "model_a"), where)
    model_b = _field(row, ("model_B", "model_b"), where)
    lang = _field(row, ("language", "lang"), where, required=False)
    assert query_id is not None and model_a is not None and model_b is not None
    if "verdict" not in row:
        raise JudgmentFileError(f"{where}: missing field 'verdict' (\"A\", \"B\" or \"Tie\"; null for a judgment "
                           "without a usable verdict)")
    raw = row["verdict"]
    if raw is None or raw == "":
        winner: Winner | None = None
    elif isinstance(raw, str) and raw.strip() in VERDICTS:
        winner = VERDICTS[raw.strip()]
    else:
        raise JudgmentFileError(f"{where}: field 'verdict' is {raw!r:.60}; expected \"A\", \"B\", \"Tie\" (or \"C\"), "
                           "or null for a judgment without a usable verdict")
    if model_a == model_b:
        raise JudgmentFileError(f"{where}: model {model_a!r} is judged against itself; a battle needs two models")
    return ImportedJudgment(query_id, model_a, model_b, winner, lang, line)


def read_judgments(path: str | Path) -> list[ImportedJudgment]:
    """Every row of a JSON-lines file of pairwise judgments (blank lines are skipped)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise JudgmentFileError(f"{p}: not a regular file; --mirage-battles takes a JSON-lines file of pairwise "
                               "judgments")
        if size > MAX_FILE_BYTES:
            raise JudgmentFileError(f"{p}: the file is {size:,} bytes; at most {MAX_FILE_BYTES:,} are read")
        data = p.read_bytes()
    except FileNotFoundError:
        raise JudgmentFileError(f"{p}: no such file (--mirage-battles takes a JSON-lines file of pairwise "
                           "judgments)") from None
    except OSError as exc:
        raise JudgmentFileError(f"{p}: cannot read the file ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise JudgmentFileError(f"{p}:{line}: not UTF-8 (byte {data[exc.start]:#04x}); save the file as UTF-8") from None
    out: list[ImportedJudgment] = []
    for n, raw_line in enumerate(text.split("\n"), 1):
        s = raw_line.strip()
        if not s:
            continue
        where = f"{p}:{n}"
        if len(s) > MAX_LINE_CHARS:
            raise JudgmentFileError(f"{where}: the line has {len(s):,} characters; at most {MAX_LINE_CHARS:,}")
        try:
            row = json.loads(s, parse_int=partial(_json_int, where))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise JudgmentFileError(f"{where}: not JSON ({getattr(exc, 'msg', exc)})") from None
        except JudgmentFileError:
            raise
        except ValueError as exc:  # anything else json cannot convert: an error naming the line, not a crash
            raise JudgmentFileError(f"{where}: not readable JSON ({exc})") from None
        out.append(parse_judgment(row, where, n))
    if not out:
        raise JudgmentFileError(f"{p}: no judgments in the file")
    return out


def battle_reliability(judgments: Iterable[ImportedJudgment]) -> dict[str, float | int | None]:
    """The judge-reliability figures a live judge reports, measured on imported rows.

    Same keys and meanings as ``JudgeReliability.to_json()``: ties and decided verdicts, the share
    of decisive verdicts won by the answer shown first (position bias) and, where a pair was judged
    in both orders on a query, how often the same model won (swap consistency).
    """
    js = list(judgments)
    decided = [j for j in js if j.winner is not None]
    ties = sum(j.winner == "tie" for j in decided)
    decisive = [j for j in decided if j.winner != "tie"]
    by_pair: dict[tuple[str, frozenset[str]], dict[str, ImportedJudgment]] = defaultdict(dict)
    for j in decided:
        by_pair[(j.query_id, frozenset((j.model_a, j.model_b)))][j.model_a] = j
    swap_pairs = swap_consistent = 0
    for both in by_pair.values():
        if len(both) == 2:
            first, second = both.values()
            swap_pairs += 1
            swap_consistent += _winner_name(first) == _winner_name(second)
    failures = len(js) - len(decided)
    return {"judgments": len(js), "decided": len(decided), "ties": ties, "parse_failures": failures,
            "errors": 0, "retried": 0, "swap_pairs": swap_pairs, "swap_consistent": swap_consistent,
            "swap_consistency": swap_consistent / swap_pairs if swap_pairs else None,
            "tie_rate": ties / len(decided) if decided else None,
            "parse_failure_rate": failures / len(js) if js else None,
            "position_a_rate": sum(j.winner == "A" for j in decisive) / len(decisive) if decisive else None}


def _winner_name(j: ImportedJudgment) -> str:
    return {"A": j.model_a, "B": j.model_b}.get(str(j.winner), "tie")
