"""Imported pairwise judgments (MIRAGE-Bench's rows) and the surrogate's record of its metric definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mirage.arena.bt import bradley_terry
from pytest_mirage.arena.imported import JudgmentFileError, battle_reliability, read_judgments
from pytest_mirage.arena.surrogate import SurrogateError, load_surrogate, train_surrogate
from tests.helpers.simulate_arena import simulate_battles, simulate_features


def _write(tmp_path: Path, rows: list[object], name: str = "j.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def row(q: str = "1#0", a: str = "m1", b: str = "m2", verdict: object = "A", **extra: object) -> dict[str, object]:
    return {"query_id": q, "model_A": a, "model_B": b, "verdict": verdict, **extra}


def test_mirage_bench_rows_are_read_with_every_verdict_form(tmp_path: Path) -> None:
    path = _write(tmp_path, [row(verdict="A", language="hi", explanation="..."), row(verdict="B"), "",
                             row(verdict="Tie"), row(verdict="C"), row(verdict=None), row(verdict=""),
                             {"query_id": 17, "model_a": "x", "model_b": "y", "verdict": "tie", "lang": "sw"}])
    js = read_judgments(path)
    assert [j.winner for j in js] == ["A", "B", "tie", "tie", None, None, "tie"]
    assert [j.line for j in js] == [1, 2, 4, 5, 6, 7, 8]
    assert js[0].lang == "hi" and js[1].lang is None and js[-1].query_id == "17" and js[-1].lang == "sw"
    assert js[0].battle().winner == "A"
    with pytest.raises(Exception, match="without a verdict"):
        js[4].battle()


@pytest.mark.parametrize(("content", "message"), [
    (["{not json"], r"j\.jsonl:1: not JSON"),
    ([[1, 2]], r"j\.jsonl:1: expected a JSON object per line, found list"),
    ([{"model_A": "a", "model_B": "b", "verdict": "A"}], r"j\.jsonl:1: missing field 'query_id'"),
    ([row(), {"query_id": "q", "model_A": "a", "verdict": "A"}], r"j\.jsonl:2: missing field 'model_B'"),
    ([{"query_id": "q", "model_A": "a", "model_B": "b"}], r"j\.jsonl:1: missing field 'verdict'"),
    ([row(verdict="X")], r"j\.jsonl:1: field 'verdict' is 'X'; expected \"A\", \"B\", \"Tie\""),
    ([row(verdict=1)], r"field 'verdict' is 1"),
    ([row(a="m", b="m")], r"model 'm' is judged against itself"),
    ([row(q="")], r"field 'query_id' is ''; expected a non-empty name"),
    ([row(q=True)], r"field 'query_id' is True; expected a string"),
    ([row(a="bad\x1bname")], r"field 'model_A'"),
    ([""], r"no judgments in the file"),
])
def test_bad_rows_are_errors_naming_file_line_and_field(tmp_path: Path, content: list[object], message: str) -> None:
    with pytest.raises(JudgmentFileError, match=message):
        read_judgments(_write(tmp_path, content))


def test_unreadable_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgmentFileError, match="no such file"):
        read_judgments(tmp_path / "missing.jsonl")
    with pytest.raises(JudgmentFileError, match="not a regular file"):
        read_judgments(tmp_path)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(json.dumps(row()).encode() + b"\n" + b'{"query_id": "caf\xe9"}\n')
    with pytest.raises(JudgmentFileError, match=r"latin1\.jsonl:2: not UTF-8"):
        read_judgments(bad)


def test_reliability_of_imported_rows() -> None:
    from pytest_mirage.arena.imported import ImportedJudgment as J

    js = [J("q1", "a", "b", "A", None, 1), J("q1", "b", "a", "B", None, 2),  # swapped, same winner (a)
          J("q2", "a", "b", "A", None, 3), J("q2", "b", "a", "A", None, 4),  # swapped, position wins
          J("q3", "a", "c", "tie", None, 5), J("q4", "a", "c", None, None, 6)]
    rel = battle_reliability(js)
    assert rel["judgments"] == 6 and rel["decided"] == 5 and rel["ties"] == 1 and rel["parse_failures"] == 1
    assert rel["swap_pairs"] == 2 and rel["swap_consistent"] == 1 and rel["swap_consistency"] == 0.5
    assert rel["position_a_rate"] == 3 / 4 and rel["tie_rate"] == 1 / 5
    assert rel["parse_failure_rate"] == 1 / 6


def test_surrogate_records_its_scoring_and_old_files_read_as_default(tmp_path: Path) -> None:
    qualities = {f"m{k}": float(k) / 3 for k in range(6)}
    feats = simulate_features(qualities, seed=1)
    strengths = bradley_terry(simulate_battles(qualities, 20, seed=2), tournaments=10).strengths()
    sur = train_surrogate(feats, strengths, n_estimators=5, suite="s", lang="en", scoring="mirage")
    path = tmp_path / "en.json"
    sur.save(path)
    data = json.loads(path.read_text())
    assert data["scoring"] == "mirage" and load_surrogate(path).scoring == "mirage"
    del data["scoring"]  # a file written before surrogates recorded it
    path.write_text(json.dumps(data))
    assert load_surrogate(path).scoring == "default"
    data["scoring"] = "ragas"
    path.write_text(json.dumps(data))
    with pytest.raises(SurrogateError, match="scoring"):
        load_surrogate(path)
    with pytest.raises(SurrogateError, match="scoring 'x' is not one of"):
        train_surrogate(feats, strengths, n_estimators=5, scoring="x")
