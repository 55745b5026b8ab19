"""End to end: pairwise judge served by the local OpenAI-compatible server, Bradley-Terry arena in the
report and leaderboard, surrogate training, and a surrogate_rank gate that fails for a weak model."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer

N_CASES = 24
QUALITY = {"sys-a": 0.95, "sys-b": 0.8, "sys-c": 0.65, "sys-d": 0.5, "sys-e": 0.35, "sys-f": 0.2}


def _u(*parts: str) -> float:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big") / 2**64


def write_suite(root: Path) -> Path:
    d = root / "arena"
    (d / "cases").mkdir(parents=True)
    (d / "suite.toml").write_text('[suite]\nname = "arena"\nmode = "oracle"\ncases = ["cases/*.jsonl"]\n')
    lines = []
    for i in range(N_CASES):
        passages = [
            {"id": f"{7000 + i}#1", "title": f"Town {i}", "text": f"Town {i} has a museum of old clocks and a market."},
            {"id": f"{7000 + i}#0", "title": f"Town {i}", "text": f"Town {i} was founded in the year {1200 + 7 * i} by river traders."},
            {"id": f"{7000 + i}#2", "title": f"Town {i}", "text": f"Town {i} hosts a music festival every summer."},
        ]
        lines.append(json.dumps({"id": f"en-{i:03d}", "lang": "en", "question": f"When was town {i} founded?",
                                 "passages": passages, "relevant": [f"{7000 + i}#0"],
                                 "answers": [f"Town {i} was founded in {1200 + 7 * i}."]}))
    (d / "cases" / "c.jsonl").write_text("\n".join(lines) + "\n")
    return d


def write_run(root: Path, model: str, quality: float) -> Path:
    """A system that answers correctly (cites and copies the relevant passage) with probability q."""
    path = root / "runs" / f"{model}.jsonl"
    path.parent.mkdir(exist_ok=True)
    out = []
    for i in range(N_CASES):
        if _u(model, str(i)) < quality:
            text, pid = f"Town {i} was founded in the year {1200 + 7 * i} by river traders.", f"{7000 + i}#0"
        else:
            text, pid = f"Town {i} hosts a music festival every summer.", f"{7000 + i}#2"
        out.append(json.dumps({"case_id": f"en-{i:03d}", "model": model,
                               "output": f"##Reason: {text} [{pid}]\n##Answer: {text} [{pid}]"}))
    path.write_text("\n".join(out) + "\n")
    return path


def judge(body: Mapping[str, Any]) -> str:
    """Prefers the answer that cites the founding passage (#0); noisy on 10% of calls; ties otherwise."""
    prompt = body["messages"][-1]["content"]
    a = re.search(r"Start of Assistant A’s Answer\]\"\n(.*?)\n\"\[The End of Assistant A", prompt, re.S).group(1)
    b = re.search(r"Start of Assistant B’s Answer\]\"\n(.*?)\n\"\[The End of Assistant B", prompt, re.S).group(1)
    good_a, good_b = "#0]" in a, "#0]" in b
    # a judge that quotes the format in its reasoning must not confuse the parser
    reasoning = 'I must answer "[[A]]", "[[B]]" or "[[C]]". '
    if good_a == good_b or _u(prompt) < 0.1:
        return reasoning + "Both are equivalent.\n[[C]]"
    return reasoning + ("A cites the right passage.\n[[A]]" if good_a else "B cites the right passage.\n[[B]]")


def _models(root: Path, names: list[str]) -> list[str]:
    out = []
    for n in names:
        out += ["--mirage-model", f"replay:{write_run(root, n, QUALITY.get(n, 0.05 if 'weak' in n else 0.9))}"]
    return out


def test_arena_surrogate_and_gate(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    with FakeOpenAIServer(answer=judge) as srv:
        judge_args = ["--mirage-judge", "openai:fake-judge", f"--mirage-openai-base-url={srv.base_url}",
                      f"--mirage-cache={pytester.path / 'cache'}", "--mirage-tournaments=50"]
        report = pytester.path / "train.json"
        # six models: the leave-one-out R² of the surrogate is too noisy to pass its health check, so
        # it is saved only when forced (gates that use it then say so)
        res = pytester.runpytest("arena", *_models(pytester.path, list(QUALITY)), *judge_args,
                                 "--mirage-train-surrogate", "--mirage-force-surrogate", f"--mirage-report={report}")
        assert res.ret == 0, res.stdout.str()
        n_prompts = srv.completed
        rep = json.loads(report.read_text())
        # 24 cases x 15 pairs x 2 orders judged; identical prompts (equal answers) reach the server once
        assert rep["judge"]["judgments"] == N_CASES * 15 * 2
        assert 0 < n_prompts <= N_CASES * 15 * 2
        arena = [r for r in rep["arena"] if r["lang"] == "all"]
        assert {r["model"] for r in arena} == set(QUALITY)
        order = [r["model"] for r in sorted(arena, key=lambda r: r["rank"])]
        assert order[0] == "sys-a" and order[-1] == "sys-f", order
        assert all(r["ci_low"] <= r["strength"] <= r["ci_high"] for r in arena)
        assert rep["judge"]["parse_failures"] == 0 and 0 < rep["judge"]["tie_rate"] < 1
        assert rep["judge"]["swap_consistency"] > 0.8
        assert (suite / "surrogate" / "all.json").is_file() and (suite / "surrogate" / "en.json").is_file()
        saved = json.loads((suite / "surrogate" / "all.json").read_text())
        assert "pickle" not in json.dumps(saved)[:0] and saved["judge"] == "openai:fake-judge"
        assert set(saved["training"]["models"]) == set(QUALITY)
        assert rep["surrogate"][0]["health"]["tau_mean"] > 0.5
        res.stdout.fnmatch_lines(["*bt*bt#*", "mirage surrogate saved: *all.json"])

        # re-training reuses every cached judge call; unforced, the unhealthy surrogate is not saved
        (suite / "surrogate" / "en.json").unlink()
        res = pytester.runpytest("arena", *_models(pytester.path, list(QUALITY)), *judge_args,
                                 "--mirage-train-surrogate")
        assert res.ret == pytest.ExitCode.TESTS_FAILED and srv.completed == n_prompts
        res.stdout.fnmatch_lines(["*surrogate arena [[]en[]] trained but not saved: unhealthy: *--mirage-force-surrogate*",
                                  "mirage ERROR: surrogate: --mirage-train-surrogate was given but no surrogate*"])
        assert not (suite / "surrogate" / "en.json").exists()
        res = pytester.runpytest("arena", *_models(pytester.path, list(QUALITY)), *judge_args,
                                 "--mirage-train-surrogate", "--mirage-force-surrogate")
        assert res.ret == 0 and srv.completed == n_prompts

    # a normal run (no judge) scores new models with the surrogate; the weak one fails the gate
    report = pytester.path / "gate.json"
    res = pytester.runpytest("arena", *_models(pytester.path, ["weak-model", "strong-model"]),
                             "--mirage-gate", "surrogate_rank <= 3", f"--mirage-report={report}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["FAILED gate arena [[]en[]] weak-model: surrogate_rank <= 3 -> *the surrogate is unhealthy*"])
    rep = json.loads(report.read_text())
    gates = {(g["model"], g["lang"]): g for g in rep["gates"]}
    assert gates[("weak-model", "en")]["passed"] is False and gates[("strong-model", "en")]["passed"] is True
    scores = {(s["model"], s["lang"]): s for s in rep["surrogate_scores"]}
    assert scores[("strong-model", "all")]["surrogate_score"] > scores[("weak-model", "all")]["surrogate_score"]


def test_surrogate_gate_without_surrogate_fails_explicitly(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a"]), "--mirage-gate", "surrogate_rank <= 3")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*surrogate_rank <= 3*cannot be evaluated*no trained surrogate*"])


def test_surrogate_with_missing_features_is_an_error(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    (suite / "surrogate").mkdir()
    sur = {"format": "pytest-mirage/surrogate", "version": 1}
    (suite / "surrogate" / "en.json").write_text(json.dumps(sur))
    # a surrogate that cannot be used fails only the gates that need it; the rest of the run stands
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a"]))
    assert res.ret == pytest.ExitCode.OK
    res.stdout.fnmatch_lines(["mirage: surrogate of suite arena [[]en[]] not used: *en.json*"])
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a"]), "--mirage-gate", "surrogate_rank <= 3")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["FAILED gate arena [[]en[]] sys-a: surrogate_rank <= 3 -> n/a (*en.json*"])


def test_judge_without_usable_verdicts_fails_training(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    with FakeOpenAIServer(answer=lambda body: "I cannot decide.") as srv:
        report = pytester.path / "r.json"
        res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a", "sys-f"]), "--mirage-judge",
                                 "openai:fake-judge", f"--mirage-openai-base-url={srv.base_url}",
                                 f"--mirage-cache={pytester.path / 'cache'}", "--mirage-judge-queries=3",
                                 "--mirage-train-surrogate", f"--mirage-report={report}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*arena: no usable verdicts from the judge (6 unparseable*",
                              "mirage ERROR: surrogate: --mirage-train-surrogate was given but no surrogate*"])
    rep = json.loads(report.read_text())
    assert rep["judge"]["parse_failures"] == 6 and rep["status"] == "failed"


def test_unwritable_surrogate_folder_is_reported_not_a_crash(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    (suite / "surrogate").write_text("a file where the folder should be")
    with FakeOpenAIServer(answer=judge) as srv:
        report = pytester.path / "r.json"
        res = pytester.runpytest("arena", *_models(pytester.path, list(QUALITY)[:4]), "--mirage-judge",
                                 "openai:fake-judge", f"--mirage-openai-base-url={srv.base_url}",
                                 f"--mirage-cache={pytester.path / 'cache'}", "--mirage-train-surrogate",
                                 "--mirage-tournaments=20", f"--mirage-report={report}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*surrogate arena [[]*[]] trained but not saved to *"])
    assert json.loads(report.read_text())["arena"]
