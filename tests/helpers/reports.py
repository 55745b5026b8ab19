"""A RunReport with everything the renderers show: two suites, three languages, reference systems,
failed and errored cases with their per-case view, failed and not evaluable gates, an arena, problems
and a fatal reason, and hostile text (markup, escape sequences, bidi overrides) in names and answers."""

from __future__ import annotations

import random

from pytest_mirage.aggregate.gates import GateResult
from pytest_mirage.report.leaderboard import build_leaderboard
from pytest_mirage.report.model import (
    ArenaRow,
    CaseDetail,
    MetricInfo,
    PassageView,
    RunReport,
    SuiteInfo,
)
from pytest_mirage.results import CaseResult

# a model name that is markup in HTML, Markdown and rich, and carries an escape sequence
EVIL_MODEL = "evil<script>alert(1)</script>[/bold]|*x*\x1b[31m"
# an answer that would clear the terminal, overwrite a line and reverse the text after it
EVIL_ANSWER = "Fine answer [p1].\x1b[2J\rOVERWRITTEN \u202egnp.exe</script><img src=x onerror=alert(2)>"
ORACLE = "control:oracle"
MODELS = ("extractive", EVIL_MODEL)


def _metrics(rng: random.Random, quality: float) -> dict[str, float | None]:
    def v() -> float:
        return min(1.0, max(0.0, rng.gauss(quality, 0.2)))

    return {"language_match": 1.0 if rng.random() < quality + 0.2 else 0.0, "citation_recall": v(),
            "rouge_l": v(), "char3_recall": v(), "faithfulness": None if rng.random() < 0.1 else v(),
            "english_share": rng.random() * 0.2}


def sample_report(*, cases_per_lang: int = 8, seed: int = 1) -> RunReport:
    rng = random.Random(seed)
    results: list[CaseResult] = []
    details: list[CaseDetail] = []
    suites = {"mini": ("en", "hi", "ja"), "khmer": ("km",)}
    quality = {"extractive": 0.6, EVIL_MODEL: 0.4, ORACLE: 0.95}
    for suite, langs in suites.items():
        for lang in langs:
            for i in range(cases_per_lang):
                cid = f"{lang}-{i:03d}" + ("\u200b" if (suite, lang, i) == ("mini", "hi", 1) else "")
                for model, q in quality.items():
                    m = _metrics(rng, q)
                    outcome = "reference" if model == ORACLE else "passed"
                    failures: tuple[str, ...] = ()
                    error = None
                    if model != ORACLE and (m["citation_recall"] or 0) < 0.3:
                        outcome = "failed"
                        failures = (f"citation_recall {m['citation_recall']:.2f} < 0.30 "
                                    "([thresholds] in suites/mini/suite.toml)",)
                    if model == EVIL_MODEL and i == cases_per_lang - 1:
                        outcome, m, error = "error", {}, "HTTP 500: \x1b[1mserver exploded\x1b[0m\nretry 1 | gave up"
                    results.append(CaseResult(suite=suite, suite_ref=suite, case_id=cid, lang=lang, model=model,
                                              metrics=m, outcome=outcome, failures=failures,  # type: ignore[arg-type]
                                              error=error))
                    if outcome in ("failed", "error"):
                        details.append(CaseDetail(
                            suite, cid, lang, model, f"suites/{suite}/cases/{lang}.jsonl:{i + 1}",
                            f"Question {i} in {lang}: what does the passage say?",
                            None if error else (EVIL_ANSWER if model == EVIL_MODEL else f"An answer [{lang}-p2]."),
                            citations=(f"{lang}-p2",), invalid_citations=("p99",) if model == EVIL_MODEL else (),
                            passages=(PassageView(f"{lang}-p1", "The relevant passage text.", "Doc A", True, False),
                                      PassageView(f"{lang}-p2", "A distractor <b>passage</b>.", None, False, True)),
                            judges={"pairwise": "##Reason\nA is better.\n##Answer\nA"}))
    board = build_leaderboard(results, [ORACLE])
    gates = [
        GateResult("mini", "hi", "extractive", "citation_recall.mean >= 0.9", "suites/mini/suite.toml:12",
                   0.55, False, cases_per_lang),
        GateResult("mini", "ja", EVIL_MODEL, "rouge_l.mean >= 0.5", "[gates] in suites/mini/suite.toml",
                   0.41, False, cases_per_lang),
        GateResult("mini", "en", "extractive", "rouge_l.mean >= 0.1", "--mirage-gate", 0.6, True, cases_per_lang),
        GateResult("khmer", "km", EVIL_MODEL, "faithfulness.mean >= 0.5", "mirage_gates in pyproject.toml",
                   None, None, 0, note="no values"),
    ]
    arena = []
    for lang in ("all", "en", "hi", "ja"):
        for rank, (model, s) in enumerate(((ORACLE, 0.8), ("extractive", 0.1), (EVIL_MODEL, -0.9)), start=1):
            arena.append(ArenaRow("mini", lang, model, s, s - 0.3, s + 0.3, rank))
    return RunReport(
        models=MODELS,
        suites=(SuiteInfo("mini", "oracle", ("en", "hi", "ja"), 3 * cases_per_lang, (ORACLE,)),
                SuiteInfo("khmer", "retrieval", ("km",), cases_per_lang, (ORACLE,))),
        results=tuple(results), leaderboard=tuple(board), gates=tuple(gates), status="failed", exitstatus=1,
        arena=tuple(arena), judge={"judgments": 96, "swap_consistency": 0.9},
        metric_info={"english_share": MetricInfo(False, "builtin", "share of English"),
                     "rouge_l": MetricInfo(True, "builtin", "ROUGE-L F")},
        problems=("reference system 'replay:runs/x.jsonl' skipped: \x1b]0;pwned\x07 file missing",),
        fatal=("the judge failed on every pair: HTTP 401",),
        cases=tuple(details))
