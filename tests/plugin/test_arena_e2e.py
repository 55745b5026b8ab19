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

from pytest_mirage.judges import structured as st
from tests.helpers.fake_openai import FakeOpenAIServer, ScriptedJudge

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


def replay_arg(root: Path, model: str, quality: float) -> str:
    """``--mirage-model=replay:RUN`` for a system of the given quality (see :func:`write_run`)."""
    return f"--mirage-model=replay:{write_run(root, model, quality)}"


def read_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def judge(body: Mapping[str, Any]) -> str:
    """Prefers the answer that cites the founding passage (#0); noisy on 10% of calls; ties otherwise.
    Replies in text (a server that ignores response_format); the noise follows the prompt without
    the structured-output note, so the verdicts are the same whether the note is there or not."""
    prompt = body["messages"][-1]["content"].removesuffix(st.NOTES["pairwise"])
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


# ------------------------------------------------------------------ structured output


def _cites_founding(a: str, b: str) -> str:
    """The scripted judge's pairwise rule here: the answer that cites the founding passage wins."""
    good_a, good_b = "#0]" in a, "#0]" in b
    return "C" if good_a == good_b else "A" if good_a else "B"


def test_structured_arena_judge_schema_cache_fallback_and_refusals(pytester: pytest.Pytester) -> None:
    """structured=auto (the default) with an openai: arena judge: every judge request carries the
    pairwise JSON schema, the scripted judge replies JSON, the judge block says "JSON schema"; a
    rerun makes no call. A server that refuses response_format (HTTP 400): the same arena from
    plain prompts, and the fallback in the judge block. structured=on with a model kind that cannot
    send a schema, and a judge model whose extra= sets its own response_format, are usage errors."""
    write_suite(pytester.path)
    models = _models(pytester.path, ["sys-a", "sys-c", "sys-f"])
    scripted = ScriptedJudge(prefer=_cites_founding)

    def run(srv: FakeOpenAIServer, where: Path) -> pytest.RunResult:
        where.mkdir(exist_ok=True)
        return pytester.runpytest("arena", *models, "--mirage-judge", "openai:fake-judge",
                                  f"--mirage-openai-base-url={srv.base_url}", f"--mirage-cache={where / 'cache'}",
                                  "--mirage-tournaments=20", f"--mirage-report={where / 'r.json'}",
                                  f"--mirage-markdown={where / 'r.md'}")

    with FakeOpenAIServer(answer=scripted) as srv:
        res = run(srv, pytester.path)
        assert res.ret == 0, res.stdout.str()
        formats = [r.body.get("response_format") for r in srv.log]
        assert formats and all(f["type"] == "json_schema" and f["json_schema"]["name"] == "mirage_pairwise"
                               and f["json_schema"]["strict"] is True for f in formats)
        rep = read_report(pytester.path / "r.json")
        judge = rep["judge"]
        assert judge["judgments"] == N_CASES * 3 * 2 and judge["parse_failures"] == 0 and judge["errors"] == 0
        assert (judge["output"], judge["unstructured_replies"], judge["format_fallbacks"]) == ("json_schema", 0, 0)
        assert judge["swap_consistency"] == 1.0  # A/B order swapping still measured on JSON verdicts
        order = [r["model"] for r in sorted((r for r in rep["arena"] if r["lang"] == "all"), key=lambda r: r["rank"])]
        assert order == ["sys-a", "sys-c", "sys-f"]
        res.stdout.fnmatch_lines(["mirage judge: *; output: JSON schema"])
        assert "| output | JSON schema |" in (pytester.path / "r.md").read_text()
        calls = srv.count
        assert run(srv, pytester.path).ret == 0
        assert srv.count == calls  # structured verdicts come back from the cache

    with FakeOpenAIServer(answer=scripted, structured="reject") as srv:
        res = run(srv, pytester.path / "rejecting")
        assert res.ret == 0, res.stdout.str()
        assert srv.format_rejections >= 1
        plain = read_report(pytester.path / "rejecting" / "r.json")
        assert plain["arena"] == rep["arena"]  # the same verdicts from plain prompts: never errors, never ties
        assert plain["judge"]["output"] == "text" and plain["judge"]["format_fallbacks"] > 0
        assert plain["judge"]["output_note"].startswith("the server refused response_format (")
        assert plain["judge"]["errors"] == 0 and plain["judge"]["decided"] == judge["decided"]
        res.stdout.fnmatch_lines(["mirage judge: *; output: plain text (the server refused response_format (*"
                                  "prompts re-sent without the schema"])

    res = pytester.runpytest("arena", *models, "--mirage-judge", "extractive?structured=on")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*arena judge 'extractive' (--mirage-judge): structured=on needs a judge model that "
                              "can constrain its output*extractive: models cannot: use structured=auto*"])
    res = pytester.runpytest("arena", *models, "--mirage-judge", "openai:fake-judge?base_url=http://127.0.0.1:9/v1"
                             '&extra={"response_format": {"type": "json_object"}}')
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*arena judge 'openai:fake-judge*' (--mirage-judge): the judge model's extra= sets "
                              "response_format*drop response_format from extra=*structured=off*"])


