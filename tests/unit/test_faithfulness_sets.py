"""The hand-written labelled faithfulness sets (``fixtures/faithfulness/{dev,test,holdout,dev2,holdout2,holdout3,holdout4,holdout5,holdout6,holdout7}``) are
well formed: the benchmark reads them, and a broken line would silently change its figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "fixtures" / "faithfulness"
FAITHFUL = {"multi", "list", "clean", "refusal", "long", "minimal"}
UNFAITHFUL = {"number", "date", "entity", "negation", "comparison", "roles", "added_sentence", "added_clause"}
MARKER = re.compile(r"\[(p\d+)\]")


def _items(name: str) -> list[tuple[str, int, dict]]:
    out = []
    for f in sorted((SETS / name).glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append((f.name, n, json.loads(line)))
    return out


@pytest.mark.parametrize("name", ["dev", "test", "holdout", "dev2", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7"])
def test_labelled_set_is_well_formed(name: str) -> None:
    items = _items(name)
    assert len(items) >= 120
    langs = {r["lang"] for _, _, r in items}
    assert len(langs) >= 12 and {"km", "th", "ja", "zh", "sw", "bn", "yo"} <= langs
    ids = [r["id"] for _, _, r in items]
    assert len(ids) == len(set(ids)), "duplicate ids"
    by_id = {r["id"]: r for _, _, r in items}
    for fname, n, r in items:
        where = f"{name}/{fname}:{n}"
        assert fname == f"{r['lang']}.jsonl", where
        assert r["label"] in ("faithful", "unfaithful"), where
        assert r["kind"] in (FAITHFUL if r["label"] == "faithful" else UNFAITHFUL), f"{where}: kind {r['kind']}"
        pids = {p["id"] for p in r["passages"]}
        assert pids and all(p["text"].strip() for p in r["passages"]), where
        assert set(MARKER.findall(r["answer"])) <= pids, f"{where}: a marker names no passage"
        assert r["question"].strip() and r["answer"].strip(), where
        if "pair" in r:
            other = by_id[r["pair"]]
            assert other["label"] == "faithful" and other["kind"] == "minimal", where
            assert other["passages"] == r["passages"] and r["label"] == "unfaithful", where
    assert {r["label"] for _, _, r in items} == {"faithful", "unfaithful"}
