"""Suite self-check (bundled suites pass; a broken suite fails), scaffold, make-runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_mirage.__main__ import main
from pytest_mirage.cli.selfcheck import self_check
from pytest_mirage.suites.loader import load_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["mirage-mini", "khmer-telecom"])
def test_bundled_suites_pass_the_self_check(name: str) -> None:
    result = self_check(load_suite(ROOT / "suites" / name))
    assert result.ok, "\n".join(result.problems)


def test_self_check_fails_when_reference_answers_are_in_the_wrong_language(tmp_path: Path) -> None:
    # a typical authoring bug: Hindi cases whose reference answers were written in English
    d = tmp_path / "broken"
    shutil.copytree(ROOT / "tests" / "data" / "demo", d)
    lines = []
    for line in (d / "cases" / "demo.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["lang"] == "hi":
            obj["answers"] = ["The Taj Mahal was commissioned by the Mughal emperor Shah Jahan in Agra, India."]
        lines.append(json.dumps(obj, ensure_ascii=False))
    (d / "cases" / "demo.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = self_check(load_suite(d))
    assert not result.ok
    assert any(p.startswith("[hi] control:oracle") for p in result.problems), result.problems
    assert main(["self-check", str(d)]) == 1


def test_new_suite_scaffold_is_valid_and_refuses_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ("oracle", "retrieval"):
        path = tmp_path / f"my-{mode}"
        assert main(["new-suite", str(path), "--mode", mode]) == 0
        s = load_suite(path)
        assert s.mode == mode and len(s.cases) == 1
        assert main(["new-suite", str(path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_make_runs_writes_replayable_runs(tmp_path: Path) -> None:
    d = tmp_path / "demo"
    shutil.copytree(ROOT / "tests" / "data" / "demo", d)
    assert main(["make-runs", str(d), "--model", "extractive", "--model", "control:oracle"]) == 0
    lines = [json.loads(x) for x in (d / "runs" / "extractive.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6 and all(x["model"] == "extractive" and x["citations"] for x in lines)
    assert (d / "runs" / "control-oracle.jsonl").is_file()
