"""The judge layer end to end: a claim-level LLM judge on the local OpenAI-compatible server and a tiny
NLI checkpoint through transformers, their values as ordinary metrics (thresholds, faithfulness,
report), cached (a rerun makes no judge call), replay-only, garbled verdicts as nulls with reasons
and in the judge-health block."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer, ScriptedJudge


def judge_reply(body: Mapping[str, Any]) -> str:
    """A scripted claim-level judge: two claims per answer; the first supported, the second not.
    Answers about the Eiffel Tower get a garbled reply (re-asked once, then null)."""
    prompt = body["messages"][-1]["content"]
    if "Break the answer down" in prompt:
        if "Eiffel" in prompt.split("Answer:")[-1]:
            return "I would rather not list claims."
        return json.dumps(["first claim", "second claim"])
    n = len(re.findall(r"^\d+\. ", prompt.split("Claims:")[1], re.M))
    return "\n".join(f"{i}: [[{'Yes' if i == 1 else 'No'}]]" for i in range(1, n + 1))


def _args(srv: FakeOpenAIServer, root: Path, *extra: str) -> list[str]:
    return ["demo", "--mirage-judges=support_llm=openai:fake-judge", f"--mirage-openai-base-url={srv.base_url}",
            f"--mirage-cache={root / 'cache'}", f"--mirage-report={root / 'r.json'}", *extra]


def test_llm_judge_values_cache_replay_and_health(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=judge_reply) as srv:
        res = pytester.runpytest(*_args(srv, pytester.path, "--mirage-threshold=faithfulness >= 0.6"))
        calls = srv.count
        assert calls > 0
        rep = json.loads((pytester.path / "r.json").read_text())
        mine = [r for r in rep["results"] if r["model"] == "extractive"]
        values = {r["case_id"]: r["metrics"]["support_llm"] for r in mine}
        # en-001 and en-002 are about the Eiffel Tower: the judge's reply is garbled twice -> null
        assert values["hi-001"] == 0.5 and values["ja-001"] == 0.5
        assert values["en-001"] is None
        reason = next(r for r in mine if r["case_id"] == "en-001")["null_reasons"]["support_llm"]
        assert "claim" in reason.lower()
        assert all(r["metrics"]["faithfulness"] == r["metrics"]["support_llm"] for r in mine)
        assert "resolved to support_llm" in rep["metric_info"]["faithfulness"]["source"]
        health = next(iter(rep["judge_health"].values()))
        assert health["parse_failures"] >= 2 and health["reasks"] >= 2 and health["nulls"]["support_llm"] >= 2
        # a failed threshold names what faithfulness stands for; a null one fails with the reason
        res.stdout.fnmatch_lines(["*faithfulness is null (support_llm: *",
                                  "*faithfulness 0.50 < 0.60 (--mirage-threshold) [[]faithfulness = support_llm[]]*",
                                  "*pytest-mirage metric judges*", "*support_llm (*): * unparseable replies*"])

        # a rerun answers every judge prompt from the cache
        res = pytester.runpytest(*_args(srv, pytester.path))
        assert srv.count == calls
        again = json.loads((pytester.path / "r.json").read_text())
        assert {r["case_id"]: r["metrics"]["support_llm"] for r in again["results"]
                if r["model"] == "extractive"} == values

        # replay-only never calls the judge model, and gives the same values
        res = pytester.runpytest(*_args(srv, pytester.path, "--mirage-cache-mode=replay-only"))
        assert srv.count == calls
        replay = json.loads((pytester.path / "r.json").read_text())
        assert {r["case_id"]: r["metrics"]["support_llm"] for r in replay["results"]
                if r["model"] == "extractive"} == values


def test_judge_health_and_reports_are_the_same_for_any_number_of_workers(pytester: pytest.Pytester,
                                                                        demo_suite: Path) -> None:
    """Each xdist worker batches (and re-asks) the items it runs, so the number of judge batches
    depends on -n: it is printed with the engine figures (with the model inputs, which a local judge
    deduplicates per batch) and kept out of the reports, whose judge health (items, unparseable
    replies, re-asks, nulls) and bytes are the same for -n 0 and -n 2."""
    runs = []
    with FakeOpenAIServer(answer=judge_reply) as srv:
        for n in ("0", "2"):
            root = pytester.path / f"n{n}"
            res = pytester.runpytest_subprocess(*_args(srv, root), "-n", n, "-p", "no:cacheprovider")
            assert res.ret == pytest.ExitCode.OK, res.stdout.str()
            work = re.search(r"^mirage judge work: support_llm \(.*\) (\d+) model inputs in (\d+) batches \(summed "
                             r"over the xdist workers", res.stdout.str(), re.M)
            assert work is not None, res.stdout.str()
            runs.append(((root / "r.json").read_text(encoding="utf-8"), int(work[2])))
    (serial, serial_batches), (xdist, xdist_batches) = runs
    health = json.loads(serial)["judge_health"]
    assert health == json.loads(xdist)["judge_health"]
    (h,) = health.values()
    assert h["reasks"] >= 2 and h["nulls"]["support_llm"] >= 2 and "batches" not in h and "calls" not in h
    assert serial == xdist
    assert 1 <= serial_batches <= xdist_batches  # two workers batch (and re-ask) apart


def test_threshold_on_an_unconfigured_judge_metric_names_the_fix(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-threshold=support_nli >= 0.5")
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*support_nli is computed by a judge that is not configured for suite 'demo'; add "
                              "--mirage-judges support_nli=BACKEND*"])


def test_bad_judge_spec_is_one_usage_error(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-judges=suport_nli=hf:/x")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*suport_nli*support_nli*"])


def test_nli_judge_from_a_local_checkpoint_batched_and_cached(pytester: pytest.Pytester, demo_suite: Path,
                                                              tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    from tests.helpers.tiny_models import nli_model

    model = nli_model(tmp_path / "nli", (0.7, 0.2, 0.1))
    args = ["demo", f"--mirage-judges=support_nli=hf:{model}?device=cpu", f"--mirage-cache={pytester.path / 'c'}",
            f"--mirage-report={pytester.path / 'r.json'}", "--mirage-gate=support_nli.mean >= 0.6"]
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()
    rep = json.loads((pytester.path / "r.json").read_text())
    mine = [r for r in rep["results"] if r["model"] == "extractive"]
    assert all(r["metrics"]["support_nli"] == pytest.approx(0.7, abs=1e-5) for r in mine)
    assert all(r["metrics"]["faithfulness"] == r["metrics"]["support_nli"] for r in mine)
    first = next(iter(rep["judge_health"].values()))
    assert first["items"] >= 6 and "batches" not in first  # varies with -n: printed with the engine figures
    res.stdout.fnmatch_lines(["mirage judge work: support_nli (*) * model inputs in * batches (summed over the xdist*"])
    # the second run finds every score in the cache: the model scores nothing
    res = pytester.runpytest_subprocess(*args)
    assert res.ret == pytest.ExitCode.OK
    again = json.loads((pytester.path / "r.json").read_text())
    assert next(iter(again["judge_health"].values()))["items"] == 0
    assert [r["metrics"]["support_nli"] for r in again["results"] if r["model"] == "extractive"] == \
        [r["metrics"]["support_nli"] for r in mine]


def test_ares_judge_reads_token_logprobs_when_asked(pytester: pytest.Pytester, demo_suite: Path) -> None:
    """ARES yes/no verdicts: with logprobs=true the judge asks the server for token log-probabilities
    and scores P(yes) (the fake server gives "[[Yes]]" e^-0.05 against "[[No]]" e^-3: 0.9503);
    without, the verdict counts as 1. Both cached; a non-openai judge model is refused."""
    with FakeOpenAIServer(answer=lambda body: "The passage says so.\n[[Yes]]") as srv:
        base = [f"--mirage-openai-base-url={srv.base_url}", f"--mirage-cache={pytester.path / 'cache'}",
                f"--mirage-report={pytester.path / 'r.json'}"]
        res = pytester.runpytest("demo", "--mirage-judges=ares=openai:fake-judge?logprobs=true", *base)
        assert res.ret == 0, res.stdout.str()
        asked = [r.body for r in srv.log]
        assert asked and all(b.get("logprobs") is True and b.get("top_logprobs") == 5 for b in asked)
        rep = json.loads((pytester.path / "r.json").read_text())
        mine = [r for r in rep["results"] if r["model"] == "extractive"]
        expected = 1 / (1 + 2.718281828459045 ** (-3 + 0.05))
        values = [r["metrics"]["ares_answer_faithfulness"] for r in mine]
        assert values and all(v == pytest.approx(expected, abs=1e-6) for v in values), values  # report: 6 decimals
        calls = srv.count
        res = pytester.runpytest("demo", "--mirage-judges=ares=openai:fake-judge?logprobs=true", *base)
        assert srv.count == calls  # the log-probabilities come back from the cache too
        again = json.loads((pytester.path / "r.json").read_text())
        assert [r["metrics"]["ares_answer_faithfulness"] for r in again["results"]
                if r["model"] == "extractive"] == values

        res = pytester.runpytest("demo", "--mirage-judges=ares=openai:fake-judge", *base)
        assert res.ret == 0
        plain = json.loads((pytester.path / "r.json").read_text())
        assert {r["metrics"]["ares_answer_faithfulness"] for r in plain["results"]
                if r["model"] == "extractive"} == {1.0}
    res = pytester.runpytest("demo", "--mirage-judges=ares=extractive?logprobs=true")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*logprobs=true needs a model behind the openai: adapter*"])


def test_structured_judge_output_schema_cache_fallback_and_health(pytester: pytest.Pytester, demo_suite: Path) -> None:
    """structured=auto (the default) with an openai: judge model: every judge request carries its
    stage's JSON schema, the scripted judge replies JSON for it, the health block says "JSON
    schema"; a rerun makes no call. A server that refuses response_format (HTTP 400): the same
    values from plain prompts, and the fallback in the health block. structured=on with a model
    kind that cannot send a schema is one usage error naming the fix."""
    judges = "--mirage-judges=fluency_llm=openai:fake-judge"
    with FakeOpenAIServer(answer=ScriptedJudge()) as srv:
        res = pytester.runpytest(*_args(srv, pytester.path, judges))
        assert res.ret == 0, res.stdout.str()
        formats = [r.body.get("response_format") for r in srv.log]
        assert formats and all(f["type"] == "json_schema" and f["json_schema"]["strict"] is True for f in formats)
        assert {f["json_schema"]["name"] for f in formats} == {"mirage_claims", "mirage_claim_verdicts",
                                                              "mirage_fluency"}
        rep = json.loads((pytester.path / "r.json").read_text())
        mine = [r for r in rep["results"] if r["model"] == "extractive"]
        values = {r["case_id"]: (r["metrics"]["support_llm"], r["metrics"]["fluency_llm"]) for r in mine}
        assert set(values.values()) == {(0.5, 4.0)}
        for health in rep["judge_health"].values():
            assert health["output"] == "json_schema" and health["unstructured_replies"] == 0
            assert health["parse_failures"] == 0 and health["format_fallbacks"] == 0
        res.stdout.fnmatch_lines(["*pytest-mirage metric judges*", "*support_llm (*): *; output: JSON schema"])
        calls = srv.count
        res = pytester.runpytest(*_args(srv, pytester.path, judges))
        assert srv.count == calls  # structured replies come back from the cache

    with FakeOpenAIServer(answer=ScriptedJudge(), structured="reject") as srv:
        res = pytester.runpytest(*_args(srv, pytester.path / "rejecting", judges))
        assert res.ret == 0, res.stdout.str()
        assert srv.format_rejections >= 1
        rep = json.loads((pytester.path / "rejecting" / "r.json").read_text())
        assert {r["case_id"]: (r["metrics"]["support_llm"], r["metrics"]["fluency_llm"]) for r in rep["results"]
                if r["model"] == "extractive"} == values  # never 0, never null
        for health in rep["judge_health"].values():
            assert health["output"] == "text" and health["format_fallbacks"] > 0 and health["errors"] == 0
            assert health["output_note"].startswith("the server refused response_format (")
        res.stdout.fnmatch_lines(["*support_llm (*): *; output: plain text (the server refused response_format (*"
                                  "prompts re-sent without the schema"])

    res = pytester.runpytest("demo", "--mirage-judges=fluency_llm=extractive?structured=on")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*judge spec 'fluency_llm=extractive?structured=on' (--mirage-judges): structured=on "
                              "needs a judge model that can constrain its output*extractive: models cannot: use "
                              "structured=auto*"])


def test_a_judge_whose_model_fails_fails_the_run(pytester: pytest.Pytester, demo_suite: Path) -> None:
    """A configured judge that cannot reach its model leaves its metrics null (never 0) and fails the
    run with the reason and the fix: a gate on faithfulness would otherwise pass on what it never
    saw. Replies that do not parse are not model failures (the first test: null, the run goes on)."""
    with FakeOpenAIServer(answer=judge_reply, default_faults=["401"] * 1000) as srv:
        res = pytester.runpytest(*_args(srv, pytester.path))
        assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()
        res.stdout.fnmatch_lines(["*metric judge support_llm (*): its model failed on 18 input(s), 18 value(s) are "
                                  "null*fix the judge's model or server*"])
        rep = json.loads((pytester.path / "r.json").read_text())
        assert rep["status"] == "failed"
        assert any("metric judge" in f for f in rep["fatal"])
        mine = [r for r in rep["results"] if r["model"] == "extractive"]
        assert mine and all(r["metrics"]["support_llm"] is None for r in mine)
    with FakeOpenAIServer(answer=judge_reply) as srv:  # the server fixed: the rerun passes
        res = pytester.runpytest(*_args(srv, pytester.path))
        assert res.ret == pytest.ExitCode.OK, res.stdout.str()


def test_a_local_judge_that_cannot_load_fails_the_run(pytester: pytest.Pytester, demo_suite: Path,
                                                       tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    missing = tmp_path / "no-such-checkpoint"
    res = pytester.runpytest_subprocess("demo", f"--mirage-judges=support_nli=hf:{missing}?device=cpu",
                                        f"--mirage-report={pytester.path / 'r.json'}", "--mirage-cache-mode=off")
    assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()
    res.stdout.fnmatch_lines(["*cannot load the NLI checkpoint*",
                              "*metric judge support_nli (*): its model failed on * input(s)*"])
    rep = json.loads((pytester.path / "r.json").read_text())
    assert all(r["metrics"]["support_nli"] is None for r in rep["results"] if r["model"] == "extractive")


@pytest.mark.parametrize(("option", "label"), [
    ("--mirage-judges=support_llm=openai:judge?api_key=sk-secret", "judge support_llm (*): judge model"),
    ("--mirage-judge=openai:judge?api_key=sk-secret", "arena judge (--mirage-judge): judge model"),
])
def test_a_bad_judge_model_spec_names_the_judge_not_mirage_model(pytester: pytest.Pytester, demo_suite: Path,
                                                                 option: str, label: str) -> None:
    res = pytester.runpytest("demo", option)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([f"*{label} 'openai:judge?api_key=**': unknown option 'api_key'*api_key_env*"])
    assert "--mirage-model" not in res.stderr.str() and "sk-secret" not in res.stderr.str() + res.stdout.str()