# ------------------------------------------------------------------ imported pairwise judgments


def write_battles(root: Path, models: list[str], extra: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    """MIRAGE-Bench-style rows (query_id, model_A, model_B, verdict): the model that cites the founding
    passage wins; a seeded 10% of the rows are ties."""
    rows = []
    for i in range(N_CASES):
        good = {m: _u(m, str(i)) < QUALITY[m] for m in models}
        for x, a in enumerate(models):
            for b in models[x + 1:]:
                first, second = (a, b) if _u("order", a, b, str(i)) < 0.5 else (b, a)
                if good[first] == good[second] or _u("tie", a, b, str(i)) < 0.1:
                    verdict = "Tie"
                else:
                    verdict = "A" if good[first] else "B"
                rows.append({"query_id": f"en-{i:03d}", "model_A": first, "model_B": second, "verdict": verdict,
                             "language": "en", "explanation": "ignored"})
    rows += list(extra)
    path = root / "battles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_imported_judgments_fit_the_arena_and_train_a_mirage_scored_surrogate(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    models = list(QUALITY)
    extra = [{"query_id": "en-000", "model_A": "sys-a", "model_B": "gpt-4o-azure", "verdict": "A"},
             {"query_id": "no-such-case", "model_A": "sys-a", "model_B": "sys-b", "verdict": "B"},
             {"query_id": "en-001", "model_A": "sys-a", "model_B": "sys-b", "verdict": None}]
    battles = write_battles(pytester.path, models, extra)
    report = pytester.path / "train.json"
    res = pytester.runpytest("arena", *_models(pytester.path, models), f"--mirage-battles={battles}",
                             "--mirage-tournaments=50", "--mirage-train-surrogate", "--mirage-force-surrogate",
                             f"--mirage-report={report}")
    assert res.ret == 0, res.stdout.str()
    rep = json.loads(report.read_text())
    n_rows = N_CASES * 15
    # the rows of this run's cases and models are used (one without a verdict counts as a parse failure)
    assert rep["judge"]["judgments"] == n_rows + 1 and rep["judge"]["parse_failures"] == 1
    assert rep["judge"]["source"] == f"imported from {battles}"
    assert 0.3 < rep["judge"]["position_a_rate"] < 0.7
    order = [r["model"] for r in sorted((r for r in rep["arena"] if r["lang"] == "all"), key=lambda r: r["rank"])]
    assert order[0] == "sys-a" and order[-1] == "sys-f", order
    # the skipped rows are reported, with the unknown model named and the fix
    out = res.stdout.str()
    assert f"imported judgments {battles}: {n_rows + 1} of {n_rows + 3} rows used" in out
    assert "1 name a case that is not in this run" in out and "'gpt-4o-azure'" in out and "name=" in out
    saved = json.loads((suite / "surrogate" / "all.json").read_text())
    assert saved["scoring"] == "mirage" and saved["judge"] == "imported:battles.jsonl"
    assert set(saved["training"]["models"]) == set(models)
    # imported judgments: the run scored with MIRAGE-Bench's definitions, and says so
    assert [s["scoring"] for s in rep["suites"]] == ["mirage"]

    # applied in a run with the default definitions, the surrogate is refused with the fix ...
    res = pytester.runpytest("arena", *_models(pytester.path, ["strong-model"]), "--mirage-gate", "surrogate_rank <= 6")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*surrogate*all.json was trained on features computed with scoring 'mirage', but this "
                              "run computes them with scoring 'default'*--mirage-scoring mirage*"])
    # ... and used with the same definitions
    report = pytester.path / "apply.json"
    res = pytester.runpytest("arena", *_models(pytester.path, ["strong-model", "weak-model"]), "--mirage-scoring=mirage",
                             f"--mirage-report={report}")
    assert res.ret == 0, res.stdout.str()
    scores = {(s["model"], s["lang"]): s for s in json.loads(report.read_text())["surrogate_scores"]}
    assert scores[("strong-model", "all")]["surrogate_score"] > scores[("weak-model", "all")]["surrogate_score"]


def test_imported_judgments_that_match_nothing_or_are_malformed_fail_the_run(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    other = pytester.path / "other.jsonl"
    other.write_text(json.dumps({"query_id": "en-000", "model_A": "gpt-4", "model_B": "aya-23", "verdict": "A"}) + "\n")
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a", "sys-b"]), f"--mirage-battles={other}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([f"mirage ERROR: arena not computed: {other}: none of its 1 judgments can be used: 1 "
                              "compare a model that has no answer*'aya-23', 'gpt-4'*"])
    bad = write_battles(pytester.path, ["sys-a", "sys-b"],
                        [{"query_id": "en-002", "model_A": "sys-a", "model_B": "sys-b", "verdict": "X"}])
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a", "sys-b"]), f"--mirage-battles={bad}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([f"*arena not computed: {bad}:{N_CASES + 1}: field 'verdict' is 'X'; expected*"])
    # the case results still stand
    res.stdout.fnmatch_lines([f"*{2 * N_CASES} passed*"])


def test_a_live_judge_and_imported_judgments_together_are_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    battles = write_battles(pytester.path, ["sys-a", "sys-b"])
    res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a", "sys-b"]), f"--mirage-battles={battles}",
                             "--mirage-judge", "openai:judge")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-judge and --mirage-battles both give the arena's verdicts*"])


def test_replays_named_as_the_judgments_name_them(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    strong, weak = write_run(pytester.path, "sys-a", 0.95), write_run(pytester.path, "sys-f", 0.2)
    rows = [{"query_id": f"en-{i:03d}", "model_A": "gpt-4o-azure", "model_B": "google/gemma-1.1-2b-it",
             "verdict": "A"} for i in range(N_CASES)]
    battles = pytester.path / "b.jsonl"
    battles.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = pytester.path / "r.json"
    res = pytester.runpytest("arena", f"--mirage-model=replay:{strong}?name=gpt-4o-azure",
                             f"--mirage-model=replay:{weak}?name=google/gemma-1.1-2b-it",
                             f"--mirage-battles={battles}", "--mirage-tournaments=20", f"--mirage-report={report}")
    assert res.ret == 0, res.stdout.str()
    rep = json.loads(report.read_text())
    assert set(rep["models"]) == {"gpt-4o-azure", "google/gemma-1.1-2b-it"}
    assert rep["judge"]["judgments"] == N_CASES and "imported judgments" not in res.stdout.str()
    top = min((r for r in rep["arena"] if r["lang"] == "all"), key=lambda r: r["rank"])
    assert top["model"] == "gpt-4o-azure"
    res.stderr.fnmatch_lines(["mirage model answers [[]gpt-4o-azure[]]: *done*"])


def test_unparseable_verdicts_are_counted_per_model(pytester: pytest.Pytester) -> None:
    """A judge steered into replies it cannot parse by one kind of answer (here: the wrong one, which
    the weakest model gives most): each model's matchups without a verdict are counted in the judge
    reliability figures of the JSON and Markdown reports (issue 21: nulls are visible per model)."""
    write_suite(pytester.path)

    def steered(body: Mapping[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        return "I would rather not say." if "music festival every summer. [" in prompt else judge(body)

    with FakeOpenAIServer(answer=steered) as srv:
        report, md = pytester.path / "r.json", pytester.path / "r.md"
        res = pytester.runpytest("arena", *_models(pytester.path, ["sys-a", "sys-b", "sys-f"]), "--mirage-judge",
                                 "openai:fake-judge", f"--mirage-openai-base-url={srv.base_url}",
                                 f"--mirage-cache={pytester.path / 'cache'}", "--mirage-judge-queries=12",
                                 "--mirage-tournaments=20", f"--mirage-report={report}", f"--mirage-markdown={md}")
    assert res.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), res.stdout.str()
    rel = read_report(report)["judge"]
    per_model = rel["undecided_by_model"]
    assert rel["parse_failures"] > 0 and sum(per_model.values()) == 2 * (rel["parse_failures"] + rel["errors"])
    assert set(per_model) <= {"sys-a", "sys-b", "sys-f"}
    assert per_model["sys-f"] == max(per_model.values()) and per_model["sys-f"] > per_model.get("sys-a", 0)
    shown = ", ".join(f"{m} {n}" for m, n in sorted(per_model.items()))
    assert f"| undecided_by_model | {shown} |" in md.read_text(), md.read_text()
